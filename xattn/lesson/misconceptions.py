"""Why were they wrong? Named misconceptions, the wrong answers they give, and which one a
student's answer shows.

A computed question (``xattn.lesson.computed``) answers from the weights on screen; each of its
**distractors** is the answer the same weights give under one named misconception (rows and
columns swapped, 1/√d_head forgotten, ...), computed by ``xattn.lesson._distractors`` from the
same record. `MISCONCEPTIONS` names each once, with the one line a class reads after the reveal
("forgot the 1/√d_head scaling"). A distractor equal to the answer (a number within the
question's tolerance), to an answer just as right or to a distractor found before it is dropped,
and so is one no student could give (a choice the question does not offer, a number out of its
range): `keep`.

`misconception_of` names the distractor a student's answer is (a number within the tolerance of
a distractor's value: the nearest); `class_misconceptions` counts them over the class's answers
(the lecturer's histogram, the CSV's ``misconception`` column). `surprise` measures how far
one answer is from the computed one (a phone's list of steps to revisit).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from xattn.words import N_, say

__all__ = ["Misconception", "Distractor", "MISCONCEPTIONS", "keep", "misconception_of",
           "class_misconceptions", "Share", "surprise"]


@dataclass(frozen=True)
class Misconception:
    """A way of misreading attention: its key, short name and the one line a class reads."""

    key: str
    name: str
    reason: str

    def __repr__(self) -> str:
        return f"Misconception({self.key!r})"


MISCONCEPTIONS: dict[str, Misconception] = {m.key: m for m in (
    Misconception("swapped", N_("rows and columns swapped"),
                  N_("read the heatmap by columns: swapped queries (target rows) and keys "
                  "(source columns)")),
    Misconception("unscaled", N_("1/√d_head forgotten"),
                  N_("forgot the 1/√d_head scaling")),
    Misconception("scores", N_("scores read as weights"),
                  N_("read the scores before the softmax as the weights")),
    Misconception("heads", N_("heads averaged instead of one head"),
                  N_("mixed up one head and the heads averaged")),
    Misconception("mask", N_("mask ignored"),
                  N_("ignored the mask: let a target word see masked source tokens")),
    Misconception("axis", N_("softmax over the wrong axis"),
                  N_("took the softmax over the target words (each column sums to 1) instead "
                  "of over the source words")),
    Misconception("diagonal", N_("position taken for alignment"),
                  N_("took the word in the same place (the diagonal) for the one it aligns with")),
    Misconception("effect", N_("weight taken for effect"),
                  N_("took the word attention weighs most for the word the output needs most")),
)}


@dataclass(frozen=True)
class Distractor:
    """A wrong answer a misconception gives on the weights on screen.

    Attributes
    ----------
    key : str
        A key of `MISCONCEPTIONS`.
    value : object
        The answer as ``Question.decode`` gives it: a choice's text, a token's position or a
        number.
    reason : str
        One line of Markdown in this step's words ("added up the column of `cat` instead of
        the row of `noir`": every token a code span); the misconception's own line when
        empty.
    """

    key: str
    value: object
    reason: str = ""

    def __post_init__(self):
        if self.key not in MISCONCEPTIONS:
            raise ValueError(f"Distractor.key must be one of {tuple(MISCONCEPTIONS)}; received "
                             f"{self.key!r}.")

    @property
    def name(self) -> str:
        """Its misconception's short name, in the context's language (``xattn.words``)."""
        return say(MISCONCEPTIONS[self.key].name)

    @property
    def why(self) -> str:
        """The one line: this step's words, or the misconception's own (in the context's
        language)."""
        return self.reason or say(MISCONCEPTIONS[self.key].reason)


def _same(question, a, b, tolerance: float) -> bool:
    if question.of.number:
        return abs(float(a) - float(b)) <= tolerance
    return a == b


def _answerable(question, value) -> bool:
    if question.of.number:
        return question.low <= float(value) <= question.high
    return value in question.options()


def keep(told, found) -> tuple[Distractor, ...]:
    """The distractors of ``found`` (None entries skipped) that a student could give and that
    differ from the answer, from every answer just as right and from each other (the first
    kept). Numbers: "differ" is "more than the question's tolerance apart", so that a right
    answer is never named a misconception and one number names one misconception."""
    q = told.question
    if q is None or told.truth is None or not q.of.one_answer:    # one answer, one bar
        return ()
    out: list[Distractor] = []
    for d in found:
        if d is None or d.value is None:
            continue
        value = round(float(d.value), 6) if q.of.number else d.value
        if not _answerable(q, value):
            continue
        taken = (told.truth, *told.also, *(k.value for k in out))
        if any(_same(q, value, t, told.tolerance) for t in taken):
            continue
        out.append(Distractor(d.key, value, d.reason))
    return tuple(out)


def misconception_of(told, answer) -> Distractor | None:
    """The distractor ``answer`` (decoded) is, or None: a right answer is never one; a
    number is the nearest distractor within the question's tolerance."""
    if told is None or answer is None or not told.distractors or told.question is None:
        return None
    from xattn.lesson._step import is_right

    if is_right(told, answer):
        return None
    if not told.question.of.number:
        return next((d for d in told.distractors if d.value == answer), None)
    near = [(abs(float(answer) - float(d.value)), k) for k, d in enumerate(told.distractors)
            if abs(float(answer) - float(d.value)) <= told.tolerance]
    return told.distractors[min(near)[1]] if near else None


class Share(NamedTuple):
    """How many of the class gave one misconception's answer, of how many answered."""

    distractor: Distractor
    count: int
    answered: int

    @property
    def share(self) -> float:
        return self.count / self.answered if self.answered else 0.0


def class_misconceptions(told, counts: dict, answered: int) -> list[Share]:
    """Each distractor of ``told`` with the students whose answer it is, from the class's
    ``counts`` (answer -> students, as the store counts them), most given first."""
    if told is None or not told.distractors:
        return []
    n = dict.fromkeys(told.distractors, 0)
    for value, k in counts.items():
        d = misconception_of(told, value)
        if d is not None:
            n[d] += int(k)
    shares = [Share(d, n[d], int(answered)) for d in told.distractors]
    return sorted(shares, key=lambda s: -s.count)


def surprise(told, answer) -> float | None:
    """How far ``answer`` (decoded) is from the computed answer: 0 when right; when wrong,
    1 + a part in [0, 1]: a number's relative error (capped at 1), for a token one minus the
    weight the row gave the pick over the answer's (``Told.weights``; 1 without them), a
    choice 1, parts the share of answered parts wrong, links their AER. None for a question
    with no right answer or no answer."""
    q = told.question if told is not None else None
    if q is None or answer is None or told.truth is None or not q.of.graded:
        return None
    from xattn.lesson._step import is_right

    if is_right(told, answer):
        return 0.0
    part = q.of.off(q, told.key, answer)        # the kind's measure (xattn.classroom.measures)
    return round(1.0 + part, 4)
