"""A homework on the lecturer's page under AppTest (xattn/ui/room/homework.py), with students
answering through the store as the phone's route does (a homework's phone over HTTP is in
tests/test_phone_homework.py): started from the sidebar or a link, each step's count of
answers and of right answers computed by hand, *Close now* and *Extend*, the lecturer walking
the steps without moving anyone, a pre/post check's gain, and a student's full page."""

from __future__ import annotations

import json
import time

import pytest
from apptest_helpers import decode
from phone_helpers import Phone
from test_app_lessons import upload
from test_app_room import class_file, page  # noqa: F401 (class_file: autouse)
from test_lessonfile import docs_example

from xattn.classroom import AnswerRefused, new_student_id
from xattn.live.stores import class_store

pytestmark = pytest.mark.usefixtures("fresh_cache")
DAY = 86400.0
RIGHT_REASON = "The softmax divides by the row's total"     # the docs example's step 2


def start_homework(text: str | None = None, days: int = 7):
    """A homework started from the sidebar (an uploaded lesson, *homework*, its days)."""
    host = upload(page(), "seminar.toml", text or docs_example())
    host.radio(key="class_mode").set_value("homework").run()
    host.number_input(key="homework_days").set_value(days).run()
    assert host.button(key="start_class").label == "Start a homework"
    host.button(key="start_class").click().run()
    assert not host.exception, host.exception
    code = host.session_state["room"]
    return host, code, host.session_state["_xattn_host_keys"][code]


def table(host) -> str:
    return next(m.value for m in host.markdown if m.value.startswith("| step | answered"))


def said(host) -> str:
    return " ".join(e.value for e in (*host.markdown, *host.caption, *host.warning,
                                      *host.error, *host.info))


def test_a_homework_from_the_sidebar_counts_each_step_as_counted_by_hand():
    t0 = time.time()
    host, code, key = start_homework(days=3)
    store = class_store()
    view = store.room_view(code)
    assert view.homework and abs(view.closes_at - t0 - 3 * DAY) < 60
    keys = {b.key for b in host.button}
    assert {"homework_close", "homework_extend", "class_csv", "end_class"} <= keys | {
        d.key for d in host.get("download_button")}
    assert not keys & {"reveal", "class_next", "ask_again", "follow_up", "timer_start"}
    assert "class_histogram" not in {t.key for t in host.toggle}       # no revote
    assert "**Homework, open** until" in said(host) and "2 days 23 hours left" in said(host)
    a, b, c, d, e = (Phone(code) for _ in range(5))
    # step 1, which word homme looks at most in head 2 (the page says man, token 2):
    # a and b right, c wrong; step 2: a right, d wrong; step 3 (journal's masked weight, 0):
    # b right, c and e wrong; step 4, a poll: two answers, nothing right
    for who, step, value in [(a, 1, 2), (b, 1, 2), (c, 1, 0), (a, 2, RIGHT_REASON),
                             (d, 2, "The weights were trained so"), (b, 3, 0.0), (c, 3, 0.5),
                             (e, 3, 1.0), (d, 4, "Yes, mostly"), (e, 4, "Not at all")]:
        assert who.homework_step(step)["room"]["phase"] == "asking"     # predict first
        who.answer_step(step, value)
        seen = who.homework_step(step)
        assert seen["room"]["phase"] == "revealed" and seen["me"]["mine"] == value
    assert a.homework_step(1)["me"]["verdict"].startswith("<p><strong>Right")
    assert "Not this time" in c.homework_step(1)["me"]["verdict"]
    assert a.homework_step("next")["room"]["step"] == 3 and e.homework_step("next")[
        "room"]["steps"] == ["open", "open", "wrong", "answered"]
    host.run()
    assert table(host) == "\n".join([
        "| step | answered | right | share right |", "|---|---:|---:|---:|",
        "| 1. `One head on our sentence` | 3 | 2 | 67% |",
        "| 2. `What does a softmax do?` | 2 | 1 | 50% |",
        "| 3. `Masking a word` | 3 | 1 | 33% |",
        "| 4. `Your turn` | 2 | – | – |"])
    assert store.room_view(code).step == 1                    # nobody moved anyone


