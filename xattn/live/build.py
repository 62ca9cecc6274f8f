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
from xattn.live.catalog import room_lesson
from xattn.live.stores import class_store

__all__ = ["build", "earlier", "MAX_WARMED"]

_LOGGER = logging.getLogger(__name__)
_lock = threading.Lock()
_warmed: set[str] = set()       # lessons (digests) whose steps this process made ahead
MAX_WARMED = 32                 # ... at most: later lessons' steps are made when shown


def build(view: RoomView) -> Message:
    """A room's message (``xattn.live.messages``; imported on first use: the lesson),
    for the lesson the room keeps in the store (read once per process), with the round
    before where a revote's phones see it while they vote (`earlier`); a homework's is the
    room's own (``xattn.live.homework``). The first room of a
    lesson a process sees also starts making that lesson's other steps, in the background."""
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
        return homework.homework_room(view, lesson)
    return messages.room_message(view, lesson, earlier(class_store(), view))


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
