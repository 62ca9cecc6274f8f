"""How well attention aligns: scores of a model's heads against the toy corpus's gold alignment.

Complements the gold-free measures of ``xattn.metrics`` (entropy, confidence, ...): here every
target word of a ``SentencePair`` knows the source word it translates.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int
from xattn.attention import MultiHeadCrossAttention
from xattn.corpus import SentencePair
from xattn.embedder import ToyEmbedder
from xattn.train import Batch, TrainResult, make_batch

__all__ = ["ALIGNMENT_MEASURES", "alignment_accuracy", "chance_accuracy", "alignment_by_head",
           "Evaluated", "evaluate", "VERDICTS", "verdict", "head_sentences", "GoldScores",
           "gold_scores"]

# One plain-English line per column of `alignment_by_head`, for the page.
ALIGNMENT_MEASURES = {
    "word_accuracy": "Share of target words whose most-attended source word is their gold "
                     "word (either \"the\" counts when there are two).",
    "exact_accuracy": "Share of target words whose most-attended source word is the gold one "
                      "at the gold position.",
    "moved_accuracy": "Word accuracy on the swapped noun and adjective, where position alone "
                      "points to the wrong word: high for a head that aligns by meaning.",
    "repeated_accuracy": "Exact accuracy on words that occur twice in the source (\"the ... "
                         "the\"), where meaning alone is a coin flip: high for a head that "
                         "uses position.",
    "gold_weight": "Average attention weight on the gold source word (1 = all of it).",
}


def _attention(model: MultiHeadCrossAttention, embedder: ToyEmbedder,
               pairs: Sequence[SentencePair]) -> tuple[Batch, np.ndarray]:
    """The batch of ``pairs`` and the model's weights on it, (B, n_heads, T, S)."""
    if not isinstance(model, MultiHeadCrossAttention):
        raise ValueError(f"model must be a MultiHeadCrossAttention; received "
                         f"{type(model).__name__}.")
    if embedder.d_model != model.d_model:
        raise ValueError(f"embedder.d_model must equal model.d_model={model.d_model}; "
                         f"received {embedder.d_model}. Use the TrainResult's embedder.")
    batch = make_batch(pairs, embedder)
    _, weights = model(batch.decoder_state, batch.encoder_output, batch.encoder_mask)
    return batch, weights