def test_the_lecturer_walks_the_steps_and_sees_each_ones_answers_without_moving_anyone():
    host, code, key = start_homework()
    store = class_store()
    version = store.room_view(code).version
    for who, value in ((new_student_id(), RIGHT_REASON), (new_student_id(), RIGHT_REASON),
                       (new_student_id(), "The weights were trained so")):
        store.answer(code, 2, who, value)
    host.button(key="lesson_next").click().run()
    assert not host.exception, host.exception
    assert "Step 2 of 4: What does a softmax do?" in said(host)
    assert "**The answer.**" in said(host)                   # the lecturer sees every answer
    bars = json.loads(host.get_by_key("class_answers").proto.spec)["data"][0]
    assert list(decode(bars["y"])) == [2, 1, 0]              # its answers so far, this step's
    view = store.room_view(code)
    assert (view.step, view.version) == (1, version)         # the class did not move


def test_close_now_and_extend_within_thirty_days():
    host, code, key = start_homework(days=7)
    store = class_store()
    student = new_student_id()
    host.button(key="homework_close").click().run()
    assert store.room_view(code).phase == "closed"
    assert "**Homework, closed** on" in said(host)
    with pytest.raises(AnswerRefused, match="this homework closed at"):
        store.answer(code, 1, student, 2)
    assert host.button(key="homework_extend").label == "Open it again for 7 days"
    host.button(key="homework_extend").click().run()
    view = store.room_view(code)
    assert view.phase == "asking" and abs(view.closes_at - time.time() - 7 * DAY) < 60
    store.answer(code, 1, student, 2)
    more = host.number_input(key="homework_more")
    assert more.max == 23                                   # 30 days from now at the most
    more.set_value(23).run()
    assert host.button(key="homework_extend").label == "Extend by 23 days"
    host.button(key="homework_extend").click().run()
    assert abs(store.room_view(code).closes_at - time.time() - 30 * DAY) < 120
    assert "homework_extend" not in {b.key for b in host.button}
    assert "It is open for the most a homework can be (30 days from now)." in said(host)


def test_a_link_starts_a_homework_and_a_link_out_of_range_starts_nothing():
    host = page(**{"class": "new", "homework": "2"})
    code = host.session_state["room"]
    view = class_store().room_view(code)
    assert view.homework and abs(view.closes_at - time.time() - 2 * DAY) < 120
    assert "homework" not in host.query_params and "class" not in host.query_params
    for bad in ("40", "0", "7.5", "a week"):
        at = page(**{"class": "new", "homework": bad})
        assert "room" not in at.session_state or not at.session_state["room"], bad
        text = " ".join(w.value for w in at.warning)
        assert f"homework={bad}" in text and "No class was started" in text, (bad, text)
    at = page(homework="7")
    text = " ".join(w.value for w in at.warning)
    assert "`homework=7` starts a homework only with `class=new`" in text


CHECKED = "check = [1]\n" + docs_example()       # step 1 asked before and after the lesson


def test_a_pre_post_check_in_a_homework_gives_the_gain_counted_by_hand():
    host, code, key = start_homework(CHECKED)
    store = class_store()
    # four students answer the check before (step 1) and after (step 6): right before a, b
    # (50 %), right after a, b, c (75 %): gain (75 - 50) / (100 - 50) = 0.50
    for who, before, after in zip((new_student_id() for _ in range(4)), (2, 2, 0, 0),
                                  (2, 2, 2, 0), strict=True):
        store.answer(code, 1, who, before)
        store.answer(code, 6, who, after)
    host.run()
    host.toggle(key="class_learned").set_value(True).run()
    text = said(host)
    assert "| 1. `One head on our sentence` | 4 | 2 | 3 | 0.50 |" in text, text
    assert "**0.50**" in text


def test_a_students_full_page_shows_the_weights_of_the_steps_they_answered():
    host, code, key = start_homework()
    student = page(room=code, explore="1", lesson="2")
    assert "Step 2 of 4" in said(student)
    assert any("hidden until" in i.value for i in student.info)   # not answered: hidden
    sid = student.session_state["_xattn_student"][code]
    class_store().answer(code, 2, sid, RIGHT_REASON)
    student.run()
    assert not any("hidden until" in i.value for i in student.info)
    assert "Back to the homework" in said(student)
