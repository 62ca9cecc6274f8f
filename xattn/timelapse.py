"""Training as a time-lapse: snapshots of every head's attention while ``xattn.train`` runs.

About ``TrainConfig.snapshots`` (default 20) times over a run, evenly spaced in Adam steps,
plus the untrained start, ``train`` keeps:

- every head's weights on one fixed **probe** pair, ``PROBE_SENTENCE`` = "the red cat sees
  the dog" -> "le chat rouge voit le chien": it has the noun-adjective swap (chat/rouge look
  back at cat/red, crossing) and a repeated word (two "the", two "le"), so a frame shows
  whether a head follows meaning, position, or both. Only these (n_heads, 6, 6) weights are
  kept, not the parameter matrices: 288 bytes a head and frame;
- on the held-out sentences: the loss, the share of target words whose head-averaged
  argmax is their gold word (``word_accuracy``, as ``alignment_accuracy``) and, per head,
  the measures of ``xattn.alignment.alignment_by_head`` (``HEAD_MEASURES``): word accuracy,
  exact accuracy, accuracy on *moved* words (the swapped noun and adjective, which only
  meaning finds) and on *repeated* words (the right "the" of two, which only position
  finds). So "when does each head start aligning, and by meaning or by position?" is
  answered by numbers: ``Timelapse.onset`` and ``by_head["moved_accuracy"]`` against
  ``by_head["repeated_accuracy"]``.

The last snapshot is taken from the trained weights, so it equals ``result.model`` on the
probe and ``alignment_by_head(result.model, ...)`` on the held-out set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from xattn._checks import check_int, quote
from xattn.corpus import SentencePair, translate

__all__ = ["PROBE_SENTENCE", "PROBE", "HEAD_MEASURES", "snapshot_steps", "head_scores",
           "Timelapse", "Recorder"]

PROBE_SENTENCE = "the red cat sees the dog"
PROBE = translate(PROBE_SENTENCE)
HEAD_MEASURES = ("word_accuracy", "exact_accuracy", "moved_accuracy", "repeated_accuracy",
                 "gold_weight")


def snapshot_steps(steps: int, n: int) -> tuple[int, ...]:
    """Adam steps after which snapshots are taken: 0 (untrained), then ``n`` evenly spaced
    steps up to ``steps`` (fewer when ``steps < n``); none when ``n`` is 0.

    Examples
    --------
    >>> snapshot_steps(100, 4), snapshot_steps(3, 20), snapshot_steps(50, 0)
    ((0, 25, 50, 75, 100), (0, 1, 2, 3), ())
    """
    steps = check_int(steps, "steps", minimum=1)
    n = check_int(n, "n", minimum=0)
    return tuple(sorted({i * steps // n for i in range(n + 1)})) if n else ()


def _masked_mean(x: np.ndarray, where: np.ndarray) -> np.ndarray:
    """Per head, the mean of x (B, H, T) over the (B, T) entries where ``where`` holds, as
    ``alignment_by_head`` computes it (floats summed in its order); NaN if there are none."""
    n = int(where.sum())
    if not n:
        return np.full(x.shape[1], np.nan)
    if x.dtype == bool:                       # a count: exact in any order, so all heads at once
        return (x & where[:, None]).sum(axis=(0, 2)) / n                    # (H,)
    return np.array([x[:, h][where].mean() for h in range(x.shape[1])])      # (H,)


class _Kinds(NamedTuple):
    """What ``head_scores`` needs of a batch's gold, computed once per batch."""

    gold: np.ndarray        # (B, T) gold source index, 0 where there is none
    word_ids: np.ndarray    # (B, S) an int per distinct source word
    gold_ids: np.ndarray    # (B, T) the gold word's int
    rows: np.ndarray        # (B, T) aligned target words
    moved: np.ndarray       # (B, T) ... whose gold word is not at their own position
    repeated: np.ndarray    # (B, T) ... whose gold word occurs twice in the source


