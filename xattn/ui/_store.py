"""Training runs shared by the whole class: one run per setting, trained once per server.

The first student to ask for a setting watches it train (progress bar, live loss curve);
everyone after gets the stored run at once, and students asking while it trains wait for that
one run instead of starting their own. A run is finished and stored even if the student who
started it leaves or changes a control mid-way (their page's updates stop, the training does
not), so nobody waits for it twice.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import streamlit as st

from xattn.alignment import Evaluated, evaluate
from xattn.figures import loss_figure
from xattn.train import TrainConfig, train

__all__ = ["RunStore", "store", "obtain"]

STORE_ENTRIES = 64      # finished runs kept (about 100 kB each), least recently used first out
LIVE_UPDATES = 20       # redraws of the live loss curve per run, whatever the step count


class RunStore:
    """Finished runs by config, least recently used dropped first, and one lock per config in
    training, so that everyone asking for the same setting together trains it once.

    A config's lock stays in place while anyone holds it or waits for it: dropping it earlier
    would let a newcomer start a second run beside a waiter that retries a failed one.
    """

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._runs: OrderedDict[TrainConfig, Evaluated] = OrderedDict()
        self._training: dict[TrainConfig, list] = {}    # config: [lock, holders and waiters]

    def get(self, config: TrainConfig) -> Evaluated | None:
        with self._lock:
            run = self._runs.get(config)
            if run is not None:
                self._runs.move_to_end(config)
            return run

    def get_or_make(self, config: TrainConfig, make: Callable[[], Evaluated],
                    wait=contextlib.nullcontext) -> tuple[Evaluated, bool]:
        """The stored run, or ``make()``'s, stored; True when this call made it.

        ``wait()`` is a context manager entered while another caller trains this config.
        """
        run = self.get(config)
        if run is not None:
            return run, False
        with self._lock:
            entry = self._training.setdefault(config, [threading.Lock(), 0])
            entry[1] += 1
        lock = entry[0]
        try:
            if not lock.acquire(blocking=False):
                with wait():
                    lock.acquire()
            try:
                run = self.get(config)        # the other caller's run, if we waited for one
                if run is not None:
                    return run, False
                run = make()
                with self._lock:
                    self._runs[config] = run
                    while len(self._runs) > self.max_entries:
                        self._runs.popitem(last=False)
                return run, True
            finally:
                lock.release()
        finally:
            with self._lock:
                entry[1] -= 1
                if entry[1] == 0:
                    del self._training[config]


@st.cache_resource(show_spinner=False)
def store() -> RunStore:
    """The one store of the server: shared on purpose, by every session, behind its locks."""
    return RunStore(STORE_ENTRIES)


def _train_live(config: TrainConfig, bar_slot, curve_slot,
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

    bar = show(bar_slot.progress, 0.0, text="Training…")

    def callback(step: int, loss: float) -> None:
        losses.append(loss)
        if bar is not None and (step % every == 0 or step == config.steps):
            show(bar.progress, step / config.steps,
                 text=f"Training: step {step} of {config.steps}, loss {loss:.4f}")
            show(curve_slot.plotly_chart, loss_figure(losses, config.steps))

    start = time.perf_counter()
    result = train(config, callback=callback)
    seconds = time.perf_counter() - start
    if bar is not None:
        show(bar.progress, 1.0, text=f"Scoring on {len(result.heldout)} held-out sentences…")
    run = evaluate(result, seconds)
    show(bar_slot.empty)
    return run


def obtain(config: TrainConfig, bar_slot, curve_slot) -> tuple[Evaluated, bool]:
    """The class's run of ``config``: stored, or trained now with live progress."""
    def wait():
        return st.spinner("Another student is training this very setting right now; waiting "
                          "for their run, which everyone shares…")
    interrupted: list[BaseException] = []
    found = store().get_or_make(
        config, lambda: _train_live(config, bar_slot, curve_slot, interrupted), wait)
    if interrupted:      # stored for everyone; now let Streamlit stop or rerun this page
        raise interrupted[0]
    return found
