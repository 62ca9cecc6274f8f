"""A class's votes as an alignment: each link's share, the majority alignment and its AER,
re-derived here from the votes with plain sets and the formula (Och and Ney 2003)."""

from __future__ import annotations

import numpy as np
import pytest

from xattn.alignlab import (
    GoldLinks,
    class_score,
    link_shares,
    links_matrix,
    majority_links,
    score_links,
)


def by_hand(votes: list[set], sure: set, possible: set) -> tuple[set, float]:
    """The majority alignment (links more than half drew) and its AER, with sets."""
    drawn = [link for links in votes for link in links]
    majority = {link for link in set(drawn) if drawn.count(link) * 2 > len(votes)}
    a_s, a_p = len(majority & sure), len(majority & (possible | sure))
    return majority, 1 - (a_s + a_p) / (len(majority) + len(sure))


def counted(votes) -> dict:
    counts: dict = {}
    for links in votes:
        for link in links:
            counts[link] = counts.get(link, 0) + 1
    return counts


@pytest.mark.parametrize("seed", range(12))
def test_the_class_score_is_the_majority_alignment_scored_by_the_formula(seed):
    rng = np.random.default_rng(seed)
    n_tgt, n_src = int(rng.integers(2, 8)), int(rng.integers(2, 8))
    cells = [(t, s) for t in range(n_tgt) for s in range(n_src)]
    sure = {cells[k] for k in rng.choice(len(cells), size=min(n_tgt, len(cells)), replace=False)}
    possible = sure | {cells[int(rng.integers(len(cells)))]}
    votes = [{cells[k] for k in rng.choice(len(cells), size=int(rng.integers(1, 5)),
                                           replace=False)} | (sure if rng.random() < 0.5 else
                                                              set())
             for _ in range(int(rng.integers(1, 9)))]
    gold = GoldLinks({(s, t) for t, s in sure}, {(s, t) for t, s in possible})  # (src, tgt)
    c = class_score(counted(votes), len(votes), gold, n_tgt, n_src)
    majority, aer = by_hand(votes, sure, possible)
    assert {tuple(x) for x in np.argwhere(c.links).tolist()} == majority
    assert c.aer == pytest.approx(aer) and c.n_voters == len(votes)
    for (t, s), n in counted(votes).items():
        assert c.shares[t, s] == pytest.approx(n / len(votes))
    mine = score_links(votes[0], gold, n_tgt, n_src)
    assert mine.aer == pytest.approx(by_hand([votes[0]], sure, possible)[1])


def test_a_link_half_the_class_drew_is_not_in_the_majority():
    shares = link_shares({(0, 0): 2, (1, 1): 3, (0, 1): 1}, 4, 2, 2)
    np.testing.assert_allclose(shares, [[0.5, 0.25], [0, 0.75]])
    assert majority_links(shares).tolist() == [[False, False], [False, True]]


def test_nobody_answered_is_no_links_and_an_aer_of_one():
    gold = GoldLinks({(0, 0)})
    c = class_score({}, 0, gold, 2, 2)
    assert not c.links.any() and (c.shares == 0).all()
    assert c.aer == 1.0 and np.isnan(c.precision) and c.recall == 0.0


@pytest.mark.parametrize("call, error, match", [
    (lambda: link_shares({(0, 0): 3}, 2, 2, 2), ValueError,
     r"counts\[\(0, 0\)\] must be an int >= 0 and <= 2; received 3"),
    (lambda: link_shares({(2, 0): 1}, 2, 2, 2), ValueError, "inside 2 target x 2 source"),
    (lambda: link_shares({(True, 0): 1}, 2, 2, 2), TypeError, "pair of ints"),
    (lambda: link_shares([((0, 0), 1)], 2, 2, 2), TypeError, "counts must map"),
    (lambda: link_shares({}, -1, 2, 2), ValueError, "n_voters must be an int >= 0"),
    (lambda: links_matrix("0-0", 2, 2), TypeError, "links must be"),
    (lambda: links_matrix([(0, 0)], 0, 2), ValueError, "n_tgt must be an int >= 1"),
    (lambda: majority_links(np.full((2, 2), 1.5)), ValueError, "shares in"),
    (lambda: score_links([(0, 0)], {(0, 0)}, 2, 2), TypeError, "gold must be a GoldLinks"),
    (lambda: score_links([(0, 0)], GoldLinks({(3, 0)}), 2, 2), ValueError, "inside"),
])
def test_bad_votes_are_refused_naming_what_was_expected(call, error, match):
    with pytest.raises(error, match=match):
        call()
