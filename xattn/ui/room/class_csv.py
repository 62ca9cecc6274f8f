"""The class's answers as CSV on the host's page (*The class's answers (CSV)*, in the class
panel, a homework's panel and *End the class*): made when the button is clicked, never on
every run of the class panel, which reruns at each answer's tally."""

from __future__ import annotations

from xattn.classroom import ClassroomError, answers_csv
from xattn.ui.room.misconceptions import csv_misconceptions
from xattn.ui.room.room import Room, class_store

__all__ = ["class_csv", "class_csv_on_click"]


def class_csv_on_click(room: Room):
    """The CSV's download data: made when the button is clicked (a deferred download,
    ``xattn/ui/internals/deferred_downloads.py``), never on every run of the class panel,
    which reruns at each answer's tally (every round's counts and confidences read)."""
    return lambda: class_csv(room)


def class_csv(room: Room) -> str:
    """The class's answers as CSV ("" while the store does not answer)."""
    try:
        store = class_store()
        tallies = store.results(room.code, room.host)
        moves = {(t.step, t.round): store.changes(room.code, room.host, t.step, t.round - 1,
                                                  t.round)
                 for t in tallies if t.round > 1}
        sure = store.confidences(room.code, room.host)
    except ClassroomError:
        return ""
    return answers_csv(tallies, moves=moves, confidence=sure,
                       misconceptions=csv_misconceptions(room.lesson, tallies))
