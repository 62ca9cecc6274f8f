"""Whisper's pieces in NumPy, one function per kind, named as transformers'
``modeling_whisper.py`` names them (``conv1``, ``conv2``, ``self_attn``, ``encoder_attn``,
``fc1``, ``fc2``). Every layer norms before its blocks (pre-norm)::

    stem:           x = gelu(conv2(gelu(conv1(features))))   k3 pad 1; conv2 has stride 2
    encoder layer:  x = x + self_attn(ln(x));  x = x + fc2(gelu(fc1(ln(x))))
    decoder layer:  y = y + self_attn(ln(y)) (causal);  y = y + encoder_attn(ln(y), enc);
                    y = y + fc2(gelu(fc1(ln(y))))

The encoder reads 1500 positions, so its work is done a block of rows at a time (the
convolutions, the GELUs, each block of queries against all keys, the feed-forward): no
temporary is larger than a few MB, and the peak stays near the weights.

The cross-attention (``cross_attention``) never projects the encoder output into keys and
values. Whisper's ``k_proj`` has no bias and each row of weights sums to one, so per head::

    scores  = (q W_K_h^T) enc^T            instead of  q (enc W_K_h)^T
    output  = (weights enc) W_V_h + b_V_h  instead of  weights (enc W_V_h + b_V_h)

the same numbers (to float32 rounding) from the encoder output alone: a decoder step costs
2 h S d multiplies per layer instead of a (S, d) key and value cache per layer (18 MB for
whisper-tiny, more than a tenth of its weights).
"""

from __future__ import annotations

import numpy as np

from xattn._floats import to_float32
from xattn.attention import KeyValues, MultiHeadCrossAttention
from xattn.encdec.layers import DecoderLayer, EncoderLayer, causal_mask, feed_forward, norm

__all__ = ["conv1d", "gelu_rows", "encoder_layer", "cross_attention", "decoder_layer"]

_ROWS = 256           # rows per block of a convolution: 256 x 384 float32 is 0.4 MB
_FFN_ROWS = 96        # rows per block of the feed-forward and GELU: GELU's erf holds a few
                      # float64 copies of its block, 96 x 1536 x 8 bytes = 1.2 MB each
_QUERY_ROWS = 64      # query rows per block of self-attention: 6 heads x 64 x 1500 = 2.3 MB


