"""The answers of one server process on their way to the class store, and their receipts.

Answers never wait on the store in a page's run. `Outbox.send` puts a student's answer in the
outbox and returns at once; worker threads write it. The last answer of a student wins: a newer
one replaces an unsent older one, and a student's answers are written one at a time, in order.
A store that is locked, full or unreachable keeps the answer pending: it is retried (after
``BACKOFF``) until it is saved or the store refuses it (the question closed meanwhile). Each
answer's `Receipt` says what became of it, as the store did it; ``on_change`` hears of every
change (the process's hub, ``xattn.classroom.hub``, sends it to the student's phone).

Plain Python: tests use a real store and call the worker's two halves (`_take`, `_write`) by
hand where they need one step at a time.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass

from xattn.classroom.errors import ClassroomError, RoomNotFound, StoreUnavailable
from xattn.classroom.said import Said, said, said_of
from xattn.classroom.store import ClassStore

__all__ = ["Outbox", "Receipt"]

_LOGGER = logging.getLogger(__name__)
BACKOFF = (0.25, 0.5, 1.0, 2.0)   # seconds before retrying an answer the store could not take
WORKERS = 3             # threads writing answers (a locked store holds one for seconds)
MAX_PENDING = 20_000    # answers waiting in one process (a bound, far above a lecture hall)


@dataclass(frozen=True)
class Receipt:
    """What became of a student's answer to one round of one step.

    ``state`` is ``"sending"`` (in the outbox), ``"saved"`` (the store has ``value``, as
    stored, and ``confidence``), ``"retrying"`` (the store could not take it: ``why``; it is
    sent again) or ``"refused"`` (the store will not take it: ``why``; it is not saved).
    ``confidence`` is how sure the student said they are (None: not said), kept with the
    answer through every retry. ``said``: ``why`` as a message of the phone's catalog
    (`xattn.classroom.said`), or None."""

    step: int
    round: int
    value: object
    state: str
    why: str = ""
    confidence: str | None = None
    said: Said | None = None

    @property
    def final(self) -> bool:
        return self.state in ("saved", "refused")


@dataclass
class _Item:
    session: str
    code: str
    step: int
    round: int
    student: str
    value: object
    confidence: str | None = None
    tries: int = 0
    due: float = 0.0


class Outbox:
    """The outbox of one server process: answers pending, being written, and their receipts
    (by room code and student)."""

    def __init__(self, store: ClassStore, clock: Callable[[], float] = time.monotonic,
                 on_change: Callable[[str, str, Receipt], None] | None = None,
                 recoverable: Callable[[str], bool] | None = None):
        self.store, self._clock = store, clock
        # whether a room the store says is gone will be given back (the hub keeps it)
        self.recoverable = recoverable
        # called with (code, student, receipt) whenever a receipt changes, outside the lock
        self.on_change = on_change
        self._lock = threading.Condition()
        self._receipts: dict[tuple[str, str], Receipt] = {}
        self._receipt_at: dict[tuple[str, str], float] = {}     # when each last changed
        self._pending: dict[tuple[str, str], _Item] = {}
        self._busy: set[tuple[str, str]] = set()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def pending(self) -> int:
        """Answers not saved or refused yet."""
        with self._lock:
            return len(self._pending) + len(self._busy)

    def send(self, session: str, code: str, step: int, round_: int, student: str,
             value, confidence: str | None = None) -> Receipt:
        """Put a student's answer and its ``confidence`` in the outbox (replacing any unsent
        one of theirs)."""
        key = (code, student)
        with self._lock:
            known = self._receipts.get(key)
            if known is not None and known.state == "retrying" and _same(
                    known, step, round_, value, confidence):
                # the same answer again (a phone resends while the store is down): it keeps
                # its place and its back-off, and the receipt still says what is happening
                if key not in self._pending and key not in self._busy:
                    self._pending[key] = _Item(session, code, step, round_, student, value,
                                               confidence)
                return known
            if key not in self._pending and len(self._pending) >= MAX_PENDING:
                receipt = Receipt(step, round_, value, "refused",
                                  "this server holds too many unsent answers; try again in a "
                                  "minute.", confidence, said("why.busy"))
            else:
                self._pending[key] = _Item(session, code, step, round_, student, value,
                                           confidence)
                receipt = Receipt(step, round_, value, "sending", "", confidence)
            self._receipts[key], self._receipt_at[key] = receipt, self._clock()
            self._lock.notify_all()
        self._changed(code, student, receipt)
        return receipt

    def _changed(self, code: str, student: str, receipt: Receipt) -> None:
        if self.on_change is not None:
            try:
                self.on_change(code, student, receipt)
            except Exception:  # noqa: BLE001 - a listener's failure must not lose an answer
                _LOGGER.exception("xattn outbox: a receipt's listener failed")

    def receipt(self, code: str, student: str) -> Receipt | None:
        with self._lock:
            return self._receipts.get((code, student))

    def wait(self, code: str, student: str, timeout: float) -> Receipt | None:
        """The receipt once it is final or retrying, or as it is after ``timeout`` seconds."""
        deadline, key = self._clock() + timeout, (code, student)
        with self._lock:
            while True:
                receipt = self._receipts.get(key)
                left = deadline - self._clock()
                if receipt is None or receipt.state != "sending" or left <= 0:
                    return receipt
                self._lock.wait(min(left, 0.05))

    def drop(self, keep: Collection[str], before: float) -> None:
        """Forget the receipts that last changed before ``before`` (the clock's seconds) of
        rooms not in ``keep`` whose answers are not on their way: a class that ended."""
        with self._lock:
            for key in [k for k, at in self._receipt_at.items() if at < before
                        and k[0] not in keep and k not in self._pending and k not in self._busy]:
                self._receipts.pop(key, None)
                del self._receipt_at[key]

    def _comes_back(self, code: str) -> bool:
        try:
            return bool(self.recoverable and self.recoverable(code))
        except Exception:  # noqa: BLE001 - a listener's failure: the answer is refused
            return False

    # --- the workers -----------------------------------------------------------------------
    def start(self) -> None:
        if self._threads:
            return
        self._threads = [threading.Thread(target=self._write_loop, daemon=True,
                                          name=f"xattn-outbox-{i}") for i in range(WORKERS)]
        for t in self._threads:
            t.start()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
        for t in self._threads:
            t.join(10)

    def _take(self) -> _Item | None:
        with self._lock:
            while not self._stop.is_set():
                now, soonest = self._clock(), None
                for key, item in self._pending.items():
                    if key in self._busy:
                        continue
                    if item.due <= now:
                        del self._pending[key]
                        self._busy.add(key)
                        return item
                    soonest = item.due if soonest is None else min(soonest, item.due)
                self._lock.wait(0.5 if soonest is None else max(0.01, soonest - now))
        return None

    def _write_loop(self) -> None:
        while (item := self._take()) is not None:
            try:
                self._write(item)
            except Exception:  # noqa: BLE001 - a worker must outlive any one failure
                _LOGGER.exception("xattn outbox: an answer could not be written")

    def _write(self, item: _Item) -> None:
        key = (item.code, item.student)
        try:
            stored = self.store.answer(item.code, item.step, item.student, item.value,
                                       item.confidence, round_=item.round)
            receipt = Receipt(item.step, item.round, stored, "saved", "", item.confidence)
        except (StoreUnavailable, RoomNotFound) as err:
            if isinstance(err, RoomNotFound) and not self._comes_back(item.code):
                receipt = Receipt(item.step, item.round, item.value, "refused", str(err),
                                  item.confidence, said_of(err))
            elif isinstance(err, StoreUnavailable):
                receipt = Receipt(item.step, item.round, item.value, "retrying", str(err),
                                  item.confidence, said_of(err))
            else:
                receipt = Receipt(item.step, item.round, item.value, "retrying",
                                  "the class store lost the class for a moment (it "
                                  "restarted?); it is being given back", item.confidence,
                                  said("why.store.back"))
                item.tries += 1
                item.due = self._clock() + BACKOFF[min(item.tries, len(BACKOFF)) - 1]
        except (ClassroomError, ValueError, TypeError) as err:
            receipt = Receipt(item.step, item.round, item.value, "refused", str(err),
                              item.confidence, said_of(err))
        with self._lock:
            self._busy.discard(key)
            waiting = self._pending.get(key)
            # a newer answer waits (its receipt stays "sending"), unless it is this one again
            newer = waiting is not None and not _same(receipt, waiting.step, waiting.round,
                                                      waiting.value, waiting.confidence)
            if waiting is not None and not newer and receipt.state != "retrying":
                del self._pending[key]                # this very answer, done: not twice
            if receipt.state == "retrying" and not newer:
                self._pending[key] = item             # sent again when due (its back-off)
            if not newer:                             # the phone is told (on_change)
                self._receipts[key], self._receipt_at[key] = receipt, self._clock()
            self._lock.notify_all()
        if not newer:
            self._changed(item.code, item.student, receipt)


def _same(receipt: Receipt, step: int, round_: int, value, confidence=None) -> bool:
    """Whether ``receipt`` is of this answer: the same question, the same value as sent (or
    as stored) and the same confidence."""
    return (receipt.step, receipt.round, receipt.confidence) == (step, round_, confidence) \
        and (receipt.value == value or _as_sent(receipt.value) == _as_sent(value))


def _as_sent(value):
    """An answer as JSON would carry it (tuples as lists), to compare a sent and a stored one."""
    if isinstance(value, (tuple, list)):
        return [_as_sent(v) for v in value]
    return value
