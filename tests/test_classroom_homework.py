"""A homework room in the class store (``xattn/classroom/store.py``): a room open for days, in
which each student answers any step once, until it closes. Every test on SQLite and a real
redis-server (the store fixtures of tests/conftest.py); the phone's side of a homework is
in tests/test_phone_homework.py, the lecturer's in tests/test_app_homework.py."""

# ruff: noqa: F811 - the fixture room imported from tests/test_classroom_store.py is a parameter
from __future__ import annotations

import calendar
import dataclasses
import time

import pytest
from classroom_helpers import tampered, wait_for
from test_classroom_store import (  # noqa: F401 (the fixture room)
    QUESTIONS,
    _gone,
    room,
    students,
)

from xattn.classroom import (
    AnswerRefused,
    HostRefused,
    LimitReached,
    Limits,
    Question,
    RoomNotFound,
    new_student_id,
)
from xattn.classroom.rules import utc

DAY = 86400.0


@pytest.fixture
def homework(store):
    """A homework of QUESTIONS open for a week: (code, host key)."""
    return store.create_room(QUESTIONS, homework=7 * DAY)


def test_a_homework_keeps_its_mode_closing_time_and_a_longer_life(store, homework):
    t0 = time.time()
    code, _ = homework
    view = store.room_view(code)
    assert view.homework and (view.step, view.phase, view.round) == (1, "asking", 1)
    assert abs(view.closes_at - (t0 + 7 * DAY)) < 5
    assert view.expires_at - view.closes_at == pytest.approx(14 * DAY, abs=1)   # read after
    live, _ = store.create_room(QUESTIONS)
    assert not store.room_view(live).homework and store.room_view(live).closes_at is None


def test_a_student_answers_any_step_in_any_order_and_each_is_kept(store, homework):
    code, secret = homework
    a, b = students(2)
    assert store.answer(code, 3, a, "down") == "down"          # the last step first
    assert store.answer(code, 1, a, 2) == 2
    assert store.answer(code, 2, b, 0.333, "guess") == 0.33
    assert store.answer(code, 1, b, 0) == 0
    assert store.student_answers(code, a) == {1: (2, None), 3: ("down", None)}
    assert store.student_answers(code, b) == {1: (0, None), 2: (0.33, "guess")}
    assert store.student_answers(code, new_student_id()) == {}
    tallies = {t.step: (t.counts, t.n_answered) for t in store.results(code, secret)}
    assert tallies == {1: ({0: 1, 1: 0, 2: 1}, 2), 2: ({0.33: 1}, 1),
                       3: ({"up": 0, "down": 1}, 1)}
    view = store.room_view(code)
    assert (view.step, view.phase) == (1, "asking")            # nobody moved the room


def test_a_homework_answer_stays_the_same_answer_again_is_taken(backend, store, homework):
    code, _ = homework
    a = new_student_id()
    store.answer(code, 3, a, "down", "sure")
    version = store.pulse([code])[code].version
    assert store.answer(code, 3, a, "down", "sure") == "down"    # a phone sending it again
    for value, level in (("up", "sure"), ("down", "guess"), ("down", None)):
        with pytest.raises(AnswerRefused, match=r"step 3 was answered already \('down'\) and "
                                                r"its answer shown: a homework's answer stays "
                                                r"as it was first sent\."):
            store.answer(code, 3, a, value, level)
    assert store.student_answers(code, a) == {3: ("down", "sure")}
    assert backend.answer_records(code) == 1
    assert store.pulse([code])[code].version == version          # an answer is no host move


def test_a_step_out_of_range_and_a_bad_answer_are_refused_in_words(store, homework):
    code, _ = homework
    for step in (4, 99):
        with pytest.raises(AnswerRefused, match=f"this homework has steps 1 to 3; received "
                                                f"step {step}"):
            store.answer(code, step, new_student_id(), 0)
    with pytest.raises(AnswerRefused, match="one of 'up', 'down'; received 'sideways'"):
        store.answer(code, 3, new_student_id(), "sideways")
    assert store.answer_counts(code, homework[1]) == {}


