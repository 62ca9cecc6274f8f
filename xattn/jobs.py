"""Each head's job, read off its measures: follows position, aligns words, sink, spread out.

A class guesses what each head does from its picture; the measures decide. All four are taken
on the same sentences and the same target words: the held-out sentences of the toy corpus
where the weights can run on them (``Attention.heldout``: the shipped model, the trained
module; 256 sentences, the alignment lab's), so a label does not change with the pair on
screen; else the pair on screen, and the page says so. The rows are the target *words*
(``</s>`` and punctuation rows left out) and, where a gold alignment is known, only those that
have a gold word. A row's **brightest cell** is its largest weight over every column the
head may look at, ``</s>`` counted as a column (the brightest cell of the heatmap's row).

Every score is baseline-corrected on one scale, 0 = what a head without the job scores and
1 = the job on every word, so the four can be compared and the largest wins (they used to mix
raw shares with corrected scores: issue 44, G1):

- **sink**: ``(s - u) / (1 - u)``, ``s`` the mean share of a row's weight on ``</s>`` and
  punctuation (``xattn.subwords.sink_columns``), ``u`` that share for a row spread evenly over
  the keys it may see.
- **spread out**: the mean normalised entropy of a row (``xattn.metrics``): 0 = one key, 1 =
  even.
- **follows position** and **aligns words** are read from where the brightest cell lies,
  relative to the word's own place (``own_place``: the i-th of n target words and the source
  word whose share of its sentence holds the target word's middle, ``floor((i + 1/2) m / n)``
  of m source words; the diagonal when n = m). A head's **offset** is the commonest distance
  of its brightest word from the own place (-1 = the previous word; the nearest to 0 on a
  tie). The **telling words** are those whose gold word is not at that offset: there a head
  that only follows position never finds the gold word, and one that only aligns never lands
  at the offset. ``follows position`` = share of the telling words whose brightest cell is at
  the offset; ``aligns words`` = share whose brightest cell is their gold word. Without a
  gold alignment (random weights, a file, a model with no held-out set), or with no telling
  word, the two cannot be told apart: aligns words is unknown (``None``, never the job) and
  follows position is the share of all words at the offset.

The job is the largest of the four scores (the first of ``JOBS`` on a tie); another within
``CLOSE`` of it is a close call, right too. The labels simplify: a real head does a bit of
each, and the scores say how much.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from xattn._checks import check_int
from xattn.metrics import normalised_entropy
from xattn.subwords import sink_columns

__all__ = ["JOBS", "LABELS", "HeadJob", "Basis", "head_jobs", "heads_asked", "own_place",
           "MAX_HEADS", "CLOSE"]

JOBS = ("follows position", "aligns words", "sink", "spread out")
# The jobs in short words: four pills fit one line of a phone and of a projector.
LABELS = {"follows position": "position", "aligns words": "aligns", "sink": "sink",
          "spread out": "spread"}
MAX_HEADS = 8            # heads a class labels at once (a phone's screen of choices)
CLOSE = 0.05             # a job whose score is this near the best is just as fair an answer


@dataclass(frozen=True)
class Basis:
    """What the measures were taken on.

    Attributes
    ----------
    held_out : bool
        The held-out sentences (else the pair on screen).
    n_pairs, n_words : int
        Sentence pairs, and target words (rows) measured over them.
    gold_in_place : float or None
        Share of those words whose gold word is the source word in their own place: what a
        head that follows position scores on the gold word (None: no gold alignment).
    """

    held_out: bool
    n_pairs: int
    n_words: int
    gold_in_place: float | None

    @property
    def tells_apart(self) -> bool:
        """Whether some gold word is not in its own place: aligning differs from position."""
        return self.gold_in_place is not None and self.gold_in_place < 1


@dataclass(frozen=True)
class HeadJob:
    """One head's measures, scores and job.

    Attributes
    ----------
    layer, head : int
        From 0.
    sink : float
        Mean share of a row's weight on ``</s>`` and punctuation (raw).
    sink_uniform : float
        The same share for a head that spreads evenly over the keys it may see: the baseline
        of the sink score.
    spread : float
        Mean normalised entropy of a row (0 = one key, 1 = even).
    offset : int
        The head's commonest offset of its brightest cell from the word's own place (-1 = the
        previous source word, 0 = its own place, 1 = the next).
    in_place : float
        Share of all rows whose brightest cell is at ``offset`` from their own place.
    on_gold : float or None
        Share of all rows whose brightest cell is their gold word (None: no gold alignment).
    n_tell : int
        Rows whose gold word is not at ``offset`` from their own place: the words on which
        aligning and following position at ``offset`` disagree (0: none, or no gold).
    tell_in_place, tell_on_gold : float or None
        On those rows, the share whose brightest cell is at ``offset`` / on the gold word.
    basis : Basis
    """

    layer: int
    head: int
    sink: float
    sink_uniform: float
    spread: float
    offset: int
    in_place: float
    on_gold: float | None
    n_tell: int
    tell_in_place: float | None
    tell_on_gold: float | None
    basis: Basis

    @property
    def scores(self) -> dict[str, float | None]:
        """Each job's score, in the order of ``JOBS`` (None: unknown, never the job): 0 = what
        a head without the job scores, 1 = the job on every word."""
        u = self.sink_uniform
        sink = (self.sink - u) / (1 - u) if u < 1 else 0.0
        tell = self.tell_on_gold is not None
        return {"follows position": self.tell_in_place if tell else self.in_place,
                "aligns words": self.tell_on_gold if tell else None,
                "sink": sink, "spread out": self.spread}

    @property
    def job(self) -> str:
        """The job with the largest score (the first of ``JOBS`` on a tie)."""
        known = {j: s for j, s in self.scores.items() if s is not None}
        return max(known, key=lambda j: (known[j], -JOBS.index(j)))

    @property
    def close(self) -> tuple[str, ...]:
        """Other jobs whose score is within ``CLOSE`` of the job's: a close call."""
        scores, job = self.scores, self.job
        return tuple(j for j in JOBS if j != job and scores[j] is not None
                     and scores[j] >= scores[job] - CLOSE)

    @property
    def name(self) -> str:
        return f"head {self.head + 1}"