def conv1d(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, stride: int = 1) -> np.ndarray:
    """torch's ``Conv1d(kernel_size=3, padding=1, stride=stride)`` on time-major rows.

    Parameters
    ----------
    x : ndarray of shape (T, c_in)
    weight : ndarray of shape (c_out, c_in, 3)
    bias : ndarray of shape (c_out,)

    Returns
    -------
    ndarray of shape ((T - 1) // stride + 1, c_out), float32
    """
    n_in, n_out = len(x), (len(x) - 1) // stride + 1
    taps = np.ascontiguousarray(to_float32(weight).transpose(2, 1, 0))   # (3, c_in, c_out)
    out = np.empty((n_out, len(weight)), np.float32)                      # (T_out, c_out)
    for r in range(0, n_out, _ROWS):
        rows = min(_ROWS, n_out - r)
        block = out[r:r + rows]
        block[:] = bias
        for k, offset in enumerate((-1, 0, 1)):       # output row t reads t * stride + offset
            lo = max(r, 1 if offset < 0 else 0)           # rows that read the zero padding
            hi = min(r + rows, (n_in - 1 - offset) // stride + 1)  # are left out, not copied
            if hi > lo:
                first = lo * stride + offset
                block[lo - r:hi - r] += x[first:first + stride * (hi - lo):stride] @ taps[k]
    return out


def gelu_rows(x: np.ndarray, act) -> np.ndarray:
    """``act`` applied in place a block of rows at a time (its float64 temporaries stay
    small); returns ``x``."""
    for r in range(0, len(x), _FFN_ROWS):
        x[r:r + _FFN_ROWS] = act(x[r:r + _FFN_ROWS])
    return x


def encoder_layer(x: np.ndarray, layer: EncoderLayer, act) -> np.ndarray:
    """One pre-norm encoder layer, (S, d_model) to (S, d_model), ``x`` updated in place."""
    h = norm(x, layer.self_attn_layer_norm)                               # (S, d_model)
    keys = layer.self_attn.keys_values(h)                                  # (1, h, S, dh)
    for r in range(0, len(x), _QUERY_ROWS):
        # a block's output may overwrite its queries: the keys were projected already
        h[r:r + _QUERY_ROWS] = layer.self_attn(h[r:r + _QUERY_ROWS], keys)[0]
    del keys
    x += h
    del h
    for r in range(0, len(x), _FFN_ROWS):
        block = x[r:r + _FFN_ROWS]
        block += feed_forward(norm(block, layer.final_layer_norm), layer, act)
    return x


def _softmax_rows(scores: np.ndarray) -> np.ndarray:
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def cross_attention(x: np.ndarray, enc: np.ndarray, attn: MultiHeadCrossAttention,
                    head_mask=None) -> tuple[np.ndarray, np.ndarray]:
    """``encoder_attn`` of new target rows over the encoder output, keys and values never
    projected (see the module's docstring).

    Parameters
    ----------
    x : ndarray of shape (n_tgt, d_model)
        The layer's normed input (queries come from it).
    enc : ndarray of shape (n_src, d_model)
        The encoder's output.
    attn : MultiHeadCrossAttention
        The layer's projections.
    head_mask : ndarray of shape (n_heads,), optional
        Gates on each head's output before ``out_proj`` (0 switches a head off).

    Returns
    -------
    output : ndarray of shape (n_tgt, d_model)
    weights : ndarray of shape (n_heads, n_tgt, n_src)
    """
    n, h, dh = len(x), attn.n_heads, attn.d_head
    q = x @ to_float32(attn.W_Q)                                          # (n, h * dh)
    if attn.b_Q is not None:
        q += attn.b_Q
    q *= np.float32(attn.scaling)
    q = q.reshape(n, h, dh).transpose(1, 0, 2)                            # (h, n, dh)
    w_k = to_float32(attn.W_K).T.reshape(h, dh, -1)                       # (h, dh, d_model)
    scores = (q @ w_k) @ enc.T                                            # (h, n, S)
    if attn.b_K is not None:       # the same for every key of a row: kept for exactness
        scores += q @ attn.b_K.reshape(h, dh, 1)                          # (h, n, 1)
    weights = _softmax_rows(scores)
    w_v = to_float32(attn.W_V).T.reshape(h, dh, -1)                       # (h, dh, d_model)
    heads = (weights @ enc) @ w_v.transpose(0, 2, 1)                      # (h, n, dh)
    if attn.b_V is not None:
        heads += attn.b_V.reshape(h, 1, dh)
    if head_mask is not None:
        heads *= np.asarray(head_mask, np.float32)[:, None, None]
    concat = heads.transpose(1, 0, 2).reshape(n, h * dh)                  # (n, h * dh)
    out = concat @ to_float32(attn.W_O)                                   # (n, d_model)
    if attn.b_O is not None:
        out += attn.b_O
    return out, weights


def decoder_layer(y: np.ndarray, layer: DecoderLayer, act, enc: np.ndarray,
                  past: KeyValues | None = None, head_mask=None):
    """One pre-norm decoder layer for new target positions after ``past`` cached ones.

    Parameters
    ----------
    y : ndarray of shape (n_new, d_model)
    layer : DecoderLayer
    act : callable
    enc : ndarray of shape (n_src, d_model)
    past : KeyValues, optional
        ``self_attn``'s keys and values of the earlier positions (1, h, n_past, dh).
    head_mask : ndarray of shape (n_heads,), optional

    Returns
    -------
    y : ndarray of shape (n_new, d_model)
    cross_input : ndarray of shape (n_new, d_model)
        What ``encoder_attn`` read (its queries come from it).
    cross_weights : ndarray of shape (n_heads, n_new, n_src)
    cache : KeyValues
        ``past`` with the new positions appended.
    """
    h = norm(y, layer.self_attn_layer_norm)                               # (n_new, d_model)
    new = layer.self_attn.keys_values(h)                                   # (1, h, n_new, dh)
    cache = new if past is None else past.append(new)
    mask = causal_mask(len(h), cache.n_src - len(h))
    y = y + layer.self_attn(h, cache, mask)[0]
    cross_input = norm(y, layer.encoder_attn_layer_norm)
    out, weights = cross_attention(cross_input, enc, layer.encoder_attn, head_mask)
    y = y + out
    y = y + feed_forward(norm(y, layer.final_layer_norm), layer, act)
    return y, cross_input, weights, cache
