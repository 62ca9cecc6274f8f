"""Weights from anywhere in one shape: random, trained, a real model, a file."""

import numpy as np
import pytest

from xattn.ablation import ablation
from xattn.attnfile import load_attention, save_attention
from xattn.corpus import translate
from xattn.pipeline import Settings, run
from xattn.sources import Attention, file_attention, model_attention, random_attention


def test_random_weights_are_the_run_s_with_its_projections():
    r = run(Settings(n_heads=2, seed=3))
    a = random_attention(r)
    assert a.weights.shape == (1, 2, 8, 7) and a.n_layers == 1 and a.n_heads == 2
    np.testing.assert_array_equal(a.layer(0), r.weights)
    assert a.label.startswith("Random weights (seed 3): the patterns come from the seed")
    np.testing.assert_allclose(a.layers.trace(0, True).weights, r.weights)
    np.testing.assert_allclose(a.layers.ablate(0, (1,)).per_head,
                               ablation(r.module(), r.decoder_state, r.encoder_output,
                                        r.mask).per_head)
    assert a.describe(0) == a.label and a.toy is None and a.translation is None
    # one key for the same inputs in any process; another for anything else
    assert a.key == random_attention(run(Settings(n_heads=2, seed=3))).key
    assert a.key[0] == "random" and len(a.key[1]) == 32
    for other in (Settings(n_heads=2, seed=4), Settings(n_heads=2, seed=3, src="a b"),
                  Settings(n_heads=2, seed=3, mask_mode="padding", padded=(1,))):
        assert random_attention(run(other)).key != a.key


def test_trained_weights_carry_the_gold_alignment(trained):
    from xattn.alignment import evaluate
    from xattn.sources import trained_attention
    from xattn.train import embed_pair

    pair = translate("the red cat sees the dog")
    run_ = evaluate(trained, 1.0)
    a, b = trained_attention(run_, pair), trained_attention(run_, pair, untrained=True)
    x_t, x_s = embed_pair(pair, trained.embedder)
    np.testing.assert_allclose(a.layer(0), trained.model(x_t, x_s)[1])
    np.testing.assert_allclose(b.layer(0), trained.untrained(x_t, x_s)[1])
    assert a.gold.sum() == len(pair.target) and a.label.startswith("Trained on the toy task")
    assert "before training" in b.label and a.key != b.key
    assert a.toy.untrained is not None and b.toy is None and b.heldout is None


def test_a_file_s_weights_have_no_projections_and_quote_its_names(tmp_path):
    w = np.full((2, 3, 2, 4), 0.25, dtype=np.float32)
    w[1, 0, 1] = 0                                        # a row with nothing to attend
    path = tmp_path / "a.npz"
    save_attention(path, w, ["a", "b", "c", "d"], ["x", "y"], model="**m** [l](x)")
    a = file_attention(load_attention(path.read_bytes()), "<b>f</b>.npz")
    assert a.mask is None and a.layers is None and a.recipe is a.toy is a.translation is None
    assert "projections" in a.why_no_projections
    assert a.label == "Weights of `**m** [l](x)` read from `<b>f</b>.npz`."
    assert a.describe(1) == a.label + " Layer 2 of 2." and a.key[0] == "file"
    w[0, 0, 0] = [0.5, 0.5, 0, 0]                         # another file, another key
    save_attention(path, w, ["a", "b", "c", "d"], ["x", "y"], model="**m** [l](x)")
    assert file_attention(load_attention(path.read_bytes()), "<b>f</b>.npz").key != a.key


def test_shapes_are_checked():
    with pytest.raises(ValueError, match=r"weights must have shape \(n_layers, n_heads, 1, 2\)"):
        Attention(np.ones((2, 1, 2)), ("a", "b"), ("x",), None, "file", "")
    with pytest.raises(ValueError, match="source must be one of"):
        Attention(np.ones((1, 1, 1, 2)) / 2, ("a", "b"), ("x",), None, "magic", "")


