"""Multi-head cross-attention in NumPy.

Queries come from the decoder (the target sentence), keys and values from the encoder (the
source sentence)::

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O
    head_i = softmax(Q W_Q_i (K W_K_i)^T / sqrt(d_head) + M) V W_V_i

All heads are projected with one matrix each and split by reshaping: head ``i`` owns columns
``i*d_head:(i+1)*d_head`` of ``W_Q``, ``W_K`` and ``W_V``. Attention weights always have shape
``(n_heads, n_tgt, n_src)`` (with a leading batch axis when batched): rows are target queries,
columns are source keys.

The fast path (``__call__``) and the teaching path (``trace``) compute the same numbers; the
first is built for speed and memory, the second keeps every intermediate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from xattn._checks import check_attention_inputs

__all__ = ["MultiHeadCrossAttention", "AttentionTrace"]

# ln of the largest finite value, less a margin. If every score of a row is below
# _EXP_SAFE - ln(n_src) in absolute value, exp() of each is finite and normal and so is their
# sum, so that row needs no max-subtraction before exp (see _softmax_rows_inplace).
_EXP_SAFE = {np.dtype(np.float32): 86.0, np.dtype(np.float64): 707.0}
# Scores of a chunk (some heads x target rows) are computed by one BLAS call per head: large
# calls keep BLAS's own threads busy and efficient; whole heads when they fit.
_CHUNK_BYTES = 16 << 20
# Scores turned into probabilities at a time: rows of one head that fit in L2 cache (512 KiB).
_BLOCK_BYTES = 256 << 10
# Below this many weights the whole problem is done in one go, with the fewest NumPy calls.
_CHUNKED_MIN_ELEMENTS = 1 << 16


@dataclass(frozen=True)
class AttentionTrace:
    """Every intermediate of one cross-attention call, for teaching views.

    Shapes are given unbatched; batched calls add a leading ``B`` axis to every field.

    Attributes
    ----------
    q : ndarray of shape (n_heads, n_tgt, d_head)
        Queries per head, ``decoder_state @ W_Q`` split by heads (not yet scaled).
    k : ndarray of shape (n_heads, n_src, d_head)
        Keys per head, ``encoder_output @ W_K`` split by heads.
    v : ndarray of shape (n_heads, n_src, d_head)
        Values per head, ``encoder_output @ W_V`` split by heads.
    scores : ndarray of shape (n_heads, n_tgt, n_src)
        Raw dot products ``q @ k^T``.
    scaled_scores : ndarray of shape (n_heads, n_tgt, n_src)
        ``scores * scale`` (``scale`` is ``1/sqrt(d_head)``, or 1 when scaling is switched off).
    masked_scores : ndarray of shape (n_heads, n_tgt, n_src)
        ``scaled_scores`` with ``-inf`` where a key may not be attended.
    mask : ndarray of shape (n_tgt, n_src), bool
        The encoder mask broadcast to every target row (True = may attend).
    weights : ndarray of shape (n_heads, n_tgt, n_src)
        Softmax over source keys of ``masked_scores``; rows with no key are all zero.
    head_outputs : ndarray of shape (n_heads, n_tgt, d_head)
        ``weights @ v`` per head, times ``head_mask``.
    concat : ndarray of shape (n_tgt, d_model)
        The head outputs side by side (head 0 first).
    output : ndarray of shape (n_tgt, d_model)
        ``concat @ W_O``.
    scale : float
        The factor applied to the scores.
    """

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    scaled_scores: np.ndarray
    masked_scores: np.ndarray
    mask: np.ndarray
    weights: np.ndarray
    head_outputs: np.ndarray
    concat: np.ndarray
    output: np.ndarray
    scale: float


class MultiHeadCrossAttention:
    """Multi-head cross-attention with weights drawn from a seeded generator.

    Parameters
    ----------
    d_model : int
        Width of token vectors on both sides.
    n_heads : int
        Number of heads; must divide ``d_model``. Each head has ``d_head = d_model // n_heads``.
    seed : int or numpy.random.Generator, default 0
        Source of the initial weights. The same int gives identical weights in every process.
    dtype : numpy dtype, default float64
        Dtype of the weights and of every computation; inputs are cast to it.

    Attributes
    ----------
    W_Q, W_K, W_V, W_O : ndarray of shape (d_model, d_model)
        Projections applied as ``x @ W`` (rows are tokens), drawn in that order as standard
        normal times ``sqrt(1/d_model)``. They may be replaced (e.g. after training) with arrays
        of the same shape.

    Examples
    --------
    >>> import numpy as np
    >>> mha = MultiHeadCrossAttention(d_model=8, n_heads=2, seed=0)
    >>> rng = np.random.default_rng(1)
    >>> out, w = mha(rng.standard_normal((3, 8)), rng.standard_normal((5, 8)))
    >>> out.shape, w.shape
    ((3, 8), (2, 3, 5))
    >>> np.allclose(w.sum(axis=-1), 1.0)
    True
    """

    def __init__(self, d_model: int, n_heads: int, *, seed: int | np.random.Generator = 0,
                 dtype: np.typing.DTypeLike = np.float64) -> None:
        if not isinstance(n_heads, (int, np.integer)) or n_heads < 1:
            raise ValueError(f"n_heads must be an integer >= 1; received {n_heads!r}.")
        if not isinstance(d_model, (int, np.integer)) or d_model < 1:
            raise ValueError(f"d_model must be an integer >= 1; received {d_model!r}.")
        if d_model % n_heads:
            divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
            raise ValueError(
                f"d_model must be divisible by n_heads; received d_model={d_model}, "
                f"n_heads={n_heads}. Heads that divide {d_model}: {divisors}.")
        self.dtype = np.dtype(dtype)
        if self.dtype not in _EXP_SAFE:
            raise ValueError(f"dtype must be float32 or float64; received {self.dtype}.")
        self.d_model = int(d_model)
        self.n_heads = int(n_heads)
        self.d_head = self.d_model // self.n_heads
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        std = math.sqrt(1.0 / d_model)
        shape = (self.d_model, self.d_model)
        self.W_Q, self.W_K, self.W_V, self.W_O = (
            (rng.standard_normal(shape) * std).astype(self.dtype) for _ in range(4))

    def __repr__(self) -> str:
        return (f"MultiHeadCrossAttention(d_model={self.d_model}, n_heads={self.n_heads}, "
                f"d_head={self.d_head}, dtype={self.dtype.name})")

    # ------------------------------------------------------------------ fast path
    def __call__(self, decoder_state, encoder_output, encoder_mask=None, *, head_mask=None):
        """Attend from every target token to the source tokens.

        Parameters
        ----------
        decoder_state : array_like of shape (n_tgt, d_model) or (B, n_tgt, d_model)
            Queries: one row per target token.
        encoder_output : array_like of shape (n_src, d_model) or (B, n_src, d_model)
            Keys and values: one row per source token.
        encoder_mask : array_like of bool, optional
            True where a source token may be attended. Unbatched: ``(n_src,)`` or
            ``(n_tgt, n_src)``; batched: ``(B, n_src)`` or ``(B, n_tgt, n_src)``. A target row
            whose keys are all masked gets all-zero weights and a zero output row.
        head_mask : array_like of shape (n_heads,), optional
            Multiplies each head's output before ``W_O`` (1 keeps a head, 0 removes it).
            Weights are still returned for every head.

        Returns
        -------
        output : ndarray of shape (n_tgt, d_model) or (B, n_tgt, d_model)
        weights : ndarray of shape (n_heads, n_tgt, n_src) or (B, n_heads, n_tgt, n_src)
            Rows sum to 1, or to 0 where every key is masked.
        """
        x_t, x_s, mask, gate, batched = check_attention_inputs(
            decoder_state, encoder_output, encoder_mask, head_mask,
            d_model=self.d_model, n_heads=self.n_heads, dtype=self.dtype)
        n_b, n_tgt, _ = x_t.shape
        n_src = x_s.shape[1]
        h, d_head = self.n_heads, self.d_head
        # Heads are strided views of the projections: BLAS reads them in place (no copies).
        q = x_t @ self.W_Q                                                     # (B, T, d_model)
        q *= self.dtype.type(1.0 / math.sqrt(d_head))  # scale the queries, not T x S scores
        q = q.reshape(n_b, n_tgt, h, d_head).transpose(0, 2, 1, 3)             # (B, h, T, dh)
        k_t = (x_s @ self.W_K).reshape(n_b, n_src, h, d_head).transpose(0, 2, 3, 1)  # (B,h,dh,S)
        v = (x_s @ self.W_V).reshape(n_b, n_src, h, d_head).transpose(0, 2, 1, 3)    # (B,h,S,dh)

        weights = np.empty((n_b, h, n_tgt, n_src), dtype=self.dtype)          # (B, h, T, S)
        concat = np.empty((n_b, n_tgt, self.d_model), dtype=self.dtype)       # (B, T, d_model)
        heads = concat.reshape(n_b, n_tgt, h, d_head).transpose(0, 2, 1, 3)   # (B, h, T, dh) view
        _attend(q, k_t, v, mask, weights, heads)
        if gate is not None:
            heads *= gate[None, :, None, None]
        output = concat @ self.W_O                                             # (B, T, d_model)
        if not batched:
            return output[0], weights[0]
        return output, weights

    # ------------------------------------------------------------------ teaching path
    def trace(self, decoder_state, encoder_output, encoder_mask=None, *, head_mask=None,
              scale: bool = True) -> AttentionTrace:
        """Run the same computation step by step and keep every intermediate.

        Parameters are those of ``__call__``; ``scale=False`` leaves out the ``1/sqrt(d_head)``
        factor, to show the softmax saturating as ``d_head`` grows.

        Returns
        -------
        AttentionTrace
            Shapes as documented there, with a leading batch axis for batched inputs.
        """
        x_t, x_s, mask, gate, batched = check_attention_inputs(
            decoder_state, encoder_output, encoder_mask, head_mask,
            d_model=self.d_model, n_heads=self.n_heads, dtype=self.dtype)
        n_b, n_tgt, _ = x_t.shape
        n_src = x_s.shape[1]
        h, d_head = self.n_heads, self.d_head
        factor = 1.0 / math.sqrt(d_head) if scale else 1.0
        q = (x_t @ self.W_Q).reshape(n_b, n_tgt, h, d_head).transpose(0, 2, 1, 3)  # (B,h,T,dh)
        k = (x_s @ self.W_K).reshape(n_b, n_src, h, d_head).transpose(0, 2, 1, 3)  # (B,h,S,dh)
        v = (x_s @ self.W_V).reshape(n_b, n_src, h, d_head).transpose(0, 2, 1, 3)  # (B,h,S,dh)
        scores = q @ k.transpose(0, 1, 3, 2)                                   # (B, h, T, S)
        scaled = scores * self.dtype.type(factor)
        full_mask = np.broadcast_to(mask, (n_b, n_tgt, n_src)) if mask is not None \
            else np.ones((n_b, n_tgt, n_src), dtype=bool)
        masked = np.where(full_mask[:, None], scaled, -np.inf).astype(self.dtype)
        weights = _softmax_reference(masked)
        head_outputs = weights @ v                                             # (B, h, T, dh)
        if gate is not None:
            head_outputs = head_outputs * gate[None, :, None, None]
        concat = head_outputs.transpose(0, 2, 1, 3).reshape(n_b, n_tgt, self.d_model)
        output = concat @ self.W_O                                             # (B, T, d_model)
        fields = dict(q=q, k=k, v=v, scores=scores, scaled_scores=scaled, masked_scores=masked,
                      mask=np.array(full_mask), weights=weights, head_outputs=head_outputs,
                      concat=concat, output=output)
        if not batched:
            fields = {name: value[0] for name, value in fields.items()}
        return AttentionTrace(**fields, scale=factor)


def _softmax_reference(masked: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of scores holding -inf at masked keys; empty rows give 0."""
    row_max = masked.max(axis=-1, keepdims=True)
    has_key = np.isfinite(row_max)
    shifted = masked - np.where(has_key, row_max, 0)
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=has_key)


