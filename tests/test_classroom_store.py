"""The class store: every behaviour, the same test functions against SQLite and a real
redis-server (house style 15: shared state has one door, and the same tests run against each
backend behind it)."""

from __future__ import annotations

import multiprocessing
import random
import re
import sqlite3
import sys
import threading
import time
import types

import pytest
from classroom_helpers import (
    cast_answers,
    tampered,
    wait_for,
)

from xattn.classroom import (
    ALPHABET,
    AnswerRefused,
    ClassroomError,
    DeviceCodeRefused,
    HostRefused,
    LimitReached,
    Limits,
    Question,
    RedisStore,
    RoomEnded,
    RoomNotFound,
    SQLiteStore,
    StoreUnavailable,
    new_student_id,
    open_store,
)
from xattn.classroom.codes import secret_digest
from xattn.classroom.confidence import LEVELS

QUESTIONS = (Question("token", ("the", "cat", "the")),           # step 1: tap a word
             Question("number", low=0, high=1, decimals=2),      # step 2: a weight
             Question("choice", ("up", "down")))                 # step 3: which way


@pytest.fixture
def room(store):
    return store.create_room(QUESTIONS)


def students(n: int) -> list[str]:
    return [new_student_id() for _ in range(n)]


def two_rounds(store, code: str, secret: str, ids, first, then) -> None:
    """Step 1 answered by ``ids`` (``first``: each one's answer, None for none), revealed,
    asked again and answered again (``then``)."""
    for answers in (first, then):
        for sid, value in zip(ids, answers, strict=True):
            if value is not None:
                store.answer(code, 1, sid, value)
        if answers is first:
            store.reveal(code, secret, 1)
            store.ask_again(code, secret, 1)


# --- rooms -----------------------------------------------------------------------------------

def test_a_new_room_is_at_step_one_asking_with_a_short_code_and_long_secret(store):
    t0 = time.time()
    code, secret = store.create_room(QUESTIONS)
    t1 = time.time()
    assert len(code) == 6 and set(code) <= set(ALPHABET) and not set(code) & set("0O1IL")
    assert len(secret) >= 32
    view = store.room_view(code)
    assert (view.code, view.step, view.n_steps, view.phase, view.round) == \
        (code, 1, 3, "asking", 1)
    assert view.question == QUESTIONS[0] and view.counts == {0: 0, 1: 0, 2: 0}
    assert (view.n_answered, view.n_present, view.mine) == (0, 0, None)
    assert t0 - 1 < view.expires_at - 12 * 3600 < t1 + 1      # 12 h from its start


def test_codes_and_secrets_come_from_secrets_not_the_global_random(store):
    random.seed(0)
    first = store.create_room(QUESTIONS)
    random.seed(0)
    second = store.create_room(QUESTIONS)
    assert first[0] != second[0] and first[1] != second[1]


def test_the_store_keeps_a_hash_of_the_host_secret_never_the_secret(backend, store, room):
    code, secret = room
    new = store.rotate_host(code, secret)
    dump = backend.dump()
    assert code.encode() in dump                     # the dump is real...
    assert secret.encode() not in dump and new.encode() not in dump   # ...and holds no secret


def test_a_new_store_object_keeps_rooms_and_answers(backend, store, room):
    code, secret = room
    sid = new_student_id()
    store.answer(code, 1, sid, 1)
    store.close()
    again = backend.open()                           # a restarted process
    assert again.room_view(code, sid).mine == 1
    again.set_step(code, secret, 2)
    assert store.room_view(code).step == 2           # the first object reconnects


def test_codes_are_read_as_typed_and_unknown_ones_refused(store, room):
    code = room[0]
    typed = f" {code[:3].lower()}-{code[3:].lower()} "
    assert store.room_view(typed).code == code
    for bad in ("ABC", "ABCDE0", "ABCDEFG", ""):
        with pytest.raises(RoomNotFound, match="6 characters from ABCDEFGHJK"):
            store.room_view(bad)
    unknown = next(c * 6 for c in ALPHABET if c * 6 != code)
    with pytest.raises(RoomNotFound, match=f"No class is running with the code {unknown}"):
        store.room_view(unknown)
    with pytest.raises(TypeError, match="a room code must be a str"):
        store.room_view(123456)


# --- the host --------------------------------------------------------------------------------

def test_set_step_moves_the_class_and_keeps_each_steps_phase(store, room):
    code, secret = room
    store.reveal(code, secret, 1)
    store.set_step(code, secret, 3)
    assert (store.room_view(code).step, store.room_view(code).phase) == (3, "asking")
    store.set_step(code, secret, 1)
    assert store.room_view(code).phase == "revealed"
    with pytest.raises(ValueError, match="step must be from 1 to 3; received 4"):
        store.set_step(code, secret, 4)
    with pytest.raises(ValueError, match="step must be an int >= 1; received 0"):
        store.set_step(code, secret, 0)
    with pytest.raises(TypeError, match="step must be an int; received bool"):
        store.set_step(code, secret, True)


@pytest.mark.parametrize("op", ["check_host", "rotate_host", "set_step", "reveal", "ask_again",
                                "results"])
def test_a_wrong_secret_is_refused_exactly_like_a_room_that_does_not_exist(store, room, op):
    code, secret = room
    args = {"set_step": (2,), "reveal": (1,), "ask_again": (1,)}.get(op, ())
    other = next(c * 6 for c in ALPHABET if c * 6 != code)
    wrong = tampered(secret)
    attempts = [(code, wrong), (code, ""), (code, secret + "x"), (code, "x" * 100_000),
                (other, secret), (other, wrong), ("!!", secret), (code.lower() + "Q", secret)]
    messages = set()
    for c, s in attempts:
        with pytest.raises(HostRefused) as err:
            getattr(store, op)(c, s, *args)
        messages.add(str(err.value))
    assert messages == {HostRefused.MESSAGE}
    assert store.check_host(code.lower(), secret) == code
    view = store.room_view(code)
    assert (view.step, view.phase, view.round) == (1, "asking", 1)    # nothing changed


def test_rotating_the_host_secret_keeps_the_answers_and_retires_the_old_one(store, room):
    code, old = room
    ids = students(3)
    for sid, token in zip(ids, (0, 2, 2), strict=True):
        store.answer(code, 1, sid, token)
    new = store.rotate_host(code, old)
    assert new != old
    with pytest.raises(HostRefused):
        store.reveal(code, old, 1)
    store.reveal(code, new, 1)
    view = store.room_view(code, ids[1])
    assert view.counts == {0: 1, 1: 0, 2: 2} and view.phase == "revealed" and view.mine == 2


def test_a_device_code_gives_another_device_the_host_key_once_and_only_while_it_lives(
        backend, store, room, monkeypatch):
    code, secret = room
    device, expires = store.add_device(code, secret)
    assert len(device) == 8 and set(device) <= set(ALPHABET)
    assert 290 < expires - time.time() <= 301                     # minutes, on the store's clock
    assert device.encode() not in backend.dump() and secret.encode() not in backend.dump()
    typed = f" {device[:4].lower()}-{device[4:]} "
    assert store.redeem_device(code.lower(), typed) == secret     # as typed on a phone
    version = store.room_view(code).version
    for code_, device_ in [(code, device),                        # used once already
                           (code, "ABCDEFGH"), (code, ""), (code, "x" * 10_000), (code, 3),
                           ("ZZZZZZ", device), ("!!", device)]:
        with pytest.raises(DeviceCodeRefused, match="works once, for a few minutes"):
            store.redeem_device(code_, device_)
    assert store.room_view(code).version == version               # nothing moved the class
    with pytest.raises(HostRefused):
        store.add_device(code, tampered(secret))
    stale, _ = store.add_device(code, secret)
    new = store.rotate_host(code, secret)                         # every other device out
    with pytest.raises(DeviceCodeRefused):
        store.redeem_device(code, stale)                          # ... and its codes with it
    fresh, _ = store.add_device(code, new)
    other, _ = store.add_device(code, new)
    assert fresh != other and store.redeem_device(code, other) == new
    import xattn.classroom.hosting as hosting
    monkeypatch.setattr(hosting, "DEVICE_SECONDS", 1.0)
    short, ends = store.add_device(code, new)
    time.sleep(max(0.0, ends - time.time()) + 0.3)                # past its end
    with pytest.raises(DeviceCodeRefused):
        store.redeem_device(code, short)                          # expired: refused
    assert store.redeem_device(code, fresh) == new                # the first one still lives


