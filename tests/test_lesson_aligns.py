"""Lesson step 14, the class against the heads: the pair's words and gold, each layer's and
each head's AER, the class's from its votes, one person's verdict; re-derived here with plain
loops and sets, on the shipped model, the trained weights and random weights, and the step
saying what it needs where no gold is known."""

from __future__ import annotations

import numpy as np
import pytest
from test_lesson import attention, trained_attention_of

from xattn.lesson import STEPS, missing, verdict, versus, word_pair
from xattn.lesson.aligns import PanelName
from xattn.sources import random_attention

STEP = STEPS[13]
PAIR = ("the sick king hears the dog", "le roi malade entend le chien")
GOLD = {(0, 0), (1, 2), (2, 1), (3, 3), (4, 4), (5, 5)}      # (target, source): le-the, roi-king


def model_on_the_steps_pair():
    from xattn.encdec import cross_attention, load_encdec
    from xattn.sources import model_attention

    model = load_encdec()
    return model_attention(cross_attention(model, *PAIR), loaded=model)


def aer_by_hand(links: set, gold: set) -> float:
    """Sure links only (the toy corpus's gold): 1 - 2|A∩S| / (|A| + |S|)."""
    return 1 - 2 * len(links & gold) / (len(links) + len(gold))


def head_links(w: np.ndarray, words_t: list, words_s: list) -> set:
    """A head's links over the words: each target word's strongest source word, by a loop."""
    links = set()
    for i, row in enumerate(words_t):
        best = max(range(len(words_s)), key=lambda j: (w[row, words_s[j]], -j))
        links.add((i, best))
    return links


def test_the_steps_pair_is_its_words_and_the_corpus_gold_without_end_of_sentence():
    a = model_on_the_steps_pair()
    assert a.src_tokens[-1] == "</s>" and a.tgt_tokens[-1] == "</s>"
    pair = word_pair(a)
    assert pair.src_words == tuple(PAIR[0].split()) and pair.tgt_words == tuple(PAIR[1].split())
    assert set(pair.truth) == GOLD and pair.rows == tuple(range(6)) == pair.cols
    told = STEP.tell(a, STEP.layer(a.n_layers))
    assert told.question.kind == "links" and told.truth == tuple(sorted(GOLD))
    assert told.question.rows == ("le (0)", "roi", "malade", "entend", "le (4)", "chien")
    assert told.question.choices[:3] == ("the (0)", "sick", "king")
    assert missing(STEP, a) is None


@pytest.mark.parametrize("weights", ["model", "trained", "random"])
def test_every_layer_and_head_is_scored_as_a_loop_over_its_strongest_words(weights, trained):
    from xattn.pipeline import Settings, run

    a = {"model": model_on_the_steps_pair, "trained": lambda: trained_attention_of(trained),
         "random": lambda: random_attention(run(Settings(src=PAIR[0], tgt=PAIR[1])))}[weights]()
    pair = word_pair(a)
    gold = set(pair.truth)
    v = versus(a, {}, 0)
    rows, cols = list(pair.rows), list(pair.cols)
    for k in range(a.n_layers):
        mean = a.weights[k].mean(axis=0)
        name = f"layer {k + 1} (heads averaged)" if a.n_layers > 1 else "the heads averaged"
        assert f"| {name} | {aer_by_hand(head_links(mean, rows, cols), gold):.3f} |" in v.table
        for h in range(a.n_heads):
            name = f"layer {k + 1}, head {h + 1}" if a.n_layers > 1 else f"head {h + 1}"
            expected = aer_by_hand(head_links(a.weights[k, h], rows, cols), gold)
            assert f"| {name} | {expected:.3f} |" in v.table, (name, v.table)
    assert len(v.panels) == a.n_layers * (a.n_heads + 1)
    layer = (lambda k: None) if a.n_layers == 1 else (lambda k: k + 1)
    assert [name for name, _ in v.panels] == (                # said by the chart, in its language
        [PanelName(layer(k), None) for k in range(a.n_layers)]
        + [PanelName(layer(k), h + 1) for k in range(a.n_layers) for h in range(a.n_heads)])
    np.testing.assert_allclose(v.panels[-1][1], a.weights[-1, -1][np.ix_(rows, cols)])


def test_the_shipped_models_numbers_on_the_steps_pair():
    """The numbers docs/lesson.md states: layer 2's heads, averaged, and its head 2 align the
    pair exactly (AER 0); layer 1's average 0.333."""
    a = model_on_the_steps_pair()
    told = STEP.tell(a, 0)
    assert "layer 2's heads, averaged, score AER 0.00" in told.answer
    assert "the best single head (layer 2, head 2) scores 0.00" in told.answer
    v = versus(a, {}, 0)
    assert "| layer 1 (heads averaged) | 0.333 |" in v.table


def test_the_class_row_is_the_majority_of_its_votes_scored_against_gold():
    a = model_on_the_steps_pair()
    votes = [GOLD, GOLD - {(2, 1)} | {(2, 2)}, {(0, 0), (1, 2), (2, 2), (4, 0)}]
    counts: dict = {}
    for links in votes:
        for link in links:
            counts[link] = counts.get(link, 0) + 1
    v = versus(a, counts, len(votes))
    majority = {link for link, n in counts.items() if 2 * n > len(votes)}
    assert majority == GOLD - {(2, 1)} | {(2, 2)}
    aer = aer_by_hand(majority, GOLD)                      # 1 - 2 * 5 / 12
    assert aer == pytest.approx(1 / 6)
    assert f"| **the class** (links drawn by more than half of 3) | {aer:.3f} |" in v.table
    assert v.line.startswith(f"AER (lower is better): the class {aer:.2f} · layer 2 0.00 · "
                             "best head 0.00 (layer 2, head 2)")
    assert v.aer == pytest.approx(aer)
    np.testing.assert_allclose(v.shares[2], [0, 1 / 3, 2 / 3, 0, 0, 0])   # malade: sick, king


def test_one_persons_verdict_is_their_aer():
    a = model_on_the_steps_pair()
    told = STEP.tell(a, 0)
    assert verdict(told, tuple(sorted(GOLD))) == \
        "**Right: the gold alignment exactly** (AER 0.00)."
    mine = sorted(GOLD - {(4, 4)} | {(4, 0)})                # the other "the"
    assert verdict(told, mine).startswith(
        f"**Your AER {aer_by_hand(set(mine), GOLD):.2f}**: 5 of your 6 links are gold, of the "
        "6 gold links")
    v = versus(a, dict.fromkeys(mine, 1), 1, "you")
    assert v.table.splitlines()[2].startswith("| **you** | 0.167 |")


def test_without_a_gold_alignment_the_step_says_what_to_choose():
    from xattn.pipeline import Settings, run

    a = attention()                                    # the random page's own pair: no gold
    assert word_pair(a) is None
    assert "Weights: model" in missing(STEP, a)
    other = random_attention(run(Settings(src=PAIR[0], tgt="le roi malade voit le chien")))
    assert word_pair(other) is None                   # not the pair's translation: no gold
