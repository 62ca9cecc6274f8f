"""What a room's stream carries: the `Message` a room's move builds (one for every phone,
and each phone's own part), a `Follower` (one open stream: its queue of frames), the hub's
record of a room it serves (`HubRoom`), and the frames and JSON of server-sent events."""

from __future__ import annotations

import asyncio
import json
import logging
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field

from xattn.classroom.outbox import Receipt
from xattn.classroom.question import Question
from xattn.classroom.records import Pulse, Snapshot

_LOGGER = logging.getLogger("xattn.classroom.hub")   # the hub's log

__all__ = ["Message", "Follower", "HubRoom", "frame", "frame_id", "personal_json", "receipt_json",
           "plain"]


@dataclass(frozen=True)
class Message:
    """What a room's phones are sent for one state of the room.

    ``room`` is the room's part as JSON (bytes), the same for every phone; ``personal(text)``
    gives a phone's own part from its stored answer's text (None: no answer): at least
    ``{"mine": ...}``, and after the reveal its ``verdict``. ``key`` names the state (a
    phone that drew it needs no other); ``step``, ``round`` and ``question`` say which
    question the answers are to; ``confidence``, whether the room asks how sure each answer
    is (a phone's own part then says its ``level`` too). A ``homework``'s message is the
    room's, not a step's: each phone asks for its own step, and its own part carries the
    receipt of its last answer whatever its step. ``language``: the language its words are
    in (a room's phones in several languages get one message per language in use: the
    same key, numbers and tokens, the words of each). ``ahead(text)``, where a step asks:
    makes now what its reveal will tell the answer ``text`` (its verdict), called in the
    hub's threads as its phones' answers are saved, so that the reveal finds it made."""

    key: tuple
    room: bytes
    step: int
    round: int
    question: Question | None = None
    personal: Callable[[str | None], dict] = lambda text: {"mine": None}
    confidence: bool = False
    homework: bool = False
    language: str = "en"
    ahead: Callable[[str | None], object] | None = None


class Follower:
    """One open stream of one room: a phone (``student``: its id, or None without one) or a
    host page (``host``; ``taught``: the digest of the host key its cookie holds, checked
    when it opened, None without one: only such a stream keeps its room taught); ``lang``,
    the language of the phone's page (its room messages are in it); ``had``, the id of the
    room's frame the phone drew last (an ``EventSource``'s ``Last-Event-ID``, or the stream
    it had before it joined): a room frame it has is not sent again, only its own part.
    Frames wait in `take` order, the newest of each kind only."""

    __slots__ = ("code", "student", "host", "taught", "wake", "_frames", "closed", "drawn",
                 "lang", "had")

    def __init__(self, code: str, student: str | None, host: bool, taught: str | None = None,
                 lang: str = "en", had: str | None = None):
        self.code, self.student, self.host, self.lang = code, student, host, lang
        self.had = had          # the id of the room's frame the phone has (`frame_id`)
        self.taught = taught if host else None
        self.wake = asyncio.Event()
        self._frames: dict[str, bytes] = {}
        self.closed = False
        self.drawn: tuple | None = None       # the message key last given to this phone

    def push(self, kind: str, frame: bytes) -> None:
        if kind == "room":
            self._frames.pop("me", None)      # the room's frame carries the phone's own part
        self._frames[kind] = frame
        self.wake.set()

    def take(self) -> bytes:
        """Every frame waiting, in order (status, room, me, comment), and none left."""
        frames, self._frames = self._frames, {}
        self.wake.clear()
        return b"".join(frames[k] for k in ("status", "gone", "room", "me", "pulse", "ping")
                        if k in frames)

    def close(self) -> None:
        self.closed = True
        self.wake.set()

    def __repr__(self) -> str:
        who = "host" if self.host else f"phone {self.student or '(no id)'}"
        return f"Follower({self.code}, {who})"


@dataclass
class HubRoom:
    code: str
    followers: set = field(default_factory=set)
    pulse: Pulse | None = None           # as last read
    built: tuple | None = None           # (version, closed) of the message last built
    message: Message | None = None      # in the first language in use (key, step, round)
    messages: dict = field(default_factory=dict)  # language -> its message of this state
    answers: dict = field(default_factory=dict)   # student -> stored text, this round
    levels: dict = field(default_factory=dict)    # student -> confidence, this round
    building: bool = False
    joined: set = field(default_factory=set)      # students to mark present on the next look
    host_sent: float = 0.0
    host_due: bool = False
    gone: Exception | None = None        # why the room is gone: its RoomNotFound
    memo: dict = field(default_factory=dict)   # (key, language, text) -> personal JSON
    ids: dict = field(default_factory=dict)    # id(message.room) -> its `frame_id`
    ahead: set = field(default_factory=set)    # (language, text) whose verdict is made ahead
    # What this process keeps of the room, to give back to a store that restarted empty:
    # the store's snapshot at the last move, and every answer saved here since it was read
    snapshot: Snapshot | None = None
    saved: dict = field(default_factory=dict)     # (step, round) -> student -> stored text
    saved_levels: dict = field(default_factory=dict)   # ... -> student -> confidence
    restoring: bool = False


def frame(payload: bytes, event: str | None = None, id_: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    if id_ is not None:                 # the browser sends it back when it reconnects
        head += f"id: {id_}\n".encode()
    return head + b"data: " + payload + b"\n\n"


def frame_id(room: bytes) -> str:
    """The id of a room's frame whose room part is ``room`` (its CRC-32 in hex): the same
    bytes, the same id; a phone that reports it has this id needs no such frame again."""
    return format(zlib.crc32(room), "08x")


def personal_json(message: Message, text: str | None) -> bytes:
    """A phone's own part of ``message`` for its stored answer ``text``, as JSON."""
    try:
        return json.dumps(message.personal(text), separators=(",", ":"),
                          ensure_ascii=False).encode()
    except Exception:  # noqa: BLE001 - a verdict that cannot be made: the answer alone
        _LOGGER.exception("xattn hub: a phone's own part could not be made")
        return b'{"mine":null}'


def receipt_json(r: Receipt) -> bytes:
    data = {"step": r.step, "round": r.round, "value": plain(r.value), "state": r.state,
            "why": r.why, "confidence": r.confidence}
    if r.said is not None:              # the phone says it in its language (said.py)
        data["say"] = r.said.json()
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()


def plain(value):
    """An answer as JSON takes it (tuples as lists)."""
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    return value