def test_reveal_closes_the_step_and_ask_again_opens_a_new_round(store, room):
    code, secret = room
    a, b = students(2)
    store.answer(code, 1, a, 1)
    store.reveal(code, secret, 1)
    with pytest.raises(AnswerRefused, match="step 1 is revealed: answers are closed"):
        store.answer(code, 1, b, 0)
    assert store.room_view(code, a).mine == 1                 # shown beside the truth
    assert store.ask_again(code, secret, 1) == 2
    view = store.room_view(code, a)
    assert (view.phase, view.round, view.n_answered, view.mine) == ("asking", 2, 0, None)
    store.answer(code, 1, a, 2)
    store.answer(code, 1, b, 2)
    rows = [(t.step, t.round, t.counts) for t in store.results(code, secret)]
    assert rows[:2] == [(1, 1, {0: 0, 1: 1, 2: 0}), (1, 2, {0: 0, 1: 0, 2: 2})]


def test_an_answer_names_its_round_and_one_to_a_round_asked_again_is_refused(store, room):
    """A phone that answered round 1 while the host asked again (its tap in flight, or sent
    again after a reconnect) is told its answer was not saved: it never lands in round 2 as a
    vote the student did not cast there."""
    code, secret = room
    a, b = students(2)
    assert store.answer(code, 1, a, 1, round_=1) == 1
    store.reveal(code, secret, 1)
    store.ask_again(code, secret, 1)
    with pytest.raises(AnswerRefused, match=r"this answer was for round 1 of step 1, and the "
                                            r"class is on round 2 now: it was not saved"):
        store.answer(code, 1, b, 0, round_=1)
    view = store.room_view(code, b)
    assert (view.round, view.n_answered, view.mine) == (2, 0, None)
    assert store.answer(code, 1, b, 0, round_=2) == 0
    assert store.answer(code, 1, a, 2) == 2                   # no round named: the open one
    with pytest.raises(TypeError, match="round_ must be an int; received bool"):
        store.answer(code, 1, a, 2, round_=True)
    rows = [(t.step, t.round, t.counts) for t in store.results(code, secret)]
    assert rows[:2] == [(1, 1, {0: 0, 1: 1, 2: 0}), (1, 2, {0: 1, 1: 0, 2: 1})]


def test_ask_again_may_bring_a_new_question_and_older_rounds_keep_theirs(store, room):
    code, secret = room
    store.answer(code, 1, new_student_id(), 2)
    new_q = Question("token", ("le", "chat"))
    store.ask_again(code, secret, 1, new_q)
    assert store.room_view(code).question == new_q
    with pytest.raises(AnswerRefused, match="token position from 0 to 1; received 2"):
        store.answer(code, 1, new_student_id(), 2)
    first, second = store.results(code, secret)[:2]
    assert first.question == QUESTIONS[0] and first.counts[2] == 1
    assert second.question == new_q and second.counts == {0: 0, 1: 0}


# --- the students ----------------------------------------------------------------------------

def test_answers_are_counted_per_value_and_the_last_answer_wins(store, room):
    code, secret = room
    a, b, c = students(3)
    store.answer(code, 1, a, 0)
    store.answer(code, 1, b, 0)
    store.answer(code, 1, c, 1)
    store.answer(code, 1, b, 2)                               # b changes their mind
    view = store.room_view(code)
    assert view.counts == {0: 1, 1: 1, 2: 1} and view.n_answered == 3
    assert store.my_answer(code, 1, b) == 2 and store.my_answer(code, 2, b) is None
    store.set_step(code, secret, 2)
    store.answer(code, 2, a, 0.333)
    store.answer(code, 2, b, 0.3349)                          # rounds to the same 0.33
    store.answer(code, 2, c, 1)
    assert store.room_view(code, a).counts == {0.33: 2, 1.0: 1}
    store.set_step(code, secret, 3)
    store.answer(code, 3, a, "down")
    assert store.room_view(code, a).counts == {"up": 0, "down": 1}
    assert store.room_view(code, a).mine == "down"


def test_a_hundred_votes_from_one_student_count_once_and_store_one_record(backend, store, room):
    code, _ = room
    sid = new_student_id()
    for i in range(100):
        store.answer(code, 1, sid, i % 3)
    view = store.room_view(code, sid)
    assert view.n_answered == 1 and view.counts == {0: 1, 1: 0, 2: 0} and view.mine == 0
    assert backend.answer_records(code) == 1


@pytest.mark.parametrize("step, value, expected", [
    (1, 3, "a token position from 0 to 2; received 3"),
    (1, -1, "a token position from 0 to 2; received -1"),
    (1, True, "a token position from 0 to 2; received True"),
    (1, "cat", "a token position from 0 to 2; received 'cat'"),
    (1, 1.0, "a token position from 0 to 2; received 1.0"),
    (2, 1.5, "a number from 0 to 1; received 1.5"),
    (2, float("nan"), "a number from 0 to 1; received nan"),
    (2, False, "a number from 0 to 1; received False"),
    (2, "0.5", "a number from 0 to 1; received '0.5'"),
    (3, "sideways", "one of 'up', 'down'; received 'sideways'"),
    (3, 0, "one of 'up', 'down'; received 0"),
    (3, "UP", "one of 'up', 'down'; received 'UP'"),
])
def test_an_answer_outside_the_steps_choices_is_refused(store, room, step, value, expected):
    code, secret = room
    store.set_step(code, secret, step)
    with pytest.raises(AnswerRefused, match=f"this step takes {expected}"):
        store.answer(code, step, new_student_id(), value)
    assert store.room_view(code).n_answered == 0


def test_an_answer_to_a_step_the_class_is_not_on_is_refused(store, room):
    code, secret = room
    store.set_step(code, secret, 2)
    for step in (1, 3, 9):
        with pytest.raises(AnswerRefused, match=f"the class is on step 2, not step {step}"):
            store.answer(code, step, new_student_id(), 0)
    with pytest.raises(ValueError, match="student_id must be 8 to 64 URL-safe characters"):
        store.answer(code, 2, "x y<script>", 0.5)
    with pytest.raises(TypeError, match="student_id must be a str"):
        store.answer(code, 2, 12345678, 0.5)


def test_students_present_are_those_who_read_the_room_recently(backend):
    # The window is the reader's: a long one to count joins whatever the machine's pauses,
    # a short one (another process's setting) to see students leave.
    slow, fast = backend.open(Limits(present_seconds=3600)), backend.open(Limits(present_seconds=1))
    code, _ = slow.create_room(QUESTIONS)
    a, b = students(2)
    assert slow.room_view(code, a).n_present == 1             # joining counts at once
    assert slow.room_view(code, b).n_present == 2
    assert slow.room_view(code).n_present == 2                # the host is not a student
    wait_for(lambda: fast.room_view(code).n_present == 0, what="students to leave")
    assert fast.room_view(code, a).n_present == 1             # back: present again at once
    assert slow.room_view(code).n_present == 2


# --- bounds and expiry -----------------------------------------------------------------------

def test_rooms_per_server_are_bounded(backend):
    store = backend.open(Limits(max_rooms=2))
    store.create_room(QUESTIONS)
    store.create_room(QUESTIONS)
    with pytest.raises(LimitReached, match=r"holds 2 classes.*Limits.max_rooms = 2"):
        store.create_room(QUESTIONS)


def test_a_full_store_makes_space_from_the_room_whose_host_was_seen_longest_ago(backend):
    """Someone opening ?class=new again and again fills the store; a lecturer can still start
    a class once a room's host has not been seen for Limits.untaught_seconds, the one seen
    longest ago going first; a room whose host acts stays."""
    store = backend.open(Limits(max_rooms=4, untaught_seconds=0.3))
    rooms = []
    for _ in range(4):
        rooms.append(store.create_room(QUESTIONS))
        time.sleep(0.01)                                      # one after another (ms clocks)
    (first, _), (second, key), (third, _), (fourth, _) = rooms
    with pytest.raises(LimitReached, match=r"holds 4 classes.*nobody taught in one for 0.3 s"):
        store.create_room(QUESTIONS)                          # every host seen just now
    time.sleep(0.4)
    store.lock(second, key, False)                            # a host action: seen now
    fresh = store.create_room(QUESTIONS)[0]                   # replaces `first`, the oldest
    with pytest.raises(RoomNotFound):
        store.room_view(first)
    store.create_room(QUESTIONS)                              # then `third`
    with pytest.raises(RoomNotFound):
        store.room_view(third)
    for code in (second, fourth, fresh):
        assert store.room_view(code).step == 1


def test_answers_per_room_are_bounded_and_a_changed_answer_is_not_a_new_one(backend):
    store = backend.open(Limits(max_answers=3))
    code, _ = store.create_room(QUESTIONS)
    ids = students(4)
    for sid in ids[:3]:
        store.answer(code, 1, sid, 0)
    store.answer(code, 1, ids[0], 1)                          # a replacement still fits
    with pytest.raises(LimitReached, match=r"holds 3 answers.*Limits.max_answers = 3"):
        store.answer(code, 1, ids[3], 0)
    assert store.room_view(code).counts == {0: 2, 1: 1, 2: 0}


