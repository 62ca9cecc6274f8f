"""The pieces of a Marian encoder-decoder, one function per layer kind (NumPy, float32).

Names follow transformers' ``modeling_marian.py``: each layer has ``self_attn``, (decoder only)
``encoder_attn``, ``fc1``, ``fc2`` and a LayerNorm after each block (post-LayerNorm)::

    encoder layer:  x = LN(x + self_attn(x, x))              then  x = LN(x + fc2(act(fc1(x))))
    decoder layer:  x = LN(x + self_attn(x, x, causal))      then  x = LN(x + encoder_attn(x, enc))
                    then  x = LN(x + fc2(act(fc1(x))))

Every attention, the cross-attention included, is this project's ``MultiHeadCrossAttention``
with the model's biases, so Step through opens the real layer. Weights keep torch's layout
(``weight`` is ``(out, in)``, applied as ``x @ weight.T``: a view, no copy); they may be stored
in float16, and are then read as float32 by each matmul.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xattn.attention import KeyValues, MultiHeadCrossAttention

__all__ = ["Linear", "LayerNorm", "EncoderLayer", "DecoderLayer", "linear", "layer_norm",
           "activation", "sinusoidal_positions", "causal_mask", "feed_forward",
           "encoder_layer", "decoder_layer"]

LAYER_NORM_EPS = 1e-5   # torch.nn.LayerNorm's default, which Marian uses


@dataclass(frozen=True, eq=False)
class Linear:
    """``y = x @ weight.T + bias``: weight (out, in), bias (out,)."""
    weight: np.ndarray
    bias: np.ndarray


@dataclass(frozen=True, eq=False)
class LayerNorm:
    """Normalise over the features, then scale by ``weight`` and shift by ``bias`` (d_model,)."""
    weight: np.ndarray
    bias: np.ndarray


@dataclass(frozen=True, eq=False)
class EncoderLayer:
    self_attn: MultiHeadCrossAttention
    self_attn_layer_norm: LayerNorm
    fc1: Linear
    fc2: Linear
    final_layer_norm: LayerNorm


@dataclass(frozen=True, eq=False)
class DecoderLayer:
    self_attn: MultiHeadCrossAttention
    self_attn_layer_norm: LayerNorm
    encoder_attn: MultiHeadCrossAttention
    encoder_attn_layer_norm: LayerNorm
    fc1: Linear
    fc2: Linear
    final_layer_norm: LayerNorm


def linear(x: np.ndarray, p: Linear) -> np.ndarray:
    """(n, in) to (n, out), float32."""
    y = x @ p.weight.T                                                 # (n, out)
    y += p.bias
    return y


def layer_norm(x: np.ndarray, p: LayerNorm) -> np.ndarray:
    """LayerNorm over the last axis (biased variance, eps 1e-5), (n, d_model)."""
    mean = x.mean(axis=-1, keepdims=True)                              # (n, 1)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)           # (n, 1)
    centred /= np.sqrt(var + np.float32(LAYER_NORM_EPS))
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


def activation(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The function transformers' ``ACT2FN[name]`` applies (names in config.ACTIVATIONS)."""
    return _ACTIVATIONS[name]


def sinusoidal_positions(n: int, d_model: int, offset: int = 0) -> np.ndarray:
    """Marian's position vectors for positions ``offset .. offset+n-1``, (n, d_model) float32.

    Not interleaved: sin of the even features' angles in the first half, cos of the odd
    features' angles in the second (``MarianSinusoidalPositionalEmbedding``), computed in
    float64 and rounded once, as there.

    Examples
    --------
    >>> sinusoidal_positions(2, 4).tolist()[1]          # position 1: sin 1, sin .01, cos ...
    [0.8414709568023682, 0.009999833069741726, 0.5403022766113281, 0.9999499917030334]
    """
    pos = np.arange(offset, offset + n, dtype=np.float64)[:, None]    # (n, 1)
    j = np.arange(d_model)
    angles = pos / np.power(10000, 2 * (j // 2) / d_model)            # (n, d_model)
    half = (d_model + 1) // 2
    out = np.empty((n, d_model), dtype=np.float32)
    out[:, :half] = np.sin(angles[:, 0::2])
    out[:, half:] = np.cos(angles[:, 1::2])
    return out


def causal_mask(n_new: int, n_past: int) -> np.ndarray | None:
    """True where new position i may attend position j: j <= n_past + i, (n_new, n_past +
    n_new); None when there is one new position (it may attend everything before it)."""
    if n_new == 1:
        return None
    return np.arange(n_past + n_new)[None, :] <= n_past + np.arange(n_new)[:, None]


def feed_forward(x: np.ndarray, fc1: Linear, fc2: Linear, act) -> np.ndarray:
    """``fc2(act(fc1(x)))``: (n, d_model) to (n, ffn_dim) and back."""
    return linear(act(linear(x, fc1)), fc2)


def encoder_layer(x: np.ndarray, layer: EncoderLayer, act) -> np.ndarray:
    """One encoder layer, (S, d_model) to (S, d_model); every source token sees every other."""
    h, _ = layer.self_attn(x, x)                                       # (S, d_model)
    x = layer_norm(x + h, layer.self_attn_layer_norm)
    return layer_norm(x + feed_forward(x, layer.fc1, layer.fc2, act), layer.final_layer_norm)


def decoder_layer(x: np.ndarray, layer: DecoderLayer, act, source: KeyValues,
                  past: KeyValues | None = None, head_mask=None):
    """One decoder layer for new target positions, after ``past`` ones (the cache).

    Parameters
    ----------
    x : ndarray of shape (n_new, d_model)
    layer : DecoderLayer
    act : callable
    source : KeyValues
        The encoder output projected by ``layer.encoder_attn`` (``keys_values``), (1, h, S, dh).
    past : KeyValues, optional
        ``self_attn``'s keys and values of the earlier target positions.
    head_mask : array_like of shape (n_heads,), optional
        Gates on the cross-attention heads before ``out_proj`` (0 switches a head off).

    Returns
    -------
    x : ndarray of shape (n_new, d_model)
    cross_input : ndarray of shape (n_new, d_model)
        What ``encoder_attn`` read (its queries come from it): for ``trace``.
    cross_weights : ndarray of shape (n_heads, n_new, S)
    cache : KeyValues
        ``past`` with the new positions appended.
    """
    new = layer.self_attn.keys_values(x)                               # (1, h, n_new, dh)
    cache = new if past is None else past.append(new)                  # (1, h, t, dh)
    h, _ = layer.self_attn(x, cache, causal_mask(len(x), cache.n_src - len(x)))
    x = layer_norm(x + h, layer.self_attn_layer_norm)
    cross_input = x
    h, cross_weights = layer.encoder_attn(x, source, head_mask=head_mask)  # (n_new, d), (h,n,S)
    x = layer_norm(x + h, layer.encoder_attn_layer_norm)
    x = layer_norm(x + feed_forward(x, layer.fc1, layer.fc2, act), layer.final_layer_norm)
    return x, cross_input, cross_weights, cache
