"""A room's live messages in one server process: one message per room per move of the
lecturer, sent to every phone of the room, and each phone's own receipts.

A phone in a class keeps one stream open (server-sent events, ``xattn/ui/server``). The `Hub`
of its server process holds that stream as a `Follower` of its room. One watcher thread reads
the pulse of every room that has followers (``ClassStore.pulse``: one read for all of them;
with Redis only the rooms its pub/sub names, ``ClassStore.notifications``); when a room's
version moves, or its timer runs out, the hub reads the room once, builds its message once
(``build``, given by the page: the step's words, question, answer and charts) and hands the
same bytes to every follower. What differs per phone is small and made from a table: the
phone's own answer as the store has it and, after the reveal, its verdict (one per distinct
answer, not per phone). A follower keeps only the newest frame of each kind, so a slow phone
never makes the server queue moves it no longer needs; a phone that reconnects gets the room
as it is now.

Answers go through the process's `Outbox`: `Hub.answer` puts one in and waits up to
``ANSWER_WAIT`` seconds for the store; every later change of its receipt (saved once the
store is back, or refused) reaches the student's open streams as an ``me`` event.

Host pages follow the room too (the lecturer's laptop and projector): they get a small
``pulse`` frame whenever the room moves or someone answers or joins, at most every
``HOST_EVERY`` seconds, and rerun themselves (``xattn/ui/room/follow.py``).

The asyncio side (`subscribe`, `unsubscribe`, `answer`, `Follower.take`) runs on the server's
event loop; store reads and builds run in the hub's threads, never on the loop.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from xattn.classroom.errors import ClassroomError, RoomEnded, RoomNotFound, StoreUnavailable
from xattn.classroom.outbox import Outbox, Receipt
from xattn.classroom.question import Question
from xattn.classroom.records import Pulse, RoomView, Snapshot
from xattn.classroom.store import ClassStore, parse_question

__all__ = ["Hub", "Follower", "Message", "TICK", "KEEPALIVE", "ANSWER_WAIT", "MAX_FOLLOWERS",
           "HOST_MARK"]

_LOGGER = logging.getLogger(__name__)
TICK = 0.1            # seconds between two reads of the rooms' pulses (without notifications)
SAFETY = 3.0          # with notifications, every room's pulse is read this often all the same
KEEPALIVE = 15.0      # seconds of silence before a stream gets a comment (proxies cut silence)
PRESENT = 30.0        # seconds between two marks of a room's open phones as present
HOST_MARK = 15.0      # seconds between two marks of the rooms whose host page is open here
                      # (at most a quarter of Limits.untaught_seconds: a taught room is never
                      # replaced)
RECEIPT_KEEP = 600.0  # seconds a receipt of a room without a phone here is kept
HOST_EVERY = 0.25     # seconds between two pulse frames of one room to its host pages
ANSWER_WAIT = 1.0     # seconds an answer's request waits for the store before "sending"
MAX_FOLLOWERS = 4000  # open streams per process (a bound: a lecture hall's phones fit twice)
BUILDERS = 2          # threads that read rooms and build their messages
KNOWN_FOR = 12 * 3600.0   # seconds a room found live here is known (a class's length)
MAX_KNOWN = 10_000    # rooms known (a bound: a server holds at most a few hundred)


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
    receipt of its last answer whatever its step."""

    key: tuple
    room: bytes
    step: int
    round: int
    question: Question | None = None
    personal: Callable[[str | None], dict] = lambda text: {"mine": None}
    confidence: bool = False
    homework: bool = False


class Follower:
    """One open stream of one room: a phone (``student``: its id, or None without one) or a
    host page (``host``; ``taught``: the digest of the host key its cookie holds, checked
    when it opened, None without one: only such a stream keeps its room taught). Frames
    wait in `take` order, the newest of each kind only."""

    __slots__ = ("code", "student", "host", "taught", "wake", "_frames", "closed", "drawn")

    def __init__(self, code: str, student: str | None, host: bool, taught: str | None = None):
        self.code, self.student, self.host = code, student, host
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
class _Room:
    code: str
    followers: set = field(default_factory=set)
    pulse: Pulse | None = None           # as last read
    built: tuple | None = None           # (version, closed) of the message last built
    message: Message | None = None
    answers: dict = field(default_factory=dict)   # student -> stored text, this round
    levels: dict = field(default_factory=dict)    # student -> confidence, this round
    building: bool = False
    joined: set = field(default_factory=set)      # students to mark present on the next look
    host_sent: float = 0.0
    host_due: bool = False
    gone: str | None = None
    memo: dict = field(default_factory=dict)      # (message key, text) -> personal JSON
    # What this process keeps of the room, to give back to a store that restarted empty:
    # the store's snapshot at the last move, and every answer saved here since it was read
    snapshot: Snapshot | None = None
    saved: dict = field(default_factory=dict)     # (step, round) -> student -> stored text
    saved_levels: dict = field(default_factory=dict)   # ... -> student -> confidence
    restoring: bool = False


