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
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from xattn._checks import check_attention_inputs

__all__ = ["MultiHeadCrossAttention", "AttentionTrace"]

# exp(x) is finite and normal for |x| below these bounds, so a row of scores whose absolute values
# are provably below them needs no max-subtraction before exp (see _softmax_rows_inplace).
_EXP_SAFE = {np.dtype(np.float32): 80.0, np.dtype(np.float64): 700.0}
# Target rows per block: one block of scores for one head (rows x n_src) should fit in L2 cache.
_BLOCK_BYTES = 256 * 1024
# Below this many score elements a single thread beats the cost of a thread pool.
_PARALLEL_MIN_ELEMENTS = 1 << 20
_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    global _POOL  # one small pool per process, created on first large call
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1),
                                   thread_name_prefix="xattn")
    return _POOL


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
        # The 1/sqrt(d_head) scale is folded into the query projection: one small multiply.
        w_q = self.W_Q * self.dtype.type(1.0 / math.sqrt(d_head))
        q = (x_t @ w_q).reshape(n_b, n_tgt, h, d_head).transpose(0, 2, 1, 3)  # (B, h, T, dh)
        q = np.ascontiguousarray(q).reshape(n_b * h, n_tgt, d_head)           # (G, T, dh)
        k = (x_s @ self.W_K).reshape(n_b, n_src, h, d_head).transpose(0, 2, 3, 1)  # (B,h,dh,S)
        k_t = np.ascontiguousarray(k).reshape(n_b * h, d_head, n_src)          # (G, dh, S)
        v = (x_s @ self.W_V).reshape(n_b, n_src, h, d_head).transpose(0, 2, 1, 3)  # (B,h,S,dh)
        v = np.ascontiguousarray(v).reshape(n_b * h, n_src, d_head)            # (G, S, dh)

        weights = np.empty((n_b * h, n_tgt, n_src), dtype=self.dtype)          # (G, T, S)
        heads = np.empty((n_b * h, n_tgt, d_head), dtype=self.dtype)           # (G, T, dh)
        _attend(q, k_t, v, mask, h, weights, heads)

        heads = heads.reshape(n_b, h, n_tgt, d_head)
        if gate is not None:
            heads *= gate[None, :, None, None]
        concat = heads.transpose(0, 2, 1, 3).reshape(n_b, n_tgt, h * d_head)   # (B, T, d_model)
        output = concat @ self.W_O                                             # (B, T, d_model)
        weights = weights.reshape(n_b, h, n_tgt, n_src)
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


def _attend(q, k_t, v, mask, n_heads, weights, heads):
    """Fill ``weights`` (G, T, S) and ``heads`` (G, T, dh) block by block; G = batch x heads.

    Scores of one block of target rows for one head are written straight into their place in
    ``weights`` (so the weights array is the only large allocation), turned into probabilities
    in place while still in cache, and multiplied with the values at once.
    """
    n_groups, n_tgt, _ = q.shape
    n_src = k_t.shape[2]
    rows = max(8, _BLOCK_BYTES // (n_src * weights.itemsize))
    bound = _EXP_SAFE[weights.dtype]
    # Cauchy-Schwarz: |q_i . k_j| <= |q_i| max_j |k_j|, checked per block before skipping the max.
    q_norm = np.sqrt(np.einsum("gtd,gtd->gt", q, q))                           # (G, T)
    k_norm_max = np.sqrt(np.einsum("gds,gds->gs", k_t, k_t).max(axis=1))      # (G,)
    mask_f = None if mask is None else mask.astype(weights.dtype)             # (B, T|1, S)

    def run(task):
        g, r0 = task
        r1 = min(r0 + rows, n_tgt)
        block = weights[g, r0:r1]                                              # (rb, S) view
        np.matmul(q[g, r0:r1], k_t[g], out=block)
        keep = None
        if mask_f is not None:
            m = mask_f[g // n_heads]
            keep = m if m.shape[0] == 1 else m[r0:r1]
        safe = q_norm[g, r0:r1].max() * k_norm_max[g] < bound
        _softmax_rows_inplace(block, keep, safe)
        np.matmul(block, v[g], out=heads[g, r0:r1])

    tasks = [(g, r0) for g in range(n_groups) for r0 in range(0, n_tgt, rows)]
    if len(tasks) > 1 and n_groups * n_tgt * n_src >= _PARALLEL_MIN_ELEMENTS:
        for _ in _pool().map(run, tasks):
            pass
    else:
        for task in tasks:
            run(task)


def _softmax_rows_inplace(s: np.ndarray, keep: np.ndarray | None, safe: bool) -> None:
    """Softmax over the rows of ``s`` (rb, S) in place; ``keep`` is 1.0/0.0, (1|rb, S)."""
    if not safe:
        if keep is not None:
            np.copyto(s, -np.inf, where=keep == 0)
        row_max = s.max(axis=1, keepdims=True)
        np.subtract(s, np.where(np.isfinite(row_max), row_max, 0), out=s)
    np.exp(s, out=s)
    if keep is not None and safe:
        np.multiply(s, keep, out=s)  # masked keys are zeroed after exp instead of adding -inf
    total = s.sum(axis=1, keepdims=True)
    inv = np.divide(1, total, out=np.zeros_like(total), where=total > 0)  # empty rows stay 0
    np.multiply(s, inv, out=s)
