"""xattn.live.build: a lesson's steps made ahead, in the background, in each language its
rooms' phones read (once per lesson and language per process), so that a move to a step pays
for a message, not for the step told again in each language."""

from __future__ import annotations

import threading

import pytest

from xattn.lesson import read_lesson, shipped_lessons
from xattn.live import build as build_module
from xattn.live.answers import class_step
from xattn.live.compute import caches


class Warmer:
    """Stands for ``xattn.live.messages`` (its ``warm``), recording what it is asked."""

    def __init__(self):
        self.asked, self.lock = [], threading.Lock()

    def warm(self, lesson, language=None):
        with self.lock:
            self.asked.append((lesson.title, language))


@pytest.fixture
def fresh(monkeypatch):
    """No lesson made ahead in this process yet."""
    monkeypatch.setattr(build_module, "_warmed", set())
    monkeypatch.setattr(build_module, "_spoken", {})


def _asked(warmer, thread) -> list:
    if thread is not None:
        thread.join(30)
    return sorted(warmer.asked)


def test_each_language_in_use_is_made_ahead_once(fresh):
    lesson, warmer = shipped_lessons()["short"], Warmer()
    thread = build_module.warm_ahead(warmer, lesson, ("fr", "ar", "fr"))
    assert _asked(warmer, thread) == sorted((lesson.title, lang) for lang in ("ar", "en", "fr"))
    assert build_module.warm_ahead(warmer, lesson, ("ar", "en")) is None   # nothing new
    thread = build_module.warm_ahead(warmer, lesson, ("ar", "de"))        # a phone in German
    assert _asked(warmer, thread)[-3:] == [(lesson.title, "de"), (lesson.title, "en"),
                                           (lesson.title, "fr")]
    assert len(warmer.asked) == 4


def test_a_language_the_lesson_lacks_is_its_own_languages_and_not_made_twice(fresh):
    lesson = read_lesson("title = 'Only English'\nlanguage = 'en'\n\n[[step]]\n"
                         "title = 'One head'\ntext = 'Look.'\n", "only")
    warmer = Warmer()
    thread = build_module.warm_ahead(warmer, lesson, ("fr", "zh"))
    assert _asked(warmer, thread) == [("Only English", "en")]


def test_past_the_bound_a_lesson_is_made_when_shown(fresh, monkeypatch):
    monkeypatch.setattr(build_module, "MAX_WARMED", 1)
    lessons, warmer = list(shipped_lessons().values()), Warmer()
    assert build_module.warm_ahead(warmer, lessons[0], ("fr",)) is not None
    assert build_module.warm_ahead(warmer, lessons[1], ("fr",)) is None


def test_a_step_made_ahead_in_french_is_told_in_french_from_the_cache(fresh):
    """After the lesson is made ahead for a French phone, telling any step in French reads
    the cache (no step told again on the move's path)."""
    from xattn.live import messages

    lesson = shipped_lessons()["short"]
    build_module.warm_ahead(messages, lesson, ("fr",)).join(120)
    derived = caches()["derived"]
    misses = derived.misses
    for n in range(1, len(lesson.steps) + 1):
        class_step(lesson, n, language="fr")
    assert derived.misses == misses