def _attend(q, k_t, v, mask, weights, heads):
    """Fill ``weights`` (B, h, T, S) and ``heads`` (B, h, T, dh) from q, k^T and v.

    ``mask`` is None or bool (B, 1 | T, S). Small problems are done in one go; large ones chunk
    by chunk (see _attend_chunk).
    """
    if weights.size < _CHUNKED_MIN_ELEMENTS:
        _attend_whole(q, k_t, v, mask, weights, heads)
        return
    n_b, n_heads, n_tgt, _ = q.shape
    n_src = k_t.shape[-1]
    heads_per_chunk, rows_per_chunk = _chunk_shape(n_heads, n_tgt, n_src, weights.itemsize)
    # Cauchy-Schwarz: |q_i . k_j| <= |q_i| max_j |k_j|; where that is below the bound, exp() of
    # the raw scores can neither overflow nor underflow, so the max-subtraction is skipped.
    k_norm_max = np.sqrt(np.einsum("bhds,bhds->bhs", k_t, k_t).max(axis=-1))  # (B, h)
    row_bound = np.sqrt(np.einsum("bhtd,bhtd->bht", q, q))                     # (B, h, T)
    row_bound *= k_norm_max[..., None]
    safe_rows = row_bound < _EXP_SAFE[weights.dtype] - math.log(n_src)        # (B, h, T)
    for b in range(n_b):
        for r0 in range(0, n_tgt, rows_per_chunk):
            rows = slice(r0, r0 + rows_per_chunk)
            window = _key_window(mask, b, rows, n_src)
            for h0 in range(0, n_heads, heads_per_chunk):
                chunk = (b, slice(h0, h0 + heads_per_chunk), rows)
                _attend_chunk(q[chunk], k_t[chunk[:2]], v[chunk[:2]], window, safe_rows[chunk],
                              weights[chunk], heads[chunk])


