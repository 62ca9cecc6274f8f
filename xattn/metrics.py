"""Per-head measures of attention weights, and head importance by ablation.

Every measure takes weights of shape ``(n_heads, n_tgt, n_src)`` (or one head,
``(n_tgt, n_src)``): rows are target queries, columns are source keys, rows sum to 1. An optional
boolean ``mask`` (True = may attend), shaped like the ``encoder_mask`` that produced the weights,
says how many keys each row could choose from. A row with no key at all (every key masked, or an
all-zero row when no mask is given) has no distribution: per-row measures give NaN there and
per-head means leave it out.

The measures, for one head ``A`` of shape ``(n_tgt, n_src)``:

- entropy ``H_i = -sum_j A_ij log A_ij`` (``0 log 0 = 0``), in nats;
- normalised entropy ``H_i / log(n_keys_i)`` in [0, 1], comparable across lengths (0 when a row
  has a single key, where no spread is possible);
- effective number of keys ``exp(H_i)`` in [1, n_keys_i];
- confidence: mean over rows of ``max_j A_ij`` (Voita et al. 2019);
- diagonal alignment, the guided-attention weighting of Tachibana et al. (2017);
- monotonicity: share of consecutive rows whose argmax does not move backwards.

Head importance by switching heads off is in ``xattn.ablation``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from xattn._checks import check_weights as check_weights_array

__all__ = [
    "MEASURES",
    "MEASURE_DESCRIPTIONS",
    "Measure",
    "CheckedWeights",
    "check_weights",
    "confidence",
    "diagonal_alignment",
    "effective_keys",
    "entropy",
    "head_statistics",
    "monotonicity",
    "normalised_entropy",
]

class Measure(NamedTuple):
    """How the page names one column of `head_statistics`: a name for tables, a short one for
    chart titles and narrow columns, and one plain-English line."""

    name: str
    short: str
    description: str


# The one table of the measures' names, used by every view that shows them.
MEASURES = {
    "normalised_entropy": Measure(
        "spread (normalised entropy)", "spread",
        "How spread out a target token's attention is: 0 = all on one source token, 1 = evenly "
        "over every source token it may see."),
    "effective_keys": Measure(
        "effective number of source tokens", "effective tokens",
        "About how many source tokens a target token really looks at (exp of the entropy)."),
    "confidence": Measure(
        "confidence (mean row maximum)", "confidence",
        "Average weight of each target token's strongest source token: 1 = one clear choice, "
        "1/n_src = no preference (Voita et al. 2019)."),
    "diagonal_alignment": Measure(
        "diagonal alignment", "diagonal",
        "How close attention stays to the diagonal that pairs the start of the target with the "
        "start of the source and the end with the end (1 = on it)."),
    "monotonicity": Measure(
        "monotonicity", "monotonicity",
        "Share of steps to the next target token in which the most-attended source token does "
        "not move backwards (1 = reads the source left to right)."),
}
MEASURE_DESCRIPTIONS = {k: m.description for k, m in MEASURES.items()}


class CheckedWeights(NamedTuple):
    """Weights checked once at the boundary, with what every measure needs."""

    w: np.ndarray        # (n_heads, n_tgt, n_src) float64
    keep: np.ndarray     # (n_tgt, n_src) bool, True = may attend
    n_keys: np.ndarray   # (n_tgt,) int, unmasked keys per row
    valid: np.ndarray    # (n_heads, n_tgt) bool, row has a distribution
    single: bool         # input was 2-D: drop the head axis again on output


def check_weights(weights, mask=None) -> CheckedWeights:
    """Check attention weights (and their mask) once; every failure is a ValueError/TypeError.

    Parameters
    ----------
    weights : array_like of shape (n_heads, n_tgt, n_src) or (n_tgt, n_src)
    mask : array_like of bool, shape (n_src,) or (n_tgt, n_src), optional

    Returns
    -------
    CheckedWeights
        ``w`` (n_heads, n_tgt, n_src) float64, ``keep`` (n_tgt, n_src), ``n_keys`` (n_tgt,),
        ``valid`` (n_heads, n_tgt): rows that have a distribution, ``single``.
    """
    w, keep, single = check_weights_array(weights, mask)
    valid = keep.any(axis=-1)[None] & (w.sum(axis=-1) > 0.5)         # (n_heads, n_tgt)
    return CheckedWeights(w, keep, keep.sum(axis=-1), valid, single)


def _out(x: np.ndarray, p: CheckedWeights):
    return x[0] if p.single else x


def _row_mean(x: np.ndarray, valid: np.ndarray) -> np.ndarray:
    """Mean over valid rows, (n_heads, n_tgt) -> (n_heads,); NaN for a head with no valid row."""
    count = valid.sum(axis=-1)
    total = np.where(valid, x, 0.0).sum(axis=-1)
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


# ---------------------------------------------------------------- per-row measures
def _entropy(p: CheckedWeights) -> np.ndarray:
    log_w = np.log(p.w, out=np.zeros_like(p.w), where=p.w > 0)      # 0 log 0 = 0
    h = np.maximum(-(p.w * log_w).sum(axis=-1), 0.0)                 # (n_heads, n_tgt)
    return np.where(p.valid, h, np.nan)


def _normalised(p: CheckedWeights, h: np.ndarray) -> np.ndarray:
    log_n = np.log(np.maximum(p.n_keys, 1))                          # (n_tgt,)
    norm = np.divide(h, log_n, out=np.zeros_like(h), where=log_n > 0)
    return np.where(p.valid, np.clip(norm, 0.0, 1.0), np.nan)


def _effective(p: CheckedWeights, h: np.ndarray) -> np.ndarray:
    eff = np.clip(np.exp(np.where(p.valid, h, 0.0)), 1.0, np.maximum(p.n_keys, 1))
    return np.where(p.valid, eff, np.nan)


def entropy(weights, mask=None) -> np.ndarray:
    """Entropy of each row's distribution over source keys, in nats.

    Parameters
    ----------
    weights : array_like of shape (n_heads, n_tgt, n_src) or (n_tgt, n_src)
        Attention weights; rows sum to 1 (0 for a row with no key).
    mask : array_like of bool, shape (n_src,) or (n_tgt, n_src), optional
        True where a source key may be attended. Masked keys must carry zero weight.

    Returns
    -------
    ndarray of shape (n_heads, n_tgt) or (n_tgt,)
        ``-sum_j A_ij log A_ij`` with ``0 log 0 = 0``; NaN for rows with no key.

    Examples
    --------
    >>> entropy([[0.5, 0.5], [1.0, 0.0]]).round(4).tolist()
    [0.6931, 0.0]
    """
    p = check_weights(weights, mask)
    return _out(_entropy(p), p)


def normalised_entropy(weights, mask=None) -> np.ndarray:
    """Entropy divided by ``log(n_keys)``, the most a row with ``n_keys`` unmasked keys can have.

    Parameters are those of `entropy`. Without a mask every row counts ``n_src`` keys.

    Returns
    -------
    ndarray of shape (n_heads, n_tgt) or (n_tgt,)
        Values in [0, 1]: 0 = all weight on one key, 1 = uniform over the unmasked keys. A row
        with exactly one unmasked key gives 0; a row with no key gives NaN.

    Examples
    --------
    >>> normalised_entropy([[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0]]).tolist()
    [1.0, 0.0]
    """
    p = check_weights(weights, mask)
    return _out(_normalised(p, _entropy(p)), p)


def effective_keys(weights, mask=None) -> np.ndarray:
    """Effective number of source keys attended, ``exp(entropy)`` (a perplexity).

    Parameters are those of `entropy`.

    Returns
    -------
    ndarray of shape (n_heads, n_tgt) or (n_tgt,)
        Values in [1, n_keys]: uniform weight over k keys gives k. NaN for rows with no key.

    Examples
    --------
    >>> effective_keys([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]).round(6).tolist()
    [2.0, 1.0]
    """
    p = check_weights(weights, mask)
    return _out(_effective(p, _entropy(p)), p)


# ---------------------------------------------------------------- per-head measures
def _confidence(p: CheckedWeights) -> np.ndarray:
    return _row_mean(p.w.max(axis=-1), p.valid)                     # (n_heads,)


def _diagonal(p: CheckedWeights, g: float) -> np.ndarray:
    _, n_tgt, n_src = p.w.shape
    pos_t = (np.arange(n_tgt) + 0.5) / n_tgt                         # (n_tgt,) cell centres
    pos_s = (np.arange(n_src) + 0.5) / n_src                         # (n_src,)
    near = np.exp(-((pos_t[:, None] - pos_s[None, :]) ** 2) / (2 * g * g))  # (n_tgt, n_src)
    return _row_mean((p.w * near).sum(axis=-1), p.valid)            # (n_heads,)


def _monotonicity(p: CheckedWeights) -> np.ndarray:
    top = p.w.argmax(axis=-1)                                        # (n_heads, n_tgt)
    out = np.full(len(top), np.nan)
    for h, (cols, valid) in enumerate(zip(top, p.valid, strict=True)):
        steps = np.diff(cols[valid])                                 # skips rows with no key
        if valid.any():
            out[h] = (steps >= 0).mean() if steps.size else 1.0
    return out


def confidence(weights, mask=None):
    """Mean over target rows of the largest weight in the row (Voita et al. 2019).

    Parameters are those of `entropy`.

    Returns
    -------
    ndarray of shape (n_heads,), or float for 2-D weights
        In [1/n_src, 1] without a mask: 1 = every row puts all weight on one key. Rows with no
        key are left out; NaN if no row has a key.

    Examples
    --------
    >>> float(confidence([[0.5, 0.5], [0.9, 0.1]]))
    0.7
    """
    p = check_weights(weights, mask)
    return _out(_confidence(p), p)


def diagonal_alignment(weights, mask=None, *, g: float = 0.2):
    """Weight near the diagonal, for any target and source lengths (Tachibana et al. 2017).

    ``sum_ij A_ij exp(-(t_i - s_j)^2 / (2 g^2)) / n_rows`` with positions taken at the centres
    of equal cells of [0, 1]: ``t_i = (i + 0.5) / n_tgt`` and ``s_j = (j + 0.5) / n_src``.
    Centring on the cells (rather than ``i / n_tgt``) makes the measure symmetric when both
    sentences are read backwards and pairs the last target token with the last source token;
    for equal lengths the half-cell shifts cancel and it equals the paper's formula. Positions
    count every source token, masked ones included.

    Parameters
    ----------
    weights, mask
        As in `entropy`.
    g : float, default 0.2
        Width of the band around the diagonal, as a fraction of the sentence length.

    Returns
    -------
    ndarray of shape (n_heads,), or float for 2-D weights
        In (0, 1]: 1 = all weight exactly on the diagonal. Rows with no key are left out
        (``n_rows`` counts rows with a key); NaN if no row has a key.

    Examples
    --------
    >>> import numpy as np
    >>> float(diagonal_alignment(np.eye(3)))
    1.0
    """
    if not np.isfinite(g) or g <= 0:
        raise ValueError(f"g must be a positive number; received {g!r}.")
    p = check_weights(weights, mask)
    return _out(_diagonal(p, float(g)), p)


def monotonicity(weights, mask=None):
    """Share of consecutive target rows whose most-attended key does not move backwards.

    Rows with no key are skipped, so "consecutive" means consecutive among rows with a key.
    Ties go to the first (leftmost) maximum, so a uniform head scores 1: read it together with
    the entropy.

    Parameters are those of `entropy`.

    Returns
    -------
    ndarray of shape (n_heads,), or float for 2-D weights
        In [0, 1]. A head with a single row with a key (e.g. ``n_tgt = 1``) has no step that
        could go backwards and scores 1; a head with no row with a key gives NaN.

    Examples
    --------
    >>> import numpy as np
    >>> float(monotonicity(np.eye(3))), float(monotonicity(np.eye(3)[::-1]))
    (1.0, 0.0)
    """
    p = check_weights(weights, mask)
    return _out(_monotonicity(p), p)


def head_statistics(weights, mask=None) -> dict[str, np.ndarray]:
    """All per-head measures at once, as a column table (one row per head).

    Parameters
    ----------
    weights : array_like of shape (n_heads, n_tgt, n_src) or (n_tgt, n_src)
        Attention weights; 2-D weights count as one head.
    mask : array_like of bool, shape (n_src,) or (n_tgt, n_src), optional
        True where a source key may be attended.

    Returns
    -------
    dict of str to ndarray of shape (n_heads,)
        ``"head"`` (0, 1, ...) and the keys of `MEASURE_DESCRIPTIONS`: mean normalised entropy,
        mean effective number of keys, confidence, diagonal alignment, monotonicity. Means are
        over rows with a key; NaN for a head with none. Ready for ``pandas.DataFrame`` or
        ``st.dataframe``.

    Examples
    --------
    >>> import numpy as np
    >>> stats = head_statistics(np.full((2, 3, 4), 0.25))
    >>> stats["effective_keys"].round(6).tolist(), stats["confidence"].tolist()
    ([4.0, 4.0], [0.25, 0.25])
    """
    p = check_weights(weights, mask)
    h = _entropy(p)                                                  # (n_heads, n_tgt)
    return {
        "head": np.arange(p.w.shape[0]),
        "normalised_entropy": _row_mean(_normalised(p, h), p.valid),
        "effective_keys": _row_mean(_effective(p, h), p.valid),
        "confidence": _confidence(p),
        "diagonal_alignment": _diagonal(p, 0.2),
        "monotonicity": _monotonicity(p),
    }
