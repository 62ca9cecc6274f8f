"""Input checks at the public boundary: each failure names what was expected and what arrived.

A wrong *type* (a string where a number belongs, ``True`` where a count belongs) raises
``TypeError``; a value of the right type that is out of range or the wrong shape raises
``ValueError``. Received values are quoted cut to a readable length.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["MAX_SEED", "as_finite", "counted", "check_attention_inputs", "check_bool", "check_int",
           "check_seed", "check_heads", "check_tokens", "check_weights", "check_mask",
           "check_projection", "check_source", "quote", "shape_text"]

MAX_SEED = 2**63 - 1   # every seed fits an int64 and the embedder's 16-byte BLAKE2b key
_QUOTE = 60


def quote(value, limit: int = _QUOTE) -> str:
    """``repr(value)`` cut to ``limit`` characters, for error messages."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and the noun, singular for exactly one: "1 head", "4 heads".

    Examples
    --------
    >>> counted(1, "head"), counted(0, "head"), counted(2, "entry", "entries")
    ('1 head', '0 heads', '2 entries')
    """
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def shape_text(a: np.ndarray) -> str:
    """A shape as Python prints it: ``(3,)``, ``(2, 3)``."""
    return "(" + ", ".join(str(n) for n in a.shape) + (",)" if a.ndim == 1 else ")")


def check_int(value, name: str, *, minimum: int | None = None,
              maximum: int | None = None) -> int:
    """``value`` as an int; ``bool`` and floats (even ``3.0``) are refused with a TypeError.

    Examples
    --------
    >>> check_int(3, "n_heads", minimum=1)
    3
    >>> check_int(True, "n_heads")
    Traceback (most recent call last):
    TypeError: n_heads must be an int; received bool True.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int; received {type(value).__name__} "
                        f"{quote(value)}.")
    value = int(value)
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        low = "" if minimum is None else f">= {minimum}"
        high = "" if maximum is None else f"<= {maximum}"
        bounds = " and ".join(b for b in (low, high) if b)
        raise ValueError(f"{name} must be an int {bounds}; received {value}.")
    return value