def _kinds(gold: np.ndarray, source_words: np.ndarray) -> _Kinds:
    _, word_ids = np.unique(source_words, return_inverse=True)
    word_ids = word_ids.reshape(source_words.shape)                          # (B, S)
    rows, g = gold >= 0, np.maximum(gold, 0)
    gold_ids = np.take_along_axis(word_ids, g, axis=1)                        # (B, T)
    repeated = rows & ((word_ids[:, None, :] == gold_ids[..., None]).sum(axis=-1) > 1)
    return _Kinds(g, word_ids, gold_ids, rows, rows & (gold != np.arange(gold.shape[1])),
                  repeated)


def _scores(weights: np.ndarray, k: _Kinds, measures=HEAD_MEASURES) -> dict[str, np.ndarray]:
    guess = weights.argmax(axis=-1)                                           # (B, H, T)
    same_pos = guess == k.gold[:, None]                                       # (B, H, T)
    same_word = np.take_along_axis(k.word_ids[:, None, :], guess, axis=2) \
        == k.gold_ids[:, None]                                                # (B, H, T)
    out = {"word_accuracy": _masked_mean(same_word, k.rows),
           "exact_accuracy": _masked_mean(same_pos, k.rows)}
    if "moved_accuracy" in measures:
        out["moved_accuracy"] = _masked_mean(same_word, k.moved)
        out["repeated_accuracy"] = _masked_mean(same_pos, k.repeated)
        on_gold = np.take_along_axis(weights, k.gold[:, None, :, None], axis=-1)[..., 0]
        out["gold_weight"] = _masked_mean(on_gold, k.rows)                    # (B, H, T) in
    return out


def head_scores(weights: np.ndarray, gold: np.ndarray, source_words: np.ndarray
                ) -> dict[str, np.ndarray]:
    """Per-head alignment measures (``HEAD_MEASURES``) of padded batch weights.

    The same numbers as ``xattn.alignment.alignment_by_head``, from arrays, all heads at once.

    Parameters
    ----------
    weights : ndarray of shape (B, n_heads, T, S)
    gold : ndarray of int, shape (B, T)
        Gold source index of each target word; -1 at padding and unaligned words.
    source_words : ndarray of str, shape (B, S)

    Returns
    -------
    dict of str to ndarray of shape (n_heads,)
        NaN for a measure with no target word of its kind.
    """
    return _scores(weights, _kinds(gold, source_words))


@dataclass(frozen=True, eq=False)
class Timelapse:
    """Snapshots of one training run (see the module docstring).

    Attributes
    ----------
    steps : ndarray of int, shape (n_snapshots,)
        Adam updates done when each snapshot was taken; 0 is the untrained start, the last
        is ``TrainConfig.steps``.
    probe : SentencePair
        The pair whose weights are kept (``PROBE``).
    weights : ndarray of shape (n_snapshots, n_heads, n_tgt, n_src)
        Every head's attention on ``probe``.
    loss : ndarray of shape (n_snapshots,)
        The training objective on the held-out sentences.
    word_accuracy, exact_accuracy : ndarray of shape (n_snapshots,)
        Held-out share of target words whose head-averaged argmax is the gold word (either
        "the" of two counts) / the gold position.
    by_head : dict of str to ndarray of shape (n_snapshots, n_heads)
        ``HEAD_MEASURES`` on the held-out sentences.
    n_heldout : int
    """

    steps: np.ndarray
    probe: SentencePair = field(repr=False)
    weights: np.ndarray = field(repr=False)
    loss: np.ndarray = field(repr=False)
    word_accuracy: np.ndarray = field(repr=False)
    exact_accuracy: np.ndarray = field(repr=False)
    by_head: dict = field(repr=False)
    n_heldout: int

    def __repr__(self) -> str:
        return (f"Timelapse(n_snapshots={len(self.steps)}, steps={self.steps[0]}.."
                f"{self.steps[-1]}, n_heads={self.weights.shape[1]}, "
                f"n_heldout={self.n_heldout})")

    def onset(self, level: float = 0.5, measure: str = "word_accuracy") -> np.ndarray:
        """For each head, the first snapshot step at which ``by_head[measure]`` reaches
        ``level`` (ndarray of int, shape (n_heads,)); -1 for a head that never does."""
        if measure not in HEAD_MEASURES:
            raise ValueError(f"measure must be one of {HEAD_MEASURES}; received "
                             f"{quote(measure)}.")
        if isinstance(level, bool) or not isinstance(level, (int, float)) \
                or not 0 <= level <= 1:
            raise ValueError(f"level must be a number in [0, 1]; received {quote(level)}.")
        reached = self.by_head[measure] >= level                             # (n_snap, H)
        first = reached.argmax(axis=0)                                        # (H,)
        return np.where(reached.any(axis=0), self.steps[first], -1)


