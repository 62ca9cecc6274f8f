"""What a class store refuses, one exception per reason, all under `ClassroomError`.

A page catches `ClassroomError` and shows its message (text to be shown literally: it may
quote what a user typed). None of them says whether a room exists when a host link is wrong.
"""

from __future__ import annotations

from xattn.classroom.said import said

__all__ = ["ClassroomError", "RoomNotFound", "RoomEnded", "HostRefused", "DeviceCodeRefused",
           "AnswerRefused", "LimitReached", "StoreUnavailable"]


class ClassroomError(Exception):
    """Anything a class store refuses or cannot do. ``said``: what a phone is told, as a
    message of its catalog (`xattn.classroom.said`), where a phone may be told it."""

    said = None

    def saying(self, message) -> ClassroomError:
        """This error, carrying ``message`` (a `said.Said`) for a phone."""
        self.said = message
        return self


class RoomNotFound(ClassroomError, LookupError):
    """No live room has this code: never made, mistyped, or expired (and deleted)."""

    @classmethod
    def for_code(cls, code: str) -> RoomNotFound:
        return cls(f"No class is running with the code {code}: check the code, or ask for the "
                   "link again (a class ends some hours after it starts).").saying(
            said("why.no.class", code=code))


class RoomEnded(RoomNotFound):
    """Its lecturer ended this class (`ClassStore.end_room`), or a full store replaced it
    when nobody taught in it (``Limits.untaught_seconds``): nothing of it is kept, and no
    server process gives it back."""

    @classmethod
    def for_code(cls, code: str) -> RoomEnded:
        return cls(f"The class {code} has ended: its lecturer closed it (or, with this server "
                   "full, nobody taught in it and a new class took its place), and nothing of "
                   "it is kept.").saying(said("why.ended", code=code))


class HostRefused(ClassroomError):
    """This host secret does not drive a live room. The same message for an unknown room, an
    expired one and a wrong secret, so a guesser learns nothing."""

    MESSAGE = ("This host link does not open a live class. Use the newest host link of your "
               "class (after a new host link, the old one stops working), or start a new class.")

    def __init__(self):
        super().__init__(self.MESSAGE)


class DeviceCodeRefused(HostRefused):
    """This device code opens no class: never made, used once already, expired, or made
    before a new host key (the same words for each)."""

    MESSAGE = ("This device code does not open a class: a device code works once, for a few "
               "minutes. On the device that drives your class, open *Your devices* and make a "
               "new one.")


class AnswerRefused(ClassroomError, ValueError):
    """An answer the room does not take: outside the step's choices, for a step the class is
    not on, or after the reveal."""


class LimitReached(ClassroomError, ValueError):
    """A bound of `Limits` is reached; the message names it."""


class StoreUnavailable(ClassroomError, OSError):
    """The backend cannot be reached or used (Redis down, SQLite file locked or unwritable)."""
