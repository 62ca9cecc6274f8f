"""Gold word alignments: sure and possible links, from the toy corpus or a file.

A gold alignment of one sentence pair is a set of *sure* links S and a set of *possible* links
P ⊇ S (Och and Ney 2003). ``GoldLinks`` keeps them as zero-based ``(src, tgt)`` pairs, the
order Pharaoh files use; ``GoldLinks.matrices`` turns them into boolean matrices of shape
``(n_tgt, n_src)``, the layout of attention weights, once the sentence lengths are known (a
gold file does not know them). Files are read by ``xattn.alignlab.goldfile``; a reading is
checked by ``indexing_warnings`` (one-based gold read as zero-based is the classic mistake,
awesome-align#20).
Special tokens are not words: ``indexing_warnings`` judges a sentence's first and last
*word* (``xattn.alignlab.specials``), and ``unscored_specials`` says which of them a pair's
gold links to nothing, to leave out of the score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from xattn._checks import check_int, quote
from xattn.alignlab.specials import special_positions
from xattn.corpus import SentencePair

__all__ = ["GoldLinks", "GoldFile", "gold_from_pair", "indexing_warnings",
           "unscored_specials"]


def _link_set(links, name: str) -> frozenset[tuple[int, int]]:
    if not isinstance(links, (set, frozenset, list, tuple)):
        raise TypeError(f"{name} must be a set of (src, tgt) pairs of ints; received "
                        f"{type(links).__name__} {quote(links)}.")
    out = set()
    for link in links:
        if not (isinstance(link, tuple) and len(link) == 2):
            raise TypeError(f"{name} must hold (src, tgt) pairs of ints; received {quote(link)}.")
        out.add((check_int(link[0], f"{name} src", minimum=0),
                 check_int(link[1], f"{name} tgt", minimum=0)))
    return frozenset(out)


@dataclass(frozen=True)
class GoldLinks:
    """The gold links of one sentence pair, zero-based ``(src, tgt)`` index pairs.

    Attributes
    ----------
    sure : frozenset of (int, int)
    possible : frozenset of (int, int)
        Always includes ``sure`` (the constructor adds it): P ⊇ S.
    """

    sure: frozenset = frozenset()
    possible: frozenset = frozenset()

    def __post_init__(self) -> None:
        sure = _link_set(self.sure, "sure")
        object.__setattr__(self, "sure", sure)
        object.__setattr__(self, "possible", _link_set(self.possible, "possible") | sure)

    @classmethod
    def from_checked(cls, sure: frozenset, possible: frozenset) -> GoldLinks:
        """A GoldLinks from sets a reader has already checked (no per-link checks: a gold
        file's reader checks every line once, with its line number)."""
        self = cls.__new__(cls)
        object.__setattr__(self, "sure", sure)
        object.__setattr__(self, "possible", possible | sure)
        return self

    def matrices(self, n_tgt: int, n_src: int) -> tuple[np.ndarray, np.ndarray]:
        """``(sure, possible)``, ndarrays of bool of shape (n_tgt, n_src): True at ``[tgt, src]``.

        Raises ValueError naming the links that lie outside the sentences.

        Examples
        --------
        >>> sure, possible = GoldLinks({(0, 0), (2, 1)}, {(1, 1)}).matrices(2, 3)
        >>> sure.astype(int).tolist(), possible.astype(int).tolist()
        ([[1, 0, 0], [0, 0, 1]], [[1, 0, 0], [0, 1, 1]])
        """
        n_tgt = check_int(n_tgt, "n_tgt", minimum=0)
        n_src = check_int(n_src, "n_src", minimum=0)
        outside = sorted((s, t) for s, t in self.possible if s >= n_src or t >= n_tgt)
        if outside:
            shown = ", ".join(f"{s}-{t}" for s, t in outside[:5])
            raise ValueError(f"gold links must lie inside {n_src} source x {n_tgt} target words "
                             f"(zero-based src-tgt); received {len(outside)} outside: {shown}. "
                             "Was a one-based file read as counting from 0?")
        sure, possible = (np.zeros((n_tgt, n_src), dtype=bool) for _ in range(2))
        for links, m in ((self.sure, sure), (self.possible, possible)):
            if links:
                src, tgt = np.array(sorted(links)).T
                m[tgt, src] = True
        return sure, possible


@dataclass(frozen=True)
class GoldFile:
    """A gold alignment file, read: one ``GoldLinks`` per sentence pair and how it was read.

    Attributes
    ----------
    pairs : tuple of GoldLinks
    format : {"pharaoh", "naacl"}
    first_index : {0, 1}
    order : {"src-tgt", "tgt-src"}
    n_null : int
        Links to the NULL word (position 0 of a one-based NAACL file), left out.
    """

    pairs: tuple[GoldLinks, ...] = field(repr=False)
    format: str
    first_index: int
    order: str
    n_null: int = 0

    def __len__(self) -> int:
        return len(self.pairs)


def gold_from_pair(pair: SentencePair) -> GoldLinks:
    """The toy corpus's gold for one pair: every aligned target word gives a sure link (P = S).

    Examples
    --------
    >>> from xattn.corpus import translate
    >>> sorted(gold_from_pair(translate("the red cat sleeps")).sure)
    [(0, 0), (1, 2), (2, 1), (3, 3)]
    """
    if not isinstance(pair, SentencePair):
        raise TypeError(f"pair must be a SentencePair; received {type(pair).__name__}.")
    sure = frozenset((j, i) for i, j in enumerate(pair.alignment) if j is not None)
    return GoldLinks(sure, sure)


def unscored_specials(gold: GoldLinks, src_tokens: Sequence[str], tgt_tokens: Sequence[str]
                      ) -> tuple[np.ndarray, np.ndarray]:
    """The special tokens that ``gold`` links to nothing: they are left out of the score.

    Returns
    -------
    rows : ndarray of bool, shape (n_tgt,)
        Target positions to leave out.
    cols : ndarray of bool, shape (n_src,)
        Source positions to leave out.

    Examples
    --------
    >>> gold = GoldLinks({(0, 0), (1, 1)})
    >>> [m.tolist() for m in unscored_specials(gold, ["a", "b", "</s>"], ["x", "y", "</s>"])]
    [[False, False, True], [False, False, True]]
    """
    if not isinstance(gold, GoldLinks):
        raise TypeError(f"gold must be a GoldLinks; received {type(gold).__name__}.")
    rows, cols = special_positions(tgt_tokens), special_positions(src_tokens)
    for s, t in gold.possible:
        if t < len(rows):
            rows[t] = False
        if s < len(cols):
            cols[s] = False
    return rows, cols


def _check_shapes(shapes, n: int) -> list[tuple[int, int]]:
    shapes = list(shapes)
    if len(shapes) != n:
        raise ValueError(f"shapes must give one (n_tgt, n_src) per gold pair ({n}); received "
                         f"{len(shapes)}.")
    out = []
    for k, shape in enumerate(shapes):
        if not (isinstance(shape, tuple) and len(shape) == 2):
            raise TypeError(f"shapes[{k}] must be a tuple (n_tgt, n_src); received "
                            f"{quote(shape)}.")
        out.append((check_int(shape[0], f"shapes[{k}] n_tgt", minimum=0),
                    check_int(shape[1], f"shapes[{k}] n_src", minimum=0)))
    return out


def _outside(gold: GoldFile, shapes: list) -> str | None:
    bad = [(k, s, t) for k, (links, (n_tgt, n_src)) in enumerate(zip(gold.pairs, shapes,
                                                                      strict=True))
           for s, t in links.possible if s >= n_src or t >= n_tgt]
    if not bad:
        return None
    k, s, t = min(bad)
    n_tgt, n_src = shapes[k]
    fix = ("Is the file one-based? Read its positions as counting from 1." if gold.first_index
           == 0 else "Do the sentences match the file's, in the same order and with the same "
                     "sides?")
    verb = "link points past the end of its" if len(bad) == 1 else \
        "links point past the end of their"
    return (f"{len(bad)} gold {verb} sentence (the first: pair {k + 1}, source word {s + 1} of "
            f"{n_src}, target word {t + 1} of {n_tgt}). {fix}")


def _links(n: int) -> str:
    return f"{n} link{'' if n == 1 else 's'}"


def _ends(tokens, shapes: list | None, n: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Per pair, the first and last word of each side: ((src first, src last), (tgt first,
    tgt last)); special tokens are not words. (-1, -1) for a side without one."""
    out = []
    for k in range(n):
        if tokens is not None:
            tgt, src = tokens[k]
            sides = [np.flatnonzero(~special_positions(t)) for t in (src, tgt)]
        elif shapes is not None:
            n_tgt, n_src = shapes[k]
            sides = [np.arange(n_src), np.arange(n_tgt)]
        else:
            sides = [np.arange(1), np.arange(1)]              # only position 0 is known
        out.append(tuple((int(w[0]), int(w[-1])) if len(w) else (-1, -1) for w in sides))
    return out


def indexing_warnings(gold: GoldFile, shapes: Sequence[tuple[int, int]] | None = None, *,
                      tokens: Sequence | None = None) -> list[str]:
    """Plain-English warnings when a file's reading looks wrong, the one-based trap first.

    Parameters
    ----------
    gold : GoldFile
    shapes : sequence of (n_tgt, n_src), optional
        The token counts of each pair's sentences, to check links against their ends.
    tokens : sequence of (tgt_tokens, src_tokens), optional
        Each pair's tokens: the first and last *word* of a side are judged, not a special
        token (``</s>``) before or after it; ``shapes`` defaults to their lengths.

    Returns
    -------
    list of str
        Empty when nothing looks wrong. Checked: links past a sentence's end (``shapes``); read
        zero-based, a side whose first word no link uses (a zero-based file almost always
        links a first word); read one-based, a side whose last word no link uses (``shapes``
        or ``tokens``); links to the NULL word left out.

    Examples
    --------
    >>> from xattn.alignlab.goldfile import read_gold
    >>> gold = read_gold("1-1 2-3 3-2\\n", format="pharaoh", first_index=0, order="src-tgt")
    >>> indexing_warnings(gold, [(3, 3)])[0][:60]
    '2 gold links point past the end of their sentence (the first'
    >>> gold = read_gold("1-1 2-2\\n", format="pharaoh", first_index=1, order="src-tgt")
    >>> indexing_warnings(gold, tokens=[(["x", "y", "</s>"], ["a", "b", "</s>"])])
    []
    """
    if not isinstance(gold, GoldFile):
        raise TypeError(f"gold must be a GoldFile (see read_gold); received "
                        f"{type(gold).__name__}.")
    if tokens is not None:
        tokens = _check_tokens(tokens, len(gold.pairs))
        shapes = [(len(t), len(s)) for t, s in tokens] if shapes is None else shapes
    shapes = None if shapes is None else _check_shapes(shapes, len(gold.pairs))
    warnings = [] if shapes is None else [w for w in [_outside(gold, shapes)] if w]
    n_links = sum(len(pair.possible) for pair in gold.pairs)
    ends = _ends(tokens, shapes, len(gold.pairs))
    sides = ("source", "target")
    if gold.first_index == 0 and n_links:
        unused = [name for side, name in enumerate(sides)
                  if not any(link[side] == e[side][0] for p, e in zip(gold.pairs, ends,
                                                                       strict=True)
                             for link in p.possible)]
        if unused:
            warnings.append(f"No link uses the first {' or '.join(unused)} word in "
                            f"{_links(n_links)}: a zero-based file almost always does. Is the "
                            "file one-based? Read its positions as counting from 1.")
    if gold.first_index == 1 and n_links and (shapes is not None or tokens is not None):
        unused = [name for side, name in enumerate(sides)
                  if not any(link[side] == e[side][1] for p, e in zip(gold.pairs, ends,
                                                                       strict=True)
                             for link in p.possible)]
        if unused:
            warnings.append(f"No link uses the last {' or '.join(unused)} word of any sentence "
                            f"in {_links(n_links)}. Is the file zero-based? Read its positions "
                            "as counting from 0.")
    if gold.n_null:
        warnings.append(f"{_links(gold.n_null)} to the NULL word (position 0 of a one-based "
                        "NAACL file) {} left out: {} no word pair.".format(
                            "was" if gold.n_null == 1 else "were",
                            "it links" if gold.n_null == 1 else "they link"))
    return warnings


def _check_tokens(tokens, n: int) -> list[tuple[list[str], list[str]]]:
    tokens = list(tokens)
    if len(tokens) != n:
        raise ValueError(f"tokens must give one (tgt_tokens, src_tokens) per gold pair ({n}); "
                         f"received {len(tokens)}.")
    out = []
    for k, pair in enumerate(tokens):
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2) or any(
                isinstance(side, str) for side in pair):
            raise TypeError(f"tokens[{k}] must be a pair (tgt_tokens, src_tokens) of token "
                            f"lists; received {quote(pair)}.")
        out.append((list(pair[0]), list(pair[1])))
    return out
