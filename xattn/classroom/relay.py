"""One relay per server process: it tells the pages in a room when to redraw, and it carries
every student's answer to the class store until the store has it.

A class moves together. Instead of every open page asking the store every few seconds whether
the class moved on (200 phones, 100 polls a second, each rerunning a part of a page), one
thread per process reads the `Pulse` of all the rooms its pages are in, a few times a second
and in one read, and asks exactly the pages whose drawing is out of date to redraw
(``rerun(session, None)``); a host page's count of answers is redrawn when the room's tally
moved (``rerun(session, fragment)``). A page says what it drew on every run (`watch`); a page
that was asked and still shows an older state is asked again after ``RETRY`` seconds, so a
request lost in transit does not leave a phone behind.

Whole pages are redrawn ``TURNS`` at a time, host pages first, the next one as soon as one
finishes (`watch`): 100 runs started together share the process's one interpreter lock and all
end at the end (in `benchmarks/bench_room.py`, p50 and p95 were within 10 % of each other),
where taking turns brings the first phones up at once and the last no later. A host's click
goes first of all: its page's own run holds the process's redraws (`hold`) until it has drawn
and ``SENT`` seconds more for its last elements to go out, at most ``HOLD`` seconds in all.

Answers never wait on the store in a page's run: `send` puts them in the process's `Outbox`
(``xattn.classroom.outbox``), whose workers write them, retrying while the store is locked,
full or unreachable. An answer's `Receipt` that its page does not show yet (for the question
the page asks) makes the watcher ask the page to redraw its receipt, so what the phone says is
what the store did. Presence ("31 of 42 answered") is written for
all of a room's open pages in one write every ``PRESENT_EVERY`` seconds, not on every page run.

Plain Python: the page binds ``rerun`` to Streamlit (``xattn/ui/push.py``); tests bind it to
a recorder and use a real store.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from xattn.classroom.errors import ClassroomError
from xattn.classroom.outbox import Outbox, Receipt
from xattn.classroom.records import Pulse
from xattn.classroom.store import ClassStore

__all__ = ["Relay", "Drawn"]

_LOGGER = logging.getLogger(__name__)
TICK = 0.1              # seconds between two reads of the rooms' pulses
RETRY = 3.0             # a page asked to redraw that has not, is asked again after this
TURNS = 3               # whole pages redrawn at once in one process; the others queue
TURN_WAIT = 2.0         # a page asked that has not redrawn by then gives its turn back
HOLD = 1.5              # seconds a host's own run after a click goes before its students
SENT = 0.2              # ... and its last elements are sent before them
TALLY_EVERY = 0.5       # a host's count is redrawn at most this often
RECEIPT_EVERY = 0.5     # a receipt the page does not show yet is asked for at most this often
PRESENT_EVERY = 15.0    # presence of a room's open pages is written this often
RECEIPT_KEEP = 600.0    # seconds a receipt outlives the last page of its room in this process


@dataclass(frozen=True)
class Drawn:
    """What a page shows of its room: the room's version and whether the round's time ran
    out (the store's clock), and, on a host page, the tally its count shows."""

    version: int
    closed: bool = False
    tally: int | None = None


@dataclass
class _Page:
    session: str
    code: str
    student: str | None        # None: a host page
    drawn: Drawn
    fragments: dict = field(default_factory=dict)   # role -> fragment ids drawn now
    fresh: dict = field(default_factory=dict)       # ... drawn since the last full run ended
    asked: float = 0.0         # monotonic time of the last request to redraw
    tally_asked: float = 0.0
    receipt: Receipt | None = None   # the receipt the page shows
    question: tuple | None = None    # ... for this (step, round)
    receipt_asked: float = 0.0
    present_at: float | None = None  # when its student was last marked present


class Relay:
    """The watcher and the outbox of one server process.

    Parameters
    ----------
    store : ClassStore
        The class store (thread-safe).
    rerun : callable (session id, fragment ids) -> bool
        Asks a page to redraw: the fragments named (a tuple of ids), or the whole page
        (``None``, or ids that are gone); False when the session is gone, which forgets it.
        A page that cannot redraw now may be handed to `busy`, to be asked again.
    alive : callable (session id) -> bool or None, optional
        Whether a page's session is still open (None: cannot tell); a closed one is
        forgotten before presence is written, so a student who left stops counting.
    clock : callable, optional
        Monotonic seconds (tests pass their own).
    """

    def __init__(self, store: ClassStore, rerun: Callable[[str, tuple | None], bool], *,
                 alive: Callable[[str], bool | None] = lambda session: None,
                 clock: Callable[[], float] = time.monotonic, start: bool = True):
        self.store, self._rerun, self._alive, self._clock = store, rerun, alive, clock
        self._lock = threading.Condition()
        self._pages: dict[str, _Page] = {}
        self._pulses: dict[str, Pulse] = {}
        self.outbox = Outbox(store, clock)
        self._queue: dict[str, None] = {}           # pages waiting for a turn, in order
        self._turns: dict[str, float] = {}          # pages redrawing now -> when asked
        self._hold: tuple[str, int, float] | None = None   # (host page, drawn, until)
        self.store_error: str | None = None      # the pulse read's last failure, if failing
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        if start:
            self.start()

    def __repr__(self) -> str:
        return (f"Relay({len(self._pages)} pages in {len({p.code for p in self._pages.values()})}"
                f" rooms, {self.outbox.pending()} answers pending)")

    # --- pages -----------------------------------------------------------------------------
    def watch(self, session: str, code: str, student: str | None, drawn: Drawn) -> None:
        """A page in room ``code`` finished drawing ``drawn`` (call on every full run)."""
        with self._lock:
            page = self._page(session, code, student)
            tally = page.drawn.tally if drawn.tally is None else drawn.tally
            page.student, page.drawn = student, replace(drawn, tally=tally)
            # the fragments this full run drew are the page's; those of earlier layouts
            # (a panel that moved after the reveal) would draw a second copy if asked
            page.fragments, page.fresh = page.fresh, {}
            self._turns.pop(session, None)
            page.asked = 0.0            # it drew: a move after this one is asked at once
            if self._hold is not None and self._hold[0] == session \
                    and self._hold[1] != drawn.version:     # the host's click is drawn:
                # its last elements still go out through the event loop, which the next
                # pages' runs would slow; they start ``SENT`` seconds later
                until = min(self._hold[2], self._clock() + SENT)
                self._hold = (session, drawn.version, until)
        self._pump()

    def hold(self, session: str) -> None:
        """A host page acted (its run now draws the room as moved): the pages of this
        process wait until that page has drawn (`watch` with another version), at most
        ``HOLD`` seconds, so the lecturer's own screen is not slowed by theirs."""
        with self._lock:
            page = self._pages.get(session)
            drawn = page.drawn.version if page is not None else -1
            self._hold = (session, drawn, self._clock() + HOLD)

    def drew_tally(self, session: str, code: str, tally: int,
                   fragment: str | None = None) -> None:
        """A host page of room ``code`` now shows ``tally`` (drawn by the fragment
        ``fragment``: a page may have several, all redrawn together when the tally moves).
        Its fragments draw before the page's run ends, so this may come before `watch`."""
        with self._lock:
            page = self._page(session, code, None)
            page.drawn = replace(page.drawn, tally=tally)
            _remember(page, "tally", fragment)

    def drew_receipt(self, session: str, code: str, student: str, receipt: Receipt | None,
                     fragment: str | None = None, question: tuple | None = None) -> None:
        """A student's page of room ``code`` now shows ``receipt`` (its fragment's id, to
        redraw it alone) for ``question``, the (step, round) it asks: a receipt of another
        question is not this page's to show. This may come before `watch`, as `drew_tally`
        does."""
        with self._lock:
            page = self._page(session, code, student)
            page.receipt = receipt
            page.question = question if question is not None else (
                None if receipt is None else (receipt.step, receipt.round))
            _remember(page, "receipt", fragment)

    def _page(self, session: str, code: str, student: str | None) -> _Page:
        page = self._pages.get(session)
        if page is None or page.code != code:       # not watched yet: nothing drawn known
            page = self._pages[session] = _Page(session, code, student, Drawn(-1))
        return page

    def busy(self, session: str) -> None:
        """The page could not be asked (a run of it was underway): ask on the next look."""
        with self._lock:
            page = self._pages.get(session)
            if page is not None:
                page.asked = page.tally_asked = page.receipt_asked = 0.0
            self._turns.pop(session, None)
        self._pump()

    def forget(self, session: str) -> None:
        """The page left its room (or the session ended)."""
        with self._lock:
            self._pages.pop(session, None)
            self._queue.pop(session, None)
            self._turns.pop(session, None)

    def pulse(self, code: str) -> Pulse | None:
        """The room's pulse as last read (None before the first read, or the room is gone)."""
        with self._lock:
            return self._pulses.get(code)

    # --- answers ---------------------------------------------------------------------------
    def send(self, session: str, code: str, step: int, round_: int, student: str,
             value) -> Receipt:
        """Put a student's answer in the outbox (replacing any unsent one of theirs)."""
        return self.outbox.send(session, code, step, round_, student, value)

    def receipt(self, code: str, student: str) -> Receipt | None:
        return self.outbox.receipt(code, student)

    def wait(self, code: str, student: str, timeout: float) -> Receipt | None:
        """The receipt once it is final or retrying, or as it is after ``timeout`` seconds."""
        return self.outbox.wait(code, student, timeout)

    # --- threads ---------------------------------------------------------------------------
    def start(self) -> None:
        if self._threads:
            return
        self._threads = [threading.Thread(target=self._watch_loop, name="xattn-relay-watch",
                                          daemon=True)]
        self._threads[0].start()
        self.outbox.start()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(10)
        self.outbox.stop()

    def _watch_loop(self) -> None:
        while not self._stop.wait(TICK):
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - the watcher must outlive any one failure
                _LOGGER.exception("xattn relay: a watch tick failed")

    def tick(self) -> None:
        """One look at the rooms: ask out-of-date pages to redraw, write presence."""
        with self._lock:
            codes = {p.code for p in self._pages.values()}
        # receipts of rooms no page of this process has been in for a while (a class that
        # ended, students gone) are dropped: memory follows the open pages
        self.outbox.drop(codes, self._clock() - RECEIPT_KEEP)
        if not codes:
            return
        try:
            pulses = self.store.pulse(codes)
            self.store_error = None
        except ClassroomError as err:
            self.store_error = str(err)
            return
        now, epoch = self._clock(), time.time()
        asks = []
        with self._lock:
            self._pulses = pulses
            self._expire()
            for page in list(self._pages.values()):
                pulse = pulses.get(page.code)
                if _behind(page, pulse, epoch):
                    if now - page.asked >= RETRY and page.session not in self._queue \
                            and page.session not in self._turns:
                        self._queue[page.session] = None      # a turn to redraw, in order
                        if page.student is None:               # host pages first
                            self._queue = {page.session: None, **self._queue}
                elif (page.student is None and pulse is not None
                      and page.drawn.tally not in (None, pulse.tally)
                      and now - page.tally_asked >= TALLY_EVERY):
                    page.tally_asked = now
                    asks.append((page.session, page.fragments.get("tally", ())))
                elif page.student is not None:
                    receipt = self.outbox.receipt(page.code, page.student)
                    if (receipt is not None and receipt != page.receipt
                            and (receipt.step, receipt.round) == page.question
                            and now - page.receipt_asked >= RECEIPT_EVERY):
                        page.receipt_asked = now
                        asks.append((page.session, page.fragments.get("receipt", ())))
        try:
            self._ask(asks)
            self._pump()
        finally:
            self._presence(codes, now)

    def _expire(self) -> float:
        """Turns and a hold that ran out are over (call with the lock held); the time now."""
        now = self._clock()
        for session in [s for s, at in self._turns.items() if now - at >= TURN_WAIT]:
            del self._turns[session]
        if self._hold is not None and now >= self._hold[2]:
            self._hold = None
        return now

    def _pump(self) -> None:
        """Ask the next pages in the queue to redraw, while fewer than ``TURNS`` are."""
        asks = []
        with self._lock:
            now = self._expire()
            while self._hold is None and self._queue and len(self._turns) < TURNS:
                session = next(iter(self._queue))
                del self._queue[session]
                page = self._pages.get(session)
                if page is not None and _behind(page, self._pulses.get(page.code),
                                                time.time()):   # not redrawn meanwhile
                    page.asked = self._turns[session] = now
                    asks.append((session, None))
        self._ask(asks)

    def _ask(self, asks) -> None:
        for session, fragment in asks:
            try:
                asked = self._rerun(session, fragment)
            except Exception:  # noqa: BLE001 - one page that cannot be asked stops no other
                _LOGGER.exception("xattn relay: a page could not be asked to redraw")
                asked = True
            if not asked:
                self.forget(session)

    def _presence(self, codes, now: float) -> None:
        """Mark present, per room in one write, the students of pages that are new or were
        last marked ``PRESENT_EVERY`` seconds ago (closed sessions are forgotten first)."""
        with self._lock:
            due = [p for p in self._pages.values() if p.code in codes and (
                p.present_at is None or now - p.present_at >= PRESENT_EVERY)]
        gone = {p.session for p in due if self._alive(p.session) is False}
        for session in gone:
            self.forget(session)
        due = [p for p in due if p.session not in gone]
        for code in {p.code for p in due}:
            pages = [p for p in due if p.code == code]
            students = [p.student for p in pages if p.student is not None]
            try:
                if students:
                    self.store.touch(code, students)
            except ClassroomError as err:
                _LOGGER.info("xattn relay: presence of %s not written: %s", code, err)
                continue
            with self._lock:
                for p in pages:
                    p.present_at = now

def _behind(page: _Page, pulse: Pulse | None, epoch: float) -> bool:
    """Whether the page draws another version of its room than ``pulse`` (None: the room is
    gone, which the page says), or not yet that its round's time ran out."""
    want = Drawn(-1) if pulse is None else Drawn(
        pulse.version, pulse.ends_at is not None and epoch >= pulse.ends_at)
    return (page.drawn.version, page.drawn.closed) != (want.version, want.closed)


def _remember(page: _Page, role: str, fragment: str | None) -> None:
    """A fragment drew ``role`` on the page: it is one of the page's now (a fragment's id is
    stable while the page's layout is)."""
    if fragment:
        for ids in (page.fragments, page.fresh):
            ids[role] = (*(f for f in ids.get(role, ()) if f != fragment), fragment)
