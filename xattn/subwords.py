"""Subword pieces to words, and attention sinks, for the weights of real models (pure NumPy).

Translation models read sentencepiece *pieces*, not words: "unbelievable" may be
``["▁un", "believ", "able"]``. A piece starting with ``▁`` starts a word; special tokens such as
``</s>`` are words of their own. Word-level attention follows Clark et al. (2019): attention TO a
word is the sum over its pieces (columns add up), attention FROM a word is the mean over its
pieces (rows are averaged), so rows still sum to 1.

Real models also park much of their cross-attention on ``</s>`` and punctuation ("sinks").
``sink_columns`` finds those columns and ``hide_sinks`` drops them and renormalises the rest,
returning the mass that was removed so a page can show it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

import numpy as np

from xattn._checks import as_finite, shape_text

__all__ = ["SPECIAL_TOKENS", "WORD_START", "word_marker", "word_groups", "word_texts",
           "merge_words", "sink_columns", "hide_sinks"]

SPECIAL_TOKENS = ("</s>", "<pad>", "<unk>", "<s>")
WORD_START = "\u2581"   # "▁", sentencepiece's mark for a piece that follows a space
_BYTE_BPE_START = "\u0120"   # "Ġ", byte-level BPE's (BART, GPT-2) encoded space


def _check_tokens(tokens, name: str) -> list[str]:
    if isinstance(tokens, str):
        raise TypeError(f"{name} must be a sequence of strings, one per token; received a single "
                        f"string {tokens[:60]!r}. Split it first.")
    tokens = list(tokens)
    bad = [t for t in tokens if not isinstance(t, str)]
    if bad:
        raise TypeError(f"{name} must hold strings; received {type(bad[0]).__name__} "
                        f"{bad[0]!r:.60}.")
    return tokens


def word_marker(pieces: Sequence[str]) -> str:
    """The word-start mark of a tokenizer, guessed from its pieces.

    ``"▁"`` for sentencepiece (Marian, T5, mBART, Pegasus), ``"Ġ"`` for byte-level BPE (BART);
    ``"▁"`` when neither appears.

    Examples
    --------
    >>> word_marker(["<s>", "The", "Ġcat", "</s>"])
    'Ġ'
    """
    pieces = _check_tokens(pieces, "pieces")
    if any(WORD_START in p for p in pieces):
        return WORD_START
    return _BYTE_BPE_START if any(p.startswith(_BYTE_BPE_START) for p in pieces) else WORD_START


def word_groups(pieces: Sequence[str], *, specials: Sequence[str] = SPECIAL_TOKENS,
                marker: str = WORD_START) -> np.ndarray:
    """The word each piece belongs to.

    Parameters
    ----------
    pieces : sequence of str
        Tokenizer pieces in order, e.g. ``["▁un", "believ", "able", "</s>"]``.
    specials : sequence of str, default SPECIAL_TOKENS
        Tokens that are always a word of their own.
    marker : str, default "▁"
        Prefix that starts a word.

    Returns
    -------
    ndarray of int64, shape (n_pieces,)
        Word index per piece: starts at 0 and goes up by 0 or 1 from one piece to the next.

    Examples
    --------
    >>> word_groups(["▁un", "believ", "able", "▁cat", "s", "</s>"]).tolist()
    [0, 0, 0, 1, 1, 2]
    """
    pieces = _check_tokens(pieces, "pieces")
    special = set(specials)
    groups = np.empty(len(pieces), dtype=np.int64)
    word, previous_special = -1, True   # the first piece always starts a word
    for i, piece in enumerate(pieces):
        is_special = piece in special
        if is_special or previous_special or piece.startswith(marker):
            word += 1
        groups[i] = word
        previous_special = is_special
    return groups


def word_texts(pieces: Sequence[str], groups, *, marker: str = WORD_START) -> list[str]:
    """The text of each word: its pieces joined, without the word-start marker.

    A word made of the bare marker alone keeps it (``"▁"``) so that it stays visible.

    Examples
    --------
    >>> pieces = ["▁un", "believ", "able", "▁cat", "s", "</s>"]
    >>> word_texts(pieces, word_groups(pieces))
    ['unbelievable', 'cats', '</s>']
    """
    pieces = _check_tokens(pieces, "pieces")
    starts = _check_groups(groups, len(pieces), "groups")
    ends = [*starts[1:], len(pieces)][:len(starts)]
    words = ["".join(pieces[a:b]).replace(marker, "") for a, b in zip(starts, ends, strict=True)]
    return [w if w else marker for w in words]


def _check_groups(groups, n: int, name: str) -> list[int]:
    """Start index of each word, after checking that ``groups`` is a valid word_groups result."""
    g = np.asarray(groups)
    if g.dtype == np.bool_ or not np.issubdtype(g.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array (see word_groups); received dtype "
                        f"{g.dtype}.")
    if g.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), one word index per piece; received "
                         f"shape {shape_text(g)}.")
    steps = np.diff(g)
    if n and (g[0] != 0 or steps.min(initial=0) < 0 or steps.max(initial=0) > 1):
        raise ValueError(f"{name} must start at 0 and go up by 0 or 1 per piece (see "
                         f"word_groups); received {np.array2string(g[:12])[:60]}.")
    return [0, *(np.flatnonzero(steps) + 1).tolist()] if n else []


def merge_words(weights, src_groups, tgt_groups) -> np.ndarray:
    """Piece-level attention to word-level attention.

    Columns of one source word are added (attention TO the word); rows of one target word are
    averaged (attention FROM the word). Rows that summed to 1 still do.

    Parameters
    ----------
    weights : array_like of shape (..., n_tgt_pieces, n_src_pieces)
        E.g. ``(n_layers, n_heads, n_tgt, n_src)``.
    src_groups : array_like of int, shape (n_src_pieces,)
        ``word_groups`` of the source pieces.
    tgt_groups : array_like of int, shape (n_tgt_pieces,)
        ``word_groups`` of the target pieces.

    Returns
    -------
    ndarray of shape (..., n_tgt_words, n_src_words)
        Same dtype as ``weights`` (float64 for non-float input).

    Examples
    --------
    >>> w = np.array([[0.5, 0.25, 0.25], [0.0, 1.0, 0.0]])
    >>> merge_words(w, [0, 0, 1], [0, 0]).tolist()
    [[0.875, 0.125]]
    """
    w = np.asarray(weights)
    w = as_finite(w, "weights", w.dtype if w.dtype.kind == "f" else np.float64)
    if w.ndim < 2:
        raise ValueError(f"weights must have shape (..., n_tgt, n_src); received shape "
                         f"{shape_text(w)}.")
    src_starts = _check_groups(src_groups, w.shape[-1], "src_groups")
    tgt_starts = _check_groups(tgt_groups, w.shape[-2], "tgt_groups")
    if not src_starts or not tgt_starts:
        return w[..., :len(tgt_starts), :len(src_starts)].copy()
    to_words = np.add.reduceat(w, src_starts, axis=-1)             # (..., n_tgt, n_src_words)
    sums = np.add.reduceat(to_words, tgt_starts, axis=-2)          # (..., n_tgt_w, n_src_w)
    counts = np.diff([*tgt_starts, w.shape[-2]]).astype(w.dtype)  # pieces per target word
    return sums / counts[:, None]


def _is_punctuation(text: str) -> bool:
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def sink_columns(tokens: Sequence[str], *, specials: Sequence[str] = SPECIAL_TOKENS,
                 marker: str = WORD_START) -> np.ndarray:
    """Which tokens are likely attention sinks: special tokens and pure punctuation.

    A bare word-start marker (``"▁"``, a piece with no text of its own) counts as a sink too.

    Parameters
    ----------
    tokens : sequence of str
        Source tokens (pieces or words), one per column.

    Returns
    -------
    ndarray of bool, shape (n_src,)

    Examples
    --------
    >>> sink_columns(["▁Hello", "▁,", "▁world", "!", "</s>"]).tolist()
    [False, True, False, True, True]
    """
    tokens = _check_tokens(tokens, "tokens")
    special = set(specials)
    return np.array([t in special or t == marker or _is_punctuation(t.replace(marker, ""))
                     for t in tokens], dtype=bool)


def hide_sinks(weights, sinks) -> tuple[np.ndarray, np.ndarray]:
    """Drop the sink columns and renormalise each row over the columns left.

    Parameters
    ----------
    weights : array_like of shape (..., n_tgt, n_src)
        Attention weights, rows summing to 1 (or 0).
    sinks : array_like of bool, shape (n_src,)
        True for a column to hide, e.g. ``sink_columns(src_tokens)``.

    Returns
    -------
    kept : ndarray of shape (..., n_tgt, n_src - n_sinks)
        The other columns, each row divided by its remaining mass; a row with no mass left is
        all zero (never NaN). Label its columns with the tokens where ``sinks`` is False.
    removed : ndarray of shape (..., n_tgt)
        Weight each row had on the hidden columns.

    Examples
    --------
    >>> kept, removed = hide_sinks(np.array([[0.2, 0.3, 0.5], [0.0, 0.0, 1.0]]),
    ...                            np.array([False, False, True]))
    >>> kept.tolist(), removed.tolist()
    ([[0.4, 0.6], [0.0, 0.0]], [0.5, 1.0])
    """
    w = np.asarray(weights)
    w = as_finite(w, "weights", w.dtype if w.dtype.kind == "f" else np.float64)
    s = np.asarray(sinks)
    if s.dtype != np.bool_:
        raise TypeError(f"sinks must be a boolean array (True = hide); received dtype {s.dtype}. "
                        f"Use sink_columns(tokens).")
    if w.ndim < 2 or s.shape != (w.shape[-1],):
        raise ValueError(f"sinks must have shape (n_src,) for weights of shape (..., n_tgt, "
                         f"n_src); received sinks of shape {shape_text(s)} and weights of shape "
                         f"{shape_text(w)}.")
    removed = w[..., s].sum(axis=-1)                                   # (..., n_tgt)
    kept = w[..., ~s]                                                  # (..., n_tgt, n_kept)
    mass = kept.sum(axis=-1, keepdims=True)                            # (..., n_tgt, 1)
    kept = np.divide(kept, mass, out=np.zeros_like(kept), where=mass > 0)
    return kept, removed