def check_bool(value, name: str) -> bool:
    """``value`` as a bool; strings such as ``"false"`` and numbers are refused (TypeError)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; received {type(value).__name__} "
                        f"{quote(value)}.")
    return bool(value)


def check_seed(seed, name: str = "seed") -> int:
    """A reproducible seed: an int in 0 .. 2**63-1. ``None`` is refused: it would draw fresh
    numbers in every process, so a shared link would show another picture to each student."""
    if seed is None:
        raise TypeError(f"{name} must be an int (0 .. 2**63-1); received None, which would give "
                        "different numbers in every run. Pass e.g. seed=0.")
    return check_int(seed, name, minimum=0, maximum=MAX_SEED)


def as_finite(x, name: str, dtype: np.dtype) -> np.ndarray:
    """Cast ``x`` to the float ``dtype``; refuse complex, non-numeric, NaN and infinity."""
    kind = x.dtype.kind if isinstance(x, np.ndarray) else np.asarray(x).dtype.kind
    if kind == "c":
        raise TypeError(f"{name} must hold real numbers; received a complex array (its imaginary "
                        "part would be dropped silently). Pass x.real if that is what you mean.")
    try:
        arr = np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be an array of numbers; received {type(x).__name__} "
                        f"that cannot be converted ({err}).") from None
    # One sum is cheaper than isfinite().all(); it is only inexact when the sum overflows.
    # (np.add.reduce and math.isfinite skip the Python wrappers: this runs on every call.)
    if arr.size and not math.isfinite(np.add.reduce(arr, axis=None)) \
            and not np.isfinite(arr).all():
        bad = np.argwhere(~np.isfinite(arr))[0]
        raise ValueError(f"{name} must hold finite numbers; received {arr[tuple(bad)]} at index "
                         f"{tuple(int(i) for i in bad)}. Replace NaN/inf before calling.")
    return arr


def check_tokens(tokens, n: int | None, name: str) -> list[str]:
    """A sequence of ``n`` str tokens (any length when ``n`` is None), as a list.

    Examples
    --------
    >>> check_tokens(["le", "chat"], 2, "tgt_tokens")
    ['le', 'chat']
    """
    if isinstance(tokens, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of str tokens, not one string; received "
                        f"{quote(tokens)}. Split it first, e.g. with xattn.tokenize.")
    try:
        tokens = list(tokens)
    except TypeError:
        raise TypeError(f"{name} must be a sequence of str tokens; received "
                        f"{type(tokens).__name__}.") from None
    bad = next((t for t in tokens if not isinstance(t, str)), None)
    if bad is not None:
        raise TypeError(f"{name} must hold str tokens; received {type(bad).__name__} "
                        f"{quote(bad)}.")
    if n is not None and len(tokens) != n:
        raise ValueError(f"{name} must hold {n} tokens to match the weights; received "
                         f"{len(tokens)}.")
    return tokens


def check_heads(heads, n_heads: int, name: str) -> tuple[int, ...]:
    """Head indices (0-based) as a sorted tuple without repeats.

    Examples
    --------
    >>> check_heads([2, 0, 2], 4, "heads_off")
    (0, 2)
    """
    if isinstance(heads, (numbers.Integral, np.integer)) and not isinstance(heads, bool):
        heads = (heads,)
    try:
        chosen = list(heads)
    except TypeError:
        raise TypeError(f"{name} must be an iterable of head indices; received "
                        f"{type(heads).__name__} {quote(heads)}.") from None
    return tuple(sorted({check_int(h, f"each of {name}", minimum=0, maximum=n_heads - 1)
                         for h in chosen}))


def check_mask(mask, allowed: tuple[tuple[int, ...], ...], name: str,
               hint: str = "(target, source)") -> np.ndarray:
    """A boolean mask (True = may attend) whose shape is one of ``allowed``."""
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(f"{name} must be boolean (True = may attend); received dtype {m.dtype}. "
                        f"Use e.g. `tokens != pad` or `mask.astype(bool)`.")
    if m.shape not in allowed:
        expected = " or ".join(shape_text(np.empty(s, bool)) for s in allowed)
        raise ValueError(f"{name} must have shape {expected} {hint}; received shape "
                         f"{shape_text(m)}.")
    return m


_SUM_ATOL = 1e-3   # float32 softmax rows over thousands of keys are off by ~1e-4
_VALUE_ATOL = 1e-6


def check_weights(weights, mask=None) -> tuple[np.ndarray, np.ndarray, bool]:
    """Attention weights as probabilities, checked.

    Parameters
    ----------
    weights : array_like of shape (n_heads, n_tgt, n_src) or (n_tgt, n_src)
        Rows sum to 1 over the source keys (0 for a row with no key).
    mask : array_like of bool, shape (n_src,) or (n_tgt, n_src), optional
        True where a key may be attended; masked keys must carry zero weight.

    Returns
    -------
    w : ndarray of shape (n_heads, n_tgt, n_src), float64
    keep : ndarray of bool, shape (n_tgt, n_src)
    single : bool
        Whether the input was one head (2-D).
    """
    w = as_finite(weights, "weights", np.float64)
    if w.ndim not in (2, 3) or 0 in w.shape:
        raise ValueError(f"weights must have shape (n_heads, n_tgt, n_src) or (n_tgt, n_src) "
                         f"with every size >= 1; received shape {shape_text(w)}.")
    single = w.ndim == 2
    w = w[None] if single else w
    _, n_tgt, n_src = w.shape
    keep = (np.ones((n_tgt, n_src), dtype=bool) if mask is None else np.broadcast_to(
        check_mask(mask, ((n_src,), (n_tgt, n_src)), "mask"), (n_tgt, n_src)))
    if w.min() < -_VALUE_ATOL or w.max() > 1 + _VALUE_ATOL:
        bad = np.unravel_index(np.argmax(np.abs(w - 0.5)), w.shape)
        raise ValueError(f"weights must be probabilities in [0, 1]; received {w[bad]:.6g} at "
                         f"(head, target, source) = {tuple(int(i) for i in bad)}. Pass softmax "
                         f"outputs, not scores.")
    leaked = np.where(keep, 0.0, w)                                  # (n_heads, n_tgt, n_src)
    if leaked.max() > _VALUE_ATOL:
        bad = np.unravel_index(np.argmax(leaked), w.shape)
        raise ValueError(f"weights must be 0 at masked keys; received {w[bad]:.6g} at "
                         f"(head, target, source) = {tuple(int(i) for i in bad)}. Pass the mask "
                         f"that produced these weights.")
    sums = w.sum(axis=-1)                                            # (n_heads, n_tgt)
    ok = (np.abs(sums - 1) <= _SUM_ATOL) | ~keep.any(axis=-1)
    if mask is None:
        ok |= sums == 0  # an all-zero row is how a fully masked row comes out of the module
    if not ok.all():
        h, i = np.argwhere(~ok)[0]
        raise ValueError(f"each row of weights must sum to 1 over the source keys (0 for a row "
                         f"with no key); received {sums[h, i]:.6g} in head {h}, target row {i}. "
                         f"Pass softmax outputs, not scores.")
    return w, keep, single


def check_attention_inputs(decoder_state, encoder_output, encoder_mask, head_mask, *,
                           d_model: int, n_heads: int, dtype: np.dtype,
                           source=None, d_head: int | None = None):
    """Validate and normalise the arguments of a cross-attention call.

    ``source`` is keys and values projected already (a decoder's cache, ``KeyValues``);
    ``encoder_output`` is then not read. ``d_head`` defaults to ``d_model // n_heads``.

    Returns
    -------
    x_t : ndarray of shape (B, n_tgt, d_model)
    x_s : ndarray of shape (B, n_src, d_model), or None when ``source`` is given
    mask : ndarray of bool, shape (B, 1 | n_tgt, n_src), or None
    gate : ndarray of shape (n_heads,), or None
    batched : bool
        Whether the inputs came with a batch axis (B = 1 was added otherwise).
    """
    x_t = as_finite(decoder_state, "decoder_state", dtype)
    if source is not None:   # keys and values projected already: only their shape to check
        return _check_with_source(x_t, source, encoder_mask, head_mask, d_model=d_model,
                                  n_heads=n_heads, dtype=dtype,
                                  d_head=d_head or d_model // n_heads)
    x_s = as_finite(encoder_output, "encoder_output", dtype)
    for name, x, rows in (("decoder_state", x_t, "n_tgt"), ("encoder_output", x_s, "n_src")):
        _check_side(x, name, rows, d_model)
    if x_t.ndim != x_s.ndim:
        raise ValueError(f"decoder_state and encoder_output must both be batched or both not; "
                         f"received shapes {shape_text(x_t)} and {shape_text(x_s)}.")
    batched = x_t.ndim == 3
    if batched and x_t.shape[0] != x_s.shape[0]:
        raise ValueError(f"decoder_state and encoder_output must have the same batch size; "
                         f"received {x_t.shape[0]} and {x_s.shape[0]}.")
    if batched and x_t.shape[0] == 0:
        raise ValueError(f"a batch must hold at least one pair (B >= 1); received shapes "
                         f"{shape_text(x_t)} and {shape_text(x_s)}.")
    if not batched:
        x_t, x_s = x_t[None], x_s[None]
    mask = _check_encoder_mask(encoder_mask, x_t.shape[0], x_t.shape[1], x_s.shape[1], batched)
    return x_t, x_s, mask, _check_gate(head_mask, n_heads, dtype), batched


def check_source(x, name: str, rows: str, d_model: int, dtype: np.dtype) -> np.ndarray:
    """One side of an attention call as an array of ``dtype``, ``(n, d_model)`` or
    ``(B, n, d_model)`` with ``n >= 1``; ``rows`` names ``n`` in messages."""
    x = as_finite(x, name, dtype)
    _check_side(x, name, rows, d_model)
    return x


def _check_side(x: np.ndarray, name: str, rows: str, d_model: int) -> None:
    if x.ndim not in (2, 3):
        raise ValueError(f"{name} must have shape ({rows}, {d_model}) or (B, {rows}, "
                         f"{d_model}); received shape {shape_text(x)}.")
    if x.shape[-1] != d_model:
        raise ValueError(f"{name} must have last dimension d_model={d_model}; received "
                         f"shape {shape_text(x)}. Embed tokens with the same d_model.")
    if x.shape[-2] == 0:
        side = "target" if rows == "n_tgt" else "source"
        raise ValueError(f"{name} must hold at least one token ({rows} >= 1); received "
                         f"shape {shape_text(x)}. Give a non-empty {side} sentence.")


def check_projection(w, name: str, dtype: np.dtype, shape: tuple[int, ...] | None = None,
                     label: str | None = None):
    """A given projection (``shape``, or any matrix when None) or bias, finite. Kept as given,
    without a copy, when of ``dtype`` or a 16-bit storage dtype (``xattn._floats.STORED``); cast
    to ``dtype`` otherwise. ``label`` names the expected shape in words ("(d_model, d_model)")."""
    from xattn._floats import STORED, all_finite

    a = w if isinstance(w, np.ndarray) else np.asarray(w)
    if a.dtype == dtype or a.dtype in STORED[1:]:
        if not all_finite(a):
            raise ValueError(f"{name} must hold finite numbers; received NaN or infinity.")
    else:
        a = as_finite(a, name, dtype)
    if (a.ndim != 2 if shape is None else a.shape != shape) or 0 in a.shape:
        label = label or ("(d_model,)" if shape is not None and len(shape) == 1 else
                          "(d_model, d_model)")
        size = "" if shape is None else f" = {shape_text(np.empty(shape, bool))}"
        raise ValueError(f"{name} must have shape {label}{size}; received shape "
                         f"{shape_text(a)}.")
    return a


def _check_with_source(x_t, kv, encoder_mask, head_mask, *, d_model, n_heads, dtype, d_head):
    """``check_attention_inputs`` when keys and values ``kv`` (``KeyValues``) come projected."""
    if kv.k.ndim != 4 or kv.k.shape[1::2] != (n_heads, d_head) or kv.v.shape != kv.k.shape:
        raise ValueError(f"keys and values must have shape (B, {n_heads}, n_src, {d_head}) for "
                         f"this module; received {kv.k.shape} and {kv.v.shape}. Make them with "
                         f"this module's keys_values.")
    n_b, n_src, batched = kv.k.shape[0], kv.k.shape[2], kv.batched
    if x_t.ndim != (3 if batched else 2) or x_t.shape[-1] != d_model or x_t.shape[-2] == 0:
        lead = f"({n_b}, " if batched else "("
        raise ValueError(f"decoder_state must have shape {lead}n_tgt, {d_model}) with n_tgt >= 1 "
                         f"to match the keys and values; received shape {shape_text(x_t)}.")
    if batched and x_t.shape[0] != n_b:
        raise ValueError(f"decoder_state and the keys and values must have the same batch size; "
                         f"received {x_t.shape[0]} and {n_b}.")
    if not batched:
        x_t = x_t[None]
    mask = _check_encoder_mask(encoder_mask, n_b, x_t.shape[1], n_src, batched)
    return x_t, None, mask, _check_gate(head_mask, n_heads, dtype), batched


def _check_encoder_mask(encoder_mask, n_b: int, n_tgt: int, n_src: int, batched: bool):
    """The mask as bool (B, 1 | n_tgt, n_src), or None."""
    if encoder_mask is None:
        return None
    allowed = ((n_b, n_src), (n_b, n_tgt, n_src)) if batched else ((n_src,), (n_tgt, n_src))
    mask = check_mask(encoder_mask, allowed, "encoder_mask",
                      "(batch, target, source)" if batched else "(target, source)")
    if not batched:
        mask = mask[None]
    if mask.ndim == 2:  # key padding: the same keys for every target row
        mask = mask[:, None, :]
    return mask


def _check_gate(head_mask, n_heads: int, dtype):
    if head_mask is None:
        return None
    gate = as_finite(head_mask, "head_mask", dtype)
    if gate.shape != (n_heads,):
        raise ValueError(f"head_mask must have shape ({n_heads},), one gate per head; "
                         f"received shape {shape_text(gate)}.")
    return gate
