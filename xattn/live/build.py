"""The hub's build: what the phones of a room are sent when it moves (``xattn.classroom.hub``
calls `build` in its threads with each room's new `RoomView`).

A room's lesson is the one it keeps in the class store (``xattn.live.catalog``); a class's
message is ``xattn.live.messages``'s, a homework's ``xattn.live.homework``'s. The first room of
a lesson a process sees also starts making that lesson's other steps, in the background.
"""

from __future__ import annotations

import logging
import threading

from xattn.classroom import RoomView
from xattn.classroom.hub import Message
from xattn.lesson.translated import words_in
from xattn.live.catalog import room_lesson
from xattn.live.stores import class_store

__all__ = ["build", "earlier", "messages_by_language", "warm_ahead", "MAX_WARMED"]

_LOGGER = logging.getLogger(__name__)
_lock = threading.Lock()
_warmed: set[str] = set()       # lessons (digests) whose steps this process made ahead
_spoken: dict[str, set] = {}    # ... and in which languages (those its rooms' phones read)
MAX_WARMED = 32                 # ... at most: later lessons' steps are made when shown


def build(view: RoomView, languages: tuple[str, ...] = ("en",)) -> dict[str, Message]:
    """A room's messages (``xattn.live.messages``; imported on first use: the lesson), one
    per language of ``languages`` (those the room's phones read), for the lesson the room
    keeps in the store (read once per process), with the round before where a revote's
    phones see it while they vote (`earlier`). One build per language the lesson speaks
    (``xattn.lesson.translated.words_in``): a phone in a language the lesson lacks gets the
    lesson's own language's message, built once for all of them. A homework's is the
    room's own, the same in every language (``xattn.live.homework``). The first room of a
    lesson a process sees also starts making that lesson's other steps in the background,
    in its own language and each language its phones read (`warm_ahead`)."""
    from xattn.live import homework, messages

    lesson = room_lesson(class_store(), view.code)
    warm_ahead(messages, lesson, languages)
    if view.homework:                        # each phone asks for its own step
        made = homework.homework_room(view, lesson)
        return dict.fromkeys(languages, made)
    return messages_by_language(view, lesson, earlier(class_store(), view), languages)


def messages_by_language(view: RoomView, lesson, before, languages) -> dict[str, Message]:
    """``view``'s message for each of ``languages``: one ``room_message`` per language the
    lesson speaks among them (a language it lacks shares its own language's)."""
    from xattn.live import messages

    words = {lang: words_in(lesson, lang) for lang in languages}
    built = {said: messages.room_message(view, lesson, before, said)
             for said in dict.fromkeys(words.values())}
    return {lang: built[words[lang]] for lang in languages}


def earlier(store, view: RoomView):
    """The round before ``view``'s (its question and counts: `ClassStore.tally`) when the
    room shows it to a revote's phones before the reveal (the host's switch), else None."""
    if not view.histogram_before or view.round < 2 or view.phase == "revealed":
        return None
    return store.tally(view.code, view.step, view.round - 1)


def warm_ahead(messages, lesson, languages=()) -> threading.Thread | None:
    """Make every step of ``lesson`` ahead, in a background thread, in the languages of
    ``languages`` (and the lesson's own) this process has not made it in yet: a step's
    words are told once per language (``xattn.live.answers.class_step``), up to 30 ms a
    step and language, which a move to that step would otherwise pay for each language
    beside its phones (steps 9 to 13 of the default lesson: 0.1 to 0.2 s a Next in six
    languages). At most `MAX_WARMED` lessons; the thread, or None when nothing is new."""
    said = {words_in(lesson, lang) for lang in (lesson.language, *languages)}
    with _lock:
        if lesson.digest not in _warmed:
            if len(_warmed) >= MAX_WARMED:
                return None
            _warmed.add(lesson.digest)
            _spoken[lesson.digest] = set()
        known = _spoken.get(lesson.digest)
        if known is None:                     # (a lesson marked made by hand: left alone)
            return None
        todo = sorted(said - known)
        known.update(todo)
    if not todo:
        return None
    thread = threading.Thread(target=_warm, args=(messages, lesson, todo), daemon=True,
                              name="xattn-warm")
    thread.start()
    return thread


def _warm(messages, lesson, languages) -> None:
    for lang in languages:
        try:
            messages.warm(lesson, lang)
        except Exception:  # noqa: BLE001 - a step that cannot be made says so when shown
            _LOGGER.exception("xattn: the lesson's steps could not be made ahead of the class")
