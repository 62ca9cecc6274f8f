"""The relay of one server process: which pages it asks to redraw, and the answers it carries
to the store until the store has them, on SQLite and a real redis-server (faults made for real:
another connection holding SQLite's write lock, redis-server killed and started again)."""

from __future__ import annotations

import sqlite3
import threading
import time

import pytest
from classroom_helpers import BACKENDS, Backend, RedisServer, redis_or_skip, wait_for

from xattn.classroom import Question, new_student_id
from xattn.classroom.relay import HOLD, PRESENT_EVERY, RETRY, SENT, TURNS, Drawn, Relay

QUESTIONS = (Question("choice", ("up", "down", "flat")),
             Question("number", low=0, high=1, decimals=2))


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory):
    redis_or_skip()
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    yield server
    server.stop()


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path) -> Backend:
    url = request.getfixturevalue("redis_server").url if request.param == "redis" else None
    return Backend.fresh(request.param, tmp_path, url)


@pytest.fixture
def store(backend):
    s = backend.open()
    yield s
    s.close()


class Recorder:
    """The pages' side: every request to redraw, as (session, fragment)."""

    def __init__(self, gone=()):
        self.asked, self.gone, self.lock = [], set(gone), threading.Lock()

    def __call__(self, session, fragment):
        with self.lock:
            self.asked.append((session, fragment))
        return session not in self.gone

    def take(self):
        with self.lock:
            asked, self.asked = self.asked, []
        return asked


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


def drawn_now(store, code) -> Drawn:
    view = store.room_view(code)
    return Drawn(view.version, view.phase == "closed")


def test_a_host_move_asks_every_page_of_the_room_once_and_no_other(store):
    code, secret = store.create_room(QUESTIONS)
    other, _ = store.create_room(QUESTIONS)
    pages = Recorder()
    relay = Relay(store, pages, clock=Clock(), start=False)
    for i in range(3):
        relay.watch(f"s{i}", code, f"student-{i:04d}", drawn_now(store, code))
    relay.watch("elsewhere", other, "student-9999", drawn_now(store, other))
    relay.tick()
    assert pages.take() == []                      # every page is up to date
    store.set_step(code, secret, 2)
    relay.tick()
    assert sorted(pages.take()) == [("s0", None), ("s1", None), ("s2", None)]
    relay.tick()
    assert pages.take() == []                      # asked: not again before RETRY
    relay.watch("s0", code, "student-0000", drawn_now(store, code))   # s0 redrew
    relay._clock.now += RETRY
    relay.tick()
    assert sorted(pages.take()) == [("s1", None), ("s2", None)]       # the others again


def test_pages_redraw_a_few_at_a_time_host_pages_first_the_next_as_one_ends(store):
    code, secret = store.create_room(QUESTIONS)
    pages = Recorder()
    relay = Relay(store, pages, clock=Clock(), start=False)
    students = [f"s{i}" for i in range(10)]
    for i, s in enumerate(students):
        relay.watch(s, code, f"student-{i:04d}", drawn_now(store, code))
    relay.watch("projector", code, None, drawn_now(store, code))
    store.set_step(code, secret, 2)
    relay.tick()
    first = pages.take()
    assert first == [("projector", None)] + [(s, None) for s in students[:TURNS - 1]]
    relay.tick()
    assert pages.take() == []                       # no turn is free
    relay.watch("s0", code, "student-0000", drawn_now(store, code))
    assert pages.take() == [(students[TURNS - 1], None)]    # s0's turn, handed on at once
    relay.watch(students[5], code, "student-0005", drawn_now(store, code))   # redrew itself
    asked = []
    for _ in range(20):                             # every page asked redraws, in turn
        asked += [s for s, _ in pages.take()]
        for s in list(relay._turns):
            relay.watch(s, code, None if s == "projector" else s, drawn_now(store, code))
    asked += [s for s, _ in pages.take()]
    assert asked == students[3:5] + students[6:]    # s5 redrew itself: it was not asked
    relay.tick()
    assert pages.take() == []                       # every page shows step 2


