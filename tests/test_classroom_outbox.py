"""The answers of one server process on their way to the class store, and their receipts
(``xattn/classroom/outbox.py``), on SQLite and a real redis-server; faults made for real:
another connection holding SQLite's write lock, redis-server killed and started again, a full
disk. Where one step at a time matters, the test turns the worker's two halves (``_take``,
``_write``) by hand."""

from __future__ import annotations

import logging
import sqlite3
import threading
import time

import pytest
from classroom_helpers import Backend, RedisServer, redis_or_skip, wait_for

from xattn.classroom import Question, new_student_id
from xattn.classroom import outbox as outbox_module
from xattn.classroom.outbox import Outbox, Receipt

QUESTIONS = (Question("choice", ("up", "down", "flat")),
             Question("number", low=0, high=1, decimals=2))


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


class Heard:
    """An ``on_change`` listener: every call, and whether the outbox's lock was free then
    (another thread could read a receipt while the listener ran)."""

    def __init__(self, outbox_of=lambda: None):
        self.calls: list[tuple[str, str, Receipt]] = []
        self.lock_free: list[bool] = []
        self.outbox_of = outbox_of

    def __call__(self, code, student, receipt):
        self.calls.append((code, student, receipt))
        outbox = self.outbox_of()
        if outbox is not None:
            read = threading.Thread(target=outbox.receipt, args=(code, student), daemon=True)
            read.start()
            read.join(5)
            self.lock_free.append(not read.is_alive())

    def states(self) -> list[tuple[str, object]]:
        return [(r.state, r.value) for _, _, r in self.calls]


def _final(receipt):
    return receipt if receipt is not None and receipt.final else None


def test_an_answer_is_saved_as_the_store_keeps_it(store):
    code, _ = store.create_room(QUESTIONS)
    outbox = Outbox(store)
    outbox.start()
    try:
        first = outbox.send("s", code, 1, 1, "student-0001", "down")
        assert (first.state, first.value, first.final) == ("sending", "down", False)
        receipt = wait_for(lambda: _final(outbox.receipt(code, "student-0001")), timeout=30,
                           what="the answer to be saved")
        assert (receipt.step, receipt.round, receipt.state, receipt.value) == (1, 1, "saved",
                                                                               "down")
        assert store.room_view(code, "student-0001", present=False).mine == "down"
        outbox.send("s", code, 1, 1, "student-0001", "up")
        receipt = outbox.wait(code, "student-0001", timeout=30)
        assert (receipt.state, receipt.value) == ("saved", "up")
        assert outbox.pending() == 0
    finally:
        outbox.stop()


def test_every_receipt_change_is_heard_outside_the_lock(store):
    """``on_change(code, student, receipt)`` hears each change of a receipt, in order, as
    `receipt` then gives it, with the lock free; an answer overtaken by a newer one while it
    was written changes nothing the phone sees (the newer one is still "sending")."""
    code, secret = store.create_room(QUESTIONS)
    outbox = None
    heard = Heard(lambda: outbox)
    outbox = Outbox(store, clock=Clock(), on_change=heard)
    s = "student-0001"
    outbox.send("p", code, 1, 1, s, "up")
    item = outbox._take()                              # the worker took "up" ...
    outbox.send("p", code, 1, 1, s, "down")            # ... the student changed their mind
    outbox._write(item)                                # "up" is stored, but overtaken
    assert heard.states() == [("sending", "up"), ("sending", "down")]
    assert outbox.receipt(code, s).state == "sending"
    outbox._write(outbox._take())
    assert heard.states()[2:] == [("saved", "down")]
    store.reveal(code, secret, 1)
    outbox.send("p", code, 1, 1, s, "flat")
    outbox._write(outbox._take())
    assert heard.states()[3:] == [("sending", "flat"), ("refused", "flat")]
    assert "revealed" in heard.calls[-1][2].why
    assert {(c, who) for c, who, _ in heard.calls} == {(code, s)}
    assert heard.calls[-1][2] == outbox.receipt(code, s)
    assert heard.lock_free == [True] * len(heard.calls)


