"""Alignment scores against the toy corpus's gold alignment, per head and overall."""

import math

import numpy as np
import pytest

from xattn import MultiHeadCrossAttention, ToyEmbedder
from xattn.alignment import (
    alignment_accuracy,
    alignment_by_head,
    chance_accuracy,
    evaluate,
    head_sentences,
)
from xattn.corpus import align, translate


def _uniform_model(d_model=8, n_heads=2):
    """Zero queries: uniform attention, so every argmax is source position 0."""
    model = MultiHeadCrossAttention(d_model, n_heads, seed=0)
    model.W_Q = np.zeros((d_model, d_model))
    return model


def test_alignment_accuracy_by_word_and_by_position():
    pairs = [translate("the cat sees the dog"), translate("a red cow runs")]
    model, emb = _uniform_model(), ToyEmbedder(8, seed=0)
    # argmax 0 is "the"/"a": right by word for both determiners of pair 0 and one of pair 1,
    # right by position only for the first determiner of each pair
    assert alignment_accuracy(model, emb, pairs) == pytest.approx(3 / 9)
    assert alignment_accuracy(model, emb, pairs, exact=True) == pytest.approx(2 / 9)
    assert alignment_accuracy(model, emb, pairs, head=1) == pytest.approx(3 / 9)


def test_chance_accuracy_by_hand():
    pairs = [translate("the cat sees the dog")]
    assert chance_accuracy(pairs) == pytest.approx((2 + 1 + 1 + 2 + 1) / 25)
    assert chance_accuracy(pairs, exact=True) == pytest.approx(1 / 5)
    assert math.isnan(chance_accuracy([align("the", "zut")]))


def test_accuracy_skips_unaligned_words_and_is_nan_without_any():
    model, emb = _uniform_model(), ToyEmbedder(8, seed=0)
    pair = align("the dog sleeps", "le chien rouge dort")  # "rouge" has no gold word
    assert alignment_accuracy(model, emb, [pair]) == pytest.approx(1 / 3)
    assert math.isnan(alignment_accuracy(model, emb, [align("the", "zut")]))
    assert np.isnan(alignment_by_head(model, emb, [align("the", "zut")])["gold_weight"]).all()


def test_alignment_by_head_agrees_with_alignment_accuracy(trained):
    pairs = trained.heldout[:40]
    stats = alignment_by_head(trained.model, trained.embedder, pairs)
    for h in range(4):
        assert stats["word_accuracy"][h] == alignment_accuracy(
            trained.model, trained.embedder, pairs, head=h)
        assert stats["exact_accuracy"][h] == alignment_accuracy(
            trained.model, trained.embedder, pairs, head=h, exact=True)
    assert ((stats["gold_weight"] > 0) & (stats["gold_weight"] <= 1)).all()


def test_evaluate_scores_trained_untrained_and_chance(trained):
    run = evaluate(trained, seconds=1.5)
    (tw, te), (uw, _), (cw, _) = (run.accuracy[k] for k in ("trained", "untrained", "chance"))
    assert tw == alignment_accuracy(trained.model, trained.embedder, trained.heldout)
    assert te == alignment_accuracy(trained.model, trained.embedder, trained.heldout, exact=True)
    assert cw == chance_accuracy(trained.heldout) and uw < tw and run.seconds == 1.5
    assert list(run.by_head["trained"]["head"]) == [0, 1, 2, 3]


@pytest.mark.parametrize(("word", "moved", "repeated", "verdict"), [
    (0.3, 0.2, 0.2, "learned little"), (0.95, 0.9, 0.9, "meaning *and* position"),
    (0.9, 0.95, 0.4, "aligns by meaning"), (0.8, 0.3, 0.8, "leans on position"),
    (0.7, 0.5, 0.5, "mixes both cues"),
])
def test_head_sentences_give_a_verdict_per_head(word, moved, repeated, verdict):
    trained = {"head": [0], "word_accuracy": [word], "moved_accuracy": [moved],
               "repeated_accuracy": [repeated]}
    line = head_sentences(trained, {"word_accuracy": [float("nan")]})[0]
    assert line.startswith(f"**Head 1** puts {word:.0%}") and "(untrained: n/a)" in line
    assert verdict in line


def test_errors():
    emb, model, pairs = ToyEmbedder(8, seed=0), _uniform_model(), [translate("the cat runs")]
    with pytest.raises(ValueError, match="head must be an int >= 0 and <= 1; received 2"):
        alignment_accuracy(model, emb, pairs, head=2)
    with pytest.raises(TypeError, match="head must be an int; received bool"):
        alignment_accuracy(model, emb, pairs, head=True)
    with pytest.raises(ValueError, match="embedder.d_model must equal model.d_model=8; "
                                         "received 16"):
        alignment_accuracy(model, ToyEmbedder(16), pairs)
    with pytest.raises(ValueError, match="model must be a MultiHeadCrossAttention"):
        alignment_by_head("model", emb, pairs)
