"""Did the class learn? Peer instruction's measures of one step's rounds, and of a class.

A step is asked in rounds: the first vote, revotes after discussion (the same question), and
follow-ups (the same question on a new case: ``Question.case``). From each student's answers
in every round (anonymous: the store gives counts of answer sequences, never ids,
`ClassStore.trajectories`) and which answers are right in each round:

- **share right** per round: right answers over the students who answered that round;
- **potential learners** (Porter et al. 2011): the students who answered round 1 wrong; of
  them, how many were right in the last revote of the step's own question (*moved to right*,
  after discussion), and how many were right on the first follow-up (*right on the new case*:
  Smith et al. 2009's test that they understood, not only followed their neighbours);
- **moved away**: right in round 1, wrong in the last revote (consensus can pull right answers
  away, Brooks and Koretsky 2011);
- **weighted learning gain** (Porter et al. 2011, as we read it): the potential learners' share
  right on the new case divided by the share right on it among those right in round 1 (who
  already knew): a new case harder than the first question lowers both shares, so the ratio
  says how many of the potential learners did as well as those who knew. Porter et al.'s
  85-89 % is this ratio, not the raw count of potential learners right on the new case;
- **normalized gain** ⟨g⟩ (Hake 1998) of a pre/post check: (post − pre) / (100 − pre), in
  points of share right, over the students who answered both.

Numbers to aim at (Smith et al. 2009): round 1 about 50 % right, a revote just under 70 %, a
new isomorphic question above 70 %; Porter et al. found a weighted learning gain of 85-89 %
(for the ratio above, only); Hake's ⟨g⟩ is 0.23 for lectures and 0.48 for interactive teaching.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["RoundShare", "StepLearning", "step_learning", "normalized_gain", "ROUND_KINDS",
           "CheckPair", "check_pair", "class_gain"]

ROUND_KINDS = ("vote", "revote", "follow-up")


@dataclass(frozen=True)
class RoundShare:
    """One round: its number, its kind (`ROUND_KINDS`), the case asked (0: the step's own),
    how many students answered and how many of them right (None: a poll, no right answer)."""

    round: int
    kind: str
    case: int
    answered: int
    right: int | None

    @property
    def share(self) -> float | None:
        return None if self.right is None or not self.answered else self.right / self.answered


@dataclass(frozen=True)
class StepLearning:
    """One step's rounds and its movers (see the module's docstring)."""

    rounds: tuple[RoundShare, ...]
    potential: int                 # wrong in round 1
    moved_right: int | None        # ... of them right in the last revote (None: no revote)
    right_on_new: int | None       # ... of them right on the first follow-up (None: none)
    moved_away: int | None         # right in round 1, wrong in the last revote
    knew: int = 0                  # right in round 1
    knew_right_on_new: int | None = None   # ... of them right on the first follow-up

    @property
    def weighted_gain(self) -> float | None:
        """Porter et al.'s weighted learning gain: the potential learners' share right on the
        new case over the share of those who knew (right in round 1) right on it; None
        without a follow-up, a potential learner, or a knower right on the new case."""
        if not self.potential or self.right_on_new is None or not self.knew_right_on_new:
            return None
        return (self.right_on_new / self.potential) / (self.knew_right_on_new / self.knew)


def _kinds(cases: Sequence[int]) -> list[str]:
    kinds, seen = [], set()
    for k, case in enumerate(cases):
        kinds.append("vote" if k == 0 else "follow-up" if case not in seen else "revote")
        seen.add(case)
    return kinds


def step_learning(trajectories: dict, cases: Sequence[int],
                  right: Sequence[Callable | None]) -> StepLearning:
    """The measures of one step.

    Parameters
    ----------
    trajectories : dict of tuple to int
        Each sequence of answers (one per round, in order; None for a round the student did
        not answer) to how many students gave it (`ClassStore.trajectories`).
    cases : sequence of int
        Each round's case (``Question.case``), in order.
    right : sequence of callable (answer) -> bool, or None
        Whether an answer is right, per round (None: a round with no right answer, a poll).

    Examples
    --------
    >>> ok = lambda a: a == "B"
    >>> s = step_learning({("A", "B", "C"): 2, ("A", "A", "B"): 1, ("B", "B", "B"): 1},
    ...                   [0, 0, 1], [ok, ok, ok])
    >>> [r.right for r in s.rounds], s.potential, s.moved_right, s.right_on_new
    ([1, 3, 2], 3, 2, 1)
    >>> s.knew, s.knew_right_on_new, round(s.weighted_gain, 3)      # (1/3) / (1/1)
    (1, 1, 0.333)
    """
    if len(cases) != len(right) or not cases:
        raise ValueError(f"cases and right hold one entry per round (at least one); received "
                         f"{len(cases)} and {len(right)}.")
    kinds = _kinds(cases)
    rounds = []
    for k, (kind, case, judge) in enumerate(zip(kinds, cases, right, strict=True)):
        answered = sum(n for seq, n in trajectories.items() if seq[k] is not None)
        hits = None if judge is None else sum(
            n for seq, n in trajectories.items() if seq[k] is not None and judge(seq[k]))
        rounds.append(RoundShare(k + 1, kind, case, answered, hits))
    first = right[0]
    if first is None:
        return StepLearning(tuple(rounds), 0, None, None, None)
    wrong = {seq: n for seq, n in trajectories.items()
             if seq[0] is not None and not first(seq[0])}
    revotes = [k for k, kind in enumerate(kinds) if kind == "revote" and cases[k] == cases[0]]
    follow = next((k for k, kind in enumerate(kinds) if kind == "follow-up"), None)

    def count(group: dict, k: int | None, want: bool) -> int | None:
        if k is None or right[k] is None:
            return None
        return sum(n for seq, n in group.items()
                   if seq[k] is not None and bool(right[k](seq[k])) == want)
    last = revotes[-1] if revotes else None
    were_right = {seq: n for seq, n in trajectories.items()
                  if seq[0] is not None and first(seq[0])}
    return StepLearning(tuple(rounds), sum(wrong.values()), count(wrong, last, True),
                        count(wrong, follow, True), count(were_right, last, False),
                        sum(were_right.values()), count(were_right, follow, True))


def normalized_gain(pre: float, post: float) -> float | None:
    """Hake's normalized gain ⟨g⟩ = (post − pre) / (1 − pre), from class shares right in
    [0, 1]; None where the pre-check was all right (nothing left to gain).

    Examples
    --------
    >>> round(normalized_gain(0.4, 0.7), 3)
    0.5
    """
    for name, v in (("pre", pre), ("post", post)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
            raise ValueError(f"{name} must be a share from 0 to 1; received {v!r}.")
    return None if pre >= 1 else (post - pre) / (1 - pre)


@dataclass(frozen=True)
class CheckPair:
    """One question of a pre/post check: the students who answered it both times
    (``matched``), how many of them were right before and after."""

    matched: int
    pre_right: int
    post_right: int

    @property
    def gain(self) -> float | None:
        """Hake's ⟨g⟩ of this question (None: nobody matched, or all right before)."""
        if not self.matched:
            return None
        return normalized_gain(self.pre_right / self.matched, self.post_right / self.matched)


def check_pair(pairs: dict, right_pre: Callable, right_post: Callable) -> CheckPair:
    """One check question from the store's pairs of answers (`ClassStore.across`):
    ``{(answer before, answer after): students}``; only students who answered both count.

    Examples
    --------
    >>> p = check_pair({("A", "B"): 3, ("B", "B"): 1, ("A", "A"): 1, ("A", None): 2},
    ...                lambda a: a == "B", lambda a: a == "B")
    >>> p.matched, p.pre_right, p.post_right, round(p.gain, 3)
    (5, 1, 4, 0.75)
    """
    both = {k: n for k, n in pairs.items() if k[0] is not None and k[1] is not None}
    return CheckPair(sum(both.values()),
                     sum(n for (a, _), n in both.items() if right_pre(a)),
                     sum(n for (_, b), n in both.items() if right_post(b)))


def class_gain(pairs: Sequence[CheckPair]) -> float | None:
    """The class's ⟨g⟩ over its check questions: from the share right before and after, each
    over every matched answer (a question answered by more students weighs more)."""
    matched = sum(p.matched for p in pairs)
    if not matched:
        return None
    return normalized_gain(sum(p.pre_right for p in pairs) / matched,
                           sum(p.post_right for p in pairs) / matched)
