"""How sure a student is of an answer: one tap of three levels, and what the class's taps say.

A room may ask for it (a host switch, ``ClassStore.set_options(confidence=True)``): each
answer then carries one of `LEVELS` (or none: an answer without a confidence is still an
answer), stored with the answer in the same write and replaced with it. The host reads it
back as counts only, ``{(answer, level): students}`` (``ClassStore.confidence``, level None
where the student gave none), and splits them by right and wrong (`split`):

- **right and sure**: knows it;
- **right but guessing**: right by luck, or not confident yet: worth a second look;
- **wrong and sure**: a misconception, the answer the discussion should target.

Examples
--------
>>> counts = {("cat", "sure"): 7, ("cat", "guess"): 3, ("the", "sure"): 5, ("the", None): 1}
>>> s = split(counts, lambda answer: answer == "cat")
>>> s.right_sure, s.right_guessing, s.wrong_sure, s.answered
(7, 3, 5, 16)
>>> check_level("think_so"), check_level(None)
('think_so', None)
>>> check_level("certain")  # doctest: +ELLIPSIS
Traceback (most recent call last):
xattn.classroom.errors.AnswerRefused: a confidence is one of 'sure', ... received 'certain'.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xattn._checks import quote
from xattn.classroom.errors import AnswerRefused
from xattn.classroom.said import said

__all__ = ["LEVELS", "LABELS", "check_level", "ConfidenceSplit", "split", "by_element"]

LEVELS = ("sure", "think_so", "guess")       # as stored and sent, most sure first
LABELS = {"sure": "sure", "think_so": "think so", "guess": "guess"}   # as a phone shows them


def check_level(level) -> str | None:
    """``level`` if it is one of `LEVELS`, None for none; `AnswerRefused` (expected vs
    received) for anything else."""
    if level is None or (isinstance(level, str) and level in LEVELS):
        return level
    named = ", ".join(repr(v) for v in LEVELS[:-1]) + f" or {LEVELS[-1]!r}"
    raise AnswerRefused(f"a confidence is one of {named} (or none); received {quote(level)}."
                        ).saying(said("why.bad.answer"))


@dataclass(frozen=True)
class ConfidenceSplit:
    """The class's answers to one round by right and level: ``cells[(right, level)]`` is how
    many students gave a right (True), wrong (False) or ungraded (None: a poll) answer with
    that level (None: no confidence given)."""

    cells: dict

    def count(self, right: bool | None, level: str | None) -> int:
        return self.cells.get((right, level), 0)

    @property
    def right_sure(self) -> int:
        return self.count(True, "sure")

    @property
    def right_guessing(self) -> int:
        return self.count(True, "guess")

    @property
    def wrong_sure(self) -> int:
        """The misconception: a wrong answer held with certainty."""
        return self.count(False, "sure")

    @property
    def answered(self) -> int:
        return sum(self.cells.values())

    @property
    def graded(self) -> bool:
        return any(right is not None for right, _ in self.cells)


def split(counts: dict, right: Callable | None) -> ConfidenceSplit:
    """``counts`` (``{(answer, level): students}``, `ClassStore.confidence`) by whether each
    answer is right (``right(answer)``; None: a poll, nothing is right or wrong)."""
    cells: dict = {}
    for (answer, level), n in counts.items():
        key = (None if right is None else bool(right(answer)), level)
        cells[key] = cells.get(key, 0) + int(n)
    return ConfidenceSplit(cells)


def by_element(question, counts: dict) -> dict:
    """Each counted answer of ``question`` (an option, a number, a part's choice, a link:
    ``Question.elements``) to ``{level: students}``: the students whose answer holds it, by
    the level they gave (what the CSV's ``sure``, ``think_so`` and ``guess`` columns hold)."""
    out: dict = {}
    for (answer, level), n in counts.items():
        for value in question.elements(answer):
            levels = out.setdefault(value, {})
            levels[level] = levels.get(level, 0) + int(n)
    return out
