"""Multi-head cross-attention in NumPy.

Queries come from the decoder (the target sentence), keys and values from the encoder (the
source sentence)::

    MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O
    head_i = softmax(Q W_Q_i (K W_K_i)^T / sqrt(d_head) + M) V W_V_i

All heads are projected with one matrix each and split by reshaping: head ``i`` owns columns
``i*d_head:(i+1)*d_head`` of ``W_Q``, ``W_K`` and ``W_V``. A real model's projections carry
biases too (``q = x W_Q + b_Q``, ...: ``MultiHeadCrossAttention.from_weights``); T5's do not,
and T5 adds a learned position bias to the scores instead of dividing them by sqrt(d_head)
(``scaling``, ``position_bias``). Attention weights always have shape ``(n_heads, n_tgt,
n_src)`` (with a leading batch axis when batched): rows are target queries, columns are source
keys.

The fast path (``__call__``) and the teaching path (``trace``) compute the same numbers; the
first is built for speed and memory, the second keeps every intermediate.
"""

from __future__ import annotations

import math

import numpy as np

from xattn._checks import (
    as_finite,
    check_attention_inputs,
    check_int,
    check_projection,
    check_seed,
    check_source,
)
from xattn._fastpath import (
    EXP_SAFE,
    KeyValues,
    Overflow,
    attend,
    merge_heads,
    project,
    split_heads,
)
from xattn.trace import AttentionTrace, masked_softmax

__all__ = ["MultiHeadCrossAttention", "AttentionTrace", "KeyValues", "split_heads",
           "merge_heads", "masked_softmax"]


