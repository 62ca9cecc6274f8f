"""The attention file: cross-attention weights and their tokens in one ``.npz`` (pure NumPy).

The page downloads and uploads this format, and ``python -m xattn.torch_models export`` writes
it, so weights from any framework can be looked at in the same views. The arrays:

``cross_attention``
    float, shape ``(n_layers, n_heads, n_tgt, n_src)`` or ``(n_heads, n_tgt, n_src)``: rows are
    target tokens (queries), columns source tokens (keys); each row sums to 1 (or is all zero).
``src_tokens``, ``tgt_tokens``
    unicode, shapes ``(n_src,)`` and ``(n_tgt,)``.
``model``, ``src_text``, ``tgt_text`` (optional)
    0-d unicode: where the weights come from.

An uploaded file is untrusted: ``load_attention`` refuses files over 20 MB (``MAX_BYTES``,
decimal: 20,000,000 bytes, as the uploader counts) before reading them, checks the sizes the
zip directory and each array header declare before unpacking anything (no zip bomb, no huge
allocation), never unpickles (``allow_pickle=False``), and reports every problem it finds, one
per line, in an ``AttentionFileError``. Received values are quoted, cut to about 60
characters, and never interpreted.

What a file may declare is bounded by what the page shows, judged from the array headers
before any array is unpacked: ``MAX_LAYERS`` (24) layers x ``MAX_HEADS`` (16) heads (t5-large's
and NLLB-200 3.3B's cross-attention; opus-mt has 6 x 8), ``MAX_TOKENS`` (64) tokens a side,
``MAX_CHARS`` (2,000) characters a token or text: at most 1,572,864 weights, whatever the file
says. Bigger models: save the layers and heads to show.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass

import numpy as np

from xattn._safenpz import UnreadableNpz, quote, read_npz
from xattn.pipeline import MAX_HEADS, MAX_TOKENS

__all__ = ["MAX_BYTES", "MAX_CHARS", "MAX_HEADS", "MAX_LAYERS", "MAX_TOKENS", "AttentionFile",
           "AttentionFileError", "attention_to_bytes", "load_attention", "save_attention"]

MAX_BYTES = 20 * 10**6   # the file, and again its arrays once unpacked (decimal MB, as uploads)
MAX_LAYERS = 24          # t5-large and NLLB-200 3.3B have 24 decoder layers of 16 heads
MAX_CHARS = 2000         # per token and per text, as for a typed sentence
_SUM_ATOL = 1e-3         # float32 softmax rows over hundreds of keys are off by ~1e-5
_VALUE_ATOL = 1e-6
_WEIGHTS, _TOKENS, _TEXTS = "cross_attention", ("src_tokens", "tgt_tokens"), \
    ("model", "src_text", "tgt_text")
_SHAPE = "(n_layers, n_heads, n_tgt, n_src) or (n_heads, n_tgt, n_src)"


class AttentionFileError(ValueError):
    """An attention file (or the arrays for one) is not valid.

    Attributes
    ----------
    problems : list of str
        Every problem found, one sentence each; ``str(error)`` joins them with newlines.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass(frozen=True, eq=False)
class AttentionFile:
    """The contents of a valid attention file.

    Attributes
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tgt, n_src), float32
        A file without a layer axis gives ``n_layers = 1``.
    src_tokens, tgt_tokens : tuple of str
    model, src_text, tgt_text : str or None
    """

    weights: np.ndarray
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    model: str | None = None
    src_text: str | None = None
    tgt_text: str | None = None

    @property
    def n_layers(self) -> int:
        return self.weights.shape[0]

    @property
    def n_heads(self) -> int:
        return self.weights.shape[1]

    def __repr__(self) -> str:
        n_l, n_h, n_t, n_s = self.weights.shape
        return (f"AttentionFile(model={self.model!r}, n_layers={n_l}, n_heads={n_h}, "
                f"n_tgt={n_t}, n_src={n_s})")


