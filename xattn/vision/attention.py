"""Cross-attention whose keys and values are read from a source of another width.

TrOCR-small's decoder is 256 wide and reads a 384-wide DeiT encoder directly: its
``encoder_attn.k_proj`` and ``v_proj`` take ``cross_attention_hidden_size`` = 384 inputs
(transformers' ``kdim``, ``vdim``). ``MultiHeadCrossAttention`` projects both sides from
d_model; this subclass only widens the source side: ``W_K``, ``W_V`` are (d_source, n_heads *
d_head), and a source given as an array is projected from d_source wide. Everything after the
projections (scores, softmax, head gates, ``trace``) is the parent's, so Step through and
Switch heads off open this layer as they open any other.
"""

from __future__ import annotations

import numpy as np

from xattn._checks import check_projection, check_source
from xattn._fastpath import KeyValues, project, split_heads
from xattn.attention import MultiHeadCrossAttention

__all__ = ["WideSourceAttention"]


class WideSourceAttention(MultiHeadCrossAttention):
    """``MultiHeadCrossAttention`` with keys and values projected from ``d_source`` features.

    Attributes
    ----------
    d_source : int
        Width of the source (the encoder output) read by ``W_K`` and ``W_V``.
    W_K, W_V : ndarray of shape (d_source, n_heads * d_head)
    """

    @classmethod
    def from_source_weights(cls, W_Q, W_K, W_V, W_O, *, n_heads: int, b_Q=None, b_K=None,
                            b_V=None, b_O=None, dtype=np.float32) -> WideSourceAttention:
        """As ``MultiHeadCrossAttention.from_weights``, with ``W_K``, ``W_V`` of shape
        (d_source, n_heads * d_head) and d_source their row count.

        Raises
        ------
        ValueError
            A projection or bias of another shape (named with the expected one).
        """
        self = cls.from_weights(W_Q, W_Q, W_Q, W_O, n_heads=n_heads, b_Q=b_Q, b_O=b_O,
                                dtype=dtype)            # W_K, W_V checked below, on their own
        w_k = np.asarray(W_K) if not isinstance(W_K, np.ndarray) else W_K
        d_attn = self.n_heads * self.d_head
        self.d_source = int(w_k.shape[0]) if w_k.ndim == 2 else -1
        shape, label = (self.d_source, d_attn), "(d_source, n_heads * d_head)"
        self.W_K = check_projection(w_k, "W_K", self.dtype, shape, label)
        self.W_V = check_projection(W_V, "W_V", self.dtype, shape, label)
        self.b_K, self.b_V = (None if b is None else check_projection(
            b, name, self.dtype, (d_attn,), "(n_heads * d_head,)")
            for name, b in (("b_K", b_K), ("b_V", b_V)))
        return self

    def keys_values(self, encoder_output) -> KeyValues:
        """Keys and values of a source (n_src, d_source) or (B, n_src, d_source)."""
        x_s = check_source(encoder_output, "encoder_output", "n_src", self.d_source, self.dtype)
        batched = x_s.ndim == 3
        x_s = x_s if batched else x_s[None]                                 # (B, S, d_source)
        k, v = project(x_s, self.W_K, self.b_K), project(x_s, self.W_V, self.b_V)  # (B, S, d)
        return KeyValues(split_heads(k, self.n_heads), split_heads(v, self.n_heads), batched)

    def _inputs(self, decoder_state, encoder_output, encoder_mask, head_mask):
        if not isinstance(encoder_output, KeyValues):
            encoder_output = self.keys_values(encoder_output)
        return super()._inputs(decoder_state, encoder_output, encoder_mask, head_mask)

    def __repr__(self) -> str:
        return (f"WideSourceAttention(d_model={self.d_model}, d_source={self.d_source}, "
                f"n_heads={self.n_heads}, d_head={self.d_head}, dtype={self.dtype.name})")
