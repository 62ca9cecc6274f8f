"""Each head's job, read off its measures: follows position, aligns words, sink, spread out.

A class guesses what each head does from its picture; the measures decide. All four are taken
on the same sentences and the same target words: the held-out sentences of the toy corpus
where the weights can run on them (``Attention.heldout``: the shipped model, the trained
module; 256 sentences, the alignment lab's), so a label does not change with the pair on
screen; else the pair on screen, and the page says so. The rows are the target *words*
(``</s>`` and punctuation rows left out) and, where a gold alignment is known, only those that
have a gold word. A row's **brightest cell** is its largest weight over every column the
head may look at, ``</s>`` counted as a column (the brightest cell of the heatmap's row).

- **sink**: the mean share of a row's weight on ``</s>`` and punctuation
  (``xattn.subwords.sink_columns``): it parks its attention there.
- **spread out**: the mean normalised entropy of a row (``xattn.metrics``): 1 = uniform.
- **follows position** and **aligns words** are read from where the brightest cell lies: on
  the source word in the target word's own place (``own_place``: the i-th of n target words
  and the source word whose share of its sentence holds the target word's middle,
  ``floor((i + 1/2) m / n)`` of m source words; the diagonal when n = m), or on its gold word.
  Raw, each share flatters the other job: in the toy corpus 68.5 % of the target words have
  their gold word in their own place (``Basis.gold_in_place``), so a head that only follows
  position finds the gold word for 68.5 % of them, and a head that always finds the gold word
  lands on the own place for 68.5 %. So each is scored as its excess over a head that does the
  *other* job perfectly, a share of the way from that baseline ``b`` to every word:
  ``aligns words = (on gold - b) / (1 - b)``, ``follows position = (in place - b) / (1 - b)``.
  0 = no better than the other job, 1 = every word; below 0 = worse. Both differ only on the
  words whose gold word is elsewhere (a moved adjective), where the two jobs disagree; a head
  that misses the words where they agree loses the same on both. Without a gold alignment
  (random weights, a file, a model with no held-out set), or where every gold word is in its
  own place, the two cannot be told apart: aligns words is unknown (``None``, never the job)
  and follows position is the raw share in place.

The job is the largest of the four scores (the first of ``JOBS`` on a tie); another within
``CLOSE`` of it is a close call, right too. The labels simplify: a real head does a bit of
each, and the scores say how much.
"""

from __future__ import annotations

from dataclasses import dataclass

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
    sink, spread : float
        Mean share of a row's weight on ``</s>`` and punctuation; mean normalised entropy.
    in_place : float
        Share of rows whose brightest cell is the source word in their own place.
    on_gold : float or None
        Share of rows whose brightest cell is their gold word (None: no gold alignment).
    basis : Basis
    """

    layer: int
    head: int
    sink: float
    spread: float
    in_place: float
    on_gold: float | None
    basis: Basis

    @property
    def scores(self) -> dict[str, float | None]:
        """Each job's score, in the order of ``JOBS`` (None: unknown, never the job)."""
        b = self.basis.gold_in_place
        tell = self.basis.tells_apart and self.on_gold is not None
        return {"follows position": (self.in_place - b) / (1 - b) if tell else self.in_place,
                "aligns words": (self.on_gold - b) / (1 - b) if tell else None,
                "sink": self.sink, "spread out": self.spread}

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


def _counts(w, rows, words, gold, keys) -> dict[str, np.ndarray]:
    """One pair's sums over its measured rows, each (n_heads,) (``words``, ``gold_in_place``:
    scalars)."""
    place = np.zeros(len(rows), dtype=np.int64)                        # (T,) in the sentence
    place[rows] = np.flatnonzero(words)[own_place(int(rows.sum()), int(words.sum()))]
    if gold is not None:
        rows = rows & gold.any(axis=1)
    if keys is not None:
        rows = rows & keys.any(axis=1)
    w, place = w[:, rows], place[rows]                                   # (H, T', S), (T',)
    gold, keys = (None if m is None else m[rows] for m in (gold, keys))  # (T', S)
    best = (w if keys is None else np.where(keys, w, -np.inf)).argmax(axis=-1)  # (H, T')
    t = np.arange(len(place))
    return {"words": np.int64(len(place)),
            "sink": w[..., ~words].sum(axis=(1, 2)),
            "spread": normalised_entropy(w, keys).sum(axis=-1),
            "in_place": (best == place).sum(axis=-1),
            "on_gold": None if gold is None else gold[t, best].sum(axis=-1),
            "gold_in_place": None if gold is None else np.int64(gold[t, place].sum())}


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
    total: dict = {}
    for example in examples:
        for key, value in _counts(*example).items():
            total[key] = value if key not in total or value is None else total[key] + value
    n = int(total["words"])
    gold = total["on_gold"]
    basis = Basis(held_out, len(examples), n,
                  None if gold is None or n == 0 else float(total["gold_in_place"] / n))
    mean = {k: total[k] / max(n, 1) for k in ("sink", "spread", "in_place")}  # (n_heads,)
    return [HeadJob(lay, h, float(mean["sink"][h]), float(mean["spread"][h]),
                    float(mean["in_place"][h]),
                    None if gold is None or n == 0 else float(gold[h] / n),
                    basis)
            for lay, h in heads_asked(a, layer)]
