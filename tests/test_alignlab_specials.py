"""Special tokens in the alignment lab (``xattn.alignlab.specials``), and ties.

The issue-27 repro: the shipped model (as it was, 3 + 3 layers; its weights on "the red cat
sees the dog" are kept in tests/data) against a correct one-based Pharaoh file for the pair,
``1-1 2-3 3-2 4-4 5-5 6-6``. Scoring ``</s>`` as a word tied every layer at AER 0.538 and the
tie went silently to layer 1; without it layer 3 is the best, at 0.167, as the corpus's gold
says.
"""

from pathlib import Path

import numpy as np
import pytest

from xattn.alignlab import (
    GoldLinks,
    indexing_warnings,
    leave_out,
    read_gold,
    score_heads,
    special_positions,
    unscored_specials,
)
from xattn.attnfile import load_attention

REPRO = Path(__file__).resolve().parent / "data" / "toy-en-fr-3x3-red-cat.npz"
GOLD = "1-1 2-3 3-2 4-4 5-5 6-6\n"


@pytest.fixture(scope="module")
def repro():
    loaded = load_attention(REPRO.read_bytes())
    gold = read_gold(GOLD, format="pharaoh", first_index=1, order="src-tgt")
    return loaded, gold


def test_the_repro_file_is_the_pair_on_screen(repro):
    loaded, _ = repro
    assert loaded.src_tokens == ("the", "red", "cat", "sees", "the", "dog", "</s>")
    assert loaded.tgt_tokens == ("le", "chat", "rouge", "voit", "le", "chien", "</s>")
    assert loaded.weights.shape == (3, 4, 7, 7)


def test_end_token_is_not_scored_unless_the_gold_links_it(repro):
    loaded, gold = repro
    w, src, tgt = np.asarray(loaded.weights), loaded.src_tokens, loaded.tgt_tokens
    # Before: </s> scored as a word. Every layer ties, and the tie is said.
    naive = score_heads([(w, gold.pairs[0])])
    np.testing.assert_allclose(naive.layer_aer, [7 / 13] * 3)
    assert naive.best_layers == (0, 1, 2)
    # Now: </s> left out on both sides, because the file links neither.
    rows, cols = unscored_specials(gold.pairs[0], src, tgt)
    assert rows.tolist() == cols.tolist() == [False] * 6 + [True]
    scores = score_heads([(leave_out(w, rows, cols), gold.pairs[0])])
    assert scores.best_layer == 2 and scores.best_layers == (2,)
    assert round(float(scores.layer_aer[2]), 3) == 0.167
    np.testing.assert_allclose(scores.layer_aer, [0.5, 0.5, 1 / 6])
    # The same as slicing the words out by hand, head by head.
    by_hand = score_heads([(w[:, :, :6, :6], gold.pairs[0])])
    np.testing.assert_array_equal(scores.counts, by_hand.counts)
    # A gold that links </s> to </s> scores it.
    linked = read_gold(GOLD.strip() + " 7-7\n", format="pharaoh", first_index=1,
                       order="src-tgt")
    rows, cols = unscored_specials(linked.pairs[0], src, tgt)
    assert not rows.any() and not cols.any()


def test_the_one_based_warning_judges_words_only(repro):
    loaded, gold = repro
    tokens = [(loaded.tgt_tokens, loaded.src_tokens)]
    assert indexing_warnings(gold, tokens=tokens) == []
    # Without the tokens, the last position is </s>: the old, false warning.
    assert "Is the file zero-based?" in indexing_warnings(gold, [(7, 7)])[0]
    # A model that starts with a special token: its first word is position 1.
    zero = read_gold("1-1 2-2\n", format="pharaoh", first_index=0, order="src-tgt")
    starts = [(["<s>", "x", "y"], ["<s>", "a", "b"])]
    assert indexing_warnings(zero, tokens=starts) == []
    assert "No link uses the first source or target word in 2 links" in \
        indexing_warnings(zero, [(3, 3)])[0]
    # A file that misses a last word is still caught.
    short = read_gold("1-1\n", format="pharaoh", first_index=1, order="src-tgt")
    warned = indexing_warnings(short, tokens=[(["x", "y", "</s>"], ["a", "b", "</s>"])])
    assert warned == ["No link uses the last source or target word of any sentence in 1 "
                      "link. Is the file zero-based? Read its positions as counting from 0."]


def test_special_positions_and_leave_out():
    assert special_positions(["</s>", "<pad>", "[SEP]", "<|endoftext|>", "<2fr>", "cat", "<",
                              "a<b", "▁the"]).tolist() == [True] * 5 + [False] * 4
    w = np.full((2, 3, 3), 1 / 3)                                           # (H, T, S)
    out = leave_out(w, np.array([False, False, True]), np.array([True, False, False]))
    assert (out[:, 2] == 0).all() and (out[:, :, 0] == 0).all()
    np.testing.assert_array_equal(out[:, :2, 1:], w[:, :2, 1:])           # kept as they are
    assert w[0, 2, 0] == 1 / 3                                              # a copy
    with pytest.raises(ValueError, match="rows must have shape \\(n_tgt,\\) and cols "
                                         "\\(n_src,\\)"):
        leave_out(w, np.zeros(2, bool), np.zeros(3, bool))
    with pytest.raises(TypeError, match="tokens must be a sequence of strings; received the "
                                        "string"):
        special_positions("</s>")
    with pytest.raises(TypeError, match="gold must be a GoldLinks"):
        unscored_specials({(0, 0)}, ["a"], ["b"])


def test_ties_between_layers_and_heads_are_reported_as_ties():
    gold = GoldLinks({(0, 0), (1, 1)})
    eye = np.eye(2)
    w = np.stack([np.stack([eye, eye[::-1]]), np.stack([eye[::-1], eye])])   # (2, 2, 2, 2)
    s = score_heads([(w, gold)])
    assert s.best_heads == ((0, 0), (1, 1)) and s.best_head == (0, 0)
    assert s.best_layers == (0, 1)                        # both averages: 0.5 / 0.5 rows
    w[1, 0] = eye
    s = score_heads([(w, gold)])
    assert s.best_layers == (1,) and s.best_heads == ((0, 0), (1, 0), (1, 1))
    none = score_heads([(np.zeros((2, 1, 2, 2)), GoldLinks())])
    assert none.best_layers == () and none.best_heads == ()