def own_place(n_tgt: int, n_src: int) -> np.ndarray:
    """The source word in each target word's own place: ``floor((i + 1/2) n_src / n_tgt)``.

    Returns
    -------
    ndarray of int64, shape (n_tgt,)

    Examples
    --------
    >>> own_place(3, 3).tolist(), own_place(4, 2).tolist(), own_place(2, 5).tolist()
    ([0, 1, 2], [0, 0, 1, 1], [1, 3])
    """
    return ((2 * np.arange(n_tgt) + 1) * n_src) // (2 * n_tgt)


def heads_asked(a, layer: int) -> list[tuple[int, int]]:
    """The heads a class labels: those of the layer on screen, at most ``MAX_HEADS``."""
    return [(layer, h) for h in range(min(a.n_heads, MAX_HEADS))]


def _words(tokens) -> np.ndarray:
    """Which tokens are words (not ``</s>`` nor punctuation); all, if none is."""
    words = ~sink_columns(list(tokens))
    return words if words.any() else np.ones_like(words)


def _examples(a, layer: int) -> tuple[list[tuple], bool]:
    """``(weights (n_heads, T, S), rows (T,) bool, words (S,) bool, gold (T, S) bool or None,
    keys (T, S) bool or None)`` per sentence pair, and whether they are held out."""
    if a.heldout is not None:
        out = []
        for w, pair in a.heldout(False, specials=True):               # (L, H, T, S+specials)
            n_src = w.shape[-1]
            words = np.arange(n_src) < len(pair.source)
            gold = np.zeros((len(pair.target), n_src), dtype=bool)
            gold[:, :len(pair.source)] = pair.alignment_matrix()
            out.append((np.asarray(w[layer], np.float64), np.ones(len(pair.target), bool),
                        words, gold, None))
        return out, True
    mask = None if a.mask is None else np.broadcast_to(a.mask, a.weights.shape[2:])
    gold = None if a.gold is None else np.asarray(a.gold, dtype=bool)
    return [(np.asarray(a.weights[layer], np.float64), _words(a.tgt_tokens),
             _words(a.src_tokens), gold, mask)], False


class _Rows(NamedTuple):
    """One pair's measured rows (T' of them), for every head."""

    sink: np.ndarray        # (H, T') share of the row's weight on sink columns
    uniform: np.ndarray     # (T',) that share for an even row over the keys it may see
    spread: np.ndarray      # (H, T') normalised entropy
    offset: np.ndarray      # (H, T') brightest word minus own place; NO_WORD on a sink column
    on_gold: np.ndarray | None   # (H, T') bool, brightest cell is a gold word
    gold_at: np.ndarray | None   # (2 n_words + 1, T') bool, gold word at offset k - n_words


NO_WORD = np.iinfo(np.int64).min // 2     # the offset of a brightest cell on </s>: none


