"""Links from attention weights, and the alignment error rate of links against gold.

**Links are boolean matrices of shape (..., n_tgt, n_src)**, True at ``[i, j]`` when target
word ``i`` is linked to source word ``j``: the layout of attention weights (rows are target
queries) and of ``SentencePair.alignment_matrix``. Leading axes (layers, heads, sentences)
are kept, so every head of a model is turned into links at once.

How a head's weights become links (``METHODS``):

``"target_argmax"``
    Each target word links to the source word it attends most (its row's argmax).
``"source_argmax"``
    Each source word links to the target word that attends it most (its column's argmax).
``"intersection"``
    Links that are both: the maximum of their row and of their column.
``"threshold"``
    Every weight strictly above ``threshold`` (as awesome-align's softmax threshold).

Ties go to the first (lowest) index; a row or column whose weights are all zero (padding, a
masked query) gives no link.

The alignment error rate (Och and Ney 2003) of links A against sure links S and possible
links P ⊇ S, with precision and recall::

    AER = 1 - (|A ∩ S| + |A ∩ P|) / (|A| + |S|)
    precision = |A ∩ P| / |A|        recall = |A ∩ S| / |S|

Over a corpus the four counts are summed over sentence pairs before dividing (micro-average,
as Och and Ney and awesome-align compute it): ``link_counts`` per pair, ``rates`` on sums.
Undefined ratios are NaN, never a guess: precision when A is empty, recall when S is empty,
and AER when both are. An empty A against a non-empty S has AER 1; a non-empty A against an
empty S has AER 1 - precision.
"""

from __future__ import annotations

import numbers

import numpy as np

from xattn._checks import quote, shape_text

__all__ = ["METHODS", "METHOD_DESCRIPTIONS", "COUNTS", "check_method", "links", "link_counts",
           "rates", "aer"]

METHODS = ("target_argmax", "source_argmax", "intersection", "threshold")
METHOD_DESCRIPTIONS = {
    "target_argmax": "Each target word links to the source word it attends most.",
    "source_argmax": "Each source word links to the target word that attends it most.",
    "intersection": "Only links that are both: the largest weight of their row and of their "
                    "column.",
    "threshold": "Every weight above the threshold.",
}
COUNTS = ("links", "sure", "links_sure", "links_possible")   # |A|, |S|, |A∩S|, |A∩P|


def _weights(weights) -> np.ndarray:
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"weights must be an array of numbers; received "
                        f"{type(weights).__name__} {quote(weights)}.") from None
    if w.ndim < 2:
        raise ValueError(f"weights must have shape (..., n_tgt, n_src); received shape "
                         f"{shape_text(w)}.")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("weights must be finite and >= 0 (attention weights); received "
                         "NaN, infinite or negative values.")
    return w


def check_method(method: str, threshold) -> float | None:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}; received {quote(method)}.")
    if method != "threshold":
        if threshold is not None:
            raise ValueError(f"threshold applies to method='threshold' only; received "
                             f"threshold={threshold!r} with method={method!r}.")
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
        raise TypeError(f"threshold must be a number in [0, 1) for method='threshold'; "
                        f"received {type(threshold).__name__} {quote(threshold)}.")
    if not 0 <= threshold < 1:
        raise ValueError(f"threshold must be in [0, 1); received {threshold!r}.")
    return float(threshold)


def _argmax_links(w: np.ndarray, axis: int) -> np.ndarray:
    """One link per row (axis=-1) or column (axis=-2) at its maximum, none if it is all 0."""
    best = np.expand_dims(w.argmax(axis=axis), axis)           # (..., T, 1) or (..., 1, S)
    out = np.zeros(w.shape, dtype=bool)
    np.put_along_axis(out, best, True, axis=axis)
    return out & (w.max(axis=axis, keepdims=True) > 0)


