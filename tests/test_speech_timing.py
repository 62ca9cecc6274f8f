"""The alignment lab for time (xattn.speech.alignment): timing F1 of attention peaks against
word timings, and Whisper's DTW path (median filter + DTW), equal to transformers' own."""

from __future__ import annotations

import numpy as np
import pytest

from xattn.speech.alignment import (
    dtw,
    dtw_path,
    head_timing,
    median_filter,
    timing_f1,
    token_starts,
)
from xattn.speech.example import WordTiming

WORDS = (WordTiming("a", 0.10, 0.30), WordTiming("b", 0.50, 0.70), WordTiming("c", 0.90, 1.10))


def test_timing_f1_counts_each_word_once_within_the_tolerance():
    assert timing_f1([0.2, 0.6, 1.0], WORDS, 0.05).f1 == 1.0
    hit = timing_f1([0.2, 0.21, 0.66], WORDS, 0.05)     # two peaks on "a": one counts
    assert (hit.hits, hit.peaks, hit.words) == (1, 3, 3)
    assert timing_f1([0.2, 0.21, 0.66], WORDS, 0.1).hits == 2
    assert timing_f1([], WORDS, 0.1).f1 == 0.0
    with pytest.raises(ValueError, match="tolerance must be seconds"):
        timing_f1([0.2], WORDS, True)


def test_the_matching_is_the_largest_one():
    # greedy nearest-first would pair 0.26 with "a" (0.2) and lose 0.14; the largest takes both
    words = (WordTiming("a", 0.15, 0.25), WordTiming("b", 0.25, 0.35))
    assert timing_f1([0.14, 0.26], words, 0.07).hits == 2


def test_a_head_peaking_on_the_words_scores_one_and_a_flat_one_does_not():
    n_src, sec = 60, 0.02
    w = np.full((1, 2, 3, n_src), 1e-3, np.float32)
    for i, word in enumerate(WORDS):
        w[0, 0, i, int(word.middle / sec)] = 1.0                          # head 1 on time
        w[0, 1, i, 5] = 1.0                                              # head 2: one place
    scores = head_timing(w, sec, WORDS)
    assert scores.shape == (1, 2, 2)
    assert scores[0, 0].tolist() == [1.0, 1.0]
    assert scores[0, 1, 1] < 0.5


def test_median_filter_and_dtw_equal_transformers():
    torch = pytest.importorskip("torch")
    from transformers.models.whisper.generation_whisper import (
        _dynamic_time_warping,
        _median_filter,
    )

    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 40)).astype(np.float32)
    ours = median_filter(x, 7)
    theirs = _median_filter(torch.from_numpy(x), 7).numpy()
    assert np.array_equal(ours, theirs)
    for shape in ((5, 40), (8, 9), (1, 6), (6, 1)):
        cost = rng.standard_normal(shape)
        t_ours, f_ours = dtw(cost)
        t_theirs, f_theirs = _dynamic_time_warping(cost)
        assert np.array_equal(t_ours, t_theirs) and np.array_equal(f_ours, f_theirs), shape
    # sums kept in float32 as there: 1 + 1e-9 ties with 1, so the path does not go diagonal
    tie = np.array([[1.0, 1e-9], [1.0, 0.0]])
    assert [a.tolist() for a in dtw(tie)] == [a.tolist() for a in _dynamic_time_warping(tie)] \
        == [[0, 1, 1], [0, 0, 1]]


def _brute_force_path(x):
    """The least-cost monotone path from corner to corner by trying every one (tiny x)."""
    n, m = x.shape
    best = [None]

    def walk(i, j, cost, path):
        cost += x[i, j]
        path = [*path, (i, j)]
        if (i, j) == (n - 1, m - 1):
            if best[0] is None or cost < best[0][0] - 1e-12:
                best[0] = (cost, path)
            return
        for di, dj in ((1, 1), (1, 0), (0, 1)):
            if i + di < n and j + dj < m:
                walk(i + di, j + dj, cost, path)
    walk(0, 0, 0.0, [])
    return best[0]


def test_dtw_finds_the_least_cost_path_in_float32_as_whisper():
    rng = np.random.default_rng(2)
    for _ in range(15):
        x = rng.normal(size=(int(rng.integers(1, 4)), int(rng.integers(1, 6)))).astype(np.float32)
        tokens, frames = dtw(x)
        cost, _ = _brute_force_path(x.astype(np.float64))
        assert (tokens[0], frames[0], tokens[-1], frames[-1]) == (0, 0, *np.subtract(x.shape, 1))
        assert np.all(np.diff(tokens) >= 0) and np.all(np.diff(frames) >= 0)
        assert x[tokens, frames].sum() == pytest.approx(cost, abs=1e-5)


def test_the_dtw_path_follows_a_diagonal_attention_and_gives_each_token_its_start():
    n_tok, n_src = 4, 40
    w = np.full((2, n_tok, n_src), 0.01, np.float32)
    for k in range(n_tok):
        w[:, k, 10 * k:10 * k + 10] = 1.0
    tokens, positions, matrix = dtw_path(w, n_positions=n_src)
    assert matrix.shape == (n_tok, n_src)
    assert tokens[0] == 0 and positions[0] == 0 and tokens[-1] == n_tok - 1
    assert np.all(np.diff(tokens) >= 0) and np.all(np.diff(positions) >= 0)
    starts = token_starts(tokens, positions, 0.02)
    assert np.allclose(starts, [0.0, 0.2, 0.4, 0.6], atol=0.021)
    with pytest.raises(ValueError, match="shape \\(heads, tokens, positions\\)"):
        dtw_path(w[0])
