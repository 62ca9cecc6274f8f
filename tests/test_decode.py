"""Watch the decoder decode: the translation step by step (``xattn.decoding``, view Decode)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_helpers import chart, decode, run_app

from xattn.decoding import decoded, piece_of
from xattn.marian import load_marian

pytestmark = pytest.mark.usefixtures("fresh_cache")
SRC = "the red cat sees the dog"


@pytest.fixture(scope="module")
def model():
    return load_marian()


def test_each_step_s_rows_are_the_teacher_forced_pass_s_rows(model):
    src_ids = model.tokenizer.encode(SRC)
    d = decoded(model, src_ids)
    tgt_ids = [model.tokenizer.encoder[p] for p in d.tokens]
    forced = model.forward(src_ids, tgt_ids, logits=False).cross_attention   # (L, H, T, S)
    np.testing.assert_allclose(d.rows.transpose(1, 2, 0, 3), forced, atol=1e-6)
    assert d.finished and d.tokens[-1] == "</s>" and "".join(d.tokens[:3]) == "▁le▁chat▁rouge"


def test_forcing_a_token_changes_nothing_before_it(model):
    src_ids = model.tokenizer.encode(SRC)
    free = decoded(model, src_ids)
    d = decoded(model, src_ids, ((2, "mange"),))
    assert d.tokens[:2] == free.tokens[:2] and d.tokens[2] == "▁mange" and d.forced[2]
    np.testing.assert_array_equal(d.rows[:3], free.rows[:3])    # step 2's row: same prefix
    assert not np.array_equal(d.rows[3], free.rows[3])          # after it: another input
    assert d.top[0][0][0] == d.tokens[0] and abs(sum(p for _, p in d.top[0]) - 1) < 0.5


def test_a_forced_token_outside_the_vocabulary_is_refused_by_name(model):
    with pytest.raises(ValueError, match="not in this model's target vocabulary"):
        piece_of(model, "Ω")
    assert piece_of(model, "▁chien") == piece_of(model, "chien")


def test_the_view_follows_the_link_and_keeps_a_forced_token():
    at = run_app({"weights": "model", "view": "Decode", "dstep": "2", "force": "2: mange"})
    assert not at.exception, at.exception
    so_far = next(m.value for m in at.markdown if m.value.startswith("**So far**"))
    assert so_far.startswith("**So far** (3 of") and "**`▁mange` (forced)**" in so_far
    top = chart(at, "decode_top")["data"][0]
    assert sum(text.startswith("forced") for text in top["text"]) == 1   # the one taken
    rows = decode(chart(at, "decode_rows")["data"][0]["z"])
    assert rows.shape[0] == 3 * 4 and np.allclose(rows.sum(-1), 1, atol=1e-5)  # layers x heads


def test_reading_shows_the_step_after_the_word():
    at = run_app({"weights": "model", "view": "Decode", "dstep": "1", "reads": "true"})
    assert not at.exception
    title = chart(at, "decode_rows")["layout"]["title"]["text"]
    assert title.startswith("Step 2, reading 1: ▁chat:")
    at = run_app({"weights": "model", "view": "Decode", "dstep": "1"})
    assert chart(at, "decode_rows")["layout"]["title"]["text"].startswith("Step 1, producing")


def test_a_file_says_in_one_line_why_it_cannot_decode(tmp_path):
    at = run_app({"weights": "random", "view": "Decode"})
    assert any("Decode needs a model that runs here in NumPy" in i.value for i in at.info)
    assert json.dumps(dict(at.query_params))
