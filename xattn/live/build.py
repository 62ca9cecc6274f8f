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

__all__ = ["build", "earlier", "messages_by_language", "MAX_WARMED"]

_LOGGER = logging.getLogger(__name__)
_lock = threading.Lock()
_warmed: set[str] = set()       # lessons (digests) whose steps this process made ahead
MAX_WARMED = 32                 # ... at most: later lessons' steps are made when shown


def build(view: RoomView, languages: tuple[str, ...] = ("en",)) -> dict[str, Message]:
    """A room's messages (``xattn.live.messages``; imported on first use: the lesson), one
    per language of ``languages`` (those the room's phones read), for the lesson the room
    keeps in the store (read once per process), with the round before where a revote's
    phones see it while they vote (`earlier`). One build per language the lesson speaks
    (``xattn.lesson.translated.words_in``): a phone in a language the lesson lacks gets the
    lesson's own language's message, built once for all of them. A homework's is the
    room's own, the same in every language (``xattn.live.homework``). The first room of a
    lesson a process sees also starts making that lesson's other steps, in the
    background."""
    from xattn.live import homework, messages

    lesson = room_lesson(class_store(), view.code)
    with _lock:
        new = lesson.digest not in _warmed and len(_warmed) < MAX_WARMED
        if new:
            _warmed.add(lesson.digest)
    if new:
        threading.Thread(target=_warm, args=(messages, lesson), daemon=True,
                         name="xattn-warm").start()
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


def _warm(messages, lesson) -> None:
    try:
        messages.warm(lesson)
    except Exception:  # noqa: BLE001 - a step that cannot be made says so when it is shown
        _LOGGER.exception("xattn: the lesson's steps could not be made ahead of the class")
