"""A class's word alignment from its votes, scored against gold as a head's links are.

Each student links target words to source words: a set of ``(target, source)`` positions (a
``"links"`` answer of ``xattn.classroom``). The class store keeps, for each link, how many
students drew it, and how many answered. From those:

- each link's **share** of the class: ``count / n_voters``, shape (n_tgt, n_src);
- the class's **majority alignment**: the links drawn by more than half of the students who
  answered (a link half of them drew is not in it);
- its AER, precision and recall against the gold links (``xattn.alignlab.links``: sure and
  possible links, Och and Ney 2003), the same formula a head's argmax links are scored with,
  so the class and the heads sit in one table.

A student's own alignment is scored the same way (``score_links``).

Examples
--------
>>> from xattn.alignlab import GoldLinks
>>> gold = GoldLinks({(0, 0), (2, 1), (1, 2)})          # (src, tgt): le-the, chat-cat, ...
>>> votes = [{(0, 0), (1, 2), (2, 1)}, {(0, 0), (1, 2)}, {(0, 0), (1, 1), (2, 1)}]
>>> counts = {}
>>> for links in votes:                                  # what the store sums
...     for link in links:
...         counts[link] = counts.get(link, 0) + 1
>>> c = class_score(counts, len(votes), gold, 3, 3)
>>> c.shares[1].round(2).tolist(), sorted(map(tuple, np.argwhere(c.links).tolist()))
([0.0, 0.33, 0.67], [(0, 0), (1, 2), (2, 1)])
>>> c.aer, round(score_links(votes[1], gold, 3, 3).aer, 3)   # 1 - (2 + 2) / (2 + 3)
(0.0, 0.2)
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int, quote
from xattn.alignlab.gold import GoldLinks
from xattn.alignlab.links import link_counts, rates

__all__ = ["LinkScore", "ClassScore", "links_matrix", "link_shares", "majority_links",
           "score_links", "class_score"]


@dataclass(frozen=True, eq=False)
class LinkScore:
    """Links against gold: the four counts (``links.COUNTS``) and the rates (NaN where
    undefined)."""

    counts: np.ndarray       # int64, shape (4,): |A|, |S|, |A∩S|, |A∩P|
    aer: float
    precision: float
    recall: float


@dataclass(frozen=True, eq=False)
class ClassScore(LinkScore):
    """The class's majority alignment against gold.

    Attributes
    ----------
    n_voters : int
        Students who answered.
    shares : ndarray of float64, shape (n_tgt, n_src)
        Each link's share of them.
    links : ndarray of bool, shape (n_tgt, n_src)
        The majority alignment: links drawn by more than half.
    """

    n_voters: int = 0
    shares: np.ndarray | None = None
    links: np.ndarray | None = None


def _sizes(n_tgt, n_src) -> tuple[int, int]:
    return check_int(n_tgt, "n_tgt", minimum=1), check_int(n_src, "n_src", minimum=1)


def _link(link, n_tgt: int, n_src: int) -> tuple[int, int]:
    if not (isinstance(link, tuple) and len(link) == 2) or any(
            isinstance(k, bool) or not isinstance(k, numbers.Integral) for k in link):
        raise TypeError(f"a link must be a (target, source) pair of ints; received "
                        f"{quote(link)}.")
    t, s = int(link[0]), int(link[1])
    if not (0 <= t < n_tgt and 0 <= s < n_src):
        raise ValueError(f"a link must lie inside {n_tgt} target x {n_src} source words "
                         f"(zero-based target, source); received {quote(link)}.")
    return t, s


def links_matrix(links: Iterable, n_tgt: int, n_src: int) -> np.ndarray:
    """``(target, source)`` links as a boolean matrix of shape (n_tgt, n_src)."""
    n_tgt, n_src = _sizes(n_tgt, n_src)
    if isinstance(links, (str, bytes, Mapping)):
        raise TypeError(f"links must be (target, source) pairs; received {quote(links)}.")
    m = np.zeros((n_tgt, n_src), dtype=bool)
    for link in links:
        m[_link(link, n_tgt, n_src)] = True
    return m


def link_shares(counts: Mapping, n_voters: int, n_tgt: int, n_src: int) -> np.ndarray:
    """Each link's share of the ``n_voters`` students who answered.

    Parameters
    ----------
    counts : mapping of (int, int) to int
        ``(target, source)`` to the students who drew it (missing: none).
    n_voters : int
        Students who answered (each count is at most this).

    Returns
    -------
    ndarray of float64, shape (n_tgt, n_src)
        All 0 when nobody answered.
    """
    n_tgt, n_src = _sizes(n_tgt, n_src)
    n_voters = check_int(n_voters, "n_voters", minimum=0)
    if not isinstance(counts, Mapping):
        raise TypeError(f"counts must map (target, source) to a count; received "
                        f"{type(counts).__name__}.")
    drawn = np.zeros((n_tgt, n_src), dtype=np.float64)
    for link, n in counts.items():
        n = check_int(n, f"counts[{link!r}]", minimum=0, maximum=n_voters)
        drawn[_link(link, n_tgt, n_src)] = n
    return drawn / n_voters if n_voters else drawn


def majority_links(shares) -> np.ndarray:
    """The links more than half of the class drew, shape of ``shares`` (bool)."""
    s = np.asarray(shares, dtype=np.float64)
    if s.ndim != 2 or not np.isfinite(s).all() or (s < 0).any() or (s > 1).any():
        raise ValueError("shares must be a (n_tgt, n_src) array of shares in [0, 1].")
    return s > 0.5


def _score(a: np.ndarray, gold: GoldLinks) -> tuple:
    if not isinstance(gold, GoldLinks):
        raise TypeError(f"gold must be a GoldLinks; received {type(gold).__name__}.")
    sure, possible = gold.matrices(*a.shape)
    counts = link_counts(a, sure, possible)                                 # (4,)
    r = rates(counts)
    return counts, float(r["aer"]), float(r["precision"]), float(r["recall"])


def score_links(links: Iterable, gold: GoldLinks, n_tgt: int, n_src: int) -> LinkScore:
    """One alignment (a student's ``(target, source)`` links) against ``gold``."""
    return LinkScore(*_score(links_matrix(links, n_tgt, n_src), gold))


def class_score(counts: Mapping, n_voters: int, gold: GoldLinks, n_tgt: int,
                n_src: int) -> ClassScore:
    """The class's shares, majority alignment and its AER against ``gold``, from the counts
    the class store keeps (``RoomView.counts`` and ``n_answered`` of a links question)."""
    shares = link_shares(counts, n_voters, n_tgt, n_src)
    links = majority_links(shares)
    return ClassScore(*_score(links, gold), n_voters=n_voters, shares=shares, links=links)
