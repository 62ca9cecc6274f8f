"""A host's presses on its room: each runs only if the class is still as the page drew it
(`host_action`), and moving to a step with no question reveals it at once (`open_step`)."""

from __future__ import annotations

import streamlit as st

from xattn.classroom import (
    NO_QUESTION,
    ClassroomError,
)
from xattn.live.stores import class_store
from xattn.ui.i18n import N_
from xattn.ui.room.room import Room
from xattn.ui.room.session import HOST_ERROR

__all__ = ["move_class", "open_step", "host_action", "STALE"]


def move_class(room: Room, step: int, seen: int | None) -> None:
    """A host's page moves the class to ``step`` (a callback: the run that follows draws
    it), if the class is still as the page drew it (``seen``: its version then)."""
    host_action(lambda store: open_step(store, room, step), room, seen)


def open_step(store, room: Room, step: int) -> None:
    """Move the class to ``step``; a step the class only reads (no question) is revealed at
    once, so its weights reach the phones with no *Reveal*, no timer and no round of
    answers to count (issue 44)."""
    store.set_step(room.code, room.host, step)
    if not room.homework and store.room_view(room.code).question == NO_QUESTION:
        store.reveal(room.code, room.host, step)


STALE = N_("The class had moved since this page drew it (another of your devices, or a "
           "timer): your press was not applied. The page now shows the class as it is; press "
           "again if you still mean it.")


def host_action(action, room: Room, seen: int | None) -> bool:
    """Run a host's ``action(store)`` if room ``room`` is still at version ``seen`` (the one
    the page showed when it was pressed); whether it ran. What the store refuses, and a
    press on a class that had moved meanwhile, is said on the next run.

    A press carries the version its page drew, so a press made on an out-of-date screen
    never moves the class: a lecturer's second device that had not drawn the last move yet,
    or a page whose step picker still shows the step before when its run that drew the move
    was cut short (the picker's stale value then reaches the server as a change)."""
    try:
        store = class_store()
        if seen is not None and store.room_view(room.code).version != seen:
            st.session_state[HOST_ERROR] = STALE
            return False
        action(store)
        return True
    except (ClassroomError, ValueError) as err:   # ValueError: a bound (days, a step)
        st.session_state[HOST_ERROR] = str(err)
        return False