class Recorder:
    """Collects a ``Timelapse`` while ``xattn.train`` trains a model in place.

    Parameters
    ----------
    steps : sequence of int
        When to take a snapshot (``snapshot_steps``).
    batch : xattn.train.Batch
        The held-out sentences, padded: ``decoder_state``, ``encoder_output``,
        ``encoder_mask``, ``gold`` and ``source_words`` are read.
    probe : tuple of ndarray
        ``(decoder_state (n_tgt, d_model), encoder_output (n_src, d_model))`` of ``PROBE``.
    loss : callable
        ``loss(output)`` of the held-out output (B, T, d_model): the training objective.
    """

    def __init__(self, steps, batch, probe: tuple[np.ndarray, np.ndarray],
                 loss: Callable[[np.ndarray], float]) -> None:
        self.steps = frozenset(steps)
        self._batch, self._probe, self._loss = batch, probe, loss
        self._kinds = _kinds(batch.gold, batch.source_words)
        self._taken: list[int] = []
        self._rows: dict[str, list] = {k: [] for k in ("weights", "loss", "word", "exact")}
        self._heads: dict[str, list] = {k: [] for k in HEAD_MEASURES}

    def take(self, step: int, model) -> None:
        """Snapshot ``model`` (a ``MultiHeadCrossAttention`` after ``step`` updates) if
        ``step`` is one of ``steps``."""
        if step not in self.steps:
            return
        b = self._batch
        # 64 sentences a call: 256 sentences x 8 heads of 7 x 7 weights cross the module's
        # size for large problems, whose loop over sentences took 17 ms; 4 calls take 1.5 ms
        parts = [model(b.decoder_state[i:i + 64], b.encoder_output[i:i + 64],
                       b.encoder_mask[i:i + 64]) for i in range(0, len(b.gold), 64)]
        output = np.concatenate([p[0] for p in parts])                        # (B, T, d_model)
        weights = np.concatenate([p[1] for p in parts])                       # (B, h, T, S)
        average = _scores(weights.mean(axis=1, keepdims=True), self._kinds,
                          ("word_accuracy", "exact_accuracy"))               # one "head"
        self._taken.append(step)
        for key, value in (("weights", model(*self._probe)[1]), ("loss", self._loss(output)),
                           ("word", average["word_accuracy"][0]),
                           ("exact", average["exact_accuracy"][0])):
            self._rows[key].append(value)
        for key, value in _scores(weights, self._kinds).items():
            self._heads[key].append(value)

    def timelapse(self) -> Timelapse:
        """The snapshots so far, as read-only arrays (a run is shared by a whole class)."""
        r = self._rows
        arrays = [np.array(self._taken), np.stack(r["weights"]), np.array(r["loss"]),
                  np.array(r["word"]), np.array(r["exact"])]
        by_head = {k: np.stack(v) for k, v in self._heads.items()}
        for a in (*arrays, *by_head.values()):
            a.flags.writeable = False
        steps, weights, loss, word, exact = arrays
        return Timelapse(steps, PROBE, weights, loss, word, exact, by_head, len(self._batch.gold))