# ------------------------------------------------------------------ writing
def save_attention(file, weights, src_tokens, tgt_tokens, *, model: str | None = None,
                   src_text: str | None = None, tgt_text: str | None = None,
                   extra: dict | None = None) -> None:
    """Write an attention file.

    Parameters
    ----------
    file : str, os.PathLike or binary file object
        Written as given (no ``.npz`` is appended to a path).
    weights : array_like of shape (n_layers, n_heads, n_tgt, n_src) or (n_heads, n_tgt, n_src)
    src_tokens : sequence of str, length n_src
    tgt_tokens : sequence of str, length n_tgt
    model, src_text, tgt_text : str, optional
    extra : dict of str to array_like, optional
        More arrays to keep beside the format's own (e.g. the output, the inputs); readers of
        the format ignore them. Their names must not be the format's.

    Raises
    ------
    AttentionFileError
        With every problem that would make the file invalid; nothing is written then.
    """
    arrays = _arrays(weights, src_tokens, tgt_tokens, model=model, src_text=src_text,
                     tgt_text=tgt_text)
    clash = sorted(set(extra or {}) & {_WEIGHTS, *_TOKENS, *_TEXTS})
    if clash:
        raise AttentionFileError([f"extra arrays must not be named like the format's own; "
                                  f"received {', '.join(clash)}."])
    arrays.update({name: np.asarray(value) for name, value in (extra or {}).items()})
    if isinstance(file, (str, os.PathLike)):
        with open(file, "wb") as fh:
            np.savez_compressed(fh, **arrays)
    else:
        np.savez_compressed(file, **arrays)


def attention_to_bytes(weights, src_tokens, tgt_tokens, **meta) -> bytes:
    """``save_attention`` into bytes (for a download button). Same arguments, minus ``file``.

    Examples
    --------
    >>> w = np.full((2, 1, 2), 0.5)                        # (n_heads, n_tgt, n_src)
    >>> f = load_attention(attention_to_bytes(w, ["a", "b"], ["x"], model="toy"))
    >>> f.weights.shape, f.src_tokens, f.model
    ((1, 2, 1, 2), ('a', 'b'), 'toy')
    """
    buffer = io.BytesIO()
    save_attention(buffer, weights, src_tokens, tgt_tokens, **meta)
    return buffer.getvalue()


def _arrays(weights, src_tokens, tgt_tokens, **texts) -> dict[str, np.ndarray]:
    problems, arrays = [], {}
    try:
        arrays[_WEIGHTS] = np.asarray(weights)
    except (TypeError, ValueError) as err:
        problems.append(f"weights must be an array of numbers; received {quote(weights)} "
                        f"({quote(str(err))}).")
    for name, tokens in zip(_TOKENS, (src_tokens, tgt_tokens), strict=True):
        if isinstance(tokens, str):
            problems.append(f"{name} must be a sequence of strings, one per token; received a "
                            f"single string {quote(tokens)}.")
            continue
        bad = [(i, t) for i, t in enumerate(tokens) if not isinstance(t, str)]
        nul = [(i, t) for i, t in enumerate(tokens) if isinstance(t, str) and t.endswith("\0")]
        if bad:
            problems.append(f"{name} must hold strings; received {type(bad[0][1]).__name__} "
                            f"{quote(bad[0][1])} at position {bad[0][0]}.")
        elif nul:
            problems.append(f"{name} must not end in NUL characters (NumPy's unicode arrays drop "
                            f"them); received {quote(nul[0][1])} at position {nul[0][0]}.")
        else:
            arrays[name] = np.array(list(tokens), dtype=np.str_)
    for name, text in texts.items():
        if text is not None and (not isinstance(text, str) or text.endswith("\0")):
            problems.append(f"{name} must be a string or None, not ending in a NUL character; "
                            f"received {type(text).__name__} {quote(text)}.")
        elif text is not None:
            arrays[name] = np.array(text, dtype=np.str_)
    if not problems:
        problems = _check(arrays)[0]
    if problems:
        raise AttentionFileError(problems)
    return arrays