def test_a_host_click_is_drawn_before_the_process_redraws_its_students(store):
    code, secret = store.create_room(QUESTIONS)
    clock, pages = Clock(), Recorder()
    relay = Relay(store, pages, clock=clock, start=False)
    for host in ("laptop", "projector"):
        relay.watch(host, code, None, drawn_now(store, code))
    relay.watch("s0", code, "student-0000", drawn_now(store, code))
    relay.hold("laptop")                            # the laptop's click, in its run
    store.set_step(code, secret, 2)
    relay.tick()
    assert pages.take() == []                       # the laptop's run goes alone
    relay.watch("laptop", code, None, drawn_now(store, code))   # ... and has drawn step 2
    relay.tick()
    assert pages.take() == []                       # its last elements go out first
    clock.now += SENT
    relay.tick()
    assert pages.take() == [("projector", None), ("s0", None)]
    relay.watch("s0", code, "student-0000", drawn_now(store, code))
    relay.hold("laptop")                            # a click whose run never ends
    store.reveal(code, secret, 2)
    relay.tick()
    assert ("s0", None) not in pages.take()
    clock.now += HOLD
    relay.tick()
    assert ("s0", None) in pages.take()             # the others wait no longer than HOLD


def test_a_receipt_of_an_earlier_question_asks_no_page_to_redraw(store):
    code, secret = store.create_room(QUESTIONS)
    clock, pages = Clock(), Recorder()
    relay = Relay(store, pages, clock=clock, start=False)
    relay.watch("s", code, "student-0001", drawn_now(store, code))
    relay.send("s", code, 1, 1, "student-0001", "up")
    relay.outbox._write(relay.outbox._take())                     # the outbox's worker, by hand
    saved = relay.receipt(code, "student-0001")
    relay.drew_receipt("s", code, "student-0001", saved, "frag-1", (1, 1))
    relay.tick()
    assert pages.take() == []
    store.set_step(code, secret, 2)
    relay.drew_receipt("s", code, "student-0001", None, "frag-2", (2, 1))   # nothing yet,
    relay.watch("s", code, "student-0001", drawn_now(store, code))          # in step 2's run
    for _ in range(4):
        clock.now += 1
        relay.tick()
    assert pages.take() == []                       # step 1's receipt is not step 2's
    relay.send("s", code, 2, 1, "student-0001", 0.5)
    relay.outbox._write(relay.outbox._take())
    clock.now += 1
    relay.tick()
    [(session, fragments)] = pages.take()           # step 2's answer saved: its receipt
    assert session == "s" and "frag-2" in fragments


def test_a_host_page_count_is_redrawn_alone_when_an_answer_arrives(store):
    code, secret = store.create_room(QUESTIONS)
    clock, pages = Clock(), Recorder()
    relay = Relay(store, pages, clock=clock, start=False)
    view = store.room_view(code)
    relay.watch("host", code, None, Drawn(view.version))
    relay.drew_tally("host", code, store.pulse([code])[code].tally, fragment="frag-tally")
    relay.watch("student", code, "student-0001", Drawn(view.version))
    store.answer(code, 1, "student-0001", "up")
    relay.tick()
    assert pages.take() == [("host", ("frag-tally",))]   # the count only, the student nothing
    store.answer(code, 1, "student-0002", "down")
    relay.tick()
    assert pages.take() == []                       # at most every TALLY_EVERY seconds
    clock.now += 1
    relay.tick()
    assert pages.take() == [("host", ("frag-tally",))]
    relay.drew_tally("host", code, store.pulse([code])[code].tally)
    clock.now += 1
    relay.tick()
    assert pages.take() == []


