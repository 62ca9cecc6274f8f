"""The Redis class store's shared readings of a room's hash: a timer from its field, and the
(step, round) pairs a room holds."""

from __future__ import annotations

from xattn.classroom.records import Timer

__all__ = ["timer_of", "rounds_of"]


def timer_of(text: str | None) -> Timer | None:
    if not text:
        return None
    seconds, ends, reveal = text.split("|")
    return Timer(float(seconds), int(ends) / 1000, reveal == "1")


def rounds_of(room: dict) -> list[tuple[int, int]]:
    """Every (step, round) a room's hash has asked, in order."""
    return [(s, r) for s in range(1, int(room["n_steps"]) + 1)
            for r in range(1, int(room[f"r{s}"]) + 1)]
