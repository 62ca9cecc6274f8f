"""Special tokens (``</s>``, ``<pad>``, ``[SEP]``, ...) in the alignment lab: not words.

A gold file for the pair on screen links words; a model's tokens often end (or start) with a
special token. Scoring it anyway counts every link a head makes to ``</s>`` as an error and
every gold link it lacks as a miss: on the shipped model a correct one-based file scored all
three layers alike (AER 0.538) where, without ``</s>``, layer 3 is the best (0.167). So a
special token is scored only when the gold links it: ``special_positions`` says which tokens
are special (``xattn.alignlab.gold.unscored_specials``: those the gold links to nothing), and
``leave_out`` zeroes their rows and columns before the weights become links.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from xattn._checks import quote, shape_text
from xattn.subwords import SPECIAL_TOKENS

__all__ = ["special_positions", "leave_out"]

# Tokens that are never words: a model's special tokens (xattn.subwords.SPECIAL_TOKENS) and
# the bracketed forms other tokenizers use ([CLS], [SEP], <|endoftext|>, <2fr>).
_SPECIAL = re.compile(r"<[^<>\s]{1,24}>|\[[A-Z]{2,8}\]|<\|[^|\s]{1,24}\|>")


def special_positions(tokens: Sequence[str]) -> np.ndarray:
    """Which tokens are special (``</s>``, ``<pad>``, ``[SEP]``, ...), not words.

    Returns
    -------
    ndarray of bool, shape (n_tokens,)

    Examples
    --------
    >>> special_positions(["the", "cat", "</s>"]).tolist()
    [False, False, True]
    """
    if isinstance(tokens, str):
        raise TypeError(f"tokens must be a sequence of strings; received the string "
                        f"{quote(tokens)}.")
    return np.array([isinstance(t, str) and (t in SPECIAL_TOKENS or bool(_SPECIAL.fullmatch(t)))
                     for t in tokens], dtype=bool)


def leave_out(weights, rows, cols) -> np.ndarray:
    """``weights`` with the rows ``rows`` and the columns ``cols`` set to 0, so that they make
    no link (``xattn.alignlab.links``: an all-zero row or column links nothing, and a zero is
    never a row's maximum while another weight is above 0). The other weights are kept as they
    are (not renormalised: a row's links do not change, a threshold reads the model's weights).

    Parameters
    ----------
    weights : array_like of shape (..., n_tgt, n_src)
    rows : array_like of bool, shape (n_tgt,)
    cols : array_like of bool, shape (n_src,)

    Returns
    -------
    ndarray of float64, shape (..., n_tgt, n_src)
    """
    w = np.array(weights, dtype=np.float64)                                 # a copy
    rows, cols = np.asarray(rows, dtype=bool), np.asarray(cols, dtype=bool)
    if w.ndim < 2 or rows.shape != w.shape[-2:-1] or cols.shape != w.shape[-1:]:
        raise ValueError(f"rows must have shape (n_tgt,) and cols (n_src,) for weights of shape "
                         f"(..., n_tgt, n_src); received {shape_text(rows)}, "
                         f"{shape_text(cols)} and {shape_text(w)}.")
    w[..., rows, :] = 0.0
    w[..., :, cols] = 0.0
    return w