def _rows(w, rows, words, gold, keys) -> _Rows:
    """One pair's measures per head and row (the rows of the target words measured)."""
    n_words = int(words.sum())
    place = np.zeros(len(rows), dtype=np.int64)                        # (T,) word index
    place[rows] = own_place(int(rows.sum()), n_words)
    if gold is not None:
        rows = rows & gold.any(axis=1)
    if keys is not None:
        rows = rows & keys.any(axis=1)
    w, place = w[:, rows], place[rows]                                   # (H, T', S), (T',)
    gold, keys = (None if m is None else m[rows] for m in (gold, keys))  # (T', S)
    allowed = np.ones(w.shape[1:], bool) if keys is None else keys       # (T', S)
    best = np.where(allowed, w, -np.inf).argmax(axis=-1)                 # (H, T')
    word_of = np.cumsum(words) - 1                                       # (S,) word index
    offset = np.where(words[best], word_of[best] - place, NO_WORD)       # (H, T')
    t = np.arange(len(place))
    gold_at = None
    if gold is not None:
        cols = np.flatnonzero(words)                                     # (n_words,)
        k = np.arange(-n_words, n_words + 1)[:, None] + place[None]      # (2n+1, T')
        inside = (k >= 0) & (k < n_words)
        gold_at = inside & gold[t, cols[np.clip(k, 0, n_words - 1)]]
    return _Rows(w[..., ~words].sum(axis=-1),
                 (allowed & ~words).sum(axis=-1) / allowed.sum(axis=-1),
                 normalised_entropy(w, keys), offset,
                 None if gold is None else gold[t, best], gold_at)


def _commonest(offsets: np.ndarray) -> int:
    """The commonest offset (the nearest to 0 on a tie, then the smaller); 0 if none."""
    offsets = offsets[offsets != NO_WORD]
    if offsets.size == 0:
        return 0
    values, counts = np.unique(offsets, return_counts=True)
    return int(min(values[counts == counts.max()], key=lambda d: (abs(d), d)))


def _head(found: list[_Rows], h: int, layer: int, basis: Basis) -> HeadJob:
    """One head's job from every pair's rows."""
    def cat(get) -> np.ndarray:
        return np.concatenate([get(r) for r in found])

    offset = cat(lambda r: r.offset[h])                                  # (N,)
    d = _commonest(offset)
    n = max(len(offset), 1)
    on_gold = tell = None
    if basis.gold_in_place is not None:
        on_gold = cat(lambda r: r.on_gold[h])                            # (N,) bool
        n_words = [(len(r.gold_at) - 1) // 2 for r in found]
        tell = cat(lambda r: ~r.gold_at[(len(r.gold_at) - 1) // 2 + d]
                   if abs(d) <= (len(r.gold_at) - 1) // 2 else np.ones(r.gold_at.shape[1], bool))
        del n_words
    n_tell = 0 if tell is None else int(tell.sum())
    return HeadJob(layer, h, float(cat(lambda r: r.sink[h]).sum() / n),
                   float(cat(lambda r: r.uniform).sum() / n),
                   float(cat(lambda r: r.spread[h]).sum() / n), d,
                   float((offset == d).sum() / n),
                   None if on_gold is None else float(on_gold.sum() / n), n_tell,
                   float((offset == d)[tell].mean()) if n_tell else None,
                   float(on_gold[tell].mean()) if n_tell else None, basis)


def head_jobs(a, layer: int = 0) -> list[HeadJob]:
    """The job of each head a class labels (``heads_asked``), measured on ``a``'s held-out
    sentences where it has them, else on the pair on screen (``a``: an
    ``xattn.sources.Attention``).

    Examples
    --------
    >>> from xattn.pipeline import Settings, run
    >>> from xattn.sources import random_attention
    >>> jobs = head_jobs(random_attention(run(Settings(n_heads=2))))
    >>> [(j.name, j.on_gold, j.scores["aligns words"], j.basis.held_out) for j in jobs]
    [('head 1', None, None, False), ('head 2', None, None, False)]
    """
    layer = check_int(layer, "layer", minimum=0, maximum=a.n_layers - 1)
    examples, held_out = _examples(a, layer)
    found = [_rows(*example) for example in examples]
    n = sum(len(r.uniform) for r in found)
    has_gold = n > 0 and all(r.gold_at is not None for r in found)
    in_place = sum(int(r.gold_at[(len(r.gold_at) - 1) // 2].sum()) for r in found) \
        if has_gold else 0
    basis = Basis(held_out, len(examples), n, in_place / n if has_gold else None)
    return [_head(found, h, lay, basis) for lay, h in heads_asked(a, layer)]
