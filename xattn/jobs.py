"""Each head's job, read off its measures: follows position, aligns words, sink, spread out.

A class guesses what each head does from its picture; the measures decide. Each job has one
score in [0, 1], computed from the weights on screen (and, for "aligns words", from gold
alignments), and a head's job is the one whose score is largest:

- **sink**: the share of its weight on special tokens (``</s>``) and punctuation
  (``xattn.subwords.sink_columns``): it parks its attention there;
- **aligns words**: the share of target words whose strongest source word is their gold
  word, ``1 - AER`` of its argmax links (``xattn.alignlab``): over the held-out sentences
  where the weights can run on them, else the pair on screen's gold; unknown (never the job)
  without a gold alignment;
- **follows position**: its monotonicity (the strongest source word never moves back from
  one target word to the next) times its sharpness (``1 -`` the normalised entropy): it
  reads the source left to right, one word at a time, whatever the words are;
- **spread out**: its normalised entropy: its weight is spread over many source words.

The labels simplify: a real head can do a bit of each, and the scores say how much.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int
from xattn.metrics import head_statistics
from xattn.subwords import sink_columns

__all__ = ["JOBS", "HeadJob", "head_jobs", "heads_asked", "MAX_HEADS", "CLOSE"]

JOBS = ("follows position", "aligns words", "sink", "spread out")
MAX_HEADS = 8            # heads a class labels at once (a phone's screen of choices)
CLOSE = 0.05             # a job whose score is this near the best is just as fair an answer


@dataclass(frozen=True)
class HeadJob:
    """One head's measures, scores and job.

    Attributes
    ----------
    layer, head : int
        From 0.
    sink : float
        Share of the weight on sink tokens.
    aligned : float or None
        Share of target words on their gold word (None: no gold alignment here).
    monotonicity, spread : float
        ``xattn.metrics`` measures (``spread``: mean normalised entropy).
    held_out : bool
        Whether ``aligned`` comes from held-out sentences (else the pair on screen).
    """

    layer: int
    head: int
    sink: float
    aligned: float | None
    monotonicity: float
    spread: float
    held_out: bool = False

    @property
    def scores(self) -> dict[str, float]:
        """Each job's score, in the order of ``JOBS``."""
        return {"follows position": self.monotonicity * (1 - self.spread),
                "aligns words": -1.0 if self.aligned is None else self.aligned,
                "sink": self.sink, "spread out": self.spread}

    @property
    def job(self) -> str:
        """The job with the largest score (the first of ``JOBS`` on a tie)."""
        scores = self.scores
        return max(JOBS, key=lambda j: (scores[j], -JOBS.index(j)))

    @property
    def close(self) -> tuple[str, ...]:
        """Other jobs whose score is within ``CLOSE`` of the job's: a close call."""
        scores, job = self.scores, self.job
        return tuple(j for j in JOBS if j != job and scores[j] >= scores[job] - CLOSE)

    @property
    def name(self) -> str:
        return f"head {self.head + 1}"


def _aligned(a) -> tuple[np.ndarray | None, bool]:
    """Share of target words on their gold word, (n_layers, n_heads), and whether held out."""
    from xattn.alignlab import score_heads

    if a.heldout is not None:
        return 1 - score_heads(a.heldout(False)).aer, True
    if a.gold is None:
        return None, False
    gold = np.asarray(a.gold, bool)                                         # (T, S)
    rows = gold.any(axis=1)
    best = a.weights.argmax(axis=-1)                                        # (L, H, T)
    hits = np.take_along_axis(np.broadcast_to(gold, (*a.weights.shape[:2], *gold.shape)),
                              best[..., None], axis=-1)[..., 0]             # (L, H, T)
    return hits[..., rows].mean(axis=-1) if rows.any() else None, False


def heads_asked(a, layer: int) -> list[tuple[int, int]]:
    """The heads a class labels: those of the layer on screen, at most ``MAX_HEADS``."""
    return [(layer, h) for h in range(min(a.n_heads, MAX_HEADS))]


def head_jobs(a, layer: int = 0) -> list[HeadJob]:
    """The job of each head a class labels (``heads_asked``), from ``a``'s weights
    (an ``xattn.sources.Attention``) and, where known, gold alignments.

    Examples
    --------
    >>> from xattn.pipeline import Settings, run
    >>> from xattn.sources import random_attention
    >>> jobs = head_jobs(random_attention(run(Settings(n_heads=2))))
    >>> [(j.name, j.aligned) for j in jobs]
    [('head 1', None), ('head 2', None)]
    """
    layer = check_int(layer, "layer", minimum=0, maximum=a.n_layers - 1)
    asked = heads_asked(a, layer)
    sinks = sink_columns(list(a.src_tokens))
    share = a.weights[..., sinks].sum(axis=-1).mean(axis=-1)                 # (L, H)
    aligned, held_out = _aligned(a)
    stats = {lay: head_statistics(a.layer(lay), a.mask) for lay in {lay for lay, _ in asked}}
    return [HeadJob(lay, h, float(share[lay, h]),
                    None if aligned is None else float(aligned[lay, h]),
                    float(stats[lay]["monotonicity"][h]),
                    float(stats[lay]["normalised_entropy"][h]), held_out)
            for lay, h in asked]
