"""A room's live messages in one server process: one message per room per move of the
lecturer, sent to every phone of the room, and each phone's own receipts.

A phone in a class keeps one stream open (server-sent events, ``xattn/server``). The `Hub`
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
import inspect
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from xattn.classroom.errors import ClassroomError, RoomNotFound
from xattn.classroom.frames import Follower, HubRoom, Message
from xattn.classroom.outbox import Outbox, Receipt
from xattn.classroom.publishing import Publishing
from xattn.classroom.records import RoomView
from xattn.classroom.recovery import Recovery
from xattn.classroom.store import ClassStore

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


class Hub(Publishing, Recovery):
    """The live rooms of one server process (see the module's docstring).

    Parameters
    ----------
    store : ClassStore
    build : callable (RoomView) -> Message, or (RoomView, *, languages) -> dict
        The room's message for a view of it (called in the hub's threads). A build with a
        ``languages`` parameter is given the languages the room's phones read (a tuple) and
        returns each one's `Message`: one build per move for all of them.
    clock : callable, optional
        Seconds since the epoch (the store's clock): when a timer runs out.
    """

    def __init__(self, store: ClassStore, build: Callable[[RoomView], Message], *,
                 clock: Callable[[], float] = time.time, tick: float = TICK):
        self.store, self.build, self._clock, self.tick = store, build, clock, tick
        self.build_languages = "languages" in inspect.signature(build).parameters
        self.outbox = Outbox(store, on_change=self._receipt_changed,
                             recoverable=self._restorable)
        self._rooms: dict[str, HubRoom] = {}
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
                  taught: str | None = None, lang: str = "en", had: str | None = None
                  ) -> Follower:
        """A new stream of room ``code`` (call on the loop); its first frame is the room as
        this process last built it, if it did, and follows once the room is read. A host
        page's stream (``host``) whose cookie holds a key that drives the room gives its
        digest (``taught``): the room is marked taught while it is open (`mark_hosts`),
        every ``HOST_MARK`` seconds (at most a quarter of ``Limits.untaught_seconds``); a
        stream without it never keeps the room. ``lang``: the language of a phone's page; a
        language the room has no message in yet is built at the next look. ``had``: the id
        of the room's frame the phone has (`Follower`): that frame is not sent again.
        `OverflowError` when the process holds ``MAX_FOLLOWERS`` streams."""
        if self.stopping:
            raise OverflowError("this server process is stopping; another process, or this "
                                "one once it is back, takes the stream.")
        if self.n_followers >= MAX_FOLLOWERS:
            raise OverflowError(f"this server process holds {MAX_FOLLOWERS} open streams, the "
                                "most it takes; another process or a moment later will do.")
        f = Follower(code, student, host, taught, lang, had)
        with self._lock:
            room = self._rooms.setdefault(code, HubRoom(code))
            room.followers.add(f)
            if student is not None and not host:
                room.joined.add(student)
            self.n_followers += 1
        if room.gone is not None:
            f.push("gone", self._gone_frame(room.gone))
        elif host and room.pulse is not None:
            f.push("pulse", self._pulse_frame(room.pulse))
        elif not host and room.message is not None and lang not in room.messages:
            room.built = None                 # a language new to the room: built next look
        elif not host and room.message is not None:
            self._push_room(room, f)
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
                    self._call(self._publish_gone, code, RoomNotFound.for_code(code))
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