def test_a_timer_at_zero_and_a_room_that_ended_ask_the_pages_to_redraw(backend):
    from xattn.classroom import Limits
    store = backend.open(Limits(ttl_seconds=6))
    code, secret = store.create_room(QUESTIONS)
    pages = Recorder()
    relay = Relay(store, pages, clock=Clock(), start=False)
    store.start_timer(code, secret, 1, 5)
    relay.watch("s", code, "student-0001", drawn_now(store, code))
    relay.tick()
    assert pages.take() == []
    wait_for(lambda: store.room_view(code).phase == "closed", timeout=10, what="time up")
    relay.tick()
    assert pages.take() == [("s", None)]
    relay.watch("s", code, "student-0001", drawn_now(store, code))
    wait_for(lambda: not store.pulse([code]), timeout=10, what="the room to expire")
    relay._clock.now += RETRY
    relay.tick()
    assert pages.take() == [("s", None)]
    store.close()


def test_a_session_that_is_gone_is_forgotten(store):
    code, secret = store.create_room(QUESTIONS)
    pages = Recorder(gone={"gone"})
    relay = Relay(store, pages, clock=Clock(), start=False)
    relay.watch("gone", code, "student-0001", Drawn(-5))
    relay.tick()
    assert pages.take() == [("gone", None)]
    assert repr(relay) == "Relay(0 pages in 0 rooms, 0 answers pending)"


def test_open_pages_are_present_in_one_write(store):
    code, _ = store.create_room(QUESTIONS)
    clock = Clock()
    relay = Relay(store, Recorder(), clock=clock, start=False)
    for i in range(5):
        relay.watch(f"s{i}", code, f"student-{i:04d}", drawn_now(store, code))
    relay.watch("host", code, None, drawn_now(store, code))
    relay.tick()
    assert store.room_view(code).n_present == 5     # the host is not a student
    relay.forget("s0")
    clock.now += PRESENT_EVERY
    relay.tick()
    assert store.room_view(code).n_present == 5     # s0 stays present until it ages out


def test_an_answer_is_saved_as_the_store_keeps_it_and_the_page_told(store):
    code, _ = store.create_room(QUESTIONS)
    pages = Recorder()
    relay = Relay(store, pages)
    try:
        relay.watch("s", code, "student-0001", drawn_now(store, code))
        relay.drew_receipt("s", code, "student-0001", None, "frag-receipt", (1, 1))
        first = relay.send("s", code, 1, 1, "student-0001", "down")
        assert (first.state, first.value) == ("sending", "down")
        receipt = wait_for(lambda: _final(relay.receipt(code, "student-0001")), timeout=30,
                           what="the answer to be saved")
        assert (receipt.state, receipt.value) == ("saved", "down")
        assert store.room_view(code, "student-0001", present=False).mine == "down"
        wait_for(lambda: ("s", ("frag-receipt",)) in pages.asked, timeout=10,
                 what="the page to be asked to redraw its receipt")
        relay.drew_receipt("s", code, "student-0001", receipt)
        # a page run that waits for the receipt and draws it: no request to redraw
        pages.take()
        relay.send("s", code, 1, 1, "student-0001", "up")
        receipt = relay.wait(code, "student-0001", timeout=30)
        assert receipt.state == "saved"
        relay.drew_receipt("s", code, "student-0001", receipt)
        time.sleep(1.0)
        assert ("s", ("frag-receipt",)) not in pages.take()
    finally:
        relay.stop()


def _final(receipt):
    return receipt if receipt is not None and receipt.final else None


def test_a_burst_of_taps_ends_with_the_last_in_the_store_every_time(store):
    code, _ = store.create_room(QUESTIONS)
    relay = Relay(store, Recorder())
    options = QUESTIONS[0].choices
    try:
        for trial in range(10):
            student = new_student_id()
            taps = [options[(trial + i) % 3] for i in range(20)]
            for value in taps:
                relay.send("s", code, 1, 1, student, value)
                time.sleep(0.003 * (trial % 3))
            receipt = wait_for(lambda s=student: _final(relay.receipt(code, s)), timeout=30,
                               what="the burst to settle")
            assert receipt.value == taps[-1]
            assert store.room_view(code, student, present=False).mine == taps[-1]
    finally:
        relay.stop()