def test_answers_are_refused_after_the_closing_time_with_both_times(backend):
    store = backend.open()
    code, secret = store.create_room(QUESTIONS, homework=1.0)     # a one-second window
    a = new_student_id()
    store.answer(code, 1, a, 1)
    closes = store.room_view(code).closes_at
    wait_for(lambda: store.room_view(code).phase == "closed", what="the homework to close")
    with pytest.raises(AnswerRefused) as refused:
        store.answer(code, 2, a, 0.5)
    said = str(refused.value)
    assert said.startswith(f"this homework closed at {utc(closes)}: it took answers until "
                           "then, and this one came at ")
    came = time.strptime(said.rsplit("came at ", 1)[1].rstrip("."), "%Y-%m-%d %H:%M:%S UTC")
    assert calendar.timegm(came) >= int(closes)                  # after the closing, to the s
    assert store.student_answers(code, a) == {1: (1, None)}       # the earlier one is kept
    assert {t.step: t.n_answered for t in store.results(code, secret)} == {1: 1, 2: 0, 3: 0}


def test_a_live_room_refuses_an_answer_to_another_step_as_before(store, room):
    code, secret = room
    with pytest.raises(AnswerRefused, match="the class is on step 1, not step 2"):
        store.answer(code, 2, new_student_id(), 0.5)
    with pytest.raises(ValueError, match=f"class {code} is a live class: it has no closing "
                                         "time"):
        store.set_closing(code, secret, 3600)


@pytest.mark.parametrize("op, args, what", [
    ("reveal", (1,), "reveals a step"), ("set_step", (2,), "moves the class to a step"),
    ("ask_again", (1,), "asks a step again"), ("start_timer", (1, 60.0), "starts a timer")])
def test_a_homework_has_no_reveal_revote_class_step_or_timer(store, homework, op, args, what):
    code, secret = homework
    version = store.room_view(code).version
    with pytest.raises(ValueError, match=f"class {code} is a homework: nobody {what} in a "
                                         "homework; each student walks the steps at their "
                                         "own pace"):
        getattr(store, op)(code, secret, *args)
    assert store.room_view(code).version == version
    with pytest.raises(HostRefused):                             # a wrong key: as ever
        getattr(store, op)(code, secret + "x", *args)


def test_the_host_closes_a_homework_now_and_extends_it_and_every_key_follows(backend, store,
                                                                              homework):
    code, secret = homework
    a = new_student_id()
    store.answer(code, 1, a, 0)
    version = store.room_view(code).version
    closes = store.set_closing(code, secret, 0)                  # Close now
    view = store.room_view(code)
    assert view.phase == "closed" and view.closes_at == pytest.approx(closes, abs=1e-3)
    assert view.version > version and abs(closes - time.time()) < 5
    assert view.expires_at == pytest.approx(closes + 14 * DAY, abs=1)
    with pytest.raises(AnswerRefused, match="this homework closed at"):
        store.answer(code, 2, a, 0.5)
    closes = store.set_closing(code, secret, 10 * DAY)           # open again, ten more days
    view = store.room_view(code)
    assert view.phase == "asking" and abs(closes - time.time() - 10 * DAY) < 5
    store.answer(code, 2, a, 0.5)
    assert store.student_answers(code, a) == {1: (0, None), 2: (0.5, None)}
    expiries = backend.expiries(code)
    assert expiries and all(abs(t - closes - 14 * DAY) < 1 for t in expiries), expiries
    assert store.pulse([code])[code].ends_at == pytest.approx(closes, abs=1e-3)
    for bad, said in ((30 * DAY + 1, "2592001.0"), (-1, "-1"), (True, "True"),
                      (float("nan"), "nan"), ("7", "'7'")):
        with pytest.raises(ValueError, match=f"seconds is the seconds a homework stays open "
                                             f"from now, 0 to 2,592,000 \\(30 days, "
                                             f"Limits.homework_seconds\\); received {said}"):
            store.set_closing(code, secret, bad)
    with pytest.raises(HostRefused):
        store.set_closing(code, tampered(secret), DAY)
    assert store.room_view(code).closes_at == pytest.approx(closes, abs=1e-3)


