"""How well cross-attention tells time: each head scored against word timings, and the path
Whisper's word timestamps follow.

``timing_f1``: the peak of a head's attention row for each output token is a moment of the clip;
a peak is a hit when it lies within ``tolerance`` seconds of a word's middle, each word matched
at most once (the largest such matching, as onset detection is scored: precision = hits /
peaks, recall = hits / words). Like AER for text alignment, but in time: F1 at 50 and 100 ms
(``head_timing``).

``dtw_path``: as Whisper (``whisper/timing.py``, transformers' ``_extract_token_timestamps``)
computes it: the chosen heads' rows cut to the clip, each normalised over tokens
(``(w - mean) / std``), a median filter of width 7 along time, the mean over heads, then dynamic
time warping on its negation (``dtw``); ``token_starts`` reads each token's start off the path.
This is the one DTW path: the toy speech model's card (``xattn.speech.timing``) follows it too,
with its own F1 of words written against words said (that one needs the text; this one does not).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int

__all__ = ["HitRate", "timing_f1", "head_timing", "median_filter", "dtw", "dtw_path",
           "token_starts", "TOLERANCES"]

TOLERANCES = (0.05, 0.10)         # seconds: 50 and 100 ms


@dataclass(frozen=True)
class HitRate:
    """Peaks against words at one tolerance."""

    hits: int
    peaks: int
    words: int

    @property
    def precision(self) -> float:
        return self.hits / self.peaks if self.peaks else 0.0

    @property
    def recall(self) -> float:
        return self.hits / self.words if self.words else 0.0

    @property
    def f1(self) -> float:
        total = self.peaks + self.words
        return 2 * self.hits / total if total else 0.0


def _matched(peaks: np.ndarray, targets: np.ndarray, tolerance: float) -> int:
    """The largest one-to-one matching of points on a line within ``tolerance`` (two
    pointers over both sorted: optimal for points on a line)."""
    p, t = np.sort(peaks), np.sort(targets)
    i = j = hits = 0
    while i < len(p) and j < len(t):
        if abs(p[i] - t[j]) <= tolerance:
            hits, i, j = hits + 1, i + 1, j + 1
        elif p[i] < t[j]:
            i += 1
        else:
            j += 1
    return hits


def _check_tolerance(tolerance) -> float:
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or \
            not 0 < tolerance <= 10:
        raise ValueError(f"tolerance must be seconds above 0, at most 10; received "
                         f"{tolerance!r}.")
    return float(tolerance)


def timing_f1(peaks, words, tolerance: float = 0.1) -> HitRate:
    """Peak times (seconds) against word timings (each with ``middle`` in seconds, e.g.
    ``xattn.speech.example.WordTiming``) at ``tolerance`` seconds.

    Examples
    --------
    >>> from xattn.speech.example import WordTiming
    >>> timing_f1([0.3, 0.9], [WordTiming("a", 0.2, 0.4), WordTiming("b", 0.5, 0.7)]).f1
    0.5
    """
    tol = _check_tolerance(tolerance)
    p = np.asarray(peaks, np.float64).ravel()
    t = np.array([w.middle for w in words], np.float64)
    return HitRate(_matched(p, t, tol), len(p), len(t))


def head_timing(weights, seconds_per_position: float, words, rows=None,
                tolerances=TOLERANCES) -> np.ndarray:
    """Timing F1 of every head: ``weights`` (n_layers, n_heads, n_tgt, n_src) over encoder
    positions of ``seconds_per_position`` each (0.02 for Whisper); ``rows``: the output
    tokens scored (default all). Returns (n_layers, n_heads, len(tolerances))."""
    w = np.asarray(weights)
    if w.ndim != 4:
        raise ValueError(f"weights must have shape (n_layers, n_heads, n_tgt, n_src); "
                         f"received shape {w.shape}.")
    if not seconds_per_position > 0:
        raise ValueError(f"seconds_per_position must be above 0; received "
                         f"{seconds_per_position!r}.")
    picked = w if rows is None else w[:, :, list(rows)]
    peaks = (np.argmax(picked, axis=-1) + 0.5) * seconds_per_position   # (L, H, T)
    out = np.zeros(w.shape[:2] + (len(tolerances),))
    for index in np.ndindex(*w.shape[:2]):
        for k, tol in enumerate(tolerances):
            out[index + (k,)] = timing_f1(peaks[index], words, tol).f1
    return out


def median_filter(x, width: int = 7) -> np.ndarray:
    """The median over a window of ``width`` (odd) along the last axis, the ends padded by
    reflection, as Whisper's ``median_filter`` (a row shorter than half the window is left
    as it is); float64 stays float64, anything else is float32."""
    width = check_int(width, "width", minimum=1)
    if width % 2 == 0:
        raise ValueError(f"width must be odd; received {width}.")
    x = _floats(x)
    pad = width // 2
    if x.shape[-1] <= pad:
        return x.copy()
    padded = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(pad, pad)], mode="reflect")
    windows = np.lib.stride_tricks.sliding_window_view(padded, width, axis=-1)
    return np.median(windows, axis=-1).astype(x.dtype)


def _floats(x) -> np.ndarray:
    """``x`` as float64 if it is, else as float32 (the page's weights)."""
    x = np.asarray(x)
    return x if x.dtype == np.float64 else x.astype(np.float32)


def dtw(cost) -> tuple[np.ndarray, np.ndarray]:
    """Whisper's ``dtw_cpu``: the cheapest monotone path through ``cost`` (n_tokens,
    n_frames) from (0, 0) to the last cell, in steps down, right or diagonal (ties prefer
    right). Returns (token index, frame index) of each cell of the path, in order.

    The summed costs are float32, as in OpenAI's ``dtw_cpu`` and transformers'
    ``_dynamic_time_warping``; a float32 ``cost`` is added in float32, any other in float64."""
    x = np.asarray(cost)
    x = x if x.dtype == np.float32 else x.astype(np.float64)
    if x.ndim != 2 or 0 in x.shape or not np.isfinite(x).all():
        raise ValueError(f"cost must be a finite 2-D array with cells; received shape "
                         f"{x.shape}.")
    n, m = x.shape
    total = np.full((n + 1, m + 1), np.inf, np.float32)
    trace = -np.ones((n + 1, m + 1), np.int8)
    total[0, 0] = 0
    for j in range(1, m + 1):
        for i in range(1, n + 1):
            c0, c1, c2 = total[i - 1, j - 1], total[i - 1, j], total[i, j - 1]
            if c0 < c1 and c0 < c2:
                c, t = c0, 0
            elif c1 < c0 and c1 < c2:
                c, t = c1, 1
            else:
                c, t = c2, 2
            total[i, j] = x[i - 1, j - 1] + c
            trace[i, j] = t
    trace[0, :], trace[:, 0] = 2, 1
    i, j, path = n, m, []
    while i > 0 or j > 0:
        path.append((i - 1, j - 1))
        step = trace[i, j]
        i, j = (i - 1, j - 1) if step == 0 else (i - 1, j) if step == 1 else (i, j - 1)
    tokens, frames = np.array(path[::-1]).T
    return tokens, frames


def dtw_path(weights, n_positions: int | None = None, *, width: int = 7):
    """Whisper's word-timing path over the chosen heads' cross-attention.

    Parameters
    ----------
    weights : array_like of shape (n_chosen_heads, n_tokens, n_src)
        The rows of the text tokens (Whisper leaves out its prompt and the end token). Float64
        weights are filtered in float64 (``xattn.speech.timing``), any others in float32.
    n_positions : int, optional
        The encoder positions the clip covers (the rest is padding): columns kept.
    width : int, default 7
        Median filter width.

    Returns
    -------
    (token index, position index) of each cell of the path, and the matrix it ran on
    (n_tokens, n_positions): standardised over tokens (a column that does not vary is 0),
    filtered, averaged over heads; the path takes its negation in float32, as Whisper does.
    """
    w = _floats(weights)
    if w.ndim != 3 or 0 in w.shape:
        raise ValueError(f"weights must have shape (heads, tokens, positions), each at least "
                         f"1; received shape {w.shape}.")
    if n_positions is not None:
        w = w[:, :, :check_int(n_positions, "n_positions", minimum=1, maximum=w.shape[2])]
    std = np.maximum(w.std(axis=-2, keepdims=True), 1e-12)
    w = (w - w.mean(axis=-2, keepdims=True)) / std
    matrix = median_filter(w, width).mean(axis=0)                     # (tokens, positions)
    tokens, positions = dtw(-matrix.astype(np.float32))
    return tokens, positions, matrix


def token_starts(tokens, positions, seconds_per_position: float) -> np.ndarray:
    """Each token's start in seconds along a path: where the path first reaches it (Whisper's
    jumps)."""
    tokens, positions = np.asarray(tokens), np.asarray(positions)
    n = int(tokens.max()) + 1 if len(tokens) else 0
    first = np.array([positions[np.argmax(tokens == k)] for k in range(n)])
    return first * seconds_per_position
