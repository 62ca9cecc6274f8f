"""The training queue: at most N trainings at once, the others first come first served, each
told its place; a student who leaves gives up the place unless someone else wants the run.

Threads and events only: every wait polls for a condition with a generous deadline, nothing
asserts on time.
"""

from __future__ import annotations

import contextlib
import threading
import time

import pytest

from xattn.cache import ByteLRU
from xattn.live.training import Progress, TrainingQueue, obtain_from, waiting_text
from xattn.train import TrainConfig

DEADLINE = 120.0      # seconds: a busy 2-core machine is slow, not wrong


def until(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting for {what}")
        time.sleep(0.005)     # poll interval of a bounded loop, not a synchronisation point


def changes(places: list) -> list:
    """The places a waiter was told, repeats (the queue's heartbeat) dropped."""
    return [p for i, p in enumerate(places) if i == 0 or p != places[i - 1]]


class Jobs:
    """Trainings that hold their slot until released, recording starts and concurrency."""

    def __init__(self, queue: TrainingQueue):
        self.queue, self.started, self.places, self.errors = queue, [], {}, {}
        self.release, self.threads = {}, {}
        self._lock, self.running, self.most = threading.Lock(), 0, 0

    def start(self, name: str, on_wait=None) -> None:
        self.places[name], self.release[name] = [], threading.Event()

        def told(ahead, running):
            self.places[name].append((ahead, running))
            if on_wait is not None:
                on_wait(ahead, running)

        def job():
            try:
                with self.queue.slot(told):
                    with self._lock:
                        self.started.append(name)
                        self.running += 1
                        self.most = max(self.most, self.running)
                    self.release[name].wait()
                    with self._lock:
                        self.running -= 1
            except Exception as err:  # noqa: BLE001 - recorded for the test to check
                self.errors[name] = err

        self.threads[name] = threading.Thread(target=job, daemon=True)
        self.threads[name].start()

    def finish(self, name: str) -> None:
        self.release[name].set()
        self.threads[name].join(DEADLINE)


def test_one_at_a_time_in_arrival_order_each_told_its_place():
    q = TrainingQueue(1, beat=0.01)
    jobs = Jobs(q)
    jobs.start("A")
    until(lambda: jobs.started == ["A"], "A to start")
    for n, name in enumerate("BCD", start=1):
        jobs.start(name)
        until(lambda n=n: q.status() == (1, n), f"{name} to queue")
        until(lambda name=name: jobs.places[name], f"{name} to be told its place")
    assert [jobs.places[x][0] for x in "BCD"] == [(0, 1), (1, 1), (2, 1)]
    jobs.finish("A")
    until(lambda: jobs.started == ["A", "B"], "B to start")
    until(lambda: jobs.places["C"][-1] == (0, 1), "C to move up")
    until(lambda: jobs.places["D"][-1] == (1, 1), "D to move up")
    jobs.finish("B")
    until(lambda: jobs.places["D"][-1] == (0, 1), "D to move up again")
    jobs.finish("C")
    jobs.finish("D")
    assert jobs.started == ["A", "B", "C", "D"] and jobs.most == 1 and not jobs.errors
    assert changes(jobs.places["B"]) == [(0, 1)]
    assert changes(jobs.places["C"]) == [(1, 1), (0, 1)]
    assert changes(jobs.places["D"]) == [(2, 1), (1, 1), (0, 1)]
    assert q.status() == (0, 0)


def test_two_slots_run_two_at_once_and_the_third_waits():
    q = TrainingQueue(2, beat=0.01)
    jobs = Jobs(q)
    jobs.start("A")
    jobs.start("B")
    until(lambda: len(jobs.started) == 2, "A and B to start together")
    jobs.start("C")
    until(lambda: jobs.places["C"], "C to wait")
    assert jobs.places["C"][0] == (0, 2) and len(jobs.started) == 2
    jobs.finish("A")
    until(lambda: "C" in jobs.started, "C to take A's slot")
    jobs.finish("B")
    jobs.finish("C")
    assert jobs.most == 2 and q.status() == (0, 0)


def test_a_waiter_that_leaves_gives_up_its_place():
    q = TrainingQueue(1, beat=0.01)
    jobs, gone = Jobs(q), threading.Event()

    def leaves(ahead, running):
        if gone.is_set():
            raise RuntimeError("the student left")

    jobs.start("A")
    until(lambda: jobs.started == ["A"], "A to start")
    jobs.start("B")
    until(lambda: jobs.places["B"], "B to wait")
    jobs.start("C", on_wait=leaves)
    until(lambda: jobs.places["C"], "C to wait")
    jobs.start("D")
    until(lambda: jobs.places["D"], "D to wait")
    gone.set()                                       # C's page goes away: its next update raises
    until(lambda: "C" in jobs.errors, "C to leave")
    until(lambda: jobs.places["D"][-1] == (1, 1), "D to move up past C")
    for name in "ABD":
        jobs.finish(name)
    assert jobs.started == ["A", "B", "D"] and str(jobs.errors["C"]) == "the student left"
    assert q.status() == (0, 0)


@pytest.mark.parametrize("slots, error", [(0, ValueError), (True, TypeError), (1.0, TypeError)])
def test_slots_must_be_a_positive_int(slots, error):
    with pytest.raises(error, match="slots must be an int"):
        TrainingQueue(slots)


# ------------------------------------------------------------------ the page's side (_obtain)
class Left(Exception):
    """What Streamlit raises at a page update once the student changed a control or left."""


class Slot:
    """A stand-in for the page's progress and chart slots: records texts, raises once gone."""

    def __init__(self):
        self.texts, self.gone, self.refused = [], threading.Event(), 0

    def progress(self, value, text=""):
        if self.gone.is_set():
            self.refused += 1
            raise Left()
        self.texts.append(text)
        return self

    def empty(self):
        return self.progress(1.0)

    def plotly_chart(self, *args, **kwargs):
        return self.progress(0.5)


def progress_in(bar: Slot) -> Progress:
    """A page's progress drawn in ``bar`` and a curve slot of its own."""
    curve = Slot()
    return Progress(bar=bar, curve=lambda *args: curve.plotly_chart(),
                    shared=contextlib.nullcontext)


def in_thread(call) -> dict:
    out = {}

    def target():
        try:
            out["value"] = call()
        except BaseException as err:  # noqa: BLE001 - recorded for the test to check
            out["error"] = err

    out["thread"] = threading.Thread(target=target, daemon=True)
    out["thread"].start()
    return out


def occupied(q: TrainingQueue):
    """Fill every slot of ``q`` until the returned event is set."""
    free, holding = threading.Event(), []

    def hold():
        with q.slot():
            holding.append(1)
            free.wait()

    for _ in range(q.slots):
        threading.Thread(target=hold, daemon=True).start()
    until(lambda: len(holding) == q.slots, "the slots to fill")
    return free


def test_a_page_waiting_says_how_many_are_ahead_and_leaves_when_its_student_does():
    q, runs, config = TrainingQueue(1, beat=0.01), ByteLRU(1 << 20), TrainConfig(steps=1)
    free = occupied(q)

    def first_in_line():
        with q.slot():
            pass

    other = in_thread(first_in_line)                          # one more waiting first
    until(lambda: q.status() == (1, 1), "the first waiter")
    bar = Slot()
    page = in_thread(lambda: obtain_from(config, progress_in(bar), runs, q))
    until(lambda: bar.texts, "the page to show its place")
    assert bar.texts[0].startswith("Waiting to train: 1 ahead of you (1 training now")
    bar.gone.set()
    page["thread"].join(DEADLINE)
    assert isinstance(page.get("error"), Left)               # left the queue, and the page
    assert runs.get(config) is None and q.status() == (1, 1)
    free.set()
    other["thread"].join(DEADLINE)


def test_a_page_that_leaves_keeps_its_place_for_a_student_who_joined_its_setting():
    q, runs, config = TrainingQueue(1, beat=0.01), ByteLRU(1 << 20), TrainConfig(steps=1)
    free = occupied(q)
    bar = Slot()
    page = in_thread(lambda: obtain_from(config, progress_in(bar), runs, q))
    until(lambda: bar.texts, "the page to queue")
    joiner = in_thread(lambda: runs.get_or_make(config, lambda: pytest.fail("trained twice")))
    until(lambda: runs.callers(config) == 2, "the second student to join")
    bar.gone.set()
    until(lambda: bar.refused, "the page's next update to fail")
    assert q.status() == (1, 1) and "error" not in page          # still queued, for the joiner
    free.set()
    page["thread"].join(DEADLINE)
    joiner["thread"].join(DEADLINE)
    assert isinstance(page.get("error"), Left)               # the page still stops ...
    assert joiner["value"] is runs.get(config)               # ... but its run was trained
    assert all(t.startswith("Waiting") for t in bar.texts)   # and its page left alone after


def test_the_waiting_text():
    assert waiting_text(0, 2, 2, 0.4) == ("Waiting to train: next in line (2 training now; the "
                                          "server trains 2 at a time). Waited 0 s.")
