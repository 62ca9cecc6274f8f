"""A guided lesson: from one head to which layer of a real translator aligns words, each
head's job, whether attention explains what the model needs, and the class aligning words
against the heads.

Each `Step` puts the page in a prepared state (its URL parameters: sentences, weights, heads,
mask, view), says one short paragraph, names one thing to look at and asks the class one
question, which the class first answers with a prediction (predict, then see: Crouch et al.
2004). Everything a step says about the numbers comes from the weights on screen
(``Step.tell``), never written by hand, so it stays true whatever the sentences or the seed;
a step whose «fields» name a word the sentence does not have says what it asks instead.

A lesson is a file (``xattn.lesson.lessonfile``, docs/lesson-files.md): the shipped ones are
in ``xattn/lesson/lessons/``; a step's question is a computed one (``xattn.lesson.computed``),
the lecturer's own, or none. Each question declares what it ``needs`` of the weights (a seed
to change, a mask to lift, projections to switch heads off, ...). Weights that cannot give
it (a file has no projections, trained weights no seed) get one line saying what the step
shows instead (`missing`), never an error; above the step's paragraph, `off_plan` says that
the paragraph describes the step's own weights, not the ones drawn. Answers are Markdown in
which every token is a code span (``xattn.literal.md_code``).
"""

from pathlib import Path

from xattn.lesson import probe, tell
from xattn.lesson._step import (
    NEEDS,
    Ask,
    Own,
    Step,
    is_right,
    missing,
    needed,
    off_plan,
    verdict,
)
from xattn.lesson._told import Part, Told
from xattn.lesson.aligns import Versus, versus, word_pair
from xattn.lesson.charts import CHARTS, Chart
from xattn.lesson.computed import COMPUTED
from xattn.lesson.lessonfile import MAX_ROOM_STEPS, MAX_STEPS, Lesson, LessonError, read_lesson

__all__ = ["Step", "Told", "Part", "Ask", "Own", "Chart", "CHARTS", "COMPUTED", "Lesson",
           "LessonError", "read_lesson", "shipped_lessons", "SHIPPED", "STEPS", "MAX_STEPS",
           "MAX_ROOM_STEPS", "LESSONS", "DEFAULT", "NEEDS", "needed", "missing", "off_plan",
           "verdict", "is_right", "Versus", "versus", "word_pair", "tell", "probe"]

LESSONS = Path(__file__).parent / "lessons"     # the lessons shipped with xattn


def shipped_lessons(page=None) -> dict[str, Lesson]:
    """The lessons shipped with xattn (``xattn/lesson/lessons/*.toml``), by name (the file's
    stem), the default first; ``page`` checks each step's settings (`read_lesson`)."""
    found = {f.stem: read_lesson(f.read_bytes(), f.stem, page=page)
             for f in sorted(LESSONS.glob("*.toml"))}
    return {DEFAULT: found.pop(DEFAULT), **found}


DEFAULT = "cross-attention"
SHIPPED: Lesson = read_lesson((LESSONS / f"{DEFAULT}.toml").read_bytes(), DEFAULT)
STEPS: tuple[Step, ...] = SHIPPED.steps     # the default lesson's steps
