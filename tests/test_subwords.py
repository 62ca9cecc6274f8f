"""Pieces to words and attention sinks: hand-made cases, a per-word loop as reference, invariants."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from xattn.attention import masked_softmax
from xattn.subwords import (
    hide_sinks,
    merge_words,
    sink_columns,
    word_groups,
    word_marker,
    word_texts,
)


def softmax_rows(rng, shape):
    return masked_softmax(rng.standard_normal(shape))


def groups_from_sizes(sizes):
    return np.repeat(np.arange(len(sizes)), sizes)


def merge_reference(w, src_groups, tgt_groups):
    """Plain loops: sum over a source word's pieces, mean over a target word's pieces."""
    n_tw, n_sw = tgt_groups.max() + 1, src_groups.max() + 1
    out = np.zeros((*w.shape[:-2], n_tw, n_sw))
    for a in range(n_tw):
        rows = np.flatnonzero(tgt_groups == a)
        for b in range(n_sw):
            cols = np.flatnonzero(src_groups == b)
            out[..., a, b] = w[..., rows, :][..., :, cols].sum(axis=-1).mean(axis=-1)
    return out


# ---------------------------------------------------------------- word_groups / word_texts
@pytest.mark.parametrize("pieces, groups, words", [
    (["▁un", "believ", "able", "▁cat", "s", "</s>"], [0, 0, 0, 1, 1, 2],
     ["unbelievable", "cats", "</s>"]),
    (["un", "▁do"], [0, 1], ["un", "do"]),                       # first piece without marker
    (["▁", "c", "at", "."], [0, 0, 0, 0], ["cat."]),              # bare marker starts a word
    (["▁un", "<unk>", "able"], [0, 1, 2], ["un", "<unk>", "able"]),  # special splits a word
    (["</s>", "</s>"], [0, 1], ["</s>", "</s>"]),
    (["▁a", "▁", "</s>"], [0, 1, 2], ["a", "▁", "</s>"]),           # a word of the marker alone
    ([], [], []),
])
def test_word_groups_and_texts(pieces, groups, words):
    g = word_groups(pieces)
    assert g.dtype == np.int64
    assert g.tolist() == groups
    assert word_texts(pieces, g) == words


def test_custom_specials_and_marker():
    assert word_groups(["Ġthe", "Ġca", "t", "<lang>"], specials=["<lang>"],
                       marker="Ġ").tolist() == [0, 1, 1, 2]


@pytest.mark.parametrize("pieces, marker", [
    (["▁the", "▁cat", "</s>"], "▁"),
    (["<s>", "The", "Ġcat", "Ġsat", "</s>"], "Ġ"),
    (["▁", "Ġx"], "▁"),                     # sentencepiece wins: "Ġ" may be a real character
    (["cat", "</s>"], "▁"),
    ([], "▁"),
])
def test_word_marker(pieces, marker):
    assert word_marker(pieces) == marker


def test_byte_bpe_words():
    pieces = ["<s>", "The", "Ġun", "believ", "able", "Ġcat", "</s>"]
    g = word_groups(pieces, marker=word_marker(pieces))
    assert word_texts(pieces, g, marker="Ġ") == ["<s>", "The", "unbelievable", "cat", "</s>"]


@pytest.mark.parametrize("pieces, error, match", [
    ("▁a ▁b", TypeError, "single string"),
    (["▁a", 3], TypeError, "int 3"),
])
def test_word_groups_refuses(pieces, error, match):
    with pytest.raises(error, match=match):
        word_groups(pieces)


# ---------------------------------------------------------------- merge_words
def test_merge_hand_made():
    # 2 target pieces (one word) x 3 source pieces (words of 2 and 1 pieces)
    w = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0]])
    np.testing.assert_allclose(merge_words(w, [0, 0, 1], [0, 0]), [[0.875, 0.125]])
    # target split into two words: rows stay, columns add
    np.testing.assert_allclose(merge_words(w, [0, 1, 1], [0, 1]), [[0.5, 0.5], [0.0, 1.0]])


@given(src=st.lists(st.integers(1, 4), min_size=1, max_size=6),
       tgt=st.lists(st.integers(1, 4), min_size=1, max_size=6), seed=st.integers(0, 2**32 - 1))
def test_merge_equals_loop_and_keeps_row_sums(src, tgt, seed):
    rng = np.random.default_rng(seed)
    sg, tg = groups_from_sizes(src), groups_from_sizes(tgt)
    w = softmax_rows(rng, (2, 3, len(tg), len(sg)))
    merged = merge_words(w, sg, tg)
    assert merged.shape == (2, 3, len(tgt), len(src))
    np.testing.assert_allclose(merged, merge_reference(w, sg, tg), atol=1e-12)
    np.testing.assert_allclose(merged.sum(axis=-1), 1.0, atol=1e-12)


def test_merge_keeps_float32_and_zero_rows():
    w = np.array([[0.0, 0.0, 0.0], [0.2, 0.3, 0.5]], dtype=np.float32)
    merged = merge_words(w, [0, 1, 1], [0, 1])
    assert merged.dtype == np.float32
    np.testing.assert_allclose(merged, [[0, 0], [0.2, 0.8]], atol=1e-7)


@pytest.mark.parametrize("src_groups, error, match", [
    ([1, 1, 2], ValueError, "start at 0"),
    ([0, 2, 2], ValueError, "go up by 0 or 1"),
    ([0, 1, 0], ValueError, "go up by 0 or 1"),
    ([0, 1], ValueError, r"shape \(3,\).*received shape \(2,\)"),
    ([True, False, False], TypeError, "dtype bool"),
    ([0.0, 1.0, 1.0], TypeError, "dtype float64"),
])
def test_merge_refuses_bad_groups(src_groups, error, match):
    with pytest.raises(error, match=match):
        merge_words(np.full((2, 3), 1 / 3), src_groups, [0, 1])


def test_merge_refuses_bad_weights():
    with pytest.raises(ValueError, match=r"\(\.\.\., n_tgt, n_src\); received shape \(3,\)"):
        merge_words(np.ones(3), [0, 0, 1], [0])
    with pytest.raises(ValueError, match="finite"):
        merge_words(np.array([[np.nan, 1.0]]), [0, 1], [0])


# ---------------------------------------------------------------- sinks
@pytest.mark.parametrize("tokens, expected", [
    (["▁Hello", "▁,", "▁world", "!", "</s>"], [False, True, False, True, True]),
    (["<pad>", "<unk>", "▁", "...", "«", "▁l'", "$", "3"], [True, True, True, True, True, False,
                                                             False, False]),
    ([], []),
])
def test_sink_columns(tokens, expected):
    s = sink_columns(tokens)
    assert s.dtype == np.bool_
    assert s.tolist() == expected


def test_hide_sinks_renormalises_and_reports_mass():
    w = np.array([[[0.2, 0.3, 0.5], [0.0, 0.0, 1.0], [0.1, 0.0, 0.9]]])
    with np.errstate(all="raise"):   # no division by zero on the empty row, no NaN
        kept, removed = hide_sinks(w, np.array([False, True, True]))
    np.testing.assert_allclose(kept, [[[1.0], [0.0], [1.0]]])
    np.testing.assert_allclose(removed, [[0.8, 1.0, 0.9]])


@given(seed=st.integers(0, 2**32 - 1), n_src=st.integers(1, 7))
def test_hide_sinks_invariants(seed, n_src):
    rng = np.random.default_rng(seed)
    w = softmax_rows(rng, (2, 4, n_src))
    sinks = rng.random(n_src) < 0.4
    kept, removed = hide_sinks(w, sinks)
    assert kept.shape == (2, 4, int((~sinks).sum()))
    np.testing.assert_allclose(removed, w[..., sinks].sum(axis=-1))
    expected = 1.0 if not sinks.all() else 0.0
    np.testing.assert_allclose(kept.sum(axis=-1), expected, atol=1e-12)
    # the kept columns keep their proportions
    if (~sinks).sum() >= 2:
        ratio = kept[..., 0] / kept[..., 1]
        np.testing.assert_allclose(ratio, w[..., ~sinks][..., 0] / w[..., ~sinks][..., 1])


@pytest.mark.parametrize("sinks, error, match", [
    (np.array([0, 1, 0]), TypeError, "boolean array.*dtype int64"),
    (np.array([True, False]), ValueError, r"shape \(2,\) and weights of shape \(2, 3\)"),
])
def test_hide_sinks_refuses(sinks, error, match):
    with pytest.raises(error, match=match):
        hide_sinks(np.full((2, 3), 1 / 3), sinks)
