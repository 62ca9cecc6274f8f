"""A homework on the phone's routes (xattn/live/homework.py, phone.py) over real HTTP
(uvicorn, as Streamlit serves them) on a real SQLite store, with the messages every server
process builds (``xattn.live.build``): each student walks the lesson at their own
pace, a step's answer is shown after their own answer and to them alone, and a student back
another day, the server restarted meanwhile, finds their answers and verdicts."""

from __future__ import annotations

import json
import threading

import pytest
from classroom_helpers import wait_for
from test_lessonfile import docs_example
from test_phone_routes import Server, answer, join, page_of, read_events

from xattn.classroom import NO_QUESTION, Limits, Question, SQLiteStore
from xattn.lesson import read_lesson
from xattn.live import build, homework
from xattn.live.link import lesson_setting
from xattn.server import live

DAY = 86400.0
HOMEWORK_COOKIE_AGE = int(30 * DAY + 14 * DAY)     # its longest window, then its results


def lesson_of(text: str, name: str = "seminar"):
    return read_lesson(text, name, page=lesson_setting)


def questions_of(lesson) -> list[Question]:
    from xattn.live.answers import class_step
    return [class_step(lesson, n)[1].question or NO_QUESTION
            for n in range(1, len(lesson.steps) + 1)]


def told_of(lesson, n: int):
    from xattn.live.answers import class_step
    return class_step(lesson, n)[1]


@pytest.fixture
def store(tmp_path, monkeypatch):
    """The store of the test's server; the server's own reads (the room's lesson) open the
    same file, as ``streamlit run`` does from its environment."""
    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "c.sqlite3"))
    s = SQLiteStore(tmp_path / "c.sqlite3", Limits(new_students=(50, 600.0), join_work_bits=8,
                                                   join_work_pieces=1))
    yield s
    s.close()


@pytest.fixture
def site(store, monkeypatch):
    server = Server(store, build.build)
    monkeypatch.setattr(live, "_made", [server.hub])
    yield server
    server.stop()


def homework_of(store, text: str = "", days: float = 7.0):
    lesson = lesson_of(text or docs_example())
    code, key = store.create_room(questions_of(lesson), lesson.to_json(), homework=days * DAY)
    return code, key, lesson


def step_of(site, code, n, cookie=None):
    r, body = site.request("GET", f"/live/{code}/step/{n}", headers={"Cookie": cookie or ""})
    return r, json.loads(body)


def test_a_phone_walks_the_steps_and_sees_each_answer_after_its_own(site, store):
    code, key, lesson = homework_of(store)
    cookie = join(site, code)[2]
    r, f = step_of(site, code, "next", cookie)
    room = f["room"]
    assert r.status == 200 and r.getheader("cache-control") == "no-store"
    assert (room["mode"], room["step"], room["n_steps"], room["phase"]) == ("homework", 1, 4,
                                                                           "asking")
    assert room["steps"] == ["open", "open", "open", "open"] and room["ask"]["kind"] == "token"
    assert "answer" not in room and "verdict" not in f["me"]     # predict first
    assert key not in json.dumps(f)
    truths = {n: told_of(lesson, n).truth for n in (1, 2, 3)}
    # step 3 first (a number: right), then step 1 (a word: wrong), each at its own time
    out = json.loads(answer(site, code, cookie, truths[3], step=3)[1])
    assert (out["state"], out["value"]) == ("saved", truths[3])
    _, f = step_of(site, code, 3, cookie)
    assert f["room"]["phase"] == "revealed" and f["me"]["mine"] == truths[3]
    assert f["me"]["verdict"].startswith("<p><strong>Right")
    assert f["room"]["answer"]["charts"] and "journal" in f["room"]["answer"]["text"]
    assert f["room"]["steps"] == ["open", "open", "right", "open"]
    _, f = step_of(site, code, 1, cookie)                         # still to predict
    assert f["room"]["phase"] == "asking" and "answer" not in f["room"]
    wrong = (truths[1] + 1) % len(f["room"]["ask"]["choices"])
    assert json.loads(answer(site, code, cookie, wrong, step=1)[1])["state"] == "saved"
    _, f = step_of(site, code, 1, cookie)
    assert f["room"]["phase"] == "revealed" and "Not this time" in f["me"]["verdict"]
    assert f["room"]["steps"] == ["wrong", "open", "right", "open"]
    assert step_of(site, code, "next", cookie)[1]["room"]["step"] == 2    # the first open one
    # the step's answer stays: another answer to it is refused in words, and kept out
    r, body = answer(site, code, cookie, truths[1], step=1)
    refused = json.loads(body)
    assert refused["state"] == "refused" and "answered already" in refused["why"]
    assert store.student_answers(code, store.round_answers(code, 1, 1).popitem()[0]) == \
        {1: (wrong, None), 3: (truths[3], None)}