def test_an_answer_to_a_closed_question_is_refused_and_says_why(store):
    code, secret = store.create_room(QUESTIONS)
    relay = Relay(store, Recorder())
    try:
        store.reveal(code, secret, 1)
        relay.send("s", code, 1, 1, "student-0001", "up")
        receipt = wait_for(lambda: _final(relay.receipt(code, "student-0001")), timeout=30,
                           what="a refusal")
        assert receipt.state == "refused" and "revealed" in receipt.why
        store.set_step(code, secret, 2)
        relay.send("s", code, 1, 1, "student-0001", "up")
        receipt = relay.wait(code, "student-0001", timeout=30)
        assert receipt.state == "refused" and "on step 2" in receipt.why
    finally:
        relay.stop()


def test_answers_given_while_sqlite_is_locked_are_saved_once_it_is_free(tmp_path):
    from xattn.classroom import sqlite_store
    backend = Backend.fresh("sqlite", tmp_path)
    store = backend.open()
    code, _ = store.create_room(QUESTIONS)
    locker = sqlite3.connect(backend.where, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")                     # another process holds the lock
    locked = time.monotonic()
    old_busy = sqlite_store.BUSY_MS                       # a writer waits 10 s for the lock,
    relay = Relay(store, Recorder())                      # then gives up: held 12 s here
    students = [new_student_id() for _ in range(4)]
    try:
        for i, s in enumerate(students):
            relay.send(f"p{i}", code, 1, 1, s, "up")
        relay.send("p0", code, 1, 1, students[0], "flat")  # a change during the fault
        wait_for(lambda: relay.receipt(code, students[1]).state == "retrying", timeout=30,
                 what="the store to refuse for being locked")
        assert "not available" in relay.receipt(code, students[1]).why
        assert store.room_view(code).n_answered == 0        # truly not saved yet
        time.sleep(max(0.0, 12 - (time.monotonic() - locked)))
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    try:
        for s in students:
            wait_for(lambda s=s: _final(relay.receipt(code, s)), timeout=30, what="the retry")
        view = store.room_view(code, students[0], present=False)
        assert view.mine == "flat" and view.counts == {"up": 3, "down": 0, "flat": 1}
    finally:
        relay.stop()
        sqlite_store.BUSY_MS = old_busy
        store.close()


def test_answers_given_while_redis_is_down_are_saved_when_it_is_back(tmp_path):
    redis_or_skip()
    server = RedisServer(tmp_path, persist=True)
    backend = Backend("redis", server.url, "fault:")
    store = backend.open()
    code, _ = store.create_room(QUESTIONS)
    early = new_student_id()
    store.answer(code, 1, early, "down")
    relay = Relay(store, Recorder())
    students = [new_student_id() for _ in range(3)]
    try:
        server.kill()
        relay.send("p0", code, 1, 1, early, "up")            # a change during the outage
        for i, s in enumerate(students):
            relay.send(f"p{i + 1}", code, 1, 1, s, "flat")
        wait_for(lambda: relay.receipt(code, students[0]).state == "retrying", timeout=60,
                 what="the store to be unreachable")
        server.start()
        for s in (early, *students):
            wait_for(lambda s=s: _final(relay.receipt(code, s)), timeout=60, what="the retry")
        view = store.room_view(code, early, present=False)
        assert view.mine == "up" and view.counts == {"up": 1, "down": 0, "flat": 3}
    finally:
        relay.stop()
        store.close()
        server.stop()


def test_a_closed_session_stops_counting_as_present(store):
    code, _ = store.create_room(QUESTIONS)
    clock, closed = Clock(), set()
    relay = Relay(store, Recorder(), alive=lambda s: s not in closed, clock=clock, start=False)
    for i in range(3):
        relay.watch(f"s{i}", code, f"student-{i:04d}", drawn_now(store, code))
    closed.add("s1")
    relay.tick()
    assert "2 pages" in repr(relay)
    assert store.room_view(code).n_present == 2


def test_a_page_that_cannot_be_asked_does_not_stop_the_others_or_presence(store):
    code, secret = store.create_room(QUESTIONS)
    asked = []

    def flaky(session, fragments):
        asked.append(session)
        if session == "s0":
            raise RuntimeError("this page's loop is gone")
        return True
    relay = Relay(store, flaky, clock=Clock(), start=False)
    for i in range(3):
        relay.watch(f"s{i}", code, f"student-{i:04d}", Drawn(-2))
    relay.tick()
    assert sorted(asked) == ["s0", "s1", "s2"]
    assert store.room_view(code).n_present == 3


def test_only_the_fragments_of_the_pages_last_layout_are_asked(store):
    code, _ = store.create_room(QUESTIONS)
    clock, pages = Clock(), Recorder()
    relay = Relay(store, pages, clock=clock, start=False)
    drawn = drawn_now(store, code)
    relay.drew_tally("host", code, 0, fragment="panel-before-reveal")   # during a full run
    relay.watch("host", code, None, drawn)                              # ... which ends
    relay.drew_tally("host", code, 0, fragment="panel-after-reveal")    # the next full run
    relay.drew_tally("host", code, 0, fragment="answers-after-reveal")
    relay.watch("host", code, None, drawn)
    store.touch(code, ["student-0001"])
    relay.tick()
    assert pages.take() == [("host", ("panel-after-reveal", "answers-after-reveal"))]


def _small_disk(tmp_path):
    """A folder on a 1 MB tmpfs (root, where mount is allowed), else None."""
    import subprocess
    folder = tmp_path / "small-disk"
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                          capture_output=True)
    return folder if done.returncode == 0 else None


