"""The pieces of an encoder-decoder, one function per layer kind (NumPy, float32).

Names follow transformers' BART-family code (``modeling_marian.py``, ``modeling_bart.py``,
``modeling_mbart.py``, ``modeling_m2m_100.py``); T5's pieces take the same names (its
``SelfAttention`` is ``self_attn``, ``EncDecAttention`` is ``encoder_attn``, ``wi`` / ``wo`` are
``fc1`` / ``fc2``). Each layer has a norm beside each block, after it (Marian, BART) or before
it (mBART, M2M100, T5)::

    post-norm:  x = norm(x + block(x))            pre-norm:  x = x + block(norm(x))

    encoder layer:  self_attn (every source token sees every other), then the feed-forward
    decoder layer:  self_attn (causal), encoder_attn (cross-attention), then the feed-forward
    feed-forward:   fc2(act(fc1(x)))   or, gated (T5 v1.1):  fc2(act(fc1(x)) * fc1_linear(x))

Every attention, the cross-attention included, is this project's ``MultiHeadCrossAttention``
with the model's biases (or none), so Step through opens the real layer. Weights keep torch's
layout (``weight`` is ``(out, in)``, applied as ``x @ weight.T``: a view, no copy) and may be
stored in float16 or bfloat16 (``xattn._floats``), read as float32 by each matmul.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xattn._floats import BFLOAT16, to_float32
from xattn.attention import KeyValues, MultiHeadCrossAttention

__all__ = ["Linear", "Norm", "EncoderLayer", "DecoderLayer", "ACTIVATIONS", "linear", "norm",
           "activation", "causal_mask", "feed_forward", "encoder_layer", "decoder_layer"]


@dataclass(frozen=True, eq=False)
class Linear:
    """``y = x @ weight.T + bias``: weight (out, in), bias (out,) or None (T5)."""
    weight: np.ndarray
    bias: np.ndarray | None


@dataclass(frozen=True, eq=False)
class Norm:
    """Normalise over the features, scale by ``weight`` (d_model,) and shift by ``bias``.

    ``rms``: T5's root-mean-square norm (no mean taken off, no bias); else LayerNorm.
    """
    weight: np.ndarray
    bias: np.ndarray | None
    eps: float
    rms: bool = False


@dataclass(frozen=True, eq=False)
class EncoderLayer:
    self_attn: MultiHeadCrossAttention
    self_attn_layer_norm: Norm
    fc1: Linear
    fc1_linear: Linear | None        # the gated feed-forward's second input (T5 v1.1: wi_1)
    fc2: Linear
    final_layer_norm: Norm


@dataclass(frozen=True, eq=False)
class DecoderLayer:
    self_attn: MultiHeadCrossAttention
    self_attn_layer_norm: Norm
    encoder_attn: MultiHeadCrossAttention
    encoder_attn_layer_norm: Norm
    fc1: Linear
    fc1_linear: Linear | None
    fc2: Linear
    final_layer_norm: Norm


def linear(x: np.ndarray, p: Linear) -> np.ndarray:
    """(n, in) to (n, out), float32."""
    w = to_float32(p.weight) if p.weight.dtype == BFLOAT16 else p.weight
    y = x @ w.T                                                        # (n, out)
    if p.bias is not None:
        y += p.bias
    return y


def norm(x: np.ndarray, p: Norm) -> np.ndarray:
    """LayerNorm (biased variance) or T5's RMS norm over the last axis, (n, d_model)."""
    if p.rms:
        var = np.mean(x * x, axis=-1, keepdims=True)                   # (n, 1)
        return p.weight * (x / np.sqrt(var + np.float32(p.eps)))
    mean = x.mean(axis=-1, keepdims=True)                              # (n, 1)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)           # (n, 1)
    centred /= np.sqrt(var + np.float32(p.eps))
    centred *= p.weight
    centred += p.bias
    return centred


def _erf(x: np.ndarray) -> np.ndarray:
    """erf to about 1e-7 (Abramowitz and Stegun 7.1.26), in float64: NumPy has no erf."""
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                           + t * 1.061405429))))
    return np.sign(x) * (1.0 - poly * np.exp(-z * z))


def _swish(x):
    with np.errstate(over="ignore"):          # exp(-x) = inf for x << 0 gives x / inf = -0
        return x / (1 + np.exp(-x))


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.float32(math.sqrt(2 / math.pi)) * (x + 0.044715 * x ** 3)))


_ACTIVATIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "swish": _swish, "silu": _swish,
    "gelu": lambda x: (0.5 * x * (1 + _erf(x / math.sqrt(2)))).astype(x.dtype),
    "gelu_new": _gelu_tanh, "gelu_pytorch_tanh": _gelu_tanh,
    "relu": lambda x: np.maximum(x, 0), "tanh": np.tanh,
}
ACTIVATIONS = tuple(_ACTIVATIONS)     # transformers' ACT2FN names these checkpoints use


def activation(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The function transformers' ``ACT2FN[name]`` applies (names in ``ACTIVATIONS``)."""
    return _ACTIVATIONS[name]


def causal_mask(n_new: int, n_past: int) -> np.ndarray | None:
    """True where new position i may attend position j: j <= n_past + i, (n_new, n_past +
    n_new); None when there is one new position (it may attend everything before it)."""
    if n_new == 1:
        return None
    return np.arange(n_past + n_new)[None, :] <= n_past + np.arange(n_new)[:, None]


def feed_forward(x: np.ndarray, layer, act) -> np.ndarray:
    """``fc2(act(fc1(x)))``, gated ``fc2(act(fc1(x)) * fc1_linear(x))``: (n, d_model) to
    (n, ffn_dim) and back."""
    h = act(linear(x, layer.fc1))                                      # (n, ffn_dim)
    if layer.fc1_linear is not None:
        h *= linear(x, layer.fc1_linear)
    return linear(h, layer.fc2)


def _block(x: np.ndarray, p: Norm, pre_norm: bool, fn) -> tuple[np.ndarray, np.ndarray]:
    """One residual block: the new x, and what ``fn`` read (for a trace)."""
    if pre_norm:
        read = norm(x, p)
        return x + fn(read), read
    return norm(x + fn(x), p), x


def encoder_layer(x: np.ndarray, layer: EncoderLayer, act, pre_norm: bool,
                  position_bias: np.ndarray | None = None) -> np.ndarray:
    """One encoder layer, (S, d_model) to (S, d_model); ``position_bias`` (h, S, S): T5's."""
    x, _ = _block(x, layer.self_attn_layer_norm, pre_norm,
                  lambda h: layer.self_attn(h, h, position_bias=position_bias)[0])
    x, _ = _block(x, layer.final_layer_norm, pre_norm, lambda h: feed_forward(h, layer, act))
    return x


def decoder_layer(x: np.ndarray, layer: DecoderLayer, act, pre_norm: bool, source: KeyValues,
                  past: KeyValues | None = None, head_mask=None, position_bias=None):
    """One decoder layer for new target positions, after ``past`` ones (the cache).

    Parameters
    ----------
    x : ndarray of shape (n_new, d_model)
    layer : DecoderLayer
    act : callable
    pre_norm : bool
    source : KeyValues
        The encoder output projected by ``layer.encoder_attn`` (``keys_values``), (1, h, S, dh).
    past : KeyValues, optional
        ``self_attn``'s keys and values of the earlier target positions.
    head_mask : array_like of shape (n_heads,), optional
        Gates on the cross-attention heads before ``out_proj`` (0 switches a head off).
    position_bias : ndarray of shape (n_heads, n_new, n_past + n_new), optional
        T5's self-attention bias.

    Returns
    -------
    x : ndarray of shape (n_new, d_model)
    cross_input : ndarray of shape (n_new, d_model)
        What ``encoder_attn`` read (its queries come from it): for ``trace``.
    cross_weights : ndarray of shape (n_heads, n_new, S)
    cache : KeyValues
        ``past`` with the new positions appended.
    """
    kept = {}

    def self_attention(h):
        new = layer.self_attn.keys_values(h)                           # (1, h, n_new, dh)
        kept["cache"] = cache = new if past is None else past.append(new)
        mask = causal_mask(len(h), cache.n_src - len(h))
        return layer.self_attn(h, cache, mask, position_bias=position_bias)[0]

    def cross_attention(h):
        out, kept["weights"] = layer.encoder_attn(h, source, head_mask=head_mask)
        return out                                                     # (n_new, d_model)

    x, _ = _block(x, layer.self_attn_layer_norm, pre_norm, self_attention)
    x, cross_input = _block(x, layer.encoder_attn_layer_norm, pre_norm, cross_attention)
    x, _ = _block(x, layer.final_layer_norm, pre_norm, lambda h: feed_forward(h, layer, act))
    return x, cross_input, kept["weights"], kept["cache"]
