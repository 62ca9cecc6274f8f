"""Input checks at the public boundary: each failure is a ValueError with expected vs received."""

from __future__ import annotations

import math

import numpy as np


def _shape(a: np.ndarray) -> str:
    return "(" + ", ".join(str(n) for n in a.shape) + (",)" if a.ndim == 1 else ")")


def as_finite(x, name: str, dtype: np.dtype) -> np.ndarray:
    """Cast ``x`` to ``dtype`` and refuse NaN or infinity."""
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{name} must be an array of numbers; received {type(x).__name__} "
                         f"that cannot be converted ({err}).") from None
    # One sum is cheaper than isfinite().all(); it is only inexact when the sum overflows.
    # (np.add.reduce and math.isfinite skip the Python wrappers: this runs on every call.)
    if arr.size and not math.isfinite(np.add.reduce(arr, axis=None)) \
            and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} must hold finite numbers; received {arr[tuple(bad)]} at index "
                         f"{tuple(int(i) for i in bad)}. Replace NaN/inf before calling.")
    return arr


def check_attention_inputs(decoder_state, encoder_output, encoder_mask, head_mask, *,
                           d_model: int, n_heads: int, dtype: np.dtype):
    """Validate and normalise the arguments of a cross-attention call.

    Returns
    -------
    x_t : ndarray of shape (B, n_tgt, d_model)
    x_s : ndarray of shape (B, n_src, d_model)
    mask : ndarray of bool, shape (B, 1 | n_tgt, n_src), or None
    gate : ndarray of shape (n_heads,), or None
    batched : bool
        Whether the inputs came with a batch axis (B = 1 was added otherwise).
    """
    x_t = as_finite(decoder_state, "decoder_state", dtype)
    x_s = as_finite(encoder_output, "encoder_output", dtype)
    for name, x, rows in (("decoder_state", x_t, "n_tgt"), ("encoder_output", x_s, "n_src")):
        if x.ndim not in (2, 3):
            raise ValueError(f"{name} must have shape ({rows}, {d_model}) or (B, {rows}, "
                             f"{d_model}); received shape {_shape(x)}.")
        if x.shape[-1] != d_model:
            raise ValueError(f"{name} must have last dimension d_model={d_model}; received "
                             f"shape {_shape(x)}. Embed tokens with the same d_model.")
        if x.shape[-2] == 0:
            side = "target" if rows == "n_tgt" else "source"
            raise ValueError(f"{name} must hold at least one token ({rows} >= 1); received "
                             f"shape {_shape(x)}. Give a non-empty {side} sentence.")
    if x_t.ndim != x_s.ndim:
        raise ValueError(f"decoder_state and encoder_output must both be batched or both not; "
                         f"received shapes {_shape(x_t)} and {_shape(x_s)}.")
    batched = x_t.ndim == 3
    if batched and x_t.shape[0] != x_s.shape[0]:
        raise ValueError(f"decoder_state and encoder_output must have the same batch size; "
                         f"received {x_t.shape[0]} and {x_s.shape[0]}.")
    if not batched:
        x_t, x_s = x_t[None], x_s[None]
    mask = None if encoder_mask is None else _check_mask(encoder_mask, x_t.shape, x_s.shape[1],
                                                         batched)
    gate = None if head_mask is None else _check_head_mask(head_mask, n_heads, dtype)
    return x_t, x_s, mask, gate, batched


def _check_mask(encoder_mask, tgt_shape, n_src: int, batched: bool) -> np.ndarray:
    mask = np.asarray(encoder_mask)
    if mask.dtype != np.bool_:
        raise ValueError(f"encoder_mask must be boolean (True = may attend); received dtype "
                         f"{mask.dtype}. Use e.g. `tokens != pad` or `mask.astype(bool)`.")
    n_b, n_tgt = tgt_shape[0], tgt_shape[1]
    allowed = ((n_b, n_src), (n_b, n_tgt, n_src)) if batched else ((n_src,), (n_tgt, n_src))
    if mask.shape not in allowed:
        expected = " or ".join(_shape(np.empty(shape, bool)) for shape in allowed)
        raise ValueError(f"encoder_mask must have shape {expected} (batch, target, source); "
                         f"received shape {_shape(mask)}.")
    if not batched:
        mask = mask[None]
    if mask.ndim == 2:  # key padding: the same keys for every target row
        mask = mask[:, None, :]
    return mask


def _check_head_mask(head_mask, n_heads: int, dtype: np.dtype) -> np.ndarray:
    gate = as_finite(head_mask, "head_mask", dtype)
    if gate.shape != (n_heads,):
        raise ValueError(f"head_mask must have shape ({n_heads},), one gate per head; received "
                         f"shape {_shape(gate)}.")
    return gate
