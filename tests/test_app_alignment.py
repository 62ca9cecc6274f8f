"""The Alignment lab on the page: the toy corpus's gold for the trained module and the
shipped model, a gold file for any weights, with the one-based trap and malformed lines."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from apptest_helpers import chart, decode, run_app

from xattn.alignlab import read_gold, score_heads
from xattn.sources import HELDOUT

pytestmark = pytest.mark.usefixtures("fresh_cache")


def aer_grid(at) -> np.ndarray:
    return decode(chart(at, "aer_chart")["data"][0]["z"])


def test_the_trained_module_is_scored_on_held_out_sentences(trained):
    from xattn.alignlab import toy_examples

    at = run_app({"weights": "trained", "view": "Alignment"})
    assert not at.exception, at.exception
    expected = score_heads(toy_examples(trained.model, trained.embedder,
                                        trained.heldout[:HELDOUT]))
    np.testing.assert_allclose(aer_grid(at)[:, :-1], expected.aer, rtol=1e-5)
    assert any(f"AER {expected.layer_aer[0]:.3f}" in m.value for m in at.markdown)


def test_the_shipped_model_names_its_best_layer_and_reading_rows_change_it():
    at = run_app({"weights": "model", "view": "Alignment"})
    assert not at.exception, at.exception
    from xattn.encdec import load_encdec

    model = load_encdec()
    producing = aer_grid(at)
    assert producing.shape == (model.n_layers, model.n_heads + 1)   # + the average
    text = " ".join(m.value for m in at.markdown)
    best = int(np.nanargmin(producing[:, -1]))
    assert f"**Best layer: {best + 1}** of {model.n_layers}" in text
    at.toggle(key="reads").set_value(True).run()
    assert not np.allclose(aer_grid(at), producing)
    at.selectbox(key="links").set_value("intersection").run()
    assert at.query_params["links"] in ("intersection", ["intersection"])


def upload_gold(at, text: str, first: int):
    at.radio(key="gold").set_value("file").run()
    at.radio(key="gold_first").set_value(first)
    at.file_uploader(key="gold_upload").set_value(("gold.txt", text.encode(), "text/plain"))
    return at.run()


def test_a_gold_file_for_the_pair_on_screen_and_the_one_based_trap():
    at = run_app({"view": "Alignment"})                  # random weights: 7 x 8 tokens
    gold = "1-1 2-3 3-2 4-4 5-5 6-6 7-7 7-8\n"                 # one-based, src-tgt
    at = upload_gold(at, gold, 1)
    assert not at.exception and aer_grid(at).shape == (1, 5)
    at = upload_gold(at, gold, 0)                        # read as zero-based: off the end
    texts = " ".join([w.value for w in at.warning] + [e.value for e in at.error])
    assert "one-based" in texts or "1-based" in texts or "outside" in texts


def test_a_malformed_gold_file_is_refused_with_its_line_numbers():
    at = upload_gold(run_app({"view": "Alignment"}), "1-1 2-2\n3_3 x-1\n", 1)
    assert not at.exception
    problems = at.code[0].value
    assert "line 2" in problems and "3_3" in problems


REPRO = Path(__file__).resolve().parent / "data" / "toy-en-fr-3x3-red-cat.npz"
RED_CAT_GOLD = "1-1 2-3 3-2 4-4 5-5 6-6\n"        # one-based, "the red cat sees the dog"


def test_the_end_token_is_not_scored_against_a_gold_file_issue_27_repro():
    """The shipped model as it was (its weights on the pair, as an attention file): a correct
    one-based file gives layer 3 best with AER 0.167, and no zero-based warning."""
    at = run_app({"weights": "file", "view": "Alignment"})
    at.file_uploader(key="upload").set_value(("red-cat.npz", REPRO.read_bytes(),
                                              "application/octet-stream")).run()
    at = upload_gold(at, RED_CAT_GOLD, 1)
    assert not at.exception, at.exception
    assert [w.value for w in at.warning] == []
    text = " ".join(m.value for m in at.markdown)
    assert "**Best layer: 3** of 3 (its heads' average: AER 0.167" in text
    np.testing.assert_allclose(aer_grid(at)[:, -1], [0.5, 0.5, 1 / 6], rtol=1e-6)
    assert any("Not scored: `</s>`" in c.value for c in at.caption)


def test_a_gold_file_on_the_shipped_model_scores_words_only():
    """Whatever the shipped model is: the page's AER grid equals the words' own score (the
    ``</s>`` row and column sliced off by hand)."""
    from xattn.encdec import cross_attention, load_encdec

    a = cross_attention(load_encdec(), "the red cat sees the dog")
    assert a.src_tokens[-1] == a.tgt_tokens[-1] == "</s>"
    gold = read_gold(RED_CAT_GOLD, format="pharaoh", first_index=1, order="src-tgt")
    expected = score_heads([(a.weights[:, :, :-1, :-1], gold.pairs[0])])
    at = upload_gold(run_app({"weights": "model", "view": "Alignment"}), RED_CAT_GOLD, 1)
    assert not at.exception, at.exception
    assert [w.value for w in at.warning] == []
    grid = aer_grid(at)
    np.testing.assert_allclose(grid[:, :-1], expected.aer, rtol=1e-6)
    np.testing.assert_allclose(grid[:, -1], expected.layer_aer, rtol=1e-6)


def test_tied_layers_are_named_as_ties():
    from xattn.ui.views.alignment import best_text

    gold = read_gold("1-1 2-2\n", format="pharaoh", first_index=1, order="src-tgt")
    eye = np.eye(2)
    w = np.stack([np.stack([eye, eye[::-1]]), np.stack([eye[::-1], eye])])   # (2, 2, 2, 2)
    text = best_text(score_heads([(w, gold.pairs[0])]))
    assert text.startswith("**No best layer: all 2 tie**")
    assert "2 heads tie for best (AER 0.000): layer 1, head 1 and layer 2, head 2." in text
    w = np.concatenate([w, np.stack([eye[::-1]] * 2)[None]])    # a third layer, all wrong
    text = best_text(score_heads([(w, gold.pairs[0])]))
    assert text.startswith("**Best layers, tied: 1 and 2** of 3")


def test_a_gold_file_of_one_problem_says_one_problem():
    at = upload_gold(run_app({"view": "Alignment"}), "1-1 x\n", 1)
    assert "(1 problem, one a line below)" in at.error[0].value