def test_a_late_listener_call_is_a_nudge_and_the_outbox_has_the_newest_receipt(store):
    """``on_change`` is called after the outbox's lock is released, so a worker delayed between
    the two is heard after a newer answer's receipts: the receipt it passes is the one that
    worker wrote. What is true at that moment is ``Outbox.receipt`` (the hub reads it when it
    handles a call: ``xattn.classroom.hub.Hub._on_receipt``)."""
    code, _ = store.create_room(QUESTIONS)
    s, delayed, go = "student-0001", threading.Event(), threading.Event()
    heard, current = [], []

    def listener(code, student, receipt):
        if (receipt.state, receipt.value) == ("saved", "up"):
            delayed.set()
            go.wait(10)
        heard.append((receipt.state, receipt.value))
        now = outbox.receipt(code, student)
        current.append((now.state, now.value))
    outbox = Outbox(store, on_change=listener)
    outbox.send("p", code, 1, 1, s, "up")
    worker = threading.Thread(target=outbox._write, args=(outbox._take(),))
    worker.start()
    assert delayed.wait(10)                        # "up" saved; its call is under way
    outbox.send("p", code, 1, 1, s, "down")
    outbox._write(outbox._take())                  # "down" saved and heard
    go.set()
    worker.join(10)
    assert heard[-1] == ("saved", "up")            # the late call, as written
    assert current[-1] == ("saved", "down")        # ... and the truth when it is heard
    assert store.room_view(code, s, present=False).mine == "down"


def test_a_listener_that_fails_loses_no_answer(store, caplog):
    code, _ = store.create_room(QUESTIONS)

    def broken(code, student, receipt):
        raise RuntimeError("the phone's stream is gone")
    outbox = Outbox(store, on_change=broken)
    with caplog.at_level(logging.ERROR, logger=outbox_module.__name__):
        outbox.send("p", code, 1, 1, "student-0001", "up")
        outbox._write(outbox._take())
    assert outbox.receipt(code, "student-0001").state == "saved"
    assert store.room_view(code, "student-0001", present=False).mine == "up"
    assert "a receipt's listener failed" in caplog.text


def test_a_burst_of_taps_ends_with_the_last_in_the_store_every_time(store):
    code, _ = store.create_room(QUESTIONS)
    heard = Heard()
    outbox = Outbox(store, on_change=heard)
    outbox.start()
    options = QUESTIONS[0].choices
    try:
        for trial in range(10):
            student = new_student_id()
            taps = [options[(trial + i) % 3] for i in range(20)]
            for value in taps:
                outbox.send("s", code, 1, 1, student, value)
                time.sleep(0.003 * (trial % 3))
            receipt = wait_for(lambda s=student: _final(outbox.receipt(code, s)), timeout=30,
                               what="the burst to settle")
            assert receipt.value == taps[-1]
            assert store.room_view(code, student, present=False).mine == taps[-1]
            mine = [(r.state, r.value) for _, who, r in heard.calls if who == student]
            assert mine[0] == ("sending", taps[0]) and ("saved", taps[-1]) in mine
    finally:
        outbox.stop()


def test_an_answer_to_a_closed_question_is_refused_and_says_why(store):
    code, secret = store.create_room(QUESTIONS)
    outbox = Outbox(store)
    outbox.start()
    try:
        store.reveal(code, secret, 1)
        outbox.send("s", code, 1, 1, "student-0001", "up")
        receipt = wait_for(lambda: _final(outbox.receipt(code, "student-0001")), timeout=30,
                           what="a refusal")
        assert receipt.state == "refused" and "revealed" in receipt.why
        store.set_step(code, secret, 2)
        outbox.send("s", code, 1, 1, "student-0001", "up")
        receipt = outbox.wait(code, "student-0001", timeout=30)
        assert receipt.state == "refused" and "on step 2" in receipt.why
    finally:
        outbox.stop()


def test_an_outbox_full_of_unsent_answers_refuses_more_and_says_why(store, monkeypatch):
    monkeypatch.setattr(outbox_module, "MAX_PENDING", 2)
    code, _ = store.create_room(QUESTIONS)
    heard = Heard()
    outbox = Outbox(store, on_change=heard)                # no workers: nothing leaves
    outbox.send("p", code, 1, 1, "student-0001", "up")
    outbox.send("p", code, 1, 1, "student-0002", "up")
    refused = outbox.send("p", code, 1, 1, "student-0003", "up")
    assert refused.state == "refused" and "too many unsent answers" in refused.why
    again = outbox.send("p", code, 1, 1, "student-0001", "down")   # a change still goes in
    assert again.state == "sending" and outbox.pending() == 2
    assert heard.calls[2] == (code, "student-0003", refused)


