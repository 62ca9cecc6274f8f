"""Training runs shared by the whole class: one run per setting, trained once per server, at
most ``TRAINERS`` at a time.

The first student to ask for a setting watches it train (progress bar, live loss curve);
everyone after gets the stored run at once, and students asking while it trains (or waits to)
wait for that one run instead of starting their own. A run is finished and stored even if the
student who started it leaves or changes a control mid-way (their page's updates stop, the
training does not), so nobody waits for it twice.

**The queue.** Trainings share one process and its GIL: two at once in one process took as long
as the two one after the other (``benchmarks/results/training_queue.md``), so sixty students
asking for thirty settings at once all waited for the last one to finish. At most ``TRAINERS``
run at once (``XATTN_TRAINERS``, default 1 per server process; ``deploy/serve.sh`` runs one
process per core); the others wait first come, first served, and their page says how many
trainings are ahead of them. A student who leaves while waiting gives up the place, unless
another student asked for the same setting meanwhile: then it keeps its place for them.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from xattn.alignment import Evaluated, evaluate
from xattn.cache import ByteLRU
from xattn.live.process import process_wide
from xattn.train import TrainConfig, train

__all__ = ["RUNS_BYTES", "TRAINERS", "TrainingQueue", "Progress", "obtain", "obtain_from",
           "runs", "trainers", "waiting_text"]

RUNS_BYTES = 20 << 20   # finished runs kept (about 0.3 MB each by nbytes: ~64), LRU first out
LIVE_UPDATES = 20       # redraws of the live loss curve per run, whatever the step count
WAIT_UPDATE = 2.0       # seconds between a waiting page's updates (it notices a student left)


def _trainers_from_env() -> int:
    text = os.environ.get("XATTN_TRAINERS", "1")
    if not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"XATTN_TRAINERS must be a whole number >= 1 (trainings at once per "
                         f"server process); received {text!r}.")
    return int(text)


TRAINERS = _trainers_from_env()


class TrainingQueue:
    """At most ``slots`` trainings at once; the others wait in the order they came (FIFO).

    Examples
    --------
    >>> q = TrainingQueue(1)
    >>> with q.slot():
    ...     q.status()
    (1, 0)
    """

    def __init__(self, slots: int, beat: float = WAIT_UPDATE) -> None:
        if isinstance(slots, bool) or not isinstance(slots, int):
            raise TypeError(f"slots must be an int; received {type(slots).__name__} {slots!r}.")
        if slots < 1:
            raise ValueError(f"slots must be an int >= 1; received {slots}.")
        self.slots, self.beat = slots, beat     # beat: seconds between a waiter's updates
        self._cond = threading.Condition()
        self._waiting: deque[object] = deque()
        self._admitted: set[object] = set()     # given a slot, not yet awake to take it
        self._running = 0                       # slots taken, by the admitted too

    def status(self) -> tuple[int, int]:
        """(trainings running, trainings waiting)."""
        with self._cond:
            return self._running, len(self._waiting)

    @contextlib.contextmanager
    def slot(self, on_wait: Callable[[int, int], None] | None = None):
        """Hold one slot for the ``with`` block, after waiting for it in arrival order.

        ``on_wait(ahead, running)`` is called outside the queue's lock while the caller waits:
        whenever its place changes, and at least every ``beat`` seconds. If it raises, the
        caller leaves the queue and the exception propagates.
        """
        ticket = object()
        with self._cond:
            self._waiting.append(ticket)
            self._fill()
        try:
            self._wait_turn(ticket, on_wait)
        except BaseException:
            with self._cond:
                if ticket in self._admitted:    # its turn came as it left: pass the slot on
                    self._admitted.discard(ticket)
                    self._running -= 1
                else:
                    self._waiting.remove(ticket)
                self._fill()
            raise
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._fill()

    def _fill(self) -> None:
        """Hand free slots to the first waiters (under the lock): a slot passes straight from
        the one who leaves it to the next in line, so nobody sees it free in between."""
        while self._waiting and self._running < self.slots:
            self._admitted.add(self._waiting.popleft())
            self._running += 1
        self._cond.notify_all()

    def _wait_turn(self, ticket: object, on_wait) -> None:
        shown = None
        while True:
            with self._cond:
                if ticket not in self._admitted:
                    place = (self._waiting.index(ticket), self._running)
                    if place == shown:          # nothing new: wait for a change or a beat
                        self._cond.wait(self.beat)
                if ticket in self._admitted:
                    self._admitted.discard(ticket)
                    return
                place = (self._waiting.index(ticket), self._running)
            if on_wait is not None:
                on_wait(*place)
            shown = place


@process_wide()
def runs() -> ByteLRU:
    """The server's finished runs by config: shared on purpose, by every session, and
    single-flight (everyone asking for one config while it trains waits for that run)."""
    return ByteLRU(RUNS_BYTES)


@process_wide()
def trainers() -> TrainingQueue:
    """The server's trainings at once: ``TRAINERS`` slots, shared by every session."""
    return TrainingQueue(TRAINERS)


