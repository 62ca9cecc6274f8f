"""The Alignment lab on the page: the toy corpus's gold for the trained module and the
shipped model, a gold file for any weights, with the one-based trap and malformed lines."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart, decode, run_app

from xattn.alignlab import score_heads
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
    producing = aer_grid(at)
    assert producing.shape == (3, 5)                     # 3 layers x (4 heads + average)
    text = " ".join(m.value for m in at.markdown)
    best = int(np.nanargmin(producing[:, -1]))
    assert f"**Best layer: {best + 1}** of 3" in text
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
