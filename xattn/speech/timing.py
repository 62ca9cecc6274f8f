"""How well a Whisper head tells time: each word's attention peak, or Whisper's DTW path,
against the true word spans, as an F1 at a tolerance (50 ms, 100 ms).

The words a model wrote are matched to the words said by their longest common subsequence
(the same word, in order); a matched word is *on time* at tolerance ``tau``

- by its **peak** when the encoder position its row attends most (position ``j`` = ``j *
  0.02`` s, Whisper's ``time_precision``) lies within ``tau`` of the word's span (inside it, or
  at most ``tau`` before its start or after its end);
- by **DTW** when the start and the end that Whisper's ``find_alignment`` gives it are each
  within ``tau`` of the true ones.

Precision = on-time words / words written, recall = on-time words / words said, F1 their
harmonic mean; counts add up over clips (``TimingCounts``) before the ratios are taken.
Rows of ``cross_attentions`` are the steps that *produce* the words (a greedy
``Transcription``'s, its last row the end of text when it finished).

``dtw_word_times`` is OpenAI's ``find_alignment`` (``whisper/timing.py``): the alignment heads'
weights over the clip's own frames renormalised, then the path of ``xattn.speech.alignment``
(``dtw_path``: standardised over tokens, median-filtered over time (width 7), averaged, the path
of least ``-weight`` from the first token and frame to the last, all in float64 but the path's
float32 sums); a word starts where the path first reaches its row.

Two timing F1s, on purpose: this module scores what a model *wrote* against the words *said*
(words matched by text, each within a tolerance of its span), the toy model's card's measure;
``xattn.speech.alignment.timing_f1`` scores attention peaks against word middles with no text
to match (a clip's rows may be any tokens), the alignment lab's and the lesson's. The DTW path
is one, ``xattn.speech.alignment``'s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import shape_text
from xattn.speech.alignment import TOLERANCES, dtw_path, token_starts

__all__ = ["SECONDS_PER_POSITION", "TimingCounts", "match_words", "peak_times",
           "dtw_word_times", "peak_counts", "dtw_counts"]

SECONDS_PER_POSITION = 0.02          # Whisper's encoder: one position per 20 ms


@dataclass(frozen=True, eq=False)
class TimingCounts:
    """On-time words of every head at every tolerance, summed over clips.

    Attributes
    ----------
    on_time : ndarray of shape (n_tolerances, n_layers, n_heads), int
    written, said : int
        Words the model wrote (its end of text left out) and words said.
    tolerances : tuple of float
        Seconds.
    """

    on_time: np.ndarray
    written: int
    said: int
    tolerances: tuple[float, ...]

    def __add__(self, other: TimingCounts) -> TimingCounts:
        return TimingCounts(self.on_time + other.on_time, self.written + other.written,
                            self.said + other.said, self.tolerances)

    def f1(self) -> np.ndarray:
        """(n_tolerances, n_layers, n_heads): 2 on-time / (written + said), 0 with no words."""
        return 2 * self.on_time / max(self.written + self.said, 1)

    def __repr__(self) -> str:
        return (f"TimingCounts(written={self.written}, said={self.said}, "
                f"tolerances={self.tolerances})")


def match_words(written, said) -> list[tuple[int, int]]:
    """(i, j) pairs with ``written[i] == said[j]``: a longest common subsequence, the earliest
    pairs preferred where there are several.

    Examples
    --------
    >>> match_words(["one", "two", "two"], ["one", "two"])
    [(0, 0), (1, 1)]
    """
    n, m = len(written), len(said)
    table = np.zeros((n + 1, m + 1), np.int64)          # (n + 1, m + 1) LCS lengths of suffixes
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            table[i, j] = table[i + 1, j + 1] + 1 if written[i] == said[j] else \
                max(table[i + 1, j], table[i, j + 1])
    pairs, i, j = [], 0, 0
    while i < n and j < m:
        if written[i] == said[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
        elif table[i + 1, j] >= table[i, j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _check_cross(cross_attentions, n_words: int) -> np.ndarray:
    a = np.asarray(cross_attentions, np.float64)
    if a.ndim != 4 or a.shape[2] < n_words:
        raise ValueError(f"cross_attentions must be (n_layers, n_heads, n_tgt, n_src) with a row "
                         f"for each of the {n_words} words written; received {shape_text(a)}.")
    return a


def peak_times(cross_attentions) -> np.ndarray:
    """Seconds of each row's most attended position, (n_layers, n_heads, n_tgt)."""
    a = _check_cross(cross_attentions, 0)
    return np.argmax(a, axis=-1) * SECONDS_PER_POSITION