@dataclass(frozen=True)
class Progress:
    """How a page shows a training (``xattn/ui/weights/progress.py`` makes one of Streamlit's
    slots): ``bar`` has ``progress(value, text=...)`` (which returns the bar to update: a
    Streamlit slot's progress element) and ``empty()``;
    ``curve(losses, step, steps)`` redraws the live loss curve; ``shared()`` is a context
    manager held while the page waits for the run another student started. Each may raise
    (the page went away): the run goes on, and the first such error is raised once the run
    is stored."""

    bar: object
    curve: Callable[[list, int, int], None]
    shared: Callable[[], contextlib.AbstractContextManager]


def _train_live(config: TrainConfig, progress: Progress | None,
                interrupted: list[BaseException]) -> Evaluated:
    """Train while moving a progress bar and redrawing the loss curve every few steps.

    If the page goes away mid-way (the student changed a control: Streamlit interrupts the
    script at its next page update), the updates stop but training finishes; the interruption
    is appended to ``interrupted`` for the caller to raise once the run is stored.
    """
    losses: list[float] = []
    every = max(1, config.steps // LIVE_UPDATES)

    def show(call, *args, **kwargs):
        if not interrupted:
            try:
                return call(*args, **kwargs)
            except BaseException as err:  # noqa: BLE001 - Streamlit's stop/rerun signals
                interrupted.append(err)
        return None

    bar = show(progress.bar.progress, 0.0, text="Training…") if progress is not None else None

    def callback(step: int, loss: float) -> None:
        losses.append(loss)
        if bar is not None and (step % every == 0 or step == config.steps):
            show(bar.progress, step / config.steps,
                 text=f"Training: step {step} of {config.steps}, loss {loss:.4f}")
            show(progress.curve, losses, step, config.steps)

    start = time.perf_counter()
    result = train(config, callback=callback)
    seconds = time.perf_counter() - start
    if bar is not None:
        show(bar.progress, 1.0, text=f"Scoring on {len(result.heldout)} held-out sentences…")
    run = evaluate(result, seconds)
    if progress is not None:
        show(progress.bar.empty)
    return run


def waiting_text(ahead: int, running: int, slots: int, waited: float) -> str:
    """What a page waiting for a trainer says.

    Examples
    --------
    >>> waiting_text(2, 1, 1, 4.2)
    'Waiting to train: 2 ahead of you (1 training now; the server trains 1 at a time). Waited 4 s.'
    """
    place = "next in line" if ahead == 0 else f"{ahead} ahead of you"
    return (f"Waiting to train: {place} ({running} training now; the server trains {slots} at "
            f"a time). Waited {waited:.0f} s.")


def obtain_from(config: TrainConfig, progress: Progress | None, runs: ByteLRU,
                queue: TrainingQueue) -> tuple[Evaluated, bool]:
    """`obtain` with the store of runs and the queue given (tests give their own)."""
    interrupted: list[BaseException] = []
    made: list[bool] = []
    since = time.monotonic()

    def on_wait(ahead: int, running: int) -> None:
        if interrupted or progress is None:  # no page (or it went away): the place is kept
            return
        try:
            progress.bar.progress(0.0, text=waiting_text(ahead, running, queue.slots,
                                                     time.monotonic() - since))
        except BaseException as err:
            if runs.callers(config) <= 1:   # nobody else wants this run: leave the queue
                raise
            interrupted.append(err)         # someone joined: keep the place for them

    def make() -> Evaluated:
        with queue.slot(on_wait):
            run = _train_live(config, progress, interrupted)
        made.append(True)
        return run

    def wait():
        if progress is None:                # the server's own thread: nothing to show
            return contextlib.nullcontext()
        return progress.shared()

    found = runs.get_or_make(config, make, wait)
    if interrupted:      # stored for everyone; now let Streamlit stop or rerun this page
        raise interrupted[0]
    return found, bool(made)


def obtain(config: TrainConfig, progress: Progress | None = None) -> tuple[Evaluated, bool]:
    """The class's run of ``config`` and whether this call trained it: stored, or trained now
    with live progress (after waiting for a free trainer, with the place in the queue shown in
    ``progress``'s bar; None: nothing shown, the server's own threads)."""
    return obtain_from(config, progress, runs(), trainers())