def test_bytes_per_answer_are_bounded(backend):
    store = backend.open(Limits(max_answer_bytes=8))
    with pytest.raises(LimitReached, match="at most 8 bytes.*Limits.max_answer_bytes"):
        store.create_room([Question("choice", ("short", "much too long"))])
    code, _ = store.create_room([Question("choice", ("short", "ééé"))])
    for value in ("x" * 9, "é" * 5, "x" * 10_000_000):
        with pytest.raises(LimitReached, match=r"at most 8 bytes \(Limits.max_answer_bytes\)"):
            store.answer(code, 1, new_student_id(), value)
    store.answer(code, 1, new_student_id(), "ééé")            # 6 bytes


def test_students_per_room_are_bounded_and_those_gone_make_room(backend):
    slow = backend.open(Limits(max_students=2, present_seconds=3600))
    fast = backend.open(Limits(max_students=2, present_seconds=1))
    code, _ = slow.create_room(QUESTIONS)
    a, b, c = students(3)
    slow.room_view(code, a)
    slow.room_view(code, b)
    with pytest.raises(LimitReached, match=r"has 2 students.*Limits.max_students = 2"):
        slow.room_view(code, c)
    slow.room_view(code, a)                                   # one already in stays in
    wait_for(lambda: fast.room_view(code).n_present == 0, what="students to leave")
    assert fast.room_view(code, c).n_present == 1             # the gone made room


def test_steps_and_rounds_per_room_are_bounded(backend):
    store = backend.open(Limits(max_steps=3, max_rounds=2))
    with pytest.raises(LimitReached, match=r"1 to 3 questions \(Limits.max_steps\); received 4"):
        store.create_room(QUESTIONS + QUESTIONS[:1])
    with pytest.raises(LimitReached, match="received 0"):
        store.create_room([])
    with pytest.raises(TypeError, match="questions must be Question objects"):
        store.create_room(["up or down?"])
    code, secret = store.create_room(QUESTIONS)
    assert store.ask_again(code, secret, 2) == 2
    with pytest.raises(LimitReached, match=r"asked 2 times.*Limits.max_rounds = 2"):
        store.ask_again(code, secret, 2)


def test_rooms_expire_and_are_deleted(backend):
    store = backend.open(Limits(ttl_seconds=1.0))
    code, secret = store.create_room(QUESTIONS)
    if _alive(store, code):
        store.answer(code, 1, new_student_id(), 1)
    wait_for(lambda: _gone(store, code), what="the room to expire")
    with pytest.raises(HostRefused):
        store.set_step(code, secret, 2)
    with pytest.raises(RoomNotFound):
        store.answer(code, 1, new_student_id(), 1)
    store.create_room(QUESTIONS)                              # a write cleans up (SQLite)
    wait_for(lambda: backend.records(code) == 0, what="the expired room's records to go")


def _alive(store, code) -> bool:
    try:
        store.room_view(code)
        return True
    except RoomNotFound:       # a very slow machine took more than the room's second
        return False


def _gone(store, code) -> bool:
    return not _alive(store, code)


# --- concurrency -----------------------------------------------------------------------------

def test_two_processes_cast_500_answers_each_and_none_is_lost(backend, store, room,
                                                             monkeypatch):
    code, _ = room
    # A spawned process runs the parent's __main__ again, and an AppTest earlier in this
    # process leaves app.py there: start the writers from a blank __main__.
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))
    ctx = multiprocessing.get_context("spawn")
    go = ctx.Event()
    procs = [ctx.Process(target=cast_answers, args=(backend, code, who, 500, go))
             for who in ("p1", "p2")]
    for p in procs:
        p.start()
    go.set()
    for p in procs:
        p.join(600)
        assert p.exitcode == 0, f"a writer process failed (exit code {p.exitcode})"
    view = store.room_view(code)
    assert view.n_answered == 1000 and view.counts == {0: 334, 1: 334, 2: 332}
    assert backend.answer_records(code) == 1000


def test_threads_sharing_one_store_object_lose_no_answer(store, room):
    code, _ = room
    errors = []

    def cast(who):
        try:
            for i in range(50):
                store.answer(code, 1, f"{who}-{i:04d}", i % 3)
                store.room_view(code, f"{who}-{i:04d}")
        except ClassroomError as err:
            errors.append(err)
    threads = [threading.Thread(target=cast, args=(f"thread{t}",)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    view = store.room_view(code)
    assert view.n_answered == 300 and view.n_present == 300


# --- configuration ---------------------------------------------------------------------------

def test_open_store_is_sqlite_in_the_data_directory_unless_configured(tmp_path, monkeypatch):
    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    monkeypatch.delenv("XATTN_CLASS_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    store = open_store()
    assert isinstance(store, SQLiteStore)
    assert store.path == tmp_path / "data" / "xattn" / "classes.sqlite3" and store.path.exists()
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "here" / "class.db"))
    assert open_store().path == tmp_path / "here" / "class.db"


def test_open_store_is_redis_when_its_url_is_set(redis_server, tmp_path, monkeypatch):
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "unused.sqlite3"))
    monkeypatch.setenv("XATTN_REDIS_URL", redis_server.url)
    store = open_store(Limits(max_rooms=7))
    assert isinstance(store, RedisStore) and store.limits.max_rooms == 7
    code, _ = store.create_room(QUESTIONS)
    assert store.room_view(code).step == 1