def links(weights, method: str = "target_argmax", *, threshold: float | None = None
          ) -> np.ndarray:
    """Links read off attention weights.

    Parameters
    ----------
    weights : array_like of shape (..., n_tgt, n_src)
        Non-negative, e.g. (n_layers, n_heads, n_tgt, n_src).
    method : {"target_argmax", "source_argmax", "intersection", "threshold"}
    threshold : float in [0, 1), only (and required) for ``method="threshold"``

    Returns
    -------
    ndarray of bool, shape (..., n_tgt, n_src)

    Examples
    --------
    >>> w = np.array([[0.7, 0.3], [0.6, 0.4]])               # (n_tgt, n_src)
    >>> links(w).astype(int).tolist()                          # both rows pick source 0
    [[1, 0], [1, 0]]
    >>> links(w, "source_argmax").astype(int).tolist()        # source 1: target 1 wins
    [[1, 0], [0, 1]]
    >>> links(w, "intersection").astype(int).tolist()
    [[1, 0], [0, 0]]
    """
    threshold = check_method(method, threshold)
    w = _weights(weights)
    if method == "threshold":
        return w > threshold
    if method == "target_argmax":
        return _argmax_links(w, -1)
    if method == "source_argmax":
        return _argmax_links(w, -2)
    return _argmax_links(w, -1) & _argmax_links(w, -2)


def link_counts(predicted, sure, possible=None) -> np.ndarray:
    """``|A|, |S|, |A∩S|, |A∩P|`` (``COUNTS``) of links against gold, one sentence pair.

    Parameters
    ----------
    predicted : array_like of bool, shape (..., n_tgt, n_src)
        A, e.g. one matrix per layer and head.
    sure : array_like of bool, shape (n_tgt, n_src)
    possible : array_like of bool, shape (n_tgt, n_src), optional
        Default: ``sure``. Sure links count as possible whether or not it says so.

    Returns
    -------
    ndarray of int64, shape (..., 4)
        Sum them over sentence pairs, then pass the sum to ``rates``.
    """
    a = np.asarray(predicted)
    s = np.asarray(sure)
    p = s if possible is None else np.asarray(possible) | s
    for name, m in (("predicted", a), ("sure", s), ("possible", p)):
        if m.dtype != bool:
            raise TypeError(f"{name} must be an array of bool; received dtype {m.dtype}.")
    if s.ndim != 2 or p.shape != s.shape or a.shape[-2:] != s.shape:
        raise ValueError(f"predicted (..., n_tgt, n_src), sure and possible (n_tgt, n_src) must "
                         f"agree; received shapes {shape_text(a)}, {shape_text(s)}, "
                         f"{shape_text(p)}.")
    n_sure = np.broadcast_to(s.sum(), a.shape[:-2])
    return np.stack([a.sum(axis=(-2, -1)), n_sure, (a & s).sum(axis=(-2, -1)),
                     (a & p).sum(axis=(-2, -1))], axis=-1).astype(np.int64)   # (..., 4)


def rates(counts) -> dict[str, np.ndarray]:
    """AER, precision and recall from (summed) ``link_counts``.

    Parameters
    ----------
    counts : array_like of shape (..., 4)

    Returns
    -------
    dict of str to ndarray of shape (...)
        ``"aer"``, ``"precision"``, ``"recall"`` in [0, 1]; NaN where undefined (see the
        module docstring).

    Examples
    --------
    >>> r = rates([4, 3, 2, 3])         # |A| 4, |S| 3, |A∩S| 2, |A∩P| 3
    >>> float(r["aer"]), float(r["precision"]), float(r["recall"])
    (0.2857142857142857, 0.75, 0.6666666666666666)
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.shape[-1:] != (4,):
        raise ValueError(f"counts must have shape (..., 4) ({', '.join(COUNTS)}); received "
                         f"shape {shape_text(c)}.")
    n_a, n_s, a_s, a_p = np.moveaxis(c, -1, 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return {"aer": np.where(n_a + n_s > 0, 1 - (a_s + a_p) / (n_a + n_s), np.nan),
                "precision": np.where(n_a > 0, a_p / n_a, np.nan),
                "recall": np.where(n_s > 0, a_s / n_s, np.nan)}


def aer(predicted, sure, possible=None) -> float:
    """AER of one sentence pair's links (a float; NaN when A and S are both empty).

    Examples
    --------
    >>> gold = np.eye(3, dtype=bool)
    >>> aer(gold, gold)
    0.0
    """
    counts = link_counts(predicted, sure, possible)
    if counts.ndim != 1:
        raise ValueError("aer scores one (n_tgt, n_src) matrix of links; use link_counts and "
                         f"rates for stacks (received shape {shape_text(np.asarray(predicted))}).")
    return float(rates(counts)["aer"])