def test_a_students_answers_show_to_nobody_else_and_no_class_counts_show(site, store):
    code, _, lesson = homework_of(store)
    first, other = join(site, code)[2], join(site, code)[2]
    truth = told_of(lesson, 2).truth
    answer(site, code, first, truth, step=2)
    _, theirs = step_of(site, code, 2, first)
    _, mine = step_of(site, code, 2, other)
    assert theirs["room"]["phase"] == "revealed" and mine["room"]["phase"] == "asking"
    assert mine["me"] == {"mine": None, "level": None} and "answer" not in mine["room"]
    assert mine["room"]["steps"] == ["open"] * 4
    charts = theirs["room"]["answer"]["charts"]
    assert not any("class" in c["title"].lower() for c in charts)    # the step's own charts
    assert theirs["room"]["answer"]["n_answered"] is None
    _, before = step_of(site, code, 2)                               # a browser not joined
    assert before["room"]["phase"] == "asking"


def test_a_student_back_another_day_finds_their_answers_after_a_restart(site, store,
                                                                      monkeypatch):
    code, _, lesson = homework_of(store)
    cookie = join(site, code)[2]
    value = told_of(lesson, 2).truth
    answer(site, code, cookie, value, step=2)
    site.stop()                                         # the server restarts meanwhile
    monkeypatch.setattr(homework, "_MODES", type(homework._MODES)())
    again = Server(store, build.build)
    monkeypatch.setattr(live, "_made", [again.hub])
    try:
        r, _, data = page_of(again, code, cookie)      # the same browser: no join again
        assert r.status == 200 and "challenge" not in data
        _, f = step_of(again, code, "next", cookie)
        assert f["room"]["step"] == 1 and f["room"]["steps"] == ["open", "right", "open",
                                                                 "open"]
        _, f = step_of(again, code, 2, cookie)
        assert f["me"]["mine"] == value and "Right" in f["me"]["verdict"]
        assert f["room"]["answer"]["text"]
    finally:
        again.stop()