def test_answers_given_while_the_disk_is_full_are_saved_once_there_is_room(tmp_path):
    import subprocess

    from xattn.classroom import SQLiteStore
    disk = _small_disk(tmp_path)
    if disk is None:
        pytest.skip("a full disk needs a small tmpfs, and mount is not allowed here")
    store = SQLiteStore(disk / "classes.sqlite3")
    code, _ = store.create_room(QUESTIONS)
    junk = disk / "junk"
    try:                                          # fill the filesystem: no byte left
        with open(junk, "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    except OSError:
        pass
    relay = Relay(store, Recorder())
    students = [new_student_id() for _ in range(3)]
    try:
        for i, s in enumerate(students):
            relay.send(f"p{i}", code, 1, 1, s, "down")
        relay.send("p0", code, 1, 1, students[0], "flat")     # a change during the fault
        wait_for(lambda: relay.receipt(code, students[1]).state == "retrying", timeout=60,
                 what="the store to refuse for being full")
        assert "full" in relay.receipt(code, students[1]).why
        junk.unlink()                                         # room on the disk again
        for s in students:
            wait_for(lambda s=s: _final(relay.receipt(code, s)), timeout=60, what="the retry")
        view = store.room_view(code, students[0], present=False)
        assert view.mine == "flat" and view.counts == {"up": 0, "down": 2, "flat": 1}
    finally:
        relay.stop()
        store.close()
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_receipts_of_a_room_no_page_is_in_are_dropped_after_a_while(store):
    from xattn.classroom.relay import RECEIPT_KEEP
    code, _ = store.create_room(QUESTIONS)
    clock = Clock()
    relay = Relay(store, Recorder(), clock=clock, start=False)
    relay.watch("s", code, "student-0001", drawn_now(store, code))
    relay.send("s", code, 1, 1, "student-0001", "up")
    relay.outbox._write(relay.outbox._take())                     # the outbox's worker, by hand
    relay.forget("s")
    relay.watch("elsewhere", store.create_room(QUESTIONS)[0], "student-0003", Drawn(0))
    relay.tick()
    assert relay.receipt(code, "student-0001").state == "saved"    # kept for a while
    clock.now += RECEIPT_KEEP + 1
    relay.tick()
    assert relay.receipt(code, "student-0001") is None