def test_a_store_that_cannot_be_used_says_so(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(StoreUnavailable, match="folder cannot be made"):
        SQLiteStore(tmp_path / "file" / "classes.sqlite3")
    (tmp_path / "not-sqlite").write_bytes(b"\x00" * 4096)
    with pytest.raises(StoreUnavailable, match="cannot be opened"):
        SQLiteStore(tmp_path / "not-sqlite")
    import socket
    with socket.socket() as s:              # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(StoreUnavailable, match="not available.*onnect"):
        RedisStore(f"redis://127.0.0.1:{port}/0").room_view("HJK23M")
    with pytest.raises(ValueError, match="Limits.max_rooms must be an int >= 1; received 0"):
        Limits(max_rooms=0)
    with pytest.raises(ValueError, match="Limits.ttl_seconds must be a positive number"):
        Limits(ttl_seconds=-1)


def test_counts_stay_equal_to_the_answers_while_students_change_them_at_once(store, room):
    code, _ = room
    ids = students(20)

    def change(seed):
        rng = random.Random(seed)               # a local generator, seeded: replayable
        for _ in range(150):
            store.answer(code, 1, rng.choice(ids), rng.randrange(3))
    threads = [threading.Thread(target=change, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    finals = [store.my_answer(code, 1, sid) for sid in ids]
    expected = {v: sum(f == v for f in finals) for v in range(3)}
    view = store.room_view(code)
    assert view.counts == expected and view.n_answered == sum(f is not None for f in finals)


def test_the_sqlite_file_is_in_wal_mode_and_its_connections_wait_for_the_lock(tmp_path):
    store = SQLiteStore(tmp_path / "classes.sqlite3")
    store.create_room(QUESTIONS)
    c = store._take()                          # one of the connections the store works with
    try:
        assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert c.execute("PRAGMA busy_timeout").fetchone()[0] >= 1000   # ms: waits, not fails
    finally:
        store._give(c)
    store.close()
    import sqlite3
    with sqlite3.connect(tmp_path / "classes.sqlite3") as other:        # WAL is in the file
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_page_peeking_at_a_limit_does_not_wait_for_the_write_lock(tmp_path, monkeypatch):
    """Every full run of a page in a room peeks at the limit of failed codes: a read, which WAL
    serves while another process holds the write lock (with BEGIN IMMEDIATE it waited for the
    lock: 100 students' pages on *Next* queued behind each other and every answer)."""
    import sqlite3

    from xattn.classroom import sqlite_store

    monkeypatch.setattr(sqlite_store, "BUSY_MS", 200)   # a writer would give up after 0.2 s
    store = SQLiteStore(tmp_path / "classes.sqlite3")
    store.create_room(QUESTIONS)
    assert store.allow("failed_joins", "10.0.0.7") is True            # one counted
    writer = sqlite3.connect(tmp_path / "classes.sqlite3", isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")                                  # another process writes
    try:                      # a read: no StoreUnavailable though the lock stays held
        assert store.allow("failed_joins", "10.0.0.7", peek=True) is True
        assert store.allow("failed_joins", "10.0.0.8", peek=True) is True
        with pytest.raises(StoreUnavailable):                        # what a write meets
            store.allow("failed_joins", "10.0.0.7")
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    store.close()


# --- canonical answers, pulses, timers, revotes ------------------------------------------------

def test_minus_zero_and_tiny_numbers_count_as_the_same_rounded_answer(store):
    code, secret = store.create_room([Question("number", low=-1, high=1, decimals=2)])
    typed = [0, 0.0, -0.0, 0.000001, -0.001, 0.004]      # all 0.00 at two decimals
    for value in typed:
        assert store.answer(code, 1, new_student_id(), value) == 0.0
    store.answer(code, 1, new_student_id(), 0.5)
    view = store.room_view(code)
    assert view.counts == {0.0: len(typed), 0.5: 1} and view.n_answered == len(typed) + 1
    (tally,) = store.results(code, secret)
    assert tally.counts == view.counts                     # the CSV counts the same
    store.reveal(code, secret, 1)
    assert sum(store.room_view(code).counts.values()) == len(typed) + 1


def test_the_pulse_moves_with_every_host_action_and_every_changed_answer(store, room):
    code, secret = room
    sid = new_student_id()
    assert store.pulse(["ZZZZZZ", code.lower()]) == {code: (0, 0, None)}   # a gone room: absent
    seen = [store.pulse([code])[code]]

    def moved(what):
        now = store.pulse([code])[code]
        assert now != seen[-1], what
        seen.append(now)
    store.touch(code, [sid])
    moved("a student joining (the host's count of students)")
    store.touch(code, [sid])
    assert store.pulse([code])[code] == seen[-1]          # present again: no change
    store.answer(code, 1, sid, 1)
    moved("a first answer")
    store.answer(code, 1, sid, 1)
    assert store.pulse([code])[code] == seen[-1]          # the same answer again: no change
    store.answer(code, 1, sid, 2)
    moved("a changed answer")
    for action in (lambda: store.reveal(code, secret, 1), lambda: store.ask_again(code, secret, 1),
                   lambda: store.start_timer(code, secret, 1, 30),
                   lambda: store.set_step(code, secret, 2)):
        action()
        moved(action)
    versions = [p.version for p in seen]
    assert versions == sorted(versions)


def test_a_timer_closes_the_round_at_zero_for_every_reader(backend, store, room):
    code, secret = room
    a, b = new_student_id(), new_student_id()
    timer = store.start_timer(code, secret, 1, 5)
    other = backend.open()                                 # another process's view
    view = other.room_view(code)
    assert view.phase == "asking" and view.timer == timer and timer.seconds == 5
    assert abs(store.pulse([code])[code].ends_at - timer.ends_at) < 1e-3
    store.answer(code, 1, a, 0)
    wait_for(lambda: other.room_view(code).phase == "closed", timeout=10, what="time to run out")
    with pytest.raises(AnswerRefused, match="time is up for step 1"):
        store.answer(code, 1, b, 1)
    with pytest.raises(AnswerRefused, match="time is up"):
        store.answer(code, 1, a, 2)                        # nor can an answer change
    assert other.room_view(code, a, present=False).mine == 0
    store.reveal(code, secret, 1)
    assert other.room_view(code).phase == "revealed"
    store.ask_again(code, secret, 1)                       # a new round: no timer
    view = other.room_view(code)
    assert (view.phase, view.timer, view.round) == ("asking", None, 2)
    store.answer(code, 1, b, 1)
    (first, second, *_) = store.results(code, secret)
    assert first.timer == timer and second.timer is None
    other.close()


def test_a_timer_may_reveal_at_zero(store, room):
    code, secret = room
    store.start_timer(code, secret, 1, 5, reveal=True)
    wait_for(lambda: store.room_view(code).phase == "revealed", timeout=10, what="the reveal")
    with pytest.raises(AnswerRefused, match="revealed"):
        store.answer(code, 1, new_student_id(), 0)


@pytest.mark.parametrize("seconds", [0, 4.9, 3601, float("nan"), True, "30"])
def test_a_timer_out_of_range_is_refused(store, room, seconds):
    code, secret = room
    with pytest.raises((ValueError, TypeError), match="timer runs 5 to 3600 seconds"):
        store.start_timer(code, secret, 1, seconds)
    with pytest.raises(HostRefused):
        store.start_timer(code, "wrong", 1, 30)


def test_changes_count_who_moved_between_rounds_without_ids(store, room):
    code, secret = room
    ids = students(6)
    first = [0, 0, 1, 1, 2, None]             # the sixth student answers only in round 2
    then = [1, 1, 1, 2, None, 1]
    two_rounds(store, code, secret, ids, first, then)
    moved = store.changes(code, secret, 1, 1, 2)
    assert moved == {(0, 1): 2, (1, 1): 1, (1, 2): 1, (2, None): 1, (None, 1): 1}
    assert all(isinstance(k, tuple) for k in moved)       # pairs of answers, no student ids
    with pytest.raises(ValueError, match="step 1 has no round 3"):
        store.changes(code, secret, 1, 1, 3)
    with pytest.raises(HostRefused):
        store.changes(code, "wrong", 1, 1, 2)


def test_touch_marks_many_students_present_in_one_write(backend):
    store = backend.open(Limits(max_students=3, present_seconds=3600))
    code, _ = store.create_room(QUESTIONS)
    ids = students(4)
    store.touch(code, ids[:2])
    assert store.room_view(code).n_present == 2
    view = store.room_view(code, ids[0], present=False)
    assert view.n_present == 2
    with pytest.raises(LimitReached, match="already has 3 students"):
        store.touch(code, ids)                             # one of the two new ones fits
    assert store.room_view(code).n_present == 3
    with pytest.raises(RoomNotFound):
        store.touch("ZZZZZZ", ids[:1])
    store.close()


def test_an_older_sqlite_file_is_made_anew_not_misread(tmp_path):
    import sqlite3
    path = tmp_path / "classes.sqlite3"
    with sqlite3.connect(path) as c:                       # the tables of an older xattn
        c.execute("CREATE TABLE rooms (code TEXT PRIMARY KEY, secret TEXT NOT NULL, expires "
                  "REAL NOT NULL, step INTEGER NOT NULL, n_steps INTEGER NOT NULL, "
                  "n_answers INTEGER NOT NULL)")
    store = SQLiteStore(path)
    code, secret = store.create_room(QUESTIONS)
    store.start_timer(code, secret, 1, 30)
    assert store.room_view(code).timer.seconds == 30
    store.close()


@pytest.mark.parametrize("url", ["localhost:6379", "redis://host:notaport/0",
                                 "redis://:s3cret@host:99999999/0"])
def test_a_redis_url_that_cannot_work_is_a_store_error_without_its_password(url, monkeypatch):
    monkeypatch.setenv("XATTN_REDIS_URL", url)
    with pytest.raises(StoreUnavailable, match="XATTN_REDIS_URL") as err:
        open_store().room_view("ABCDEF")
    assert "s3cret" not in str(err.value)


# --- limits per client, signed student ids ----------------------------------------------------

def test_limits_per_client_count_within_their_window_and_keep_no_address(backend):
    store = backend.open(Limits(failed_joins=(3, 2.0)))
    who, other = "203.0.113.7", "198.51.100.2"
    assert [store.allow("failed_joins", who) for _ in range(5)] == [True] * 3 + [False] * 2
    assert not store.allow("failed_joins", who, peek=True)
    assert store.allow("failed_joins", other)               # another client: its own count
    assert store.allow("new_rooms", who)                    # another kind: its own count
    assert who.encode() not in backend.dump()               # a hash, never the address
    wait_for(lambda: store.allow("failed_joins", who, peek=True), timeout=10,
             what="the window to pass")
    assert store.allow("failed_joins", who)
    with pytest.raises(ValueError, match="kind must be"):
        store.allow("hugs", who)
    with pytest.raises(ValueError, match="Limits.new_rooms"):
        Limits(new_rooms=(0, 10))
    store.close()


def test_an_address_holds_a_few_rooms_at_once_so_ten_cannot_fill_the_store(backend):
    """Rooms made from one address count while they are held (made, not ended, not
    expired): Limits.rooms_per_address of them, Limits.homework_per_address homework among
    them; from ten addresses an attacker holds at most 10 x rooms_per_address rooms, and a
    lecturer elsewhere starts a class whatever those rooms' streams and students do."""
    store = backend.open(Limits(max_rooms=14, rooms_per_address=3, homework_per_address=1))
    who = "203.0.113.7"
    homework, key = store.create_room(QUESTIONS, homework=3600.0, by=who)
    with pytest.raises(LimitReached, match=r"your network already holds 1 homework rooms.*"
                                           r"Limits.homework_per_address = 1"):
        store.create_room(QUESTIONS, homework=3600.0, by=who)
    made = [store.create_room(QUESTIONS, by=who) for _ in range(2)]
    with pytest.raises(LimitReached, match=r"your network already holds 3 classes.*"
                                           r"Limits.rooms_per_address = 3"):
        store.create_room(QUESTIONS, by=who)
    store.end_room(*made[0])                                 # ended: its place is free
    store.create_room(QUESTIONS, by=who)
    assert who.encode() not in backend.dump()                # a hash, never the address
    attackers = [f"198.51.100.{i}" for i in range(1, 4)]     # 3 x 3 = 9 of 14 rooms at most
    held = 0
    for address in attackers:
        for _ in range(5):
            try:
                store.create_room(QUESTIONS, by=address)
                held += 1
            except LimitReached:
                pass
    assert held == 9
    store.create_room(QUESTIONS, by="192.0.2.1")             # a lecturer: the store had room
    store.create_room(QUESTIONS)                             # no address (a script): no bound
    assert store.room_view(homework).homework and store.check_host(homework, key)


def test_a_class_nobody_teaches_frees_its_addresss_place_and_a_homework_does_not(backend):
    """A live room counts against its address while it is taught (its host seen within
    Limits.untaught_seconds): a lecturer who tried five classes and closed them without
    *End the class* starts a sixth once their pages are gone; a homework counts until it
    closes; a host action makes a room count again."""
    store = backend.open(Limits(rooms_per_address=2, homework_per_address=1,
                                untaught_seconds=0.4))
    who = "203.0.113.7"
    store.create_room(QUESTIONS, homework=3600.0, by=who)
    live = store.create_room(QUESTIONS, by=who)
    with pytest.raises(LimitReached, match="holds 2 classes.*no longer counts"):
        store.create_room(QUESTIONS, by=who)
    time.sleep(0.5)                                  # the live room's host is gone
    again = store.create_room(QUESTIONS, by=who)     # the homework still counts: 2 of 2
    with pytest.raises(LimitReached, match="holds 2 classes"):
        store.create_room(QUESTIONS, by=who)
    time.sleep(0.5)
    store.set_step(*live, 2)                         # its lecturer is back: taught again
    with pytest.raises(LimitReached, match="holds 2 classes"):   # homework + live
        store.create_room(QUESTIONS, by=who)
    assert store.room_view(again[0]).step == 1       # untaught rooms are kept, not counted


def test_joins_come_from_a_bucket_per_room_and_address(backend):
    """Limits.join_bucket: a burst of joins per room and address at once (a hall behind one
    address), then one every so many seconds; another address and another room have their
    own; a refusal takes nothing and says how long to wait."""
    store = backend.open(Limits(join_bucket=(3, 0.5)))
    (room, _), (other_room, _) = store.create_room(QUESTIONS), store.create_room(QUESTIONS)
    who = "203.0.113.7"
    assert [store.take_join(room, who) for _ in range(3)] == [0.0] * 3
    waits = [store.take_join(room, who) for _ in range(3)]
    assert all(0 < w <= 0.5 for w in waits)                  # refused, nothing taken
    assert store.take_join(room, "198.51.100.2") == 0.0      # another address
    assert store.take_join(other_room, who) == 0.0           # another room
    time.sleep(max(waits) + 0.05)
    assert store.take_join(room, who) == 0.0                 # refilled: one more
    assert store.take_join(room, who) > 0
    assert who.encode() not in backend.dump()
    with pytest.raises(RoomNotFound):
        store.take_join("ABCDEF", who)
    with pytest.raises(ValueError, match="Limits.join_bucket"):
        Limits(join_bucket=(0, 1.0))


def test_the_signing_key_is_made_once_and_shared_by_every_process(backend):
    from xattn.classroom.codes import signed_student, student_of
    first, second = backend.open(), backend.open()
    key = first.signing_key()
    assert len(key) == 32 and second.signing_key() == key
    sid = new_student_id()
    assert student_of(second.signing_keys(), signed_student(key, sid, "HJK23M"), "HJK23M") == sid
    assert student_of(b"another store's key" * 2, signed_student(key, sid, "HJK23M"),
                      "HJK23M") is None
    first.close()
    second.close()


def test_a_store_that_restarts_empty_keeps_every_processs_students(backend, monkeypatch):
    """Process A signed its students before the store lost everything; B started after, and
    made the store a new key. Each takes the other's students once it reads the keys again."""
    import xattn.classroom.guards as guards
    from xattn.classroom.codes import signed_student, student_of

    monkeypatch.setattr(guards.time, "monotonic", lambda: next(clock))
    clock = iter(range(0, 10**6, 5))                    # every read at least 1 s after the last
    a = backend.open()
    old = signed_student(a.signing_key(), "student-of-a", "HJK23M")
    backend.wipe()                                      # Redis restarted without persistence
    b = backend.open()
    new = signed_student(b.signing_key(), "student-of-b", "HJK23M")
    assert b.signing_key() != a.signing_key()
    assert student_of(b.signing_keys(), old, "HJK23M") is None      # split, until ...
    assert student_of(a.refresh_signing_keys(), new, "HJK23M") == "student-of-b"
    assert student_of(b.refresh_signing_keys(), old, "HJK23M") == "student-of-a"
    assert a.signing_key() == b.signing_key()           # both sign with one key from now on
    backend.wipe()
    c = backend.open()
    assert c.signing_key() != a.signing_key()
    a.refresh_signing_keys()                            # A hands its keys back to the store
    assert student_of(c.refresh_signing_keys(), old, "HJK23M") == "student-of-a"


def test_a_deployers_secret_is_the_one_source_of_the_signing_key(backend, monkeypatch):
    monkeypatch.setenv("XATTN_SECRET", "the deployer's own secret")
    a = backend.open()
    backend.wipe()
    b = backend.open()
    assert a.signing_keys() == b.signing_keys() == [a.signing_key()]
    assert a.signing_key() not in backend.dump()
    monkeypatch.setenv("XATTN_SECRET", "another")
    assert backend.open().signing_key() != a.signing_key()


def test_limits_can_be_set_for_a_deployment_and_a_bad_setting_says_what_is_wrong(monkeypatch):
    from xattn.classroom.config import limits_from_env
    monkeypatch.setenv("XATTN_LIMITS", " new_students=400/600, max_rooms=50,present_seconds=90")
    limits = limits_from_env()
    assert (limits.new_students, limits.max_rooms, limits.present_seconds) == \
        ((400, 600.0), 50, 90.0)
    for bad, words in (("hugs=3", "'hugs' is not a limit"), ("max_rooms=many", "many"),
                       ("new_rooms=0/60", "Limits.new_rooms")):
        monkeypatch.setenv("XATTN_LIMITS", bad)
        with pytest.raises(StoreUnavailable, match=f"XATTN_LIMITS cannot be read.*{words}"):
            limits_from_env()


# --- several answers in one: each part's choice, a set of links ---------------------------------

JOBS = Question("parts", ("position", "aligns", "sink", "spread"), rows=("head 1", "head 2"))
PAIR = Question("links", ("the", "sick", "king", "</s>"), rows=("le", "roi", "malade"))


def _sums(question: Question, answers) -> dict:
    """The counts a class should see: for each part's choice or link, the answers holding it."""
    return {o: sum(o in question.elements(a) for a in answers if a is not None)
            for o in question.options()}


def test_parts_and_links_are_counted_as_sums_over_each_students_answer(backend, store):
    code, secret = store.create_room([JOBS, PAIR])
    a, b, c = students(3)
    assert store.answer(code, 1, a, {"head 1": "aligns", "head 2": "sink"}) == ("aligns", "sink")
    assert store.answer(code, 1, b, {"head 2": "sink"}) == (None, "sink")     # one part only
    store.answer(code, 1, c, ("aligns", "spread"))
    store.answer(code, 1, c, ["position", "spread"])                          # c changes head 1
    view = store.room_view(code, b)
    assert view.n_answered == 3 and view.mine == (None, "sink")
    assert view.counts == _sums(JOBS, [("aligns", "sink"), (None, "sink"),
                                       ("position", "spread")])
    assert view.counts[("head 2", "sink")] == 2 and view.counts[("head 1", "sink")] == 0
    assert backend.answer_records(code) == 3                                  # one a student
    store.set_step(code, secret, 2)
    votes = {a: [(0, 0), (1, 2), (2, 1)], b: [(0, 0), (1, 2), (2, 2), (1, 2)],
             c: {(0, 0), (1, 1), (2, 1)}}
    for sid, links in votes.items():
        store.answer(code, 2, sid, links)
    assert store.answer(code, 2, b, [(1, 2), (0, 0)]) == ((0, 0), (1, 2))     # b undoes 2-2
    view = store.room_view(code, c)
    stored = [((0, 0), (1, 2), (2, 1)), ((0, 0), (1, 2)), ((0, 0), (1, 1), (2, 1))]
    assert view.counts == _sums(PAIR, stored) and view.n_answered == 3
    assert view.counts[(0, 0)] == 3 and view.counts[(1, 2)] == 2 and view.counts[(2, 2)] == 0
    assert len(view.counts) == 12 and view.mine == ((0, 0), (1, 1), (2, 1))
    assert store.my_answer(code, 2, b) == ((0, 0), (1, 2))
    tallies = store.results(code, secret)
    assert [(t.step, t.n_answered) for t in tallies] == [(1, 3), (2, 3)]
    assert tallies[1].counts == view.counts                                   # the CSV's too


@pytest.mark.parametrize("step, value, expected", [
    (1, {}, "for some of 'head 1', 'head 2'"),
    (1, {"head 3": "sink"}, "for some of 'head 1', 'head 2'"),
    (1, ("sink",), "for some of 'head 1', 'head 2'"),
    (1, {"head 1": "SINK"}, "for some of 'head 1', 'head 2'"),
    (2, [], "1 to 32 links"),
    (2, [(3, 0)], "target positions from 0 to 2, source positions from 0 to 3"),
    (2, [(0, 4)], "target positions from 0 to 2, source positions from 0 to 3"),
    (2, [(0, True)], "target positions from 0 to 2"),
    (2, "0-0", "target positions from 0 to 2"),
])
def test_a_parts_or_links_answer_outside_its_question_is_refused(store, step, value, expected):
    code, secret = store.create_room([JOBS, PAIR])
    store.set_step(code, secret, step)
    with pytest.raises(AnswerRefused, match=f"this step takes .*{expected}"):
        store.answer(code, step, new_student_id(), value)
    assert store.room_view(code).n_answered == 0


def test_a_revote_of_links_counts_who_drew_each_link_in_each_round(store):
    code, secret = store.create_room([PAIR])
    ids = students(4)
    first = [[(0, 0), (1, 1)], [(0, 0), (1, 2)], [(0, 0)], None]
    then = [[(0, 0), (1, 2)], [(0, 0), (1, 2)], None, [(1, 2), (2, 1)]]
    two_rounds(store, code, secret, ids, first, then)
    moved = store.changes(code, secret, 1, 1, 2)
    assert moved == {(((0, 0), (1, 1)), ((0, 0), (1, 2))): 1,
                     (((0, 0), (1, 2)), ((0, 0), (1, 2))): 1,
                     (((0, 0),), None): 1, (None, ((1, 2), (2, 1))): 1}
    one, two = store.results(code, secret)
    assert (one.n_answered, two.n_answered) == (3, 3)
    assert two.counts[(1, 2)] == 3 and one.counts[(1, 2)] == 1


def test_link_counts_stay_equal_to_the_answers_while_students_change_them_at_once(store):
    code, _ = store.create_room([PAIR])
    ids = students(12)
    cells = PAIR.options()

    def change(seed):
        rng = random.Random(seed)               # a local generator, seeded: replayable
        for _ in range(60):
            store.answer(code, 1, rng.choice(ids), rng.sample(cells, rng.randint(1, 4)))
    threads = [threading.Thread(target=change, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    finals = [store.my_answer(code, 1, sid) for sid in ids]
    view = store.room_view(code)
    assert view.counts == _sums(PAIR, finals)
    assert view.n_answered == sum(f is not None for f in finals)


def test_the_host_locks_the_room_and_opens_it_again(store, room):
    code, secret = room
    before = store.room_view(code).version
    store.lock(code, secret, True)
    view = store.room_view(code)
    assert view.locked and view.version == before + 1            # every page redraws
    store.lock(code, secret, False)
    assert not store.room_view(code).locked
    with pytest.raises(HostRefused):
        store.lock(code, secret + "x", True)
    with pytest.raises(TypeError, match="locked must be a bool; received int"):
        store.lock(code, secret, 1)
    assert not store.room_view(code).locked


def test_a_sqlite_file_of_the_release_before_keeps_its_rooms_and_learns_the_lock(tmp_path):
    import sqlite3

    from xattn.classroom.sqlite_schema import SCHEMA
    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as c:                   # rooms as the release before made them
        c.executescript(SCHEMA.replace(", locked INTEGER NOT NULL DEFAULT 0", "")
                        .split("CREATE TABLE IF NOT EXISTS devices")[0])
        c.execute("PRAGMA user_version = 3")
    old = SQLiteStore(path)
    code, secret = old.create_room(QUESTIONS)
    old.close()
    with sqlite3.connect(path) as c:
        c.execute("ALTER TABLE rooms DROP COLUMN locked")
    store = SQLiteStore(path)
    assert store.check_host(code, secret) == code and not store.room_view(code).locked
    store.lock(code, secret, True)
    assert store.room_view(code).locked


# --- a store that restarts empty ---------------------------------------------------------------

def test_a_room_the_store_lost_comes_back_from_a_snapshot_as_it_was(backend, store, room):
    code, secret = room
    a, b, c = students(3)
    store.answer(code, 1, a, 0)
    store.answer(code, 1, b, 2)
    store.reveal(code, secret, 1)
    assert store.ask_again(code, secret, 1) == 2
    store.answer(code, 1, a, 2)
    store.set_step(code, secret, 2)
    store.answer(code, 2, c, 0.25)
    timer = store.start_timer(code, secret, 2, 90.0, reveal=True)
    store.lock(code, secret, True)
    snap = store.snapshot(code)
    before = store.room_view(code)
    tallies = store.results(code, secret)
    assert snap.n_answers == 4 and snap.digest != secret            # the key's digest only
    backend.wipe()                                                  # restarted empty
    with pytest.raises(RoomNotFound):
        store.room_view(code)
    assert store.restore(snap) is True
    after = store.room_view(code, c)
    assert (after.step, after.phase, after.round, after.counts, after.mine, after.locked) == \
        (before.step, before.phase, before.round, before.counts, 0.25, True)
    assert after.version > before.version and after.timer == timer
    assert store.results(code, secret) == tallies                   # every round, as it was
    store.reveal(code, secret, 2)                                   # the same key drives it
    assert store.restore(snap) is False                             # a second one: a merge
    assert store.room_view(code).phase == "revealed"                # ... that replaces nothing


def test_a_restore_adds_only_the_answers_the_store_does_not_hold(store, room):
    code, secret = room
    a, b, c = students(3)
    store.answer(code, 1, a, 0)
    snap = store.snapshot(code)
    store.answer(code, 1, a, 1)                                     # a changed its mind
    store.answer(code, 1, b, 2)
    mine = {(1, 1): {a: "0", b: "0", c: "2"}, (9, 1): {c: "0"}, (1, 5): {c: "1"}}
    assert store.restore(snap, mine) is False
    view = store.room_view(code)
    assert view.counts == {0: 0, 1: 1, 2: 2} and view.n_answered == 3   # only c's was added
    assert store.my_answer(code, 1, a) == 1 and store.my_answer(code, 1, b) == 2


def test_a_snapshot_of_a_class_that_ended_gives_nothing_back(backend, store, room, monkeypatch):
    import dataclasses
    code, _ = room
    snap = dataclasses.replace(store.snapshot(code), expires=time.time() - 1)
    backend.wipe()
    assert store.restore(snap) is False
    with pytest.raises(RoomNotFound):
        store.room_view(code)
    with pytest.raises(TypeError, match="snapshot must be a Snapshot"):
        store.restore({"code": code})


# --- a class its lecturer ends ----------------------------------------------------------------

def test_a_class_its_lecturer_ends_is_gone_with_all_it_held(backend, store, room):
    code, secret = room
    a, b = students(2)
    store.answer(code, 1, a, 0)
    store.set_step(code, secret, 2)
    store.answer(code, 2, b, 0.5)
    store.touch(code, [a, b])
    device, _ = store.add_device(code, secret)
    expires = store.snapshot(code).expires
    store.end_room(code, secret)
    for read in (lambda: store.room_view(code), lambda: store.snapshot(code),
                 lambda: store.answer(code, 2, a, 0.25), lambda: store.my_answer(code, 2, b)):
        with pytest.raises(RoomNotFound):
            read()
    assert store.pulse([code]) == {}
    with pytest.raises(HostRefused):
        store.set_step(code, secret, 1)
    with pytest.raises(DeviceCodeRefused):
        store.redeem_device(code, device)
    assert backend.answer_records(code) == 0
    # what is left: a marker of the code alone (Redis: one key), until the room's own expiry
    assert backend.records(code) == {"sqlite": 0, "redis": 1}[backend.kind]
    assert backend.ended_marker(code) == pytest.approx(expires, abs=0.01)


def test_an_ended_class_is_never_given_back_and_its_code_waits(backend, store, room, monkeypatch):
    """A server process that served the room keeps its snapshot, and would give a store that
    lost the room its room back: not once its lecturer ended it. No new class takes the code
    while the marker lasts."""
    import xattn.classroom.store as module
    code, secret = room
    store.answer(code, 1, students(1)[0], 2)
    snap = store.snapshot(code)
    store.end_room(code, secret)
    with pytest.raises(RoomEnded, match=f"The class {code} has ended"):
        store.restore(snap)
    with pytest.raises(RoomNotFound):
        store.room_view(code)
    draws = iter([code, "HJK23M"])
    monkeypatch.setattr(module, "new_code", lambda: next(draws))
    assert store.create_room(QUESTIONS)[0] == "HJK23M"


def test_only_the_rooms_host_ends_it(store, room):
    code, secret = room
    other, other_secret = store.create_room(QUESTIONS)
    new = store.rotate_host(code, secret)
    for c, s in ((code, secret), (code, other_secret), ("HJK23M", new), (code, "x" * 500)):
        with pytest.raises(HostRefused):
            store.end_room(c, s)
    assert store.room_view(code).step == 1                   # still running
    store.end_room(code, new)
    with pytest.raises(HostRefused):                         # ended: nothing to end again
        store.end_room(code, new)
    assert store.room_view(other).step == 1                  # the other class runs on


def test_the_marker_of_an_ended_class_lapses_with_the_room(backend):
    store = backend.open(Limits(ttl_seconds=1.0))
    code, secret = store.create_room(QUESTIONS)
    try:
        store.end_room(code, secret)
    except HostRefused:        # a very slow machine took more than the room's second
        pytest.skip("the room expired before it could be ended")
    lapses = backend.ended_marker(code)
    assert lapses is not None
    wait_for(lambda: time.time() > lapses + 0.05, what="the marker's time to pass")
    store.create_room(QUESTIONS)                              # a write cleans up (SQLite)
    wait_for(lambda: backend.ended_marker(code) is None, what="the marker to go")


def test_students_answers_and_streams_without_the_key_never_keep_a_room(backend):
    """Rooms made to fill the store, kept busy by fake students who join and answer and by
    host streams whose cookie holds no key of the room (a made-up one, another room's):
    once Limits.untaught_seconds pass, a new lecturer's class takes the place of one; a room
    whose host page holds its key (`mark_hosts` with its digest) stays."""
    store = backend.open(Limits(max_rooms=3, untaught_seconds=0.4))
    squat, taught, busy = (store.create_room(QUESTIONS) for _ in range(3))
    with pytest.raises(LimitReached, match=r"nobody taught in one for"):
        store.create_room(QUESTIONS)
    deadline = time.monotonic() + 0.6
    while time.monotonic() < deadline:                       # the attack goes on meanwhile
        for code, _ in (squat, busy):
            store.room_view(code, new_student_id())
            store.answer(code, 1, new_student_id(), 0)
            store.mark_hosts([(code, secret_digest(tampered(taught[1])))])
        store.mark_hosts([(busy[0], secret_digest(taught[1]))])   # another room's key
        store.mark_hosts([(taught[0], secret_digest(taught[1]))])  # its lecturer's page
        time.sleep(0.05)
    lecturer = store.create_room(QUESTIONS)                  # a real class starts
    gone = [code for code, _ in (squat, busy) if code not in store.pulse([code])]
    assert len(gone) == 1                                    # nothing of it is left but
    assert backend.records(gone[0]) == {"sqlite": 0, "redis": 1}[backend.kind]   # the marker
    assert backend.ended_marker(gone[0]) is not None         # ... no process gives it back
    with pytest.raises(RoomEnded):
        store.room_view(gone[0])
    for code, _ in (taught, lecturer):
        assert store.room_view(code).step == 1
    with pytest.raises(ValueError, match="64 hex digits"):
        store.mark_hosts([(taught[0], taught[1])])           # the key itself: never


# --- a room's lesson -------------------------------------------------------------------------

def test_a_room_keeps_its_lesson_for_every_process_and_through_a_restart(backend, store):
    """A lecturer's own lesson reaches every process: the room keeps its JSON, a store object
    of another process reads it, and a store that restarted empty gets it back."""
    lesson = '{"title":"Mine","é":"ü ✓","step":[]}' + " " * 5000      # any text, kept whole
    code, secret = store.create_room(QUESTIONS, lesson)
    plain, _ = store.create_room(QUESTIONS)
    assert store.lesson(code) == lesson and store.lesson(plain) == ""
    other = backend.open()                                      # another process
    assert other.lesson(code) == lesson
    other.close()
    store.answer(code, 1, new_student_id(), 1)
    snap = store.snapshot(code)
    assert snap.lesson == lesson
    backend.wipe()
    with pytest.raises(RoomNotFound):
        store.lesson(code)
    assert store.restore(snap) is True and store.lesson(code) == lesson
    assert store.room_view(code).n_answered == 1


def test_a_lesson_is_bounded_before_it_is_stored(store):
    with pytest.raises(LimitReached, match="Limits.max_lesson_bytes"):
        store.create_room(QUESTIONS, "x" * (store.limits.max_lesson_bytes + 1))
    with pytest.raises(TypeError, match="lesson must be text"):
        store.create_room(QUESTIONS, b"{}")


SURE_QUESTIONS = (Question("token", ("the", "cat", "the")),
                  Question("choice", ("up", "down")),
                  Question("parts", ("sink", "aligns"), rows=("head 1", "head 2")))


@pytest.fixture
def sure_room(store):
    return store.create_room(SURE_QUESTIONS)


# --- how sure each answer is (xattn.classroom.confidence) -----------------------------------

def test_a_confidence_is_saved_with_its_answer_and_counted_without_ids(store, sure_room):
    code, secret = sure_room
    a, b, c, d = students(4)
    assert store.answer(code, 1, a, 1, "sure") == 1
    store.answer(code, 1, b, 1, "guess")
    store.answer(code, 1, c, 2, "think_so")
    store.answer(code, 1, d, 0)                                  # an answer without one
    assert store.mine(code, 1, a) == (1, "sure") and store.mine(code, 1, d) == (0, None)
    counts = store.confidence(code, secret, 1, 1)
    assert counts == {(1, "sure"): 1, (1, "guess"): 1, (2, "think_so"): 1, (0, None): 1}
    assert not any(s in str(counts) for s in (a, b, c, d))
    view = store.room_view(code)
    assert view.counts == {0: 1, 1: 2, 2: 1} and view.n_answered == 4     # answers as before
    assert store.round_levels(code, 1, 1) == {a: "sure", b: "guess", c: "think_so"}


def test_a_confidence_changes_with_its_answer_and_the_last_answer_wins(store, sure_room):
    code, secret = sure_room
    a, b = students(2)
    store.answer(code, 1, a, 1, "guess")
    tally = store.pulse([code])[code].tally
    store.answer(code, 1, a, 1, "sure")                          # the same answer, surer
    assert store.pulse([code])[code].tally == tally + 1          # the host's count redraws
    store.answer(code, 1, a, 1, "sure")                          # the same again: nothing
    assert store.pulse([code])[code].tally == tally + 1
    store.answer(code, 1, a, 2, "sure")                          # another answer, as sure
    store.answer(code, 1, b, 0, "think_so")
    store.answer(code, 1, b, 0)                                  # taken back: none
    assert store.confidence(code, secret, 1, 1) == {(2, "sure"): 1, (0, None): 1}
    assert store.room_view(code).counts == {0: 1, 1: 0, 2: 1}
    assert store.round_levels(code, 1, 1) == {a: "sure"}
    assert store.snapshot(code).n_answers == 2                   # one record per student


def test_a_revotes_confidence_is_its_own_and_every_round_is_read_at_once(store, sure_room):
    code, secret = sure_room
    a, b = students(2)
    store.answer(code, 1, a, 1, "guess")
    store.answer(code, 1, b, 1)
    store.reveal(code, secret, 1)
    store.ask_again(code, secret, 1)
    assert store.mine(code, 1, a) == (None, None)                # a new round: nothing yet
    store.answer(code, 1, a, 1, "sure")
    store.set_step(code, secret, 3)
    store.answer(code, 3, b, ("sink", None), "think_so")         # a parts answer
    assert store.confidence(code, secret, 1, 1) == {(1, "guess"): 1, (1, None): 1}
    assert store.confidence(code, secret, 1, 2) == {(1, "sure"): 1}
    assert store.confidence(code, secret, 2, 1) == {}            # asked, nobody answered
    assert store.confidences(code, secret) == {
        (1, 1): {(1, "guess"): 1, (1, None): 1}, (1, 2): {(1, "sure"): 1},
        (3, 1): {(("sink", None), "think_so"): 1}}
    with pytest.raises(ValueError, match="step 1 has no round 3"):
        store.confidence(code, secret, 1, 3)
    with pytest.raises(HostRefused):
        store.confidence(code, secret + "x", 1, 1)
    with pytest.raises(HostRefused):
        store.confidences(code, "")


@pytest.mark.parametrize("level, received", [
    ("certain", "'certain'"), ("Sure", "'Sure'"), ("think so", "'think so'"), ("", "''"),
    (1, "1"), (True, "True"), (["sure"], "['sure']"), ("<b>sure</b>", "'<b>sure</b>'")])
def test_a_confidence_not_one_of_the_three_is_refused_in_words_and_nothing_is_kept(
        store, sure_room, level, received):
    code, secret = sure_room
    me = new_student_id()
    with pytest.raises(AnswerRefused, match="a confidence is one of 'sure', 'think_so' or "
                                            rf"'guess' \(or none\); received {re.escape(received)}"):
        store.answer(code, 1, me, 1, level)
    assert store.mine(code, 1, me) == (None, None) and store.room_view(code).n_answered == 0


def test_answers_and_confidences_stay_together_while_students_change_both_at_once(store,
                                                                                  sure_room):
    code, secret = sure_room
    ids = students(12)
    finals: dict = {}

    def change(k: int) -> None:
        for i in range(40):
            sid = ids[(k * 5 + i) % len(ids)]
            value, level = i % 3, [*LEVELS, None][(i + k) % 4]
            store.answer(code, 1, sid, value, level)
    threads = [threading.Thread(target=change, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for sid in ids:
        finals[sid] = store.mine(code, 1, sid)
    expected: dict = {}
    for pair in finals.values():
        expected[pair] = expected.get(pair, 0) + 1
    assert store.confidence(code, secret, 1, 1) == expected
    assert sum(expected.values()) == store.room_view(code).n_answered == len(ids)


# --- the host's switches -----------------------------------------------------------------------

def test_the_switches_are_off_by_default_set_by_the_host_and_move_the_rooms_version(
        backend, store, sure_room):
    code, secret = sure_room
    view = store.room_view(code)
    assert (view.confidence, view.histogram_before) == (False, False)
    store.set_options(code, secret, confidence=True)
    after = store.room_view(code)
    assert (after.confidence, after.histogram_before) == (True, False)
    assert after.version == view.version + 1                     # every page and phone redraws
    store.set_options(code, secret, histogram_before=True)
    other = backend.open()                                       # another process reads them
    assert (other.room_view(code).confidence, other.room_view(code).histogram_before) == \
        (True, True)
    other.close()
    store.set_options(code, secret, confidence=False, histogram_before=False)
    assert (store.room_view(code).confidence, store.room_view(code).histogram_before) == \
        (False, False)
    with pytest.raises(HostRefused):
        store.set_options(code, secret + "x", confidence=True)
    with pytest.raises(TypeError, match="confidence must be a bool or None; received int 1"):
        store.set_options(code, secret, confidence=1)
    with pytest.raises(TypeError, match="histogram_before must be a bool or None; received "
                                        "str 'yes'"):
        store.set_options(code, secret, histogram_before="yes")
    with pytest.raises(ValueError, match="needs confidence or histogram_before"):
        store.set_options(code, secret)
    assert not store.room_view(code).confidence


def test_a_round_before_is_read_without_the_host_key_as_counts(store, sure_room):
    code, secret = sure_room
    a, b, c = students(3)
    for sid, value in ((a, 0), (b, 2), (c, 2)):
        store.answer(code, 1, sid, value, "sure")
    store.reveal(code, secret, 1)
    store.ask_again(code, secret, 1)
    store.answer(code, 1, a, 1)
    first = store.tally(code, 1, 1)
    assert (first.round, first.counts, first.n_answered) == (1, {0: 1, 1: 0, 2: 2}, 3)
    assert first.question == SURE_QUESTIONS[0]
    assert store.tally(code, 1, 2).counts == {0: 0, 1: 1, 2: 0}
    with pytest.raises(ValueError, match="step 1 has no round 3"):
        store.tally(code, 1, 3)
    with pytest.raises(RoomNotFound):
        store.tally("HJK23M", 1, 1)


# --- kept through a restart and an end ----------------------------------------------------------

def test_a_snapshot_keeps_the_confidences_and_switches_and_a_restore_gives_them_back(
        backend, store, sure_room):
    code, secret = sure_room
    a, b, c = students(3)
    store.set_options(code, secret, confidence=True, histogram_before=True)
    store.answer(code, 1, a, 1, "sure")
    store.answer(code, 1, b, 2)
    store.answer(code, 1, c, 0, "guess")
    snap = store.snapshot(code)
    assert snap.levels == {(1, 1): {a: "sure", c: "guess"}}
    assert (snap.confidence, snap.histogram_before) == (True, True)
    counts = store.confidence(code, secret, 1, 1)
    backend.wipe()                                               # a store restarted empty
    assert store.restore(snap) is True
    view = store.room_view(code)
    assert (view.confidence, view.histogram_before) == (True, True)
    assert store.confidence(code, secret, 1, 1) == counts
    assert store.mine(code, 1, a) == (1, "sure")


def test_a_restore_adds_a_confidence_only_with_its_answer(store, sure_room):
    """A merge: what the store holds stays; an answer it lacks comes back with its level."""
    code, secret = sure_room
    a, b, c = students(3)
    store.answer(code, 1, a, 1, "guess")
    snap = store.snapshot(code)
    store.answer(code, 1, a, 1, "sure")                          # a became sure meanwhile
    answers = {(1, 1): {a: "1", b: "2", c: "0"}}
    levels = {(1, 1): {a: "guess", b: "think_so"}}
    assert store.restore(snap, answers, levels) is False
    assert store.confidence(code, secret, 1, 1) == {(1, "sure"): 1, (2, "think_so"): 1,
                                                    (0, None): 1}
    stranger = new_student_id()
    with pytest.raises(AnswerRefused, match="a confidence is one of"):
        store.restore(snap, {(1, 1): {stranger: "1"}}, {(1, 1): {stranger: "meh"}})
    assert store.mine(code, 1, stranger) == (None, None)


def test_an_ended_class_keeps_no_confidence(backend, store, sure_room):
    code, secret = sure_room
    store.answer(code, 1, new_student_id(), 1, "sure")
    store.end_room(code, secret)
    assert backend.records(code) == {"sqlite": 0, "redis": 1}[backend.kind]   # the marker


def test_a_sqlite_file_without_confidence_gets_its_columns_and_keeps_its_rooms(tmp_path):
    path = tmp_path / "old.sqlite3"
    old = SQLiteStore(path)
    code, secret = old.create_room(SURE_QUESTIONS)
    me = new_student_id()
    old.answer(code, 1, me, 2)
    old.close()
    with sqlite3.connect(path) as c:                # as the release before this one made it
        for table, column in (("answers", "confidence"), ("rooms", "confidence"),
                              ("rooms", "histogram_before")):
            c.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
    store = SQLiteStore(path)
    assert store.my_answer(code, 1, me) == 2 and store.check_host(code, secret) == code
    assert store.confidence(code, secret, 1, 1) == {(2, None): 1}
    store.set_options(code, secret, confidence=True)
    store.answer(code, 1, new_student_id(), 0, "guess")
    assert store.room_view(code).confidence
    assert store.confidence(code, secret, 1, 1) == {(2, None): 1, (0, "guess"): 1}


def test_a_room_that_makes_space_leaves_no_confidence_behind(backend):
    store = backend.open(Limits(max_rooms=2, untaught_seconds=0.4))
    idle, taught = (store.create_room(SURE_QUESTIONS) for _ in range(2))
    store.answer(idle[0], 1, new_student_id(), 1, "sure")
    store.room_view(taught[0], new_student_id())
    time.sleep(0.5)
    store.mark_hosts([(taught[0], secret_digest(taught[1]))])
    store.create_room(SURE_QUESTIONS)                            # nobody taught in idle
    assert backend.records(idle[0]) == {"sqlite": 0, "redis": 1}[backend.kind]   # the marker


def test_the_count_says_how_many_voters_joined_after_the_question_opened(backend, store):
    """RoomView.late: of the round's answers, those whose student first joined the room
    after the class arrived at the round (made, a step chosen, a round asked again): a
    script's fresh voters show there, a class that was in the room before does not."""
    code, secret = store.create_room(QUESTIONS)
    early = students(3)
    store.touch(code, early)                                     # in the room before
    time.sleep(0.01)
    store.set_step(code, secret, 2)                              # step 2 opens now
    time.sleep(0.01)
    late = students(2)
    store.touch(code, late)                                      # joined after it opened
    for s in early + late:
        store.answer(code, 2, s, 0.5)
    view = store.room_view(code)
    assert (view.n_answered, view.late) == (5, 2)
    store.reveal(code, secret, 2)
    store.ask_again(code, secret, 2)                             # a new round opens now
    time.sleep(0.01)
    store.answer(code, 2, early[0], 0.25)
    newest = new_student_id()
    store.touch(code, [newest])
    store.answer(code, 2, newest, 0.25)
    assert (store.room_view(code).n_answered, store.room_view(code).late) == (2, 1)
    store.touch(code, late)                                      # seen again: still joined
    assert store.room_view(code).late == 1                       # ... when first seen
    store.set_step(code, secret, 2)                              # no move: nothing reopens
    assert store.room_view(code).late == 1