def _hits(batch: Batch, guess: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per target word (B, T): is ``guess`` the gold source word, and the gold position?"""
    gold_word = np.take_along_axis(batch.source_words, np.maximum(batch.gold, 0), axis=1)
    same_word = np.take_along_axis(batch.source_words, guess, axis=1) == gold_word
    return same_word, guess == batch.gold


def alignment_accuracy(model: MultiHeadCrossAttention, embedder: ToyEmbedder,
                       pairs: Sequence[SentencePair], *, exact: bool = False,
                       head: int | None = None) -> float:
    """Share of aligned target words whose strongest attention falls on their gold word.

    Parameters
    ----------
    model : MultiHeadCrossAttention
    embedder : ToyEmbedder
        The word vectors the model expects (``TrainResult.embedder``).
    pairs : sequence of SentencePair
        Target words with no gold alignment (None) are left out.
    exact : bool, default False
        False: the argmax may be any source word equal to the gold word (either "the" counts).
        True: it must be the gold position, which for a repeated word only position can tell.
    head : int, optional
        Score one head's weights instead of the head average.

    Returns
    -------
    float
        In [0, 1]; NaN if no target word has a gold alignment.
    """
    batch, weights = _attention(model, embedder, pairs)
    if head is not None:
        head = check_int(head, "head", minimum=0, maximum=model.n_heads - 1)
    attn = weights.mean(axis=1) if head is None else weights[:, head]        # (B, T, S)
    same_word, same_pos = _hits(batch, attn.argmax(axis=-1))
    rows = batch.gold >= 0
    return float((same_pos if exact else same_word)[rows].mean()) if rows.any() else math.nan


def chance_accuracy(pairs: Sequence[SentencePair], *, exact: bool = False) -> float:
    """Expected ``alignment_accuracy`` of an argmax drawn uniformly from the source words.

    A target word scores 1/n_src with ``exact=True``, and (occurrences of its gold word)/n_src
    otherwise; the result is the mean over aligned target words (NaN if there are none).
    """
    scores = [(1 if exact else p.source.count(p.source[j])) / len(p.source)
              for p in pairs for j in p.alignment if j is not None]
    return float(np.mean(scores)) if scores else math.nan


def _mean(x: np.ndarray, where: np.ndarray) -> float:
    return float(x[where].mean()) if where.any() else math.nan


def alignment_by_head(model: MultiHeadCrossAttention, embedder: ToyEmbedder,
                      pairs: Sequence[SentencePair]) -> dict[str, np.ndarray]:
    """How well each head aligns, as a column table (one row per head).

    Measured on the aligned target words of ``pairs``; complements the gold-free measures of
    ``xattn.metrics.head_statistics`` (entropy, confidence, ...).

    Returns
    -------
    dict of str to ndarray of shape (n_heads,)
        ``"head"`` (0, 1, ...) and the keys of ``ALIGNMENT_MEASURES`` (described there). An
        entry is NaN when ``pairs`` hold no target word of its kind.
    """
    batch, weights = _attention(model, embedder, pairs)                      # (B, h, T, S)
    rows = batch.gold >= 0                                                    # (B, T)
    gold = np.maximum(batch.gold, 0)
    gold_word = np.take_along_axis(batch.source_words, gold, axis=1)          # (B, T)
    repeated = (batch.source_words[:, None, :] == gold_word[..., None]).sum(axis=-1) > 1
    moved = rows & (batch.gold != np.arange(batch.gold.shape[1]))
    stats: dict[str, list] = {"head": list(range(model.n_heads))}
    stats.update({k: [] for k in ALIGNMENT_MEASURES})
    for h in range(model.n_heads):
        attn = weights[:, h]                                                  # (B, T, S)
        same_word, same_pos = _hits(batch, attn.argmax(axis=-1))
        stats["word_accuracy"].append(_mean(same_word, rows))
        stats["exact_accuracy"].append(_mean(same_pos, rows))
        stats["moved_accuracy"].append(_mean(same_word, moved))
        stats["repeated_accuracy"].append(_mean(same_pos, rows & repeated))
        on_gold = np.take_along_axis(attn, gold[..., None], axis=-1)[..., 0]  # (B, T)
        stats["gold_weight"].append(_mean(on_gold, rows))
    return {k: np.array(v) for k, v in stats.items()}


# ----------------------------------------------------------------- a run, scored
@dataclass(frozen=True)
class Evaluated:
    """A training run and its scores on the held-out sentences, computed once per setting.

    ``accuracy`` maps "trained", "untrained" and "chance" to (word, exact) accuracy;
    ``by_head`` maps "trained" and "untrained" to ``alignment_by_head`` tables.
    """

    result: TrainResult
    accuracy: dict[str, tuple[float, float]]
    by_head: dict[str, dict[str, np.ndarray]]
    seconds: float


def evaluate(result: TrainResult, seconds: float) -> Evaluated:
    """Score a training run on its held-out sentences, trained and untrained, overall and per
    head (``seconds``: how long training took, kept for the page).

    A run with a time-lapse already scored both: its first frame is the untrained start and
    its last the trained model, on the same held-out sentences, bit for bit the numbers
    computed here otherwise (``tests/test_train.py`` holds them equal). They are reused, so
    the frames cost a run only the frames in between.
    """
    emb, pairs, tl = result.embedder, result.heldout, result.timelapse
    if tl is not None and len(tl.steps) >= 2:
        frames = {"untrained": 0, "trained": -1}
        accuracy = {name: (float(tl.word_accuracy[i]), float(tl.exact_accuracy[i]))
                    for name, i in frames.items()}
        accuracy["chance"] = (chance_accuracy(pairs), chance_accuracy(pairs, exact=True))
        by_head = {name: {"head": np.arange(result.model.n_heads),
                          **{k: tl.by_head[k][i].copy() for k in ALIGNMENT_MEASURES}}
                   for name, i in frames.items()}
        return Evaluated(result, accuracy, by_head, seconds)
    models = {"trained": result.model, "untrained": result.untrained}
    accuracy = {name: (alignment_accuracy(m, emb, pairs), alignment_accuracy(m, emb, pairs,
                                                                              exact=True))
                for name, m in models.items()}
    accuracy["chance"] = (chance_accuracy(pairs), chance_accuracy(pairs, exact=True))
    by_head = {name: alignment_by_head(m, emb, pairs) for name, m in models.items()}
    return Evaluated(result, accuracy, by_head, seconds)


# ----------------------------------------------------------------- which head learned what
MEANING, POSITION, LITTLE = 0.8, 0.75, 0.5   # thresholds of the plain-English verdicts


def pct(x: float) -> str:
    """A share as a whole percentage, ``n/a`` for NaN."""
    return "n/a" if np.isnan(x) else f"{x:.0%}"


# What a head learned, by `verdict`'s key: the English of `head_sentences` (the lecturer's
# page says them in its language: ``xattn.ui.weights.trained``).
VERDICTS = {
    "little": "It learned little on its own: the other heads carry the alignment.",
    "both": "It uses meaning *and* position.",
    "meaning": "It aligns by meaning: it follows the moved adjective, but two *the*s fool it.",
    "position": "It leans on position: it picks the right *the* but misses the swapped words.",
    "mixed": "It mixes both cues, neither reliably.",
}


def verdict(word: float, moved: float, repeated: float) -> str:
    """What a head learned, as a key of `VERDICTS`, from its word, swapped-word and
    repeated-word accuracies."""
    if word < LITTLE:
        return "little"
    if moved >= MEANING and repeated >= MEANING:
        return "both"
    if moved >= MEANING:
        return "meaning"
    if repeated >= POSITION:
        return "position"
    return "mixed"


def head_sentences(trained: dict, untrained: dict) -> list[str]:
    """One sentence per head from ``alignment_by_head`` tables, trained and untrained.

    Examples
    --------
    >>> t = {"head": [0], "word_accuracy": [0.93], "moved_accuracy": [1.0],
    ...      "repeated_accuracy": [0.5]}
    >>> head_sentences(t, {"word_accuracy": [0.2]})[0][:56]
    '**Head 1** puts 93% of its argmaxes on the gold word (un'
    """
    lines = []
    for h in range(len(trained["head"])):
        word, moved = trained["word_accuracy"][h], trained["moved_accuracy"][h]
        repeated = trained["repeated_accuracy"][h]
        lines.append(f"**Head {h + 1}** puts {pct(word)} of its argmaxes on the gold word "
                     f"(untrained: {pct(untrained['word_accuracy'][h])}); {pct(moved)} on "
                     f"a swapped noun or adjective, {pct(repeated)} on the right one of a "
                     f"repeated word. {VERDICTS[verdict(word, moved, repeated)]}")
    return lines


# ----------------------------------------------------------------- one pair, scored
@dataclass(frozen=True)
class GoldScores:
    """How a trained model's heads align on one sentence pair and on the held-out sentences.

    Attributes
    ----------
    word, exact : float
        This pair's share of gold-aligned target words (heads averaged): any copy of the gold
        word / the right position. NaN when no target word has a gold word.
    n_gold : int
        Target words of this pair that have a gold source word.
    pair_by_head, heldout_by_head, untrained_by_head : dict of str to ndarray (n_heads,)
        ``alignment_by_head`` on this pair; on the held-out sentences, trained and untrained.
    sentences : list of str
        One sentence (Markdown) per head on what it learned (``head_sentences``).
    n_heldout : int
    """

    word: float
    exact: float
    n_gold: int
    pair_by_head: dict
    heldout_by_head: dict
    untrained_by_head: dict
    sentences: list
    n_heldout: int


def gold_scores(evaluated: Evaluated, pair: SentencePair) -> GoldScores:
    """The scores of ``evaluated``'s trained model on ``pair`` and on its held-out sentences."""
    result = evaluated.result
    model, emb = result.model, result.embedder
    trained, untrained = evaluated.by_head["trained"], evaluated.by_head["untrained"]
    return GoldScores(
        word=alignment_accuracy(model, emb, [pair]),
        exact=alignment_accuracy(model, emb, [pair], exact=True),
        n_gold=sum(j is not None for j in pair.alignment),
        pair_by_head=alignment_by_head(model, emb, [pair]), heldout_by_head=trained,
        untrained_by_head=untrained, sentences=head_sentences(trained, untrained),
        n_heldout=len(result.heldout))