def test_answers_given_while_sqlite_is_locked_are_saved_once_it_is_free(tmp_path,
                                                                         monkeypatch):
    from xattn.classroom import sqlite_store
    # a writer waits BUSY_MS for the lock, then gives up: 0.5 s here (10 s in a server)
    monkeypatch.setattr(sqlite_store, "BUSY_MS", 500)
    backend = Backend.fresh("sqlite", tmp_path)
    store = backend.open()
    code, _ = store.create_room(QUESTIONS)
    heard = Heard()
    outbox = Outbox(store, on_change=heard)
    locker = sqlite3.connect(backend.where, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")                     # another process holds the lock
    outbox.start()
    students = [new_student_id() for _ in range(4)]
    try:
        for i, s in enumerate(students):
            outbox.send(f"p{i}", code, 1, 1, s, "up")
        outbox.send("p0", code, 1, 1, students[0], "flat")  # a change during the fault
        wait_for(lambda: outbox.receipt(code, students[1]).state == "retrying", timeout=30,
                 what="the store to refuse for being locked")
        assert "not available" in outbox.receipt(code, students[1]).why
        assert store.room_view(code).n_answered == 0        # truly not saved yet
        assert ("retrying", "up") in heard.states()          # the phone was told
        time.sleep(1.0)                                       # a few retries, all refused
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    try:
        for s in students:
            wait_for(lambda s=s: _final(outbox.receipt(code, s)), timeout=30, what="the retry")
        view = store.room_view(code, students[0], present=False)
        assert view.mine == "flat" and view.counts == {"up": 3, "down": 0, "flat": 1}
        assert outbox.pending() == 0
        assert [r.state for _, who, r in heard.calls if who == students[1]][-1] == "saved"
    finally:
        outbox.stop()
        store.close()


def _locked(tmp_path, monkeypatch):
    """A SQLite store whose write lock another connection holds (a writer gives up after
    0.3 s), a room in it and a started outbox: (store, code, secret, outbox, the locker)."""
    from xattn.classroom import sqlite_store
    monkeypatch.setattr(sqlite_store, "BUSY_MS", 300)
    backend = Backend.fresh("sqlite", tmp_path)
    store = backend.open()
    code, secret = store.create_room(QUESTIONS)
    outbox = Outbox(store)
    locker = sqlite3.connect(backend.where, isolation_level=None)
    locker.execute("BEGIN IMMEDIATE")
    outbox.start()
    return store, code, secret, outbox, locker


def test_the_same_answer_sent_again_while_the_store_is_locked_stays_retrying(tmp_path,
                                                                             monkeypatch):
    """A phone sends its answer again every 4 s until the class has it; while SQLite's write
    lock is held the receipt keeps saying *retrying* (it does not fall back to *sending*),
    the answer keeps its back-off, and it is saved once, when the lock goes."""
    store, code, _, outbox, locker = _locked(tmp_path, monkeypatch)
    me = new_student_id()
    try:
        outbox.send("p", code, 1, 1, me, "up")
        wait_for(lambda: outbox.receipt(code, me).state == "retrying", timeout=30,
                 what="the locked store to be said")
        for _ in range(5):                                   # the phone sends it again
            assert outbox.send("p", code, 1, 1, me, "up").state == "retrying"
            time.sleep(0.1)
            assert outbox.receipt(code, me).state == "retrying"
        assert outbox.send("p", code, 1, 1, me, "down").state == "sending"   # a new answer
        wait_for(lambda: outbox.receipt(code, me).state == "retrying", timeout=30,
                 what="the new answer to wait too")
        assert outbox.receipt(code, me).value == "down"
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    try:
        wait_for(lambda: outbox.receipt(code, me).state == "saved", timeout=30,
                 what="the answer once the lock goes")
        assert store.room_view(code, me, present=False).mine == "down"
        assert outbox.pending() == 0
    finally:
        outbox.stop()
        store.close()


def test_a_confidence_travels_with_its_answer_through_every_retry(tmp_path, monkeypatch):
    """Sent while SQLite's write lock is held: the receipt says *retrying* with the answer and
    its confidence; the same answer sent again with another confidence is a new answer (it
    is not the retrying one); once the lock goes the store has the last one, and the receipt
    says what was saved."""
    store, code, secret, outbox, locker = _locked(tmp_path, monkeypatch)
    me = new_student_id()
    try:
        first = outbox.send("p", code, 1, 1, me, "up", "guess")
        assert (first.state, first.confidence) == ("sending", "guess")
        retrying = wait_for(lambda: (r := outbox.receipt(code, me)).state == "retrying" and r,
                            timeout=30, what="the locked store to be said")
        assert (retrying.value, retrying.confidence) == ("up", "guess")
        assert outbox.send("p", code, 1, 1, me, "up", "guess") == retrying    # the same again
        changed = outbox.send("p", code, 1, 1, me, "up", "sure")             # surer now
        assert (changed.state, changed.confidence) == ("sending", "sure")
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    try:
        saved = wait_for(lambda: (r := outbox.receipt(code, me)).state == "saved" and r,
                         timeout=30, what="the answer once the lock goes")
        assert (saved.value, saved.confidence) == ("up", "sure")
        assert store.mine(code, 1, me) == ("up", "sure")
        refused = outbox.send("p", code, 1, 1, me, "down", "certain")
        assert refused.state == "sending"
        refused = wait_for(lambda: _final(outbox.receipt(code, me)), timeout=30,
                           what="a confidence that is not a level to be refused")
        assert refused.state == "refused" and "received 'certain'" in refused.why
        assert store.mine(code, 1, me) == ("up", "sure")
    finally:
        outbox.stop()
        store.close()


def test_answers_given_while_redis_is_down_are_saved_when_it_is_back(tmp_path):
    redis_or_skip()
    server = RedisServer(tmp_path, persist=True)
    backend = Backend("redis", server.url, "fault:")
    store = backend.open()
    code, _ = store.create_room(QUESTIONS)
    early = new_student_id()
    store.answer(code, 1, early, "down")
    outbox = Outbox(store)
    outbox.start()
    students = [new_student_id() for _ in range(3)]
    try:
        server.kill()
        outbox.send("p0", code, 1, 1, early, "up")            # a change during the outage
        for i, s in enumerate(students):
            outbox.send(f"p{i + 1}", code, 1, 1, s, "flat")
        wait_for(lambda: outbox.receipt(code, students[0]).state == "retrying", timeout=60,
                 what="the store to be unreachable")
        server.start()
        for s in (early, *students):
            wait_for(lambda s=s: _final(outbox.receipt(code, s)), timeout=60, what="the retry")
        view = store.room_view(code, early, present=False)
        assert view.mine == "up" and view.counts == {"up": 1, "down": 0, "flat": 3}
    finally:
        outbox.stop()
        store.close()
        server.stop()


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
    outbox = Outbox(store)
    outbox.start()
    students = [new_student_id() for _ in range(3)]
    try:
        for i, s in enumerate(students):
            outbox.send(f"p{i}", code, 1, 1, s, "down")
        outbox.send("p0", code, 1, 1, students[0], "flat")     # a change during the fault
        wait_for(lambda: outbox.receipt(code, students[1]).state == "retrying", timeout=60,
                 what="the store to refuse for being full")
        assert "full" in outbox.receipt(code, students[1]).why
        junk.unlink()                                         # room on the disk again
        for s in students:
            wait_for(lambda s=s: _final(outbox.receipt(code, s)), timeout=60, what="the retry")
        view = store.room_view(code, students[0], present=False)
        assert view.mine == "flat" and view.counts == {"up": 0, "down": 2, "flat": 1}
    finally:
        outbox.stop()
        store.close()
        subprocess.run(["umount", str(disk)], capture_output=True)


def test_receipts_of_a_class_that_ended_are_dropped_after_a_while(store):
    code, _ = store.create_room(QUESTIONS)
    other, _ = store.create_room(QUESTIONS)
    clock = Clock()
    outbox = Outbox(store, clock=clock)
    outbox.send("s", code, 1, 1, "student-0001", "up")
    outbox._write(outbox._take())                          # saved at 1000
    outbox.send("s", other, 1, 1, "student-0002", "up")    # still on its way
    clock.now += 600
    outbox.drop(keep=(), before=1000)                      # changed at 1000, not before
    assert outbox.receipt(code, "student-0001").state == "saved"
    outbox.drop(keep={code}, before=clock.now)             # its room still has pages
    assert outbox.receipt(code, "student-0001").state == "saved"
    outbox.drop(keep=(), before=clock.now)
    assert outbox.receipt(code, "student-0001") is None
    assert outbox.receipt(other, "student-0002").state == "sending"   # never an unsent one
    assert outbox.pending() == 1