def _spans(spans, n: int) -> np.ndarray:
    s = np.asarray(spans, np.float64).reshape(-1, 2)                # (n_said, 2)
    if len(s) != n or np.any(s[:, 1] < s[:, 0]):
        raise ValueError(f"spans must give (start, end), start <= end, for each of the {n} "
                         f"words said; received {len(s)} spans.")
    return s


def peak_counts(cross_attentions, written, said, spans,
                tolerances=TOLERANCES) -> TimingCounts:
    """Every head's on-time words by its attention peak, for one clip."""
    a, s = _check_cross(cross_attentions, len(written)), _spans(spans, len(said))
    tol = np.asarray(tolerances, np.float64)
    on_time = np.zeros((len(tol), *a.shape[:2]), np.int64)
    for i, j in match_words(written, said):
        t = np.argmax(a[:, :, i], axis=-1) * SECONDS_PER_POSITION        # (L, H)
        off = np.maximum(0.0, np.maximum(s[j, 0] - t, t - s[j, 1]))     # (L, H) outside span
        on_time += off[None] <= tol[:, None, None] + 1e-9
    return TimingCounts(on_time, len(written), len(said), tuple(float(x) for x in tol))


def dtw_word_times(cross_attentions, heads, n_positions: int,
                   medfilt_width: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Start and end seconds of each produced token (one a word here), as Whisper's
    ``find_alignment`` computes them from ``heads`` [(layer, head), ...] (from 0).

    ``n_positions``: the encoder positions the clip's own audio covers (its frames // 2);
    the rows' weights are cut to them and renormalised, as Whisper's softmax over them is.
    Returns (starts, ends), each (n_tgt - 1,): the last row (end of text) closes the last word.
    """
    a = _check_cross(cross_attentions, 2)
    w = np.stack([a[layer, head, :, :n_positions] for layer, head in heads])   # (k, T, S)
    tokens, frames, _ = dtw_path(w / w.sum(-1, keepdims=True), width=medfilt_width)
    times = token_starts(tokens, frames, SECONDS_PER_POSITION)                 # (T,)
    return times[:-1], times[1:]


def dtw_counts(cross_attentions, written, said, spans, n_positions: int,
               tolerances=TOLERANCES, heads=None) -> TimingCounts:
    """On-time words by the DTW path, for one clip (``cross_attentions`` holding a row for each
    word written and one for the end of text): of every head alone (``heads`` None; counts
    (n_tolerances, n_layers, n_heads)), or of ``heads`` [(layer, head), ...] together, as
    Whisper's alignment heads are used (counts (n_tolerances, 1, 1))."""
    a, s = _check_cross(cross_attentions, len(written) + 1), _spans(spans, len(said))
    tol = np.asarray(tolerances, np.float64)
    groups = [[(layer, head)] for layer in range(a.shape[0]) for head in range(a.shape[1])] \
        if heads is None else [list(heads)]
    on_time = np.zeros((len(tol), len(groups)), np.int64)
    pairs = match_words(written, said)
    for g, group in enumerate(groups if pairs else ()):
        starts, ends = dtw_word_times(a[:, :, :len(written) + 1], group, n_positions)
        for i, j in pairs:
            off = max(abs(starts[i] - s[j, 0]), abs(ends[i] - s[j, 1]))
            on_time[:, g] += off <= tol + 1e-9
    shape = a.shape[:2] if heads is None else (1, 1)
    return TimingCounts(on_time.reshape(len(tol), *shape), len(written), len(said),
                        tuple(float(x) for x in tol))
