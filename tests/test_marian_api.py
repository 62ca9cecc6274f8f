"""The NumPy Marian's page-facing API on the shipped model: attention of a pair at word or
piece level, a layer's trace and ablation through the real layer, decoding step by step with
forced tokens, and the errors of each (no torch needed)."""

import numpy as np
import pytest

from xattn.ablation import ablation
from xattn.encdec import (
    cross_attention,
    decode,
    layer_ablation,
    layer_trace,
    load_encdec,
    teacher_forced,
    translate,
)
from xattn.subwords import merge_words
from xattn.torch_models import ModelAttention

SRC = "the fast cow finds a strange mouse"     # fast, finds, rapide, trouve: several pieces


@pytest.fixture(scope="module")
def model():
    return load_encdec()


@pytest.fixture(scope="module")
def pieces(model):
    return cross_attention(model, SRC, words=False)


def test_translation_then_attention_at_word_and_piece_level(model, pieces):
    words = cross_attention(model, SRC)
    assert isinstance(words, ModelAttention) and words.translated
    assert words.tgt_text == translate(model, SRC) == "la vache rapide trouve une souris étrange"
    assert words.src_tokens == (*SRC.split(), "</s>")
    assert words.tgt_tokens == (*words.tgt_text.split(), "</s>")
    assert words.weights.shape == (model.n_layers, model.n_heads, 8, 8)
    assert (len(pieces.src_pieces), len(pieces.tgt_pieces)) == (14, 15)
    np.testing.assert_allclose(
        words.weights, merge_words(pieces.weights, pieces.src_groups, pieces.tgt_groups))
    np.testing.assert_allclose(words.weights.sum(-1), 1.0, atol=1e-5)
    assert pieces.src_tokens == pieces.src_pieces and not pieces.words
    given = cross_attention(model, SRC, "la vache regarde")
    assert not given.translated and given.tgt_tokens == ("la", "vache", "regarde", "</s>")


def test_row_i_is_the_step_producing_target_token_i(model, pieces):
    run = teacher_forced(model, pieces)
    steps = decode(model, list(pieces.src_ids))
    assert steps.tgt_ids == pieces.tgt_ids and steps.finished
    np.testing.assert_allclose(steps.cross_attention, run.cross_attention, atol=1e-6)
    np.testing.assert_allclose(pieces.weights, run.cross_attention)


def test_layer_trace_is_the_layer_s_own_module(model, pieces):
    run = teacher_forced(model, pieces)
    for layer in range(model.n_layers):
        tr = layer_trace(model, pieces, layer)
        np.testing.assert_allclose(tr.weights, pieces.weights[layer], atol=1e-6)
        attn = model.decoder_layers[layer].encoder_attn
        q = run.cross_inputs[layer] @ attn.W_Q + attn.b_Q                  # (T, d_model)
        np.testing.assert_allclose(tr.q, q.reshape(len(q), model.n_heads, -1).swapaxes(0, 1),
                                   rtol=1e-5, atol=1e-5)
        assert tr.scale == pytest.approx(1 / np.sqrt(model.config.d_head))
    unscaled = layer_trace(model, pieces, 0, scale=False)
    assert unscaled.scale == 1.0
    e = np.exp(unscaled.scores - unscaled.scores.max(-1, keepdims=True))
    np.testing.assert_allclose(unscaled.weights, e / e.sum(-1, keepdims=True), atol=1e-6)
    assert (unscaled.weights.max(-1) >= layer_trace(model, pieces, 0).weights.max(-1) - 1e-6).all()


def test_layer_ablation_goes_through_the_real_layer(model, pieces):
    k = model.n_layers - 2                         # a layer with another above it
    run = teacher_forced(model, pieces)
    res = layer_ablation(model, pieces, k, heads_off=[0, 2])
    attn = model.decoder_layers[k].encoder_attn
    ref = ablation(attn, run.cross_inputs[k], run.encoder_output, None, [0, 2])
    np.testing.assert_allclose(res.per_head, ref.per_head)
    assert res.chosen == pytest.approx(ref.chosen) and res.heads_off == (0, 2)
    assert res.per_head.shape == (model.n_heads,) and (res.per_head > 0).all()
    gates = np.ones((model.n_layers, model.n_heads), np.float32)
    gates[k, [0, 2]] = 0
    off = teacher_forced(model, pieces, head_mask=gates)
    np.testing.assert_array_equal(off.cross_attention[:k + 1], run.cross_attention[:k + 1])
    assert not np.allclose(off.cross_attention[k + 1:], run.cross_attention[k + 1:])
    y, _ = attn(run.cross_inputs[k], run.encoder_output, head_mask=gates[k])
    np.testing.assert_allclose(layer_trace(model, (pieces.src_ids, pieces.tgt_ids), k).output,
                               attn(run.cross_inputs[k], run.encoder_output)[0], atol=1e-5)
    assert np.linalg.norm(y - attn(run.cross_inputs[k], run.encoder_output)[0]) > 0


