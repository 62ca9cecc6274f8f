"""Watch the decoder decode: the translation step by step (``xattn.decoding``, view Decode)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_helpers import chart, decode, run_app

from xattn.decoding import decoded, piece_of
from xattn.encdec import load_encdec
from xattn.figures._style import axis_labels

pytestmark = pytest.mark.usefixtures("fresh_cache")
SRC = "the red cat sees the dog"


@pytest.fixture(scope="module")
def model():
    return load_encdec()


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


def test_the_view_follows_the_link_and_keeps_a_forced_token(model):
    at = run_app({"weights": "model", "view": "Decode", "dstep": "2", "force": "2: mange",
                  "words": "false"})
    assert not at.exception, at.exception
    so_far = next(m.value for m in at.markdown if m.value.startswith("**So far**"))
    assert so_far.startswith("**So far** (3 of") and "**`▁mange` (forced)**" in so_far
    top = chart(at, "decode_top")["data"][0]
    assert sum(text.startswith("forced") for text in top["text"]) == 1   # the one taken
    rows = decode(chart(at, "decode_rows")["data"][0]["z"])
    assert rows.shape[0] == model.n_layers * model.n_heads               # layers x heads
    assert np.allclose(rows.sum(-1), 1, atol=1e-5)


def test_whole_words_decode_shows_words_not_pieces(model):
    """*Whole words* (the default) in Decode: the rows' columns are the source's words (a
    word's pieces added up, as the heatmaps show them), the target so far in words; the
    scores stay per piece (the softmax runs over pieces) and say so."""
    src = "the fast dog sees the cat"                   # fast and sees: several pieces each
    pieces = model.tokenizer.pieces(src)
    assert len(pieces) > len(src.split())
    d = decoded(model, model.tokenizer.encode(src), words=True)
    assert d.src_tokens == ("the", "fast", "dog", "sees", "the", "cat", "</s>")
    free = decoded(model, model.tokenizer.encode(src))
    groups = np.cumsum([p.startswith("▁") or p == "</s>" for p in free.src_tokens]) - 1
    merged = np.stack([free.rows[..., groups == g].sum(-1) for g in range(groups[-1] + 1)], -1)
    np.testing.assert_allclose(d.rows, merged, atol=1e-6)
    at = run_app({"weights": "model", "view": "Decode", "src": src, "dstep": "2",
                  "force": "2: rapide"})
    assert not at.exception, at.exception
    words, pieces = axis_labels(d.src_tokens)[1], axis_labels(free.src_tokens)[1]
    assert chart(at, "decode_rows")["layout"]["xaxis"]["ticktext"] == words
    assert chart(at, "decode_so_far")["layout"]["xaxis"]["ticktext"] == words
    rows = decode(chart(at, "decode_rows")["data"][0]["z"])
    assert rows.shape == (model.n_layers * model.n_heads, len(d.src_tokens))
    text = so_far(at)
    assert "in words" in text and "▁" not in text and "(forced)" in text
    assert chart(at, "decode_scores")["layout"]["xaxis"]["ticktext"] == pieces  # per piece
    assert any("a word's weight there is the sum of its pieces'" in c.value for c in at.caption)
    off = run_app({"weights": "model", "view": "Decode", "src": src, "words": "false"})
    assert chart(off, "decode_rows")["layout"]["xaxis"]["ticktext"] == pieces


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


# --- Force it and Play, clicked through AppTest -----------------------------------------------

def so_far(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**So far**"))


def continuation(at) -> list[str]:
    """Every token of the decode on the page (the rows-so-far chart's target axis, "2: ▁chat")."""
    return chart(at, "decode_so_far")["layout"]["yaxis"]["ticktext"]


def link(at) -> dict:
    return {k: v[0] if isinstance(v, list) and len(v) == 1 else v
            for k, v in at.query_params.items()}


@pytest.mark.parametrize("how", [
    "candidate",
    "typed",
    # the browser: type, then click without Enter: the word and the click reach one rerun
    "typed, then clicked at once",
])
def test_force_it_changes_the_continuation_and_its_link_reproduces_the_decode(how):
    at = run_app({"weights": "model", "view": "Decode", "dstep": "2", "words": "false"})
    free = continuation(at)
    assert free[2] == "2: ▁rouge" and "(forced)" not in so_far(at)
    if how == "candidate":
        pick = at.selectbox(key="force_pick")
        word = next(o for o in pick.options if o != pick.value)     # not the preselected one
        pick.set_value(word).run()
    else:
        word = "▁chien"
        at.text_input(key="force_typed").input("chien")
        if how == "typed":
            at.run()                                               # Enter: the value is sent
    at.button(key="force_go").click().run()
    assert not at.exception, at.exception
    forced = continuation(at)
    assert forced[:2] == free[:2] and forced[2] == f"2: {word}"    # before t: as it was
    assert f"**`{word}` (forced)**" in so_far(at) and so_far(at).startswith("**So far** (3 of")
    query = link(at)
    assert query["force"] in (f"2: {word}", "2: chien") and query["dstep"] == "2", query
    again = run_app(query)                                         # the link, opened afresh
    assert not again.exception, again.exception
    assert continuation(again) == forced and so_far(again) == so_far(at)
    for key in ("decode_rows", "decode_top", "decode_so_far"):
        assert chart(again, key)["data"] == chart(at, key)["data"], key
    assert link(again) == query


def play_tick(at, fragment_id: str) -> None:
    """One tick of a ``run_every`` fragment's timer, as the browser requests it: a rerun of
    that fragment alone (AppTest has no such call; its script runner is given the fragment's
    id, as Streamlit's AppSession does for the browser's auto-rerun message)."""
    from functools import partial
    from unittest import mock

    import streamlit.testing.v1.local_script_runner as runner

    tick = partial(runner.RerunData, fragment_id=fragment_id, is_auto_rerun=True)
    with mock.patch.object(runner, "RerunData", tick):
        at.run()


def test_play_advances_one_step_per_tick_and_stops_at_the_last():
    at = run_app({"weights": "model", "view": "Decode", "dstep": "0", "words": "false"})
    n = len(continuation(at))
    assert n > 3
    storage = at._fragment_storage        # the session's fragments, kept across AppTest runs
    before = storage.ids_registered_after(0)
    at.toggle(key="decode_play").set_value(True).run()
    assert not at.exception, at.exception[0].message
    assert at.session_state["dstep"] in (0, 1)         # turning it on does not race ahead
    (play,) = storage.ids_registered_after(0) - before  # the Play fragment, with its timer
    step = at.session_state["dstep"]
    while step < n - 1:
        play_tick(at, play)
        assert not at.exception, at.exception[0].message
        assert at.session_state["dstep"] == step + 1, (step, at.session_state["dstep"])
        step += 1
        assert so_far(at).startswith(f"**So far** ({step + 1} of {n} tokens)")
        if step < n - 1:
            assert at.toggle(key="decode_play").value
            assert link(at)["dstep"] == str(step)
    assert not at.toggle(key="decode_play").value      # the last step stopped it
    assert so_far(at).endswith("(the end)")
    at.run()                                           # no timer left to move it on
    assert not at.exception and at.session_state["dstep"] == n - 1
    assert not storage.contains(play)