def _attend_whole(q, k_t, v, mask, weights, heads):
    """Small problems: every step once for all heads and rows, to keep NumPy calls few."""
    n_b, n_heads, n_tgt, n_src = weights.shape
    np.matmul(q, k_t, out=weights)                                            # (B, h, T, S)
    # Here the scores themselves bound |score|, in two calls (chunks use norms, see _attend).
    high = max(np.maximum.reduce(weights, axis=None), -np.minimum.reduce(weights, axis=None))
    safe = high < _EXP_SAFE[weights.dtype] - math.log(n_src)
    if mask is None or mask.shape[1] == 1:  # the same keys for every row: rows of all heads
        s, drop = weights.reshape(n_b, n_heads * n_tgt, n_src), mask          # (B, h*T, S)
    else:
        s, drop = weights, mask[:, None]                                      # (B, 1, T, S)
    _softmax_rows_inplace(s, (0, n_src, None if drop is None else ~drop), bool(safe))
    np.matmul(weights, v, out=heads)                                          # (B, h, T, dh)


def _attend_chunk(q, k_t, v, window, safe, w, heads):
    """Attention for some heads x rows: q (hc, rc, dh), k_t (hc, dh, S), v (hc, S, dh).

    The scores are written straight into their place in the weights ``w`` (hc, rc, S), the only
    large allocation, by one BLAS call per head; turned into probabilities in place, block by
    block while in cache; then multiplied with the values into ``heads`` (hc, rc, dh). Keys
    outside ``window`` (padding, typically) are left out of all three steps.
    """
    lo, hi, _ = window
    if lo < hi:
        np.matmul(q, k_t[..., lo:hi], out=w[..., lo:hi])                      # (hc, rc, n)
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