class MultiHeadCrossAttention:
    """Multi-head cross-attention with weights drawn from a seeded generator.

    Parameters
    ----------
    d_model : int
        Width of token vectors on both sides.
    n_heads : int
        Number of heads; must divide ``d_model``. Each head has ``d_head = d_model // n_heads``.
    seed : int or numpy.random.Generator, default 0
        Source of the initial weights: an int in 0 .. 2**63-1 gives identical weights in every
        process. ``None`` is refused (it would differ from run to run); pass a Generator to
        draw from a stream of your own.
    dtype : numpy dtype, default float64
        Dtype of the weights and of every computation; inputs are cast to it.

    Attributes
    ----------
    W_Q, W_K, W_V, W_O : ndarray of shape (d_model, d_model)
        Projections applied as ``x @ W`` (rows are tokens), drawn in that order as standard
        normal times ``sqrt(1/d_model)``. They may be replaced (e.g. after training) with arrays
        of the same shape. (``from_weights`` may give heads narrower in all than d_model, as
        T5 v1.1's: W_Q, W_K, W_V (d_model, n_heads * d_head), W_O (n_heads * d_head, d_model).)
    b_Q, b_K, b_V, b_O : ndarray of shape (d_model,), or None
        Biases added after each projection; None (no bias) unless given to ``from_weights``.
    scaling : float
        The factor of the scores, ``1/sqrt(d_head)`` unless ``from_weights`` gives another
        (T5: 1).

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
        d_model = check_int(d_model, "d_model", minimum=1)
        n_heads = check_int(n_heads, "n_heads", minimum=1)
        if d_model % n_heads:
            divisors = [h for h in range(1, d_model + 1) if d_model % h == 0]
            raise ValueError(
                f"d_model must be divisible by n_heads; received d_model={d_model}, "
                f"n_heads={n_heads}. Heads that divide {d_model}: {divisors}.")
        self.dtype = np.dtype(dtype)
        if self.dtype not in EXP_SAFE:
            raise ValueError(f"dtype must be float32 or float64; received {self.dtype}.")
        self.d_model = int(d_model)
        self.n_heads = int(n_heads)
        self.d_head = self.d_model // self.n_heads
        rng = seed if isinstance(seed, np.random.Generator) \
            else np.random.default_rng(check_seed(seed))
        std = math.sqrt(1.0 / d_model)
        shape = (self.d_model, self.d_model)
        self.W_Q, self.W_K, self.W_V, self.W_O = (
            (rng.standard_normal(shape) * std).astype(self.dtype) for _ in range(4))
        self.b_Q = self.b_K = self.b_V = self.b_O = None
        self.scaling = 1.0 / math.sqrt(self.d_head)

    @classmethod
    def from_weights(cls, W_Q, W_K, W_V, W_O, *, n_heads: int, b_Q=None, b_K=None, b_V=None,
                     b_O=None, dtype: np.typing.DTypeLike = np.float32,
                     scaling: float | None = None) -> MultiHeadCrossAttention:
        """A module with given projections (a trained or real model's), nothing drawn.

        Parameters
        ----------
        W_Q, W_K, W_V : array_like of shape (d_model, n_heads * d_head)
            Applied as ``x @ W``: for a torch ``nn.Linear``, its ``weight.T`` (a view: no copy).
            Square (d_head = d_model / n_heads) but for T5 v1.1's narrower heads.
        W_O : array_like of shape (n_heads * d_head, d_model)
        n_heads : int
            Must divide the width of W_Q.
        b_Q, b_K, b_V : array_like of shape (n_heads * d_head,), optional
        b_O : array_like of shape (d_model,), optional
            Biases: ``q = x W_Q + b_Q``, ..., ``output = concat W_O + b_O``.
        dtype : float32 or float64, default float32
            Dtype of every computation. Weights of this dtype, or float16 or bfloat16
            (``xattn._floats``: storage only, half the memory), are kept as given, without a
            copy; others are cast to it.
        scaling : float, optional
            The factor of the scores; default ``1/sqrt(d_head)`` (T5 gives 1).

        Examples
        --------
        >>> W = np.eye(4, dtype=np.float32)
        >>> mha = MultiHeadCrossAttention.from_weights(W, W, W, W, n_heads=2, b_O=np.ones(4))
        >>> mha(np.zeros((1, 4)), np.zeros((3, 4)))[0].tolist()
        [[1.0, 1.0, 1.0, 1.0]]
        """
        self = cls.__new__(cls)
        self.dtype = np.dtype(dtype)
        if self.dtype not in EXP_SAFE:
            raise ValueError(f"dtype must be float32 or float64; received {self.dtype}.")
        self.W_Q = check_projection(W_Q, "W_Q", self.dtype, label="(d_model, n_heads * d_head)")
        self.d_model, d_attn = self.W_Q.shape
        self.n_heads = check_int(n_heads, "n_heads", minimum=1)
        if d_attn % self.n_heads:
            raise ValueError(f"d_model must be divisible by n_heads; received d_model="
                             f"{d_attn} (W_Q's size), n_heads={self.n_heads}.")
        self.d_head = d_attn // self.n_heads
        into, out = (self.d_model, d_attn), (d_attn, self.d_model)
        wide = "(d_model, d_model)" if d_attn == self.d_model else "(d_model, n_heads * d_head)"
        self.W_K, self.W_V = (check_projection(w, name, self.dtype, into, wide)
                              for name, w in (("W_K", W_K), ("W_V", W_V)))
        self.W_O = check_projection(W_O, "W_O", self.dtype, out, wide if d_attn == self.d_model
                                    else "(n_heads * d_head, d_model)")
        inner = "(d_model,)" if d_attn == self.d_model else "(n_heads * d_head,)"
        self.b_Q, self.b_K, self.b_V, self.b_O = (
            None if b is None else check_projection(b, name, self.dtype, (size,), label)
            for name, b, size, label in (("b_Q", b_Q, d_attn, inner), ("b_K", b_K, d_attn, inner),
                                         ("b_V", b_V, d_attn, inner),
                                         ("b_O", b_O, self.d_model, "(d_model,)")))
        self.scaling = 1.0 / math.sqrt(self.d_head) if scaling is None else float(scaling)
        return self

    def keys_values(self, encoder_output) -> KeyValues:
        """Project the source once, for calls that reuse it (a decoder's cross-attention cache).

        Parameters
        ----------
        encoder_output : array_like of shape (n_src, d_model) or (B, n_src, d_model)

        Returns
        -------
        KeyValues
            ``k``, ``v`` of shape (B, n_heads, n_src, d_head); pass it as ``encoder_output``.
        """
        x_s = check_source(encoder_output, "encoder_output", "n_src", self.d_model, self.dtype)
        batched = x_s.ndim == 3
        x_s = x_s if batched else x_s[None]                                    # (B, S, d_model)
        k, v = project(x_s, self.W_K, self.b_K), project(x_s, self.W_V, self.b_V)  # (B, S, d)
        _check_finite(k)
        _check_finite(v)
        return KeyValues(split_heads(k, self.n_heads), split_heads(v, self.n_heads), batched)

    def _inputs(self, decoder_state, encoder_output, encoder_mask, head_mask):
        """Checked inputs, and the keys and values split by heads (B, h, S, dh)."""
        if isinstance(encoder_output, KeyValues):
            kv = encoder_output
            x_t, _, mask, gate, batched = check_attention_inputs(
                decoder_state, None, encoder_mask, head_mask, d_model=self.d_model,
                n_heads=self.n_heads, dtype=self.dtype, source=kv, d_head=self.d_head)
            return x_t, kv.k, kv.v, mask, gate, batched
        x_t, x_s, mask, gate, batched = check_attention_inputs(
            decoder_state, encoder_output, encoder_mask, head_mask,
            d_model=self.d_model, n_heads=self.n_heads, dtype=self.dtype)
        k, v = project(x_s, self.W_K, self.b_K), project(x_s, self.W_V, self.b_V)  # (B, S, d)
        return x_t, split_heads(k, self.n_heads), split_heads(v, self.n_heads), mask, gate, batched

    def _bias(self, position_bias, n_tgt: int, n_src: int) -> np.ndarray | None:
        """The position bias as (1, h, T, S) of the compute dtype, or None."""
        if position_bias is None:
            return None
        bias = as_finite(position_bias, "position_bias", self.dtype)
        if bias.shape != (self.n_heads, n_tgt, n_src):
            raise ValueError(f"position_bias must have shape ({self.n_heads}, {n_tgt}, {n_src}) "
                             f"(heads, target, source); received shape {bias.shape}.")
        return bias[None]

    def __repr__(self) -> str:
        return (f"MultiHeadCrossAttention(d_model={self.d_model}, n_heads={self.n_heads}, "
                f"d_head={self.d_head}, dtype={self.dtype.name})")

    # ------------------------------------------------------------------ fast path
    def __call__(self, decoder_state, encoder_output, encoder_mask=None, *, head_mask=None,
                 position_bias=None):
        """Attend from every target token to the source tokens.

        Parameters
        ----------
        decoder_state : array_like of shape (n_tgt, d_model) or (B, n_tgt, d_model)
            Queries: one row per target token.
        encoder_output : array_like of shape (n_src, d_model) or (B, n_src, d_model)
            Keys and values: one row per source token. Or a ``KeyValues`` from
            ``keys_values`` (projected once, reused: a decoder's cache).
        encoder_mask : array_like of bool, optional
            True where a source token may be attended. Unbatched: ``(n_src,)`` or
            ``(n_tgt, n_src)``; batched: ``(B, n_src)`` or ``(B, n_tgt, n_src)``. A target row
            whose keys are all masked gets all-zero weights and a zero output row.
        head_mask : array_like of shape (n_heads,), optional
            Multiplies each head's output before ``W_O`` (1 keeps a head, 0 removes it).
            Weights are still returned for every head.
        position_bias : array_like of shape (n_heads, n_tgt, n_src), optional
            Added to the scaled scores (T5's relative positions), the same for every batch row.

        Returns
        -------
        output : ndarray of shape (n_tgt, d_model) or (B, n_tgt, d_model)
        weights : ndarray of shape (n_heads, n_tgt, n_src) or (B, n_heads, n_tgt, n_src)
            Rows sum to 1, or to 0 where every key is masked.
        """
        x_t, k, v, mask, gate, batched = self._inputs(decoder_state, encoder_output,
                                                      encoder_mask, head_mask)
        n_b, n_tgt, _ = x_t.shape
        n_src = k.shape[-2]
        bias = self._bias(position_bias, n_tgt, n_src)
        q = project(x_t, self.W_Q, self.b_Q)                                  # (B, T, h * dh)
        if self.scaling != 1.0:
            q *= self.dtype.type(self.scaling)      # scale queries, not T x S scores
        # Heads are strided views of the projections: BLAS reads them in place (no copies).
        q = split_heads(q, self.n_heads)                                       # (B, h, T, dh)
        k_t = k.swapaxes(-1, -2)                                               # (B, h, dh, S)
        weights = np.empty((n_b, self.n_heads, n_tgt, n_src), dtype=self.dtype)  # (B,h,T,S)
        concat = np.empty((n_b, n_tgt, self.n_heads * self.d_head),
                          dtype=self.dtype)                                    # (B, T, h * dh)
        heads = split_heads(concat, self.n_heads)                 # (B, h, T, dh), a view
        try:
            attend(q, k_t, v, mask, weights, heads, bias)
        except Overflow:
            raise _too_large(self.dtype) from None
        if gate is not None:
            heads *= gate[None, :, None, None]
        output = project(concat, self.W_O, self.b_O)                          # (B, T, d_model)
        _check_finite(output)
        if not batched:
            return output[0], weights[0]
        return output, weights

    # ------------------------------------------------------------------ teaching path
    def trace(self, decoder_state, encoder_output, encoder_mask=None, *, head_mask=None,
              scale: bool = True, position_bias=None) -> AttentionTrace:
        """Run the same computation step by step and keep every intermediate.

        Parameters are those of ``__call__``; ``scale=False`` leaves out the factor
        (``scaling``, 1/sqrt(d_head)), to show the softmax saturating as ``d_head`` grows.

        Returns
        -------
        AttentionTrace
            Shapes as documented there, with a leading batch axis for batched inputs.
        """
        x_t, k, v, mask, gate, batched = self._inputs(decoder_state, encoder_output,
                                                      encoder_mask, head_mask)
        n_b, n_tgt, _ = x_t.shape
        n_src = k.shape[-2]
        factor = self.scaling if scale else 1.0
        q = split_heads(project(x_t, self.W_Q, self.b_Q), self.n_heads)       # (B, h, T, dh)
        scores = q @ k.swapaxes(-1, -2)                                        # (B, h, T, S)
        _check_finite(scores)
        scaled = scores * self.dtype.type(factor)
        bias = self._bias(position_bias, n_tgt, n_src)
        if bias is not None:
            scaled += bias                                                     # (B, h, T, S)
        full_mask = np.broadcast_to(mask, (n_b, n_tgt, n_src)) if mask is not None \
            else np.ones((n_b, n_tgt, n_src), dtype=bool)
        masked = np.where(full_mask[:, None], scaled, -np.inf).astype(self.dtype)
        weights = masked_softmax(masked)                                       # (B, h, T, S)
        head_outputs = weights @ v                                             # (B, h, T, dh)
        if gate is not None:
            head_outputs = head_outputs * gate[None, :, None, None]
        concat = merge_heads(head_outputs)                                     # (B, T, h * dh)
        output = project(concat, self.W_O, self.b_O)                          # (B, T, d_model)
        _check_finite(output)
        fields = dict(q=q, k=k, v=v, scores=scores, scaled_scores=scaled, masked_scores=masked,
                      mask=np.array(full_mask), weights=weights, head_outputs=head_outputs,
                      concat=concat, output=output)
        if not batched:
            fields = {name: value[0] for name, value in fields.items()}
        return AttentionTrace(**fields, scale=factor)


def _too_large(dtype: np.dtype) -> ValueError:
    limit = float(np.finfo(dtype).max)
    return ValueError(f"the inputs are too large: the projections x @ W or the scores q . k "
                      f"overflow {dtype} (largest {limit:.3g}), which would give NaN weights. "
                      "Scale the inputs down, e.g. to unit variance.")


def _check_finite(x: np.ndarray) -> None:
    """One sum (cheap: this runs on every call); inexact only when it overflows itself."""
    if x.size and not math.isfinite(np.add.reduce(x, axis=None)) and not np.isfinite(x).all():
        raise _too_large(x.dtype)
