"""A lesson's pre/post check (its ``check`` key): the steps it asks again, checked, and the
lesson as a room asks it, those steps before and after the lesson's own."""

from __future__ import annotations

from dataclasses import replace

from xattn.lesson._step import Step
from xattn.lesson.problems import shown
from xattn.words import say

__all__ = ["check_steps", "with_checks", "checked_copy", "MAX_CHECK", "BEFORE", "AFTER"]


MAX_CHECK = 5                # steps a pre/post check asks again (Hake's gain)


def check_steps(problems, value, steps) -> tuple[int, ...]:
    """The steps (from 1) a pre/post check asks again: 1 to `MAX_CHECK` different steps whose
    question is computed from the weights (a right answer to gain on)."""
    if value == []:
        return ()
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_CHECK or any(
            isinstance(v, bool) or not isinstance(v, int) for v in value) \
            or len(set(value)) != len(value):
        problems.add(-1, "", "check", f"expected 1 to {MAX_CHECK} different step numbers, "
                                      f"found {shown(value)}")
        return ()
    bad = [v for v in value if not 1 <= v <= len(steps) or steps[v - 1].ask is None
           or steps[v - 1].ask.own is not None and steps[v - 1].ask.own.answer is None]
    if bad:
        problems.add(-1, "", "check", f"expected steps of this lesson (1 to {len(steps)}) whose "
                     "question has a right answer, found " + ", ".join(map(str, bad)))
        return ()
    return tuple(value)


BEFORE = ("**A check before the lesson.** Answer what you think now: nobody is graded, and the "
          "answer comes after the same question at the end of the lesson.")


AFTER = ("**The same check after the lesson.** Compare with what you said at the start: the "
         "class's gain is on the lecturer's screen.")


def checked_copy(step: Step, n: int, when: str) -> Step:
    """The lesson's step ``n`` (from 1) asked again as its pre-check (``when = "pre"``) or
    post-check (``"post"``), in the words of the context's language
    (``xattn.words.speaking``)."""
    if when == "pre":
        title = say("Before the lesson: {title}", title=step.title)
        said = say("**A check before the lesson.** Answer what you think now: nobody is "
                   "graded, and the answer comes after the same question at the end of the "
                   "lesson.")
    else:
        title = say("After the lesson: {title}", title=step.title)
        said = say("**The same check after the lesson.** Compare with what you said at the "
                   "start: the class's gain is on the lecturer's screen.")
    return replace(step, title=title, check=when, of_step=n, text=said + "\n\n" + step.text)


def with_checks(steps: list[Step], check: tuple[int, ...]) -> tuple[Step, ...]:
    """The lesson as a room asks it: the pre-check's steps, the lesson's, the post-check's."""
    return (*(checked_copy(steps[n - 1], n, "pre") for n in check), *steps,
            *(checked_copy(steps[n - 1], n, "post") for n in check))