def test_a_homeworks_cookies_last_as_long_as_the_homework_can(site, store):
    code, key, _ = homework_of(store)
    joined, _, _ = join(site, code)
    said = next(v for k, v in joined.getheaders() if k.lower() == "set-cookie")
    assert f"Max-Age={HOMEWORK_COOKIE_AGE};" in said
    same = {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{site.port}"}
    r, _ = site.request("POST", f"/live/{code}/host", json.dumps({"key": key}), same)
    host = next(v for k, v in r.getheaders() if k.lower() == "set-cookie")
    assert r.status == 204 and f"Max-Age={HOMEWORK_COOKIE_AGE};" in host
    live_code, live_key = store.create_room([Question("choice", ("up", "down"))])
    r, _ = site.request("POST", f"/live/{live_code}/host", json.dumps({"key": live_key}), same)
    assert "Max-Age=43200;" in next(v for k, v in r.getheaders() if k.lower() == "set-cookie")


@pytest.mark.parametrize("asked, status, why", [
    ("0", 400, "A step of this homework is a number from 1 to 4 (or next); received '0'."),
    ("5", 400, "received '5'"), ("x1", 400, "received 'x1'"), ("%D9%A1", 400, "received '١'"),
    ("%3Cb%3E", 400, "received '<b>'")])
def test_a_step_that_is_not_one_says_so_in_one_line(site, store, asked, status, why):
    code, _, _ = homework_of(store)
    r, f = step_of(site, code, asked)
    assert r.status == status and why in f["why"] and set(f) == {"why", "say"}
    assert f["say"] == ["why.step.none", {}]              # the phone's words (said.py)


def test_a_live_class_or_no_class_has_no_step_of_its_own(site, store):
    code, _ = store.create_room([Question("choice", ("up", "down"))])
    r, f = step_of(site, code, 1)
    assert r.status == 409 and f["why"].startswith(f"Class {code} is a live class")
    r, f = step_of(site, "HJK23M", 1)
    assert r.status == 404 and "No class is running" in f["why"]
    r, f = step_of(site, "nope!", 1)
    assert r.status == 404 and f["why"] == "That is not a class code."


def test_answers_out_of_range_or_after_the_closing_are_refused_and_every_answer_then_shows(
        site, store):
    code, key, lesson = homework_of(store)
    cookie = join(site, code)[2]
    refused = json.loads(answer(site, code, cookie, 0, step=9)[1])
    assert refused["state"] == "refused"
    assert refused["why"] == "this homework has steps 1 to 4; received step 9."
    answer(site, code, cookie, told_of(lesson, 1).truth, step=1)
    store.set_closing(code, key, 0)                               # Close now
    refused = json.loads(answer(site, code, cookie, told_of(lesson, 3).truth, step=3)[1])
    assert refused["state"] == "refused" and refused["why"].startswith("this homework closed at")
    _, f = step_of(site, code, 3, cookie)                         # unanswered: shown now
    assert f["room"]["phase"] == "revealed" and f["room"]["closed"]
    assert "did not answer this step before the homework closed" in f["me"]["verdict"]
    assert f["room"]["steps"] == ["right", "open", "open", "open"]
    assert "every step's answer is shown" in f["room"]["line"]


CHECKED = "check = [1]\n" + docs_example()     # the first step asked before and after


def test_a_pre_check_comes_first_and_its_answer_after_the_post_check(site, store):
    code, _, lesson = homework_of(store, CHECKED)
    assert [s.check for s in lesson.steps] == ["pre", "", "", "", "", "post"]
    cookie = join(site, code)[2]
    _, f = step_of(site, code, "next", cookie)
    assert f["room"]["step"] == 1 and f["room"]["steps"] == ["open"] + ["locked"] * 5
    _, f = step_of(site, code, 2, cookie)
    assert f["room"]["phase"] == "locked" and f["room"]["ask"] is None
    assert f["room"]["question"] == "" and "step 1" in f["room"]["line"]
    r, body = answer(site, code, cookie, 0, step=3)               # around the page: refused
    assert r.status == 409 and json.loads(body)["why"] == (
        "answer the check before the lesson first (step 1): it says what you knew before the "
        "lesson.")
    truth = told_of(lesson, 1).truth
    assert json.loads(answer(site, code, cookie, truth, step=1)[1])["state"] == "saved"
    _, f = step_of(site, code, 1, cookie)
    assert f["room"]["phase"] == "held" and "answer" not in f["room"]
    assert "step 6" in f["room"]["line"] and f["me"]["mine"] == truth
    assert f["room"]["steps"] == ["held", "open", "open", "open", "open", "open"]
    answer(site, code, cookie, truth, step=6)                     # the same question after
    _, f = step_of(site, code, 1, cookie)
    assert f["room"]["phase"] == "revealed" and "Right" in f["me"]["verdict"]
    assert f["room"]["steps"] == ["right", "open", "open", "open", "open", "right"]


def test_the_stream_sends_the_homework_and_a_move_of_its_closing(site, store):
    code, key, lesson = homework_of(store)
    cookie = join(site, code)[2]
    first = read_events(site, f"/live/{code}/events", cookie,
                        lambda e, d: e == "message")[-1][1]["room"]
    assert (first["mode"], first["phase"], first["n_steps"]) == ("homework", "asking", 4)
    assert first["titles"] == [s.title for s in lesson.steps] and "question" not in first
    heard = []
    reading = threading.Thread(target=lambda: heard.extend(read_events(
        site, f"/live/{code}/events", cookie,
        lambda e, d: e == "message" and d["room"]["phase"] == "closed", timeout=30)))
    reading.start()
    wait_for(lambda: site.hub.n_followers >= 1, 30, what="the stream to open")
    store.set_closing(code, key, 0)
    reading.join(30)
    assert heard and heard[-1][1]["room"]["version"] > first["version"]