def test_forcing_a_token_changes_nothing_before_it(model):
    src = model.tokenizer.encode("the king likes this red flower")
    free = decode(model, src, top_k=4)
    t = 3
    alternative = int(free.steps[t].top_ids[1])
    forced = decode(model, src, forced={t: alternative}, top_k=4)
    for a, b in zip(free.steps[:t], forced.steps[:t], strict=True):
        assert (a.token_id, a.probability) == (b.token_id, b.probability)
        np.testing.assert_array_equal(a.cross_attention, b.cross_attention)
        np.testing.assert_array_equal(a.top_ids, b.top_ids)
    step = forced.steps[t]
    assert step.forced and step.token_id == alternative and not free.steps[t].forced
    assert step.probability == pytest.approx(free.steps[t].top_probs[1])
    np.testing.assert_array_equal(step.cross_attention, free.steps[t].cross_attention)
    run = model.forward(src, forced.tgt_ids)
    np.testing.assert_allclose(forced.cross_attention, run.cross_attention, atol=1e-6)
    assert repr(forced).endswith(f"forced=[{t}])")


def test_steps_report_top_k_probabilities(model):
    src = model.tokenizer.encode("a girl runs")                 # 7 pieces: runs is 4
    steps = decode(model, src, top_k=3).steps
    for s in steps:
        assert s.top_ids.shape == s.top_probs.shape == (3,)
        assert (np.diff(s.top_probs) <= 0).all() and s.top_probs.sum() <= 1 + 1e-9
        assert s.cross_attention.shape == (model.n_layers, model.n_heads, len(src))
        assert len(src) == 7
        assert model.config.pad_token_id not in s.top_ids
    assert steps[-1].token_id == model.config.eos_token_id


def test_max_new_tokens_stops_an_unfinished_output(model):
    out = decode(model, model.tokenizer.encode("the dog sees the cat"), max_new_tokens=2)
    assert len(out.tgt_ids) == 2 and not out.finished


@pytest.mark.parametrize("call,error,match", [
    (lambda m: decode(m, [5, 0], forced=[1]), TypeError, r"forced must be a dict"),
    (lambda m: decode(m, [5, 0], forced={64: 3}), ValueError, r"each position of forced must be an int >= 0 and <= 63"),
    (lambda m: decode(m, [5, 0], forced={0: 10**6}), ValueError, r"each token id of forced must be an int >= 0 and <= 222"),
    (lambda m: decode(m, [5, 0], top_k=0), ValueError, r"top_k must be an int >= 1"),
    (lambda m: decode(m, [5, 0], max_new_tokens=True), TypeError, r"max_new_tokens must be an int; received bool"),
    (lambda m: decode(m, [5, 0], use_cache="yes"), TypeError, r"use_cache must be True or False"),
    (lambda m: m.forward([5, 0], [10**6]), ValueError, r"each of tgt_ids must be an int >= 0 and <= 222"),
    (lambda m: m.forward([], [0]), ValueError, r"src_ids must hold 1 to 128 tokens .*received 0"),
    (lambda m: m.forward("the cat", [0]), TypeError, r"src_ids must be token ids; received a string"),
    (lambda m: m.forward([5, 0], [0], head_mask=np.ones(4)), ValueError, r"head_mask must have shape \(2, 4\)"),
    (lambda m: m.layer_trace(m.forward([5, 0], [0]), 3), ValueError, r"layer must be an int >= 0 and <= 1; received 3"),
    (lambda m: cross_attention(m, "  "), ValueError, r"src must not be empty"),
    (lambda m: cross_attention(m, "the cat " * 100), ValueError, r"The source has 201 pieces; toy-en-fr reads at most 128"),
    (lambda m: cross_attention("model", "x"), TypeError, r"model must be a loaded translation model"),
    (lambda m: cross_attention(m, "x", words=1), TypeError, r"words must be True or False"),
    (lambda m: layer_trace(m, "ids", 0), TypeError, r"attention must be a ModelAttention or a pair"),
    (lambda m: layer_ablation(m, ([5, 0], [0]), 0, heads_off=[9]), ValueError, r"each of heads_off must be an int >= 0 and <= 3"),
])
def test_errors_say_expected_and_received(model, call, error, match):
    with pytest.raises(error, match=match):
        call(model)


def test_a_model_is_safe_to_share_between_threads(model):
    from concurrent.futures import ThreadPoolExecutor
    sentences = ["the cat sleeps", "a queen chases the fast wolf", "this horse sings"] * 4
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda s: translate(model, s), sentences))
    assert got == [translate(model, s) for s in sentences]