def test_a_real_model_s_weights_with_and_without_sinks(tiny_dir):
    from xattn.torch_models import cross_attention, load_model

    loaded = load_model(tiny_dir, allowed=[tiny_dir])
    result = cross_attention(loaded, "the cat sat on the mat.", "le chat est assis.")
    a = model_attention(result, loaded=loaded)
    np.testing.assert_array_equal(a.weights, result.weights)
    hidden = model_attention(result, hide_sinks=True, loaded=loaded)
    assert "</s>" in a.src_tokens and "</s>" not in hidden.src_tokens
    kept = [j for j, t in enumerate(a.src_tokens) if t in hidden.src_tokens]
    expected = a.weights[..., kept]
    expected = expected / expected.sum(axis=-1, keepdims=True)
    np.testing.assert_allclose(hidden.weights, expected, rtol=1e-5)
    np.testing.assert_allclose(hidden.translation.hidden, 1 - a.weights[..., kept].sum(-1),
                               atol=1e-6)
    assert a.key != hidden.key
    trace = a.layers.trace(1, True)                              # pieces, the model's own numbers
    np.testing.assert_allclose(trace.weights, cross_attention(
        loaded, "the cat sat on the mat.", "le chat est assis.", words=False).weights[1],
        rtol=1e-4, atol=1e-6)
    assert a.layers.tokens == (result.src_pieces, result.tgt_pieces)
    assert a.layers.ablate(1, (0,)).per_head.shape == (a.n_heads,)
    assert a.layers.inputs is None and a.translation.decoder is None   # what hooks cannot do
    assert a.translation.effects is None
    bare = model_attention(result)
    assert bare.layers is None and bare.why_no_projections == "this model is not loaded here."
    assert "Layer 2 of 2" in a.describe(1)


@pytest.mark.parametrize("words", [True, False])
def test_a_numpy_model_s_record_decodes_and_measures_over_its_own_columns(words):
    """The Translation group of a model run here: decoding step by step and the effects of
    masking, both over the columns the weights have (words or pieces); no effects where sinks
    are hidden (the record's columns would not be the measure's)."""
    from xattn.encdec import cross_attention, load_encdec

    model = load_encdec()
    result = cross_attention(model, "the red cat sees the dog", words=words)
    a = model_attention(result, loaded=model)
    d = a.translation.decoder(())
    assert d.src_tokens == a.src_tokens and d.words is words
    e = a.translation.effects(1)
    assert e.src_words == a.src_tokens and e.tgt_words == a.tgt_tokens
    np.testing.assert_allclose(e.attention, a.weights[:, :, 1], rtol=1e-5, atol=1e-6)
    assert model_attention(result, hide_sinks=True, loaded=model).translation.effects is None
    assert model_attention(result).translation.effects is None          # not loaded here


def test_the_division_by_sqrt_d_head_is_switched_off_only_where_it_really_is(trained, tiny_dir):
    """``trace(layer, False)`` leaves the division out wherever the record says it can (lesson
    step 8 compares the two); a real model read through hooks says it cannot."""
    from xattn.alignment import evaluate
    from xattn.sources import trained_attention
    from xattn.torch_models import cross_attention, load_model

    pair = translate("the red cat sees the dog")
    for a in (random_attention(run(Settings(d_model=64, n_heads=2))),
              trained_attention(evaluate(trained, 1.0), pair)):
        on, off = a.layers.trace(0, True), a.layers.trace(0, False)
        assert a.layers.rescalable and off.scale == 1.0
        assert on.scale == pytest.approx(a.layers.d_head ** -0.5)
        np.testing.assert_allclose(off.scaled_scores, on.scores)
        assert not np.allclose(off.weights, on.weights)
    loaded = load_model(tiny_dir, allowed=[tiny_dir])
    model = model_attention(cross_attention(loaded, "the cat sat.", "le chat."), loaded=loaded)
    assert not model.layers.rescalable


def test_each_record_says_what_reproduces_it():
    """Facts the views need are fields of the record, computed where it is made."""
    r = run(Settings(n_heads=2, seed=3, mask_mode="padding", padded=(6,)))
    a = random_attention(r)
    assert a.meta.name == "2heads-d32-seed3" and a.recipe.seed == 3 and a.layers.d_model == 32
    assert "seed 3" in a.meta.about and a.meta.src_text == r.settings.src
    np.testing.assert_array_equal(a.meta.extras["output"], r.output)
    b = a.recipe.variant(4, 4)
    assert b.recipe.seed == 4 and b.n_heads == 4 and b.key == random_attention(run(Settings(
        n_heads=4, seed=4, mask_mode="padding", padded=(6,)))).key
    free = a.recipe.unmasked()
    assert free.mask.all() and free.layer(0)[0, 0, 6] > 0 and a.layer(0)[0, 0, 6] == 0
    plain = random_attention(run(Settings()))                       # nothing masked: a mask
    np.testing.assert_array_equal(plain.recipe.unmasked().weights, plain.weights)  # can be chosen