def _frame(payload: bytes, event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + payload + b"\n\n"


class Hub:
    """The live rooms of one server process (see the module's docstring).

    Parameters
    ----------
    store : ClassStore
    build : callable (RoomView) -> Message
        The room's message for a view of it (called in the hub's threads).
    clock : callable, optional
        Seconds since the epoch (the store's clock): when a timer runs out.
    """

    def __init__(self, store: ClassStore, build: Callable[[RoomView], Message], *,
                 clock: Callable[[], float] = time.time, tick: float = TICK):
        self.store, self.build, self._clock, self.tick = store, build, clock, tick
        self.outbox = Outbox(store, on_change=self._receipt_changed,
                             recoverable=self._restorable)
        self._rooms: dict[str, _Room] = {}
        self._lock = threading.Lock()             # the rooms and their followers' sets
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._poke = threading.Event()
        self._moved: set[str] = set()             # named by the store's notifications
        self._all_moved = True
        self._notify_stop: Callable[[], None] | None = None
        self._threads: list[threading.Thread] = []
        self._builders = ThreadPoolExecutor(BUILDERS, thread_name_prefix="xattn-hub-build")
        self._waiting: dict[tuple[str, str], list[asyncio.Future]] = {}
        self.problem: str | None = None           # what the store said on the last read
        self._known: dict[str, float] = {}        # code -> when a read last found it live
        self.n_followers = 0
        self.stopping = False                # `close_streams`: no new stream from now on

    def __repr__(self) -> str:
        return f"Hub({self.store!r}, {len(self._rooms)} rooms, {self.n_followers} streams)"

    # --- the event loop's side -------------------------------------------------------------
    def start(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Start the watcher (once) on ``loop`` (default: the running one)."""
        if self._threads:
            return
        self._loop = loop or asyncio.get_running_loop()
        self.outbox.start()
        self._notify_stop = self.store.notifications(self._notified)
        watcher = threading.Thread(target=self._watch_loop, daemon=True, name="xattn-hub")
        self._threads.append(watcher)
        watcher.start()

    def stop(self) -> None:
        self._stop.set()
        self._poke.set()
        if self._notify_stop is not None:
            self._notify_stop()
        for t in self._threads:
            t.join(5)
        self.outbox.stop()
        self._builders.shutdown(wait=False, cancel_futures=True)

    def close_streams(self) -> None:
        """End every open stream (call on the loop), as the process is asked to stop: a
        server waits for its open responses before it stops, and a stream never ends by
        itself. Each phone's and page's ``EventSource`` opens its stream again by itself, on
        another process behind HAProxy or on this one once it is back."""
        self.stopping = True
        with self._lock:
            followers = [f for room in self._rooms.values() for f in room.followers]
        for f in followers:
            f.close()

    def subscribe(self, code: str, student: str | None, *, host: bool = False,
                  taught: str | None = None) -> Follower:
        """A new stream of room ``code`` (call on the loop); its first frame is the room as
        this process last built it, if it did, and follows once the room is read. A host
        page's stream (``host``) whose cookie holds a key that drives the room gives its
        digest (``taught``): the room is marked taught while it is open (`mark_hosts`),
        every ``HOST_MARK`` seconds (at most a quarter of ``Limits.untaught_seconds``); a
        stream without it never keeps the room.
        `OverflowError` when the process holds ``MAX_FOLLOWERS`` streams."""
        if self.stopping:
            raise OverflowError("this server process is stopping; another process, or this "
                                "one once it is back, takes the stream.")
        if self.n_followers >= MAX_FOLLOWERS:
            raise OverflowError(f"this server process holds {MAX_FOLLOWERS} open streams, the "
                                "most it takes; another process or a moment later will do.")
        f = Follower(code, student, host, taught)
        with self._lock:
            room = self._rooms.setdefault(code, _Room(code))
            room.followers.add(f)
            if student is not None and not host:
                room.joined.add(student)
            self.n_followers += 1
        if room.gone is not None:
            f.push("gone", self._gone_frame(room.gone))
        elif host and room.pulse is not None:
            f.push("pulse", self._pulse_frame(room.pulse))
        elif not host and room.message is not None:
            f.push("room", self._room_frame(room, f))
            if student is not None:           # what the store has of this phone's answer
                self._builders.submit(self._read_mine, code, f)
        if self.problem:
            f.push("status", self._status_frame())
        self._poke.set()
        return f

    def unsubscribe(self, f: Follower) -> None:
        with self._lock:
            room = self._rooms.get(f.code)
            if room is not None and f in room.followers:
                room.followers.discard(f)
                self.n_followers -= 1
                if not room.followers:
                    del self._rooms[f.code]
        f.closed = True

    async def answer(self, code: str, student: str, step: int, round_: int, value,
                     confidence: str | None = None) -> Receipt:
        """Send ``student``'s answer and its ``confidence`` (to the outbox) and its receipt
        once the store took it or refused it, or after ``ANSWER_WAIT`` seconds as it then is
        ("sending", "retrying")."""
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiting.setdefault((code, student), []).append(waiter)
        try:
            receipt = self.outbox.send("", code, step, round_, student, value, confidence)
            if receipt.final:
                return receipt
            try:
                return await asyncio.wait_for(asyncio.shield(waiter), ANSWER_WAIT)
            except TimeoutError:
                return self.outbox.receipt(code, student) or receipt
        finally:
            waiting = self._waiting.get((code, student), [])
            if waiter in waiting:
                waiting.remove(waiter)
            if not waiting:
                self._waiting.pop((code, student), None)

    def knows(self, code: str) -> bool:
        """Whether this process found room ``code`` live in the last ``KNOWN_FOR`` seconds
        (a store that restarted empty may not have it back yet: not a guess)."""
        seen = self._known.get(code)
        return seen is not None and time.monotonic() - seen <= KNOWN_FOR

    def _saw(self, codes) -> None:
        now = time.monotonic()
        for code in codes:
            self._known[code] = now
        if len(self._known) > MAX_KNOWN:
            for code, _ in sorted(self._known.items(), key=lambda kv: kv[1])[:MAX_KNOWN // 4]:
                self._known.pop(code, None)

    def keepalive(self) -> None:
        """A comment on every stream (call on the loop every ``KEEPALIVE`` seconds)."""
        with self._lock:
            followers = [f for room in self._rooms.values() for f in room.followers]
        for f in followers:
            f.push("ping", b": still here\n\n")

    # --- frames ------------------------------------------------------------------------------
    def _personal(self, room: _Room, student: str | None) -> bytes:
        text = room.answers.get(student) if student is not None else None
        key = (room.message.key, text)
        made = room.memo.get(key)
        if made is None:                 # an answer the build did not see: made here, once
            made = _personal_json(room.message, text)
            if len(room.memo) > 4096:
                room.memo.clear()
            room.memo[key] = made
        if room.message.confidence and student is not None:     # how sure, as stored
            made = made[:-1] + b',"level":' + json.dumps(room.levels.get(student)).encode() \
                + b"}"
        receipt = self.outbox.receipt(room.code, student) if student else None
        if receipt is not None and (room.message.homework or (
                room.message.step, room.message.round) == (receipt.step, receipt.round)):
            made = made[:-1] + b',"receipt":' + _receipt_json(receipt) + b"}"
        return made

    def _room_frame(self, room: _Room, f: Follower) -> bytes:
        f.drawn = room.message.key
        return _frame(b'{"now":' + f"{self._clock():.3f}".encode() + b',"room":'
                      + room.message.room + b',"me":' + self._personal(room, f.student) + b"}")

    def _me_frame(self, room: _Room, f: Follower) -> bytes:
        return _frame(b'{"now":' + f"{self._clock():.3f}".encode() + b',"me":'
                      + self._personal(room, f.student) + b"}", "me")

    @staticmethod
    def _pulse_frame(p: Pulse) -> bytes:
        return _frame(json.dumps({"version": p.version, "tally": p.tally,
                                  "ends_at": p.ends_at}).encode(), "pulse")

    def _status_frame(self) -> bytes:
        return _frame(json.dumps({"problem": self.problem}).encode(), "status")

    @staticmethod
    def _gone_frame(why: str) -> bytes:
        return _frame(json.dumps({"gone": why}, ensure_ascii=False).encode(), "gone")

    # --- from the threads to the loop ----------------------------------------------------------
    def _call(self, fn, *args) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(fn, *args)
            except RuntimeError:          # the loop closed meanwhile (the server stops)
                pass

    def _publish(self, code: str, message: Message, answers: dict, personal: dict,
                 levels: dict) -> None:
        room = self._rooms.get(code)
        if room is None:
            return
        # answers saved here since the snapshot the build read first: newer than its read
        key = (message.step, message.round)
        saved = room.saved.get(key, {})
        answers.update(saved)
        for student in saved:                      # with the confidence saved, or none
            levels.pop(student, None)
        levels.update(room.saved_levels.get(key, {}))
        room.message, room.answers, room.levels = message, answers, levels
        room.memo = {(message.key, text): made for text, made in personal.items()}
        for f in list(room.followers):
            if not f.host:
                f.push("room", self._room_frame(room, f))

    def _publish_pulse(self, code: str, pulse: Pulse) -> None:
        room = self._rooms.get(code)
        if room is None:
            return
        frame = self._pulse_frame(pulse)
        for f in list(room.followers):
            if f.host:
                f.push("pulse", frame)

    def _publish_gone(self, code: str, why: str) -> None:
        room = self._rooms.get(code)
        if room is None:
            return
        room.gone = why
        frame = self._gone_frame(why)
        for f in list(room.followers):
            f.push("gone", frame)
            f.close()

    def _publish_status(self) -> None:
        frame = self._status_frame()
        with self._lock:
            followers = [f for room in self._rooms.values() for f in room.followers]
        for f in followers:
            f.push("status", frame)

    def _mine(self, code: str, f: Follower, key: tuple, text: str | None,
              level: str | None) -> None:
        room = self._rooms.get(code)
        if room is None or room.message is None or room.message.key != key:
            return
        if f.student in room.saved.get((room.message.step, room.message.round), {}):
            return       # saved here since the snapshot: its phone was told; the read is older
        if text is None:
            room.answers.pop(f.student, None)
        else:
            room.answers[f.student] = text
        if level is None:
            room.levels.pop(f.student, None)
        else:
            room.levels[f.student] = level
        if not f.closed:
            f.push("me", self._me_frame(room, f))

    def _receipt_changed(self, code: str, student: str, receipt: Receipt) -> None:
        self._call(self._on_receipt, code, student, receipt)

    def _on_receipt(self, code: str, student: str, receipt: Receipt) -> None:
        # A call can come late (the outbox calls after its lock, and a worker may be slow to):
        # what is true now is the outbox's own receipt, never an older one passed here.
        receipt = self.outbox.receipt(code, student) or receipt
        if receipt.state != "sending":
            for waiter in self._waiting.get((code, student), []):
                if not waiter.done():
                    waiter.set_result(receipt)
        room = self._rooms.get(code)
        if room is None:
            return
        if receipt.state == "saved" and room.snapshot is not None:
            question = next((q.question for q in room.snapshot.rounds
                             if (q.step, q.round) == (receipt.step, receipt.round)), None)
            try:
                text = parse_question(question).encode(receipt.value) if question else None
            except Exception:  # noqa: BLE001 - a stored value always encodes; be safe
                text = None
            if text is not None:
                with self._lock:
                    key = (receipt.step, receipt.round)
                    room.saved.setdefault(key, {})[student] = text
                    levels = room.saved_levels.setdefault(key, {})
                    if receipt.confidence is None:
                        levels.pop(student, None)
                    else:
                        levels[student] = receipt.confidence
        if room.message is None:
            return
        message = room.message
        if receipt.state == "saved" and message.question is not None and (
                message.step, message.round) == (receipt.step, receipt.round):
            try:
                room.answers[student] = message.question.encode(receipt.value)
            except Exception:  # noqa: BLE001 - a stored value always encodes; be safe
                room.answers.pop(student, None)
            if receipt.confidence is None:
                room.levels.pop(student, None)
            else:
                room.levels[student] = receipt.confidence
        for f in list(room.followers):
            if f.student == student and not f.host:
                f.push("me", self._me_frame(room, f))

    def _notified(self, code: str | None) -> None:
        if code is None:
            self._all_moved = True
        else:
            self._moved.add(code)
        self._poke.set()

    # --- the watcher thread -----------------------------------------------------------------------
    def _watch_loop(self) -> None:
        last_safety = last_present = last_taught = 0.0
        while not self._stop.is_set():
            self._poke.wait(self.tick)
            self._poke.clear()
            now = time.monotonic()
            try:
                if now - last_taught >= min(HOST_MARK,
                                            self.store.limits.untaught_seconds / 4):
                    last_taught = now
                    self._mark_taught()
                if now - last_present >= PRESENT:
                    last_present = now
                    self._present(everyone=True)
                    with self._lock:
                        here = set(self._rooms)
                    self.outbox.drop(here, time.monotonic() - RECEIPT_KEEP)
                else:
                    self._present(everyone=False)
                safety = now - last_safety >= SAFETY
                if safety:
                    last_safety = now
                self.look(everything=safety or self._notify_stop is None)
            except Exception:  # noqa: BLE001 - the watcher outlives any one failure
                _LOGGER.exception("xattn hub: a look at the rooms failed")
            time.sleep(0.01)     # a burst of notifications becomes one read

    def look(self, everything: bool = True) -> None:
        """Read the rooms' pulses (all of them, or those notified and those whose timer ran
        out) and rebuild or notify where they moved. One step of the watcher."""
        with self._lock:
            rooms = dict(self._rooms)
        if everything or self._all_moved:
            self._all_moved = False
            self._moved.clear()
            codes = list(rooms)
        else:
            moved, self._moved = self._moved, set()
            now = self._clock()
            codes = [c for c, r in rooms.items() if c in moved or r.pulse is None or (
                r.pulse.ends_at is not None and r.built is not None and not r.built[1]
                and now >= r.pulse.ends_at) or (   # a host's pulse held back, now due
                r.host_due and time.monotonic() - r.host_sent >= HOST_EVERY)]
        if not codes:
            return
        try:
            pulses = self.store.pulse(codes)
        except ClassroomError as err:
            self._set_problem(str(err))
            return
        self._set_problem(None)
        self._saw(pulses)
        now = self._clock()
        for code in codes:
            room = rooms[code]
            pulse = pulses.get(code)
            if pulse is None:
                if self._restorable(code):        # the store lost it: give it back
                    if not room.restoring:
                        room.restoring = True
                        self._builders.submit(self._restore, code, room)
                elif room.gone is None:
                    self._call(self._publish_gone, code, str(RoomNotFound.for_code(code)))
                continue
            closed = pulse.ends_at is not None and now >= pulse.ends_at
            moved = pulse != room.pulse
            room.pulse = pulse
            if (pulse.version, closed) != room.built and not room.building:
                room.building = True
                self._builders.submit(self._rebuild, code, room, (pulse.version, closed))
            if moved:
                room.host_due = True
            if room.host_due and time.monotonic() - room.host_sent >= HOST_EVERY:
                room.host_due, room.host_sent = False, time.monotonic()
                self._call(self._publish_pulse, code, pulse)
            # else: held back, and read and sent by the first look once due (every tick)

    def _set_problem(self, problem: str | None) -> None:
        if problem != self.problem:
            self.problem = problem
            self._call(self._publish_status)

    def _restorable(self, code: str) -> bool:
        """Whether this process can give room ``code`` back to the store (it keeps a
        snapshot of it, of a class not over yet)."""
        room = self._rooms.get(code)
        snap = room.snapshot if room is not None else None
        return snap is not None and self._clock() < snap.expires

    def _answers_known(self, room: _Room) -> tuple[dict, dict]:
        """Every answer this process knows of the room: its last snapshot's and those saved
        here since, (step, round) -> student -> text; and their confidences, the same way."""
        with self._lock:
            snap = room.snapshot
            known = {k: dict(v) for k, v in (snap.answers if snap else {}).items()}
            levels = {k: dict(v) for k, v in (snap.levels if snap else {}).items()}
            for k, given in room.saved.items():
                known.setdefault(k, {}).update(given)
                mine = levels.setdefault(k, {})
                for student in given:          # an answer saved here: its level, or none
                    mine.pop(student, None)
                mine.update(room.saved_levels.get(k, {}))
        return known, levels

    def _restore(self, code: str, room: _Room) -> None:
        """Give the store back the room it lost, with every answer this process knows."""
        try:
            if self.store.restore(room.snapshot, *self._answers_known(room)):
                _LOGGER.warning("xattn hub: room %s was gone from the class store (it restarted "
                                "empty?) and was given back", code)
            self.store.refresh_signing_keys()     # ... and the keys students' ids carry
        except RoomEnded as err:                  # its lecturer ended it: nothing to give
            with self._lock:
                room.snapshot, room.saved, room.saved_levels = None, {}, {}
            self._call(self._publish_gone, code, str(err))
        except StoreUnavailable as err:
            self._set_problem(str(err))
        except Exception:  # noqa: BLE001 - tried again on the next look
            _LOGGER.exception("xattn hub: room %s could not be given back", code)
        finally:
            room.restoring = False
            self._poke.set()

    def _take_snapshot(self, code: str, room: _Room) -> None:
        """The room's snapshot now; answers this process knows that the store lacks (lost
        in a restart, given back by a process that did not know them) go back to it."""
        snap = self.store.snapshot(code)
        if room.snapshot is not None:
            known, levels = self._answers_known(room)
            missing = {k: {s: t for s, t in given.items() if s not in snap.answers.get(k, {})}
                       for k, given in known.items()}
            missing = {k: v for k, v in missing.items() if v}
            if missing and self.store.restore(snap, missing, levels) is False:
                snap = self.store.snapshot(code)
        with self._lock:
            room.snapshot, room.saved, room.saved_levels = snap, {}, {}

    def _rebuild(self, code: str, room: _Room, built: tuple) -> None:
        try:
            self._take_snapshot(code, room)
            view = self.store.room_view(code)
            answers = self.store.round_answers(code, view.step, view.round)
            message = self.build(view)
            levels = (self.store.round_levels(code, view.step, view.round)
                      if message.confidence else {})
            # every phone's own part (its answer, its verdict) made here, once per distinct
            # answer, so that the loop only joins bytes (step 14's verdicts score links)
            personal = {text: _personal_json(message, text)
                        for text in {*answers.values(), None}}
            room.built = built
            self._call(self._publish, code, message, answers, personal, levels)
        except RoomNotFound as err:
            self._call(self._publish_gone, code, str(err))
        except StoreUnavailable as err:
            self._set_problem(str(err))
        except Exception:  # noqa: BLE001 - a message that cannot be built: tried again
            _LOGGER.exception("xattn hub: room %s's message could not be built", code)
            time.sleep(1.0)
        finally:
            room.building = False
            self._poke.set()

    def _read_mine(self, code: str, f: Follower) -> None:
        room = self._rooms.get(code)
        message = room.message if room is not None else None
        if message is None or message.question is None or f.closed:
            return
        try:
            mine, level = self.store.mine(code, message.step, f.student)
            text = None if mine is None else message.question.encode(mine)
        except (ClassroomError, ValueError):
            return
        self._call(self._mine, code, f, message.key, text, level)

    def _mark_taught(self) -> None:
        """Mark the rooms whose host page is open here, with a key that drives the room, as
        taught (one write): those nobody teaches make space when the store is full."""
        with self._lock:
            taught = {(code, f.taught) for code, room in self._rooms.items()
                      for f in room.followers if f.taught}
        if taught:
            try:
                self.store.mark_hosts(taught)
            except ClassroomError:
                pass                             # the next look says what the store says

    def _present(self, everyone: bool) -> None:
        """Mark the phones of this process present: new ones now, all of them every
        ``PRESENT`` seconds (one write per room)."""
        with self._lock:
            todo = []
            for code, room in self._rooms.items():
                students = ({f.student for f in room.followers if f.student and not f.host}
                            if everyone else set(room.joined))
                room.joined = set()
                if students:
                    todo.append((code, students))
        for code, students in todo:
            try:
                self.store.touch(code, students)
            except ClassroomError:
                pass                             # the next look says what the store says


def _personal_json(message: Message, text: str | None) -> bytes:
    """A phone's own part of ``message`` for its stored answer ``text``, as JSON."""
    try:
        return json.dumps(message.personal(text), separators=(",", ":"),
                          ensure_ascii=False).encode()
    except Exception:  # noqa: BLE001 - a verdict that cannot be made: the answer alone
        _LOGGER.exception("xattn hub: a phone's own part could not be made")
        return b'{"mine":null}'


def _receipt_json(r: Receipt) -> bytes:
    return json.dumps({"step": r.step, "round": r.round, "value": _plain(r.value),
                       "state": r.state, "why": r.why, "confidence": r.confidence},
                      separators=(",", ":"), ensure_ascii=False).encode()


def _plain(value):
    """An answer as JSON takes it (tuples as lists)."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value
