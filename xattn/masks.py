"""Boolean encoder masks (True = this source token may be attended).

Cross-attention uses key masks: which source tokens a target token may look at. (The causal mask
belongs to decoder self-attention, where a token must not see later target tokens.)
"""

from __future__ import annotations

import numpy as np

from xattn._checks import check_int

__all__ = ["padding_mask", "wait_k_mask", "local_window_mask", "MASK_MODES"]

MASK_MODES = ("none", "padding", "wait-k", "window")


def padding_mask(n_src: int, padded=()) -> np.ndarray:
    """Mask out chosen source positions (e.g. padding tokens).

    Parameters
    ----------
    n_src : int
        Number of source tokens.
    padded : iterable of int
        Positions 0..n_src-1 that may not be attended.

    Returns
    -------
    ndarray of bool, shape (n_src,)

    Examples
    --------
    >>> padding_mask(4, [3]).tolist()
    [True, True, True, False]
    """
    n_src = check_int(n_src, "n_src", minimum=1)
    if isinstance(padded, (str, bytes)) or not hasattr(padded, "__iter__"):
        raise TypeError(f"padded must be an iterable of positions, e.g. [3]; received "
                        f"{type(padded).__name__} {padded!r}.")
    mask = np.ones(n_src, dtype=bool)
    for p in padded:
        mask[check_int(p, "each padded position", minimum=0, maximum=n_src - 1)] = False
    return mask


def wait_k_mask(n_tgt: int, n_src: int, k: int) -> np.ndarray:
    """Wait-k (simultaneous translation, Ma et al. 2019): target i sees the first i + k tokens.

    Returns
    -------
    ndarray of bool, shape (n_tgt, n_src)
        Row i is True for source positions ``j < i + k`` (0-based).

    Examples
    --------
    >>> wait_k_mask(3, 4, 2).astype(int).tolist()
    [[1, 1, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]]
    """
    n_tgt, n_src = check_int(n_tgt, "n_tgt", minimum=1), check_int(n_src, "n_src", minimum=1)
    k = check_int(k, "k", minimum=1)
    return np.arange(n_src)[None, :] < (np.arange(n_tgt)[:, None] + k)      # (n_tgt, n_src)


def local_window_mask(n_tgt: int, n_src: int, width: int) -> np.ndarray:
    """A band around the diagonal, stretched to unequal lengths.

    Target i is centred on source position ``c_i = i * (n_src - 1) / (n_tgt - 1)`` (the middle
    of the source when n_tgt = 1) and sees the source tokens with ``|j - c_i| <= width + 0.5``:
    the nearest token plus ``width`` on either side, so every row sees at least one token.

    Returns
    -------
    ndarray of bool, shape (n_tgt, n_src)

    Examples
    --------
    >>> local_window_mask(3, 5, 0).astype(int).tolist()
    [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0], [0, 0, 0, 0, 1]]
    """
    n_tgt, n_src = check_int(n_tgt, "n_tgt", minimum=1), check_int(n_src, "n_src", minimum=1)
    width = check_int(width, "width", minimum=0)
    if n_tgt == 1:
        centre = np.array([(n_src - 1) / 2])
    else:
        centre = np.arange(n_tgt) * (n_src - 1) / (n_tgt - 1)               # (n_tgt,)
    dist = np.abs(np.arange(n_src)[None, :] - centre[:, None])              # (n_tgt, n_src)
    return dist <= width + 0.5
