"""The lesson on the lecturer's page (and the projector) in the page's language (issue 45).

The page's own labels are the ``app`` domain (``xattn.ui.i18n``); the lesson's words (its
step texts, the computed answers, verdicts, the class against the heads, misconceptions) are
the ``lesson`` domain the phones read (``xattn.words``), said here in the language the page
is in, as a phone in that language is shown them: `lesson_language` is
``xattn.lesson.translated.words_in`` of the page's language (the lesson's own language when
it has no texts in it, said once by `fallback_note`). What is stored and exported (answers,
the CSV) never depends on it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xattn.lesson import Lesson, Step, Told
from xattn.lesson.translated import labels_in, said_as, step_in, words_in
from xattn.live.messages import label_text
from xattn.locales import NAMES
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import page_lang
from xattn.words import say, speaking

__all__ = ["lesson_language", "lesson_words", "step_words", "step_titles", "option_labels",
           "fallback_note"]


def lesson_language(lesson: Lesson | None) -> str:
    """The language ``lesson``'s words are shown in on this page: the page's, when the
    lesson speaks it, else the lesson's own."""
    lang = page_lang()
    return words_in(lesson, lang) if lesson is not None else lang


@contextmanager
def lesson_words(lesson: Lesson | None) -> Iterator[str]:
    """Inside the ``with``, everything the lesson says (``xattn.words.say``) is in
    `lesson_language`; a fragment's rerun enters it again (a context variable does not
    outlive the run that set it)."""
    with speaking(lesson_language(lesson)) as lang:
        yield lang


def step_words(lesson: Lesson, step: Step, n: int) -> Step:
    """``step`` (room step ``n``, as the page shows it) with its texts in `lesson_language`."""
    return said_as(lesson, step, n, lesson_language(lesson))


def fallback_note(lesson: Lesson) -> str | None:
    """One line when the lesson has no texts in the page's language (its own are shown),
    else None."""
    lang, words = page_lang(), lesson_language(lesson)
    if words == lang:
        return None
    return _("This lesson has no texts in this page's language ({language}): it is shown in "
             "its own ({own}).",
             language=NAMES.get(lang, lang), own=NAMES.get(words, words))


def step_titles(lesson: Lesson) -> list[str]:
    """Every step's title in `lesson_language` (the step picker), the checks' included."""
    lang = lesson_language(lesson)
    return [step_in(lesson, k, lang).title for k in range(1, len(lesson.steps) + 1)]


def option_labels(lesson: Lesson, n: int, told: Told | None) -> list[str] | None:
    """The options of ``told``'s choice or poll question (step ``n``) as a phone in
    `lesson_language` reads them: a lesson's own options in that language
    (``labels_in``), a computed choice's as its ``Told`` says them (*les 2 premiers : the
    black*, *tête 2*), or its values said from the catalog (*Il baisse*); None when they
    read as their values. Inside `lesson_words`: the values sent stay the question's."""
    q = told.question if told is not None else None
    if q is None or q.kind not in ("choice", "poll"):
        return None
    shown = labels_in(lesson, n, lesson_language(lesson))
    if shown is None and told.shown:
        shown = [label_text(s) for s in told.shown]
    if shown is None:
        shown = [say(c) for c in q.choices]
    return None if list(shown) == list(q.choices) else list(shown)
