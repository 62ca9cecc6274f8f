"""The fast path of ``MultiHeadCrossAttention.__call__``: chunked, in place, cache-sized.

Same numbers as the teaching path (``MultiHeadCrossAttention.trace``), for speed and memory:
the scores are written straight into the returned weights array (the only large allocation),
turned into probabilities in place block by block while in cache, and keys that no target row
of a chunk may attend (padding, typically) are left out of QK^T, exp and AV altogether.
``KeyValues`` holds a source's keys and values projected once, for a decoder that attends to the
same source at every step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from xattn._floats import BFLOAT16, to_float32

__all__ = ["attend", "EXP_SAFE", "KeyValues", "Overflow", "merge_heads", "project",
           "split_heads"]


class Overflow(ArithmeticError):
    """The scores overflowed the dtype (inputs near its largest value)."""

@dataclass(frozen=True)
class KeyValues:
    """Keys and values of a source, projected once (``MultiHeadCrossAttention.keys_values``).

    A decoder's cache: passed in place of ``encoder_output``, they are not projected again.

    Attributes
    ----------
    k, v : ndarray of shape (B, n_heads, n_src, d_head)
        ``encoder_output @ W_K + b_K`` and ``encoder_output @ W_V + b_V`` split by heads.
    batched : bool
        Whether the source came with a batch axis (calls with it must have one too).
    """

    k: np.ndarray
    v: np.ndarray
    batched: bool

    @property
    def n_src(self) -> int:
        return self.k.shape[-2]

    def append(self, other: KeyValues) -> KeyValues:
        """Keys and values of more source positions after these (a growing self-attention
        cache): ``(B, h, n_src + n_other, d_head)``."""
        return KeyValues(np.concatenate([self.k, other.k], axis=-2),
                         np.concatenate([self.v, other.v], axis=-2), self.batched)

    def __repr__(self) -> str:
        return f"KeyValues(shape={self.k.shape}, batched={self.batched})"


def split_heads(x: np.ndarray, n_heads: int) -> np.ndarray:
    """Cut the last axis into heads: ``(..., n, d_model)`` to ``(..., n_heads, n, d_head)``.

    Head ``i`` gets columns ``i*d_head:(i+1)*d_head``. A view when possible (no copy).

    Examples
    --------
    >>> split_heads(np.arange(12.0).reshape(2, 6), 3)[1].tolist()  # head 2 of 3
    [[2.0, 3.0], [8.0, 9.0]]
    """
    *lead, n, d_model = x.shape
    x = x.reshape(*lead, n, n_heads, d_model // n_heads)               # (..., n, h, d_head)
    return x.swapaxes(-2, -3)                                          # (..., h, n, d_head)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """The inverse of `split_heads`: ``(..., n_heads, n, d_head)`` to ``(..., n, d_model)``."""
    *lead, n_heads, n, d_head = x.shape
    x = x.swapaxes(-3, -2)                                             # (..., n, h, d_head)
    return x.reshape(*lead, n, n_heads * d_head)                       # (..., n, d_model)


def project(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """``x @ w (+ b)``: (B, n, d_in) to (B, n, d_out), in the dtype of ``x`` (float16 and
    bfloat16 weights are read as float32)."""
    y = x @ (to_float32(w) if w.dtype == BFLOAT16 else w)                     # (B, n, d_out)
    if b is not None:
        y += b
    return y


# ln of the largest finite value, less a margin. If every score of a row is below
# EXP_SAFE - ln(n_src) in absolute value, exp() of each is finite and normal and so is their
# sum, so that row needs no max-subtraction before exp (see _softmax_rows_inplace).
EXP_SAFE = {np.dtype(np.float32): 86.0, np.dtype(np.float64): 707.0}
# Scores of a chunk (some heads x target rows) are computed by one BLAS call per head: large
# calls keep BLAS's own threads busy and efficient; whole heads when they fit.
_CHUNK_BYTES = 16 << 20
# Scores turned into probabilities at a time: rows of one head that fit in L2 cache (512 KiB).
_BLOCK_BYTES = 256 << 10
# Below this many weights the whole problem is done in one go, with the fewest NumPy calls.
_CHUNKED_MIN_ELEMENTS = 1 << 16


def attend(q, k_t, v, mask, weights, heads, bias=None):
    """Fill ``weights`` (B, h, T, S) and ``heads`` (B, h, T, dh) from q, k^T and v.

    ``mask`` is None or bool (B, 1 | T, S); ``bias`` None or (1, h, T, S), added to the scores
    (the exp bound of the chunks is then not used). Small problems are done in one go; large
    ones chunk by chunk (see _attend_chunk).
    """
    if weights.size < _CHUNKED_MIN_ELEMENTS:
        _attend_whole(q, k_t, v, mask, weights, heads, bias)
        return
    n_b, n_heads, n_tgt, _ = q.shape
    n_src = k_t.shape[-1]
    heads_per_chunk, rows_per_chunk = _chunk_shape(n_heads, n_tgt, n_src, weights.itemsize)
    # Cauchy-Schwarz: |q_i . k_j| <= |q_i| max_j |k_j|; where that is below the bound, exp() of
    # the raw scores can neither overflow nor underflow, so the max-subtraction is skipped.
    k_norm_max = np.sqrt(np.einsum("bhds,bhds->bhs", k_t, k_t).max(axis=-1))  # (B, h)
    row_bound = np.sqrt(np.einsum("bhtd,bhtd->bht", q, q))                     # (B, h, T)
    row_bound *= k_norm_max[..., None]
    if not np.isfinite(row_bound).all():   # a score might not be finite: refuse, not NaN
        raise Overflow
    safe_rows = row_bound < EXP_SAFE[weights.dtype] - math.log(n_src)        # (B, h, T)
    if bias is not None:
        safe_rows[...] = False           # the bias is not bounded by the norms: subtract maxima
    for b in range(n_b):
        for r0 in range(0, n_tgt, rows_per_chunk):
            rows = slice(r0, r0 + rows_per_chunk)
            window = _key_window(mask, b, rows, n_src)
            for h0 in range(0, n_heads, heads_per_chunk):
                chunk = (b, slice(h0, h0 + heads_per_chunk), rows)
                _attend_chunk(q[chunk], k_t[chunk[:2]], v[chunk[:2]], window, safe_rows[chunk],
                              None if bias is None else bias[(0, *chunk[1:])], weights[chunk],
                              heads[chunk])


def _attend_whole(q, k_t, v, mask, weights, heads, bias=None):
    """Small problems: every step once for all heads and rows, to keep NumPy calls few."""
    n_b, n_heads, n_tgt, n_src = weights.shape
    np.matmul(q, k_t, out=weights)                                            # (B, h, T, S)
    if bias is not None:
        weights += bias
    # Here the scores themselves bound |score|, in two calls (chunks use norms, see _attend).
    high = max(np.maximum.reduce(weights, axis=None), -np.minimum.reduce(weights, axis=None))
    if not math.isfinite(high):            # a score is not finite: refuse, not NaN weights
        raise Overflow
    safe = high < EXP_SAFE[weights.dtype] - math.log(n_src)
    if mask is None or mask.shape[1] == 1:  # the same keys for every row: rows of all heads
        s, drop = weights.reshape(n_b, n_heads * n_tgt, n_src), mask          # (B, h*T, S)
    else:
        s, drop = weights, mask[:, None]                                      # (B, 1, T, S)
    _softmax_rows_inplace(s, (0, n_src, None if drop is None else ~drop), bool(safe))
    np.matmul(weights, v, out=heads)                                          # (B, h, T, dh)


def _attend_chunk(q, k_t, v, window, safe, bias, w, heads):
    """Attention for some heads x rows: q (hc, rc, dh), k_t (hc, dh, S), v (hc, S, dh), the
    scores' bias (hc, rc, S) or None.

    The scores are written straight into their place in the weights ``w`` (hc, rc, S), the only
    large allocation, by one BLAS call per head; turned into probabilities in place, block by
    block while in cache; then multiplied with the values into ``heads`` (hc, rc, dh). Keys
    outside ``window`` (padding, typically) are left out of all three steps.
    """
    lo, hi, _ = window
    if lo < hi:
        np.matmul(q, k_t[..., lo:hi], out=w[..., lo:hi])                      # (hc, rc, n)
        if bias is not None:
            w[..., lo:hi] += bias[..., lo:hi]
    if lo > 0 or hi < w.shape[-1]:  # after the matmul, whose threads share the page faults
        w[..., :lo] = 0
        w[..., hi:] = 0
    if lo == hi:  # no row of the chunk has a key to attend
        heads[...] = 0
        return
    n_heads, n_rows, n_src = w.shape
    step = max(1, _BLOCK_BYTES // (n_src * w.itemsize))
    for h in range(n_heads):
        for r0 in range(0, n_rows, step):
            rows = slice(r0, r0 + step)
            drop = window[2] if window[2] is None or window[2].shape[0] == 1 else window[2][rows]
            _softmax_rows_inplace(w[h, rows], (lo, hi, drop), bool(safe[h, rows].all()))
    np.matmul(w[..., lo:hi], v[:, lo:hi], out=heads)                          # (hc, rc, dh)


def _chunk_shape(n_heads, n_tgt, n_src, itemsize):
    """Heads and target rows per chunk: about _CHUNK_BYTES of scores, whole heads first."""
    head_bytes = n_tgt * n_src * itemsize
    if head_bytes >= _CHUNK_BYTES:
        return 1, max(1, _CHUNK_BYTES // (n_src * itemsize))
    return max(1, min(n_heads, _CHUNK_BYTES // head_bytes)), n_tgt


def _key_window(mask, b, rows, n_src):
    """Keys ``lo:hi`` that some target row in ``rows`` may attend, and which of them it may not.

    Returns ``(lo, hi, drop)``; ``drop`` is bool (1 | rc, hi - lo), True where a row may not
    attend a key, or None when every row may attend every key of the window. Keys outside the
    window (padding, typically) cost nothing.
    """
    if mask is None:
        return 0, n_src, None
    m = mask[b] if mask.shape[1] == 1 else mask[b, rows]                     # (1 | rc, S)
    cols = np.flatnonzero(m.any(axis=0))
    if cols.size == 0:
        return 0, 0, None
    lo, hi = int(cols[0]), int(cols[-1]) + 1
    m = m[:, lo:hi]
    return lo, hi, (None if m.all() else ~m)


def _softmax_rows_inplace(w: np.ndarray, window: tuple, safe: bool) -> None:
    """Softmax over the keys ``lo:hi`` of the rows of ``w`` in place; the rest must be zero.

    ``window`` is ``(lo, hi, drop)`` as from _key_window (``drop`` broadcasts over the rows).
    Rows with no key to attend become all zero. With ``safe`` (every |score| is below the exp
    bound) the max-subtraction is skipped and masked keys are zeroed after exp instead.
    """
    lo, hi, drop = window
    s = w[..., lo:hi]  # a view; whole rows again below, for the division
    if not safe:
        if drop is not None:
            np.copyto(s, -np.inf, where=drop)
        # initial: a row of -inf gets a finite max, so it stays -inf and exp() makes it 0.
        row_max = np.maximum.reduce(s, axis=-1, keepdims=True, initial=np.finfo(s.dtype).min)
        np.subtract(s, row_max, out=s)
    np.exp(s, out=s)
    if drop is not None and safe:
        np.copyto(s, 0, where=drop)
    total = np.add.reduce(s, axis=-1, keepdims=True)
    # A row with a key sums to at least exp(-bound) > tiny; a row with none sums to 0 and
    # stays 0.
    np.maximum(total, np.finfo(s.dtype).tiny, out=total)
    # Whole rows: zeros stay zero, and part-row views with a power-of-two stride run 2-3x slower.
    np.divide(w, total, out=w)