def test_docs_views_md_quotes_the_shipped_model_s_banner():
    """docs/views.md's example banner of `toy-en-fr` is the record's own, at the default
    layer (issue 34: it said "Layer 2 of 3", the old model's)."""
    from pathlib import Path

    from xattn.encdec import cross_attention, load_encdec
    from xattn.sources import default_layer

    model = load_encdec()
    a = model_attention(cross_attention(model, "the cat sleeps", "le chat dort"), loaded=model)
    doc = " ".join((Path(__file__).resolve().parent.parent / "docs" / "views.md")
                   .read_text(encoding="utf-8").split())
    assert f'"{a.describe(default_layer(a.n_layers) - 1)}"' in doc


def test_a_label_is_kept_as_its_sentences_for_a_page_in_another_language(trained):
    """``said``: the label's messages, which say the English ``label`` in English and the
    ``lesson`` catalog's words in another language, numbers as the language writes them."""
    from xattn.alignment import evaluate
    from xattn.record import Said
    from xattn.sources import labelled, trained_attention
    from xattn.words import say, speaking

    def said(a, lang):
        with speaking(lang):
            return " ".join(say(s.msgid, **s.values) for s in a.said)

    a = random_attention(run(Settings(n_heads=2, seed=1234)))
    assert said(a, "en") == a.label                     # the seed is a name: never "1,234"
    assert said(a, "fr") == ("Poids aléatoires (graine 1234)\u00a0: les motifs viennent de la "
                             "graine, pas de la langue.")
    assert said(a, "ar").startswith("أوزان عشوائية (البذرة 1234)")
    t = trained_attention(evaluate(trained, 1.0), translate("the red cat sees the dog"))
    assert said(t, "en") == t.label and "%" in t.label
    assert "\u202f%" in said(t, "fr") or "\xa0%" in said(t, "fr")   # "57,3 %"
    assert labelled(Said("Weights read from {name}.", {"name": "`x.npz`"})) == \
        ("Weights read from `x.npz`.", (Said("Weights read from {name}.", {"name": "`x.npz`"}),))


def test_held_out_examples_are_made_once_per_reading_and_specials(trained, monkeypatch):
    """A lesson's step asks its weights' held-out examples for its answer, its slips and its
    chart, in each language its class reads: the module runs on them once per (reading,
    specials), and what every caller shares cannot be written to."""
    import xattn.alignlab
    from xattn.alignment import evaluate
    from xattn.sources import trained_attention

    runs = []
    real = xattn.alignlab.toy_examples

    def counted(*args):
        runs.append(len(args[2]))
        return real(*args)
    monkeypatch.setattr(xattn.alignlab, "toy_examples", counted)
    a = trained_attention(evaluate(trained, 1.0), translate("the red cat sees the dog"))
    first = a.heldout(False)
    assert a.heldout(False) is first and len(runs) == 1
    assert a.heldout(False, specials=True) is not first and len(runs) == 2
    assert a.heldout(False, specials=True) is a.heldout(False, specials=True) and len(runs) == 2
    w, _ = first[0]
    with pytest.raises(ValueError, match="read-only"):
        w[...] = 0


def test_a_models_held_out_examples_are_made_once():
    import xattn.translator
    from xattn.encdec import cross_attention, load_encdec

    model = load_encdec()
    a = model_attention(cross_attention(model, "the red cat sees the dog"), loaded=model)
    b = model_attention(cross_attention(model, "the dog sees the cat"), loaded=model)
    calls = []
    real = xattn.translator.word_level

    def counted(*args):
        calls.append(1)
        return real(*args)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(xattn.translator, "word_level", counted)
        first = a.heldout(False)
        n = len(calls)
        assert n == len(first) and a.heldout(False) is first and len(calls) == n
        b.heldout(False)                         # another step's weights: their own
        assert len(calls) == 2 * n