def test_a_homework_outlives_a_live_classs_hours_then_expires_after_its_results(backend):
    store = backend.open(Limits(ttl_seconds=1.0, results_seconds=2.0))
    live, _ = store.create_room(QUESTIONS)
    code, secret = store.create_room(QUESTIONS, homework=1.0)
    store.answer(code, 1, new_student_id(), 1)
    wait_for(lambda: _gone(store, live), what="the live class to expire")
    assert store.room_view(code).phase in ("asking", "closed")   # its window and results
    assert store.results(code, secret)[0].n_answered == 1        # ... readable after it closed
    wait_for(lambda: _gone(store, code), what="the homework's results to expire")
    store.create_room(QUESTIONS)                                 # a write cleans up (SQLite)
    wait_for(lambda: backend.records(code) == 0, what="its records to go")


def test_a_homeworks_window_is_bounded_when_it_is_made(store):
    for bad, said in ((0, "more than 0; received 0"), (31 * DAY, "received 2678400.0"),
                      (-5, "received -5"), ("7", "received '7'")):
        with pytest.raises(ValueError, match=said):
            store.create_room(QUESTIONS, homework=bad)
    code, _ = store.create_room(QUESTIONS, homework=30 * DAY)    # the longest: 30 days
    assert store.room_view(code).closes_at - time.time() == pytest.approx(30 * DAY, abs=5)


def test_homework_rooms_are_bounded_and_never_replaced_to_make_space(backend):
    store = backend.open(Limits(max_rooms=3, max_homework=2, untaught_seconds=0.2))
    first, _ = store.create_room(QUESTIONS, homework=DAY)
    second, key = store.create_room(QUESTIONS, homework=DAY)
    with pytest.raises(LimitReached, match=r"holds 2 homework rooms.*Limits.max_homework = 2"
                                           r".*A live class can still start"):
        store.create_room(QUESTIONS, homework=DAY)
    live, _ = store.create_room(QUESTIONS)                       # the store is full now
    time.sleep(0.3)                                              # all old enough to replace
    newer, _ = store.create_room(QUESTIONS)                      # replaces the live one only
    with pytest.raises(RoomNotFound):
        store.room_view(live)
    assert store.room_view(first).homework and store.room_view(second).homework
    store.end_room(second, key)                                  # ended: its place is free
    assert store.room_view(store.create_room(QUESTIONS, homework=DAY)[0]).homework
    assert store.room_view(newer).step == 1


def test_a_snapshot_keeps_the_homework_and_a_restore_gives_it_back(backend, store, homework):
    code, secret = homework
    a, b = students(2)
    store.answer(code, 2, a, 0.25)
    store.answer(code, 3, b, "up")
    closes = store.set_closing(code, secret, 3 * DAY)
    snap = store.snapshot(code)
    assert snap.closes == pytest.approx(closes, abs=1e-3)
    backend.wipe()                                               # restarted empty
    with pytest.raises(RoomNotFound):
        store.room_view(code)
    assert store.restore(snap) is True
    view = store.room_view(code)
    assert view.homework and view.closes_at == pytest.approx(closes, abs=1e-3)
    assert store.student_answers(code, a) == {2: (0.25, None)}
    store.answer(code, 1, b, 2)                                  # still any step, once
    with pytest.raises(AnswerRefused, match="answered already"):
        store.answer(code, 3, b, "down")
    with pytest.raises(ValueError, match="is a homework"):
        store.reveal(code, secret, 1)
    assert store.set_closing(code, secret, 0) <= time.time() + 1     # the key drives it
    later = dataclasses.replace(store.snapshot(code), closes=None)   # a merge replaces nothing
    assert store.restore(later) is False and store.room_view(code).homework


def test_answer_counts_are_whole_answers_without_ids(store):
    pair = Question("links", ("the", "cat"), rows=("le", "chat"))
    jobs = Question("parts", ("sink", "aligns"), rows=("head 1", "head 2"))
    code, secret = store.create_room([pair, jobs], homework=DAY)
    a, b, c = students(3)
    store.answer(code, 1, a, [(0, 0), (1, 1)])
    store.answer(code, 1, b, [(1, 1), (0, 0)])                   # the same, in another order
    store.answer(code, 1, c, [(0, 0)])
    store.answer(code, 2, a, ["sink", None])
    assert store.answer_counts(code, secret) == {
        (1, 1): {((0, 0), (1, 1)): 2, ((0, 0),): 1}, (2, 1): {("sink", None): 1}}
    assert store.results(code, secret)[0].counts[(0, 0)] == 3    # results count each link
    with pytest.raises(HostRefused):
        store.answer_counts(code, "wrong")