# ------------------------------------------------------------------ reading
def load_attention(file, *, max_bytes: int = MAX_BYTES) -> AttentionFile:
    """Read and check an attention file.

    Parameters
    ----------
    file : bytes, str, os.PathLike or binary file object
        The ``.npz`` data (e.g. an uploaded file), or where to read it.
    max_bytes : int, default MAX_BYTES (20 MB)
        Limit for the file, and again for the total size of its arrays once unpacked.

    Returns
    -------
    AttentionFile
        Weights always 4-D float32.

    Raises
    ------
    AttentionFileError
        With ``.problems``, every problem found. A file declaring more than the page shows
        (``MAX_LAYERS``, ``MAX_HEADS``, ``MAX_TOKENS``, ``MAX_CHARS``) is refused from its array
        headers, before any array is unpacked.
    TypeError, ValueError
        ``max_bytes`` is not an int, or is < 1.
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise TypeError(f"max_bytes must be an int; received {type(max_bytes).__name__} "
                        f"{max_bytes!r}.")
    if max_bytes < 1:
        raise ValueError(f"max_bytes must be an int >= 1; received {max_bytes!r}.")
    try:
        arrays, problems, members = read_npz(file, (_WEIGHTS, *_TOKENS, *_TEXTS), max_bytes,
                                             _declared)
    except UnreadableNpz as err:
        raise AttentionFileError([str(err)]) from None
    missing = [n for n in (_WEIGHTS, *_TOKENS) if n not in members]
    if missing:
        found = ", ".join(sorted(members)) or "no arrays"
        problems.append(f"Missing {', '.join(missing)} (the file has: {quote(found)}).")
    more, weights = _check(arrays)
    problems += more
    if problems:
        raise AttentionFileError(problems)
    texts = {name: str(arrays[name]) if name in arrays else None for name in _TEXTS}
    return AttentionFile(weights, *(tuple(arrays[n].tolist()) for n in _TOKENS), **texts)


# ------------------------------------------------------------------ checks
def _declared(name: str, shape: tuple[int, ...], dtype: np.dtype) -> list[str]:
    """Problems of an array judged from its shape and dtype alone: from an ``.npy`` header
    before anything is unpacked, or of an array about to be saved."""
    if name == _WEIGHTS:
        return _weights_declared(shape, dtype)
    chars = dtype.itemsize // 4 if dtype.kind == "U" else 0
    long = chars > MAX_CHARS
    if name in _TOKENS:
        if len(shape) != 1:
            return [f"{name} must have one dimension; received shape {shape}."]
        problems = []
        if shape[0] > MAX_TOKENS:
            problems.append(f"{name} may hold at most {MAX_TOKENS} tokens, as the page shows at "
                            f"most {MAX_TOKENS} a side; received {shape[0]}.")
        if long:
            problems.append(f"{name} may hold tokens of at most {MAX_CHARS:,} characters; "
                            f"received dtype {dtype} (up to {chars:,}).")
        return problems
    if dtype.kind != "U" or shape != ():
        return [f"{name} must be a single unicode string (a 0-d array); received dtype {dtype}, "
                f"shape {shape}."]
    return [f"{name} may be at most {MAX_CHARS:,} characters long; received dtype {dtype} "
            f"(up to {chars:,})."] if long else []


def _weights_declared(shape: tuple[int, ...], dtype: np.dtype) -> list[str]:
    if dtype.kind == "c":
        return [f"cross_attention must hold real numbers; received complex dtype {dtype}."]
    if dtype.kind not in "iuf":
        return [f"cross_attention must hold numbers; received dtype {dtype}."]
    if len(shape) not in (3, 4) or 0 in shape:
        return [f"cross_attention must have shape {_SHAPE}, every size >= 1; received shape "
                f"{shape}."]
    n_layers, n_heads, n_tgt, n_src = shape if len(shape) == 4 else (1, *shape)
    bounds = ((n_layers, MAX_LAYERS, "layers", f"weights[:{MAX_LAYERS}]"),
              (n_heads, MAX_HEADS, "heads per layer",
               f"weights[:, :{MAX_HEADS}]" if len(shape) == 4 else f"weights[:{MAX_HEADS}]"),
              (n_tgt, MAX_TOKENS, "target rows (n_tgt)", None),
              (n_src, MAX_TOKENS, "source columns (n_src)", None))
    return [f"cross_attention may have at most {most} {what}; received {n} (shape {shape}). "
            + (f"Save the ones to show, e.g. {keep}." if keep else
               f"The page shows at most {MAX_TOKENS} tokens a side.")
            for n, most, what, keep in bounds if n > most]


def _check(arrays: dict[str, np.ndarray]) -> tuple[list[str], np.ndarray | None]:
    """Every problem of the arrays, and the weights as 4-D float32 when they are valid."""
    problems, sound = [], {}
    for name, array in arrays.items():       # as an upload's headers: the arrays that pass go on
        found = _declared(name, array.shape, array.dtype)
        problems += found
        if not found:
            sound[name] = array
    more, weights = _check_values(sound.get(_WEIGHTS))
    problems += more
    for name, axis, label in (("src_tokens", -1, "source columns (n_src)"),
                              ("tgt_tokens", -2, "target rows (n_tgt)")):
        tokens = sound.get(name)
        if tokens is None:
            continue
        if tokens.dtype.kind != "U":
            first = quote(tokens.reshape(-1)[0].item()) if tokens.size else "nothing"
            problems.append(f"{name} must hold unicode strings; received dtype {tokens.dtype} "
                            f"(first value {first}).")
        elif weights is not None and len(tokens) != weights.shape[axis]:
            problems.append(f"{name} has {len(tokens)} tokens but cross_attention has "
                            f"{weights.shape[axis]} {label}.")
    return problems, (weights if not problems else None)


def _check_values(w) -> tuple[list[str], np.ndarray | None]:
    """The values of weights whose shape and dtype passed ``_declared``: at most
    ``MAX_LAYERS * MAX_HEADS * MAX_TOKENS**2`` numbers, so the float64 copy is small."""
    if w is None:
        return [], None
    w4 = (w if w.ndim == 4 else w[None]).astype(np.float64)         # (L, H, T, S)
    problems = []
    finite = np.isfinite(w4)
    if not finite.all():
        problems.append(_first("values are not finite (NaN or infinity)", ~finite, w4))
    outside = finite & ((w4 < -_VALUE_ATOL) | (w4 > 1 + _VALUE_ATOL))
    if outside.any():
        problems.append(_first("values lie outside [0, 1]", outside, w4))
    sums = np.where(finite, w4, 0.0).sum(axis=-1)                   # (L, H, T)
    bad_rows = finite.all(axis=-1) & (np.abs(sums - 1) > _SUM_ATOL) & (w4 != 0).any(axis=-1)
    if bad_rows.any():
        n = int(bad_rows.sum())
        first = tuple(int(i) for i in np.argwhere(bad_rows)[0])
        problems.append(f"{n} {'row does' if n == 1 else 'rows do'} not sum to 1 (within "
                        f"{_SUM_ATOL:g}) and {'is' if n == 1 else 'are'} not all zero; the first "
                        f"is {_where(first)}, which sums to {sums[first]:.6g}.")
    return problems, (w4.astype(np.float32) if not problems else None)


def _first(what: str, bad: np.ndarray, w: np.ndarray) -> str:
    n = int(bad.sum())
    first = tuple(int(i) for i in np.argwhere(bad)[0])
    what = what.replace("values are", "value is").replace("values lie", "value lies") \
        if n == 1 else what
    return (f"{n} {what}; the first is {w[first]:.6g} at {_where(first[:3])}, column "
            f"{first[3] + 1}.")


def _where(index: tuple[int, ...]) -> str:
    layer, head, row = (i + 1 for i in index)
    return f"layer {layer}, head {head}, row {row}"
