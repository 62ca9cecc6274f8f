"""A class in a room, under AppTest: one host and students, each an AppTest session of the same
server (the store is a real SQLite file; the process's relay is real: its outbox writes every
answer, its receipts are what the pages show)."""

from __future__ import annotations

import json

import pytest
from apptest_helpers import APP
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.fixture(autouse=True)
def class_file(tmp_path, monkeypatch):
    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    monkeypatch.delenv("XATTN_PUBLIC_URL", raising=False)
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "classes.sqlite3"))


def page(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def predict(at: AppTest):
    """The student's prediction control (its key names the question it belongs to)."""
    found = [w for kind in ("button_group", "number_input") for w in at.get(kind)
             if (w.key or "").startswith("predict-")]
    assert len(found) == 1, [w.key for w in found]
    return found[0]


def receipt(at: AppTest) -> str:
    """What the student's page says of their answer."""
    return " ".join(e.value for kind in ("success", "info", "warning", "error")
                    for e in at.get(kind))


def everything_sent(at: AppTest) -> str:
    """Every element the page sent, as text (what reached the student's browser)."""
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "code", "metric",
                 "text", "button", "button_group", "text_input", "number_input", "selectbox"):
        for el in at.get(kind):
            parts.append(str(getattr(el, "proto", el)))
    for el in at.get("plotly_chart"):
        parts.append(el.proto.spec)
    parts.append(json.dumps(dict(at.query_params)))
    return "\n".join(parts)


def start_class(**link):
    host = page(**{"class": "new", **link})
    code, key = host.session_state["room"], host.session_state["host"]
    assert dict(host.query_params)["room"] == code and dict(host.query_params)["host"] == key
    assert "class" not in host.query_params                 # the action is not repeated
    return host, code, key


def count(host: AppTest) -> str:
    host.run()
    return next(m.value for m in host.metric if m.value.endswith(" answered"))


def stored(code: str, student: AppTest):
    from xattn.ui.room import class_store
    return class_store().room_view(code, student.session_state["_xattn_student"],
                                   present=False).mine


def test_a_host_and_three_students_predict_then_see():
    host, code, key = start_class()
    students = [page(room=code) for _ in range(3)]
    for s in students:                                       # step 1: the weights wait
        assert [c.key for c in s.get("plotly_chart")] == ["preload_chart"]   # no answer yet
        assert "appears here when your teacher reveals it" in " ".join(
            c.value for c in s.caption)
        assert "1. One head and the formula" in s.markdown[1].value
        assert key not in everything_sent(s)                 # the host key never reaches them
        assert dict(s.query_params) == {"room": code}        # the link stays the class's
    for s, token in zip(students, (5, 5, 2), strict=True):
        predict(s).set_value(token).run()
        assert not s.exception
        assert receipt(s).startswith("Saved: `") and stored(code, s) == token
    assert count(host) == "3 of 3 answered"
    host.button(key="reveal").click().run()
    for s in students:
        s.run()
        assert any(m.value.startswith(("**Right**", "**Not this time**", "**The right word"))
                   for m in s.markdown)
        assert s.get_by_key("answer_chart_0")                # the chart that answers it
        assert predict(s).disabled and predict(s).value == stored(code, s)
    host.button(key="class_next").click().run()
    assert host.session_state["lesson"] == 2
    for s in students:
        s.run()
        assert "2. Every row sums to 1" in s.markdown[1].value    # they follow the class
        assert predict(s).value is None and not predict(s).disabled
        assert not s.get("plotly_chart")      # Plotly is loaded: no preloading chart again


def test_a_burst_of_taps_ends_with_the_last_tap_saved_and_shown():
    host, code, _ = start_class()
    s = page(room=code)
    taps = (1, 2, 3, 4, 5, 6, 0, 2, 3, 4)
    for token in taps:
        predict(s).set_value(token).run()
    assert stored(code, s) == 4 and predict(s).value == 4
    assert receipt(s).startswith("Saved: `on`")
    assert count(host) == "1 of 1 answered"                   # counted once, the last wins


@pytest.mark.parametrize("link", [{}, {"present": "1"}])
def test_the_host_and_the_students_see_the_same_weights(link):
    """A class started from a link opens step 1 with the step's own settings on the host's
    page too, so the truth the host reveals is the one every student's page shows."""
    host, code, _ = start_class(**link)
    s = page(room=code)
    predict(s).set_value(5).run()
    host.run()
    host.button(key="reveal").click().run()
    s.run()
    assert dict(host.query_params).get("heads") == "1"          # step 1: one head
    host_row = json.loads(host.get_by_key("class_taps").proto.spec)["data"][0]["z"]
    student_row = json.loads(s.get_by_key("answer_chart_0").proto.spec)["data"][0]["z"]
    assert host_row == student_row                    # the class's guess and head 1's row


def test_a_tampered_host_key_is_refused_without_saying_whether_the_room_exists():
    _, code, key = start_class()
    real = page(room=code, host=key[:-1] + ("x" if key[-1] != "x" else "y"))
    fake = page(room="ZZZZZZ", host=key)
    texts = [" ".join(w.value for w in at.warning) for at in (real, fake)]
    assert texts[0] == texts[1] and "host" in texts[0].lower()
    for at in (real, fake):
        assert "room" not in at.query_params and "host" not in at.query_params
        assert not any(b.key == "reveal" for b in at.button)


def test_an_unknown_code_says_so_and_offers_a_box():
    at = page(room="hello")
    text = " ".join(w.value for w in at.warning)
    assert "not a room code" in text and "hello" in text
    assert at.text_input(key="join") is not None


def test_the_host_can_hand_the_room_a_new_key_without_losing_answers():
    host, code, key = start_class()
    s = page(room=code)
    predict(s).set_value(0).run()
    host.button(key="rotate_host").click().run()
    new = host.session_state["host"]
    assert new != key and dict(host.query_params)["host"] == new
    assert [m.value for m in host.metric] == ["1 of 1 answered"]
    old = page(room=code, host=key)
    assert not any(b.key == "reveal" for b in old.button)


def test_the_share_link_of_a_host_is_a_student_link():
    host, code, key = start_class()
    host.session_state["share"] = True
    link = host.run().code[0].value
    assert f"room={code}" in link and key not in link and "host=" not in link


def test_a_new_round_is_a_new_question_that_no_earlier_choice_can_answer():
    # The browser shows the last pick until the new round's run reaches it; a message it sends
    # meanwhile still carries that pick, for the old question's control. The new round's
    # control has another key (the round is in it), so nothing of the old one is cast.
    host, code, _ = start_class()
    student = page(room=code)
    predict(student).set_value(2).run()
    host.run()
    host.button(key="reveal").click().run()
    student.run()
    old = predict(student)
    host.button(key="ask_again").click().run()
    student.run()                                            # the new round reaches the page
    new = predict(student)
    assert new.key != old.key and new.value is None and not new.disabled
    assert count(host) == "0 of 1 answered"
    new.set_value(2).run()                                   # the student's own new pick
    assert count(host) == "1 of 1 answered"
    assert receipt(student).startswith("Saved: `cat`")


def test_two_host_pages_drive_one_class_and_it_never_goes_back():
    laptop, code, key = start_class()
    projector = page(room=code, host=key)                    # the same link, a second device
    student = page(room=code)
    for n in range(2, 7):
        laptop.button(key="class_next").click().run()
        assert laptop.session_state["lesson"] == n
        for at in (projector, student, projector):           # every page, run again and again
            at.run()
            assert not at.exception, at.exception
        assert projector.session_state["lesson"] == n
        assert f"{n}. " in student.markdown[1].value
    from xattn.ui.room import class_store
    assert class_store().room_view(code).step == 6
    projector.button(key="reveal").click().run()             # either page drives it
    laptop.run()
    assert any(b.key == "ask_again" for b in laptop.button)
    assert class_store().room_view(code).step == 6


def test_the_revote_shows_both_rounds_and_who_moved_to_the_right_answer():
    from xattn.ui.room import class_store
    host, code, key = start_class()
    store = class_store()
    store.set_step(code, key, 4)                             # wait-k: a choice question
    host.run()
    students = [page(room=code) for _ in range(4)]
    options = predict(students[0]).options
    truth = "the first 2: the black"
    wrong = next(o for o in options if o != truth)
    for s, pick in zip(students, (wrong, wrong, truth, wrong), strict=True):
        predict(s).set_value(pick).run()
    host.run()
    host.button(key="reveal").click().run()
    host.button(key="ask_again").click().run()
    for s, pick in zip(students, (truth, truth, truth, wrong), strict=True):
        s.run()
        predict(s).set_value(pick).run()
    host.run()
    host.button(key="reveal").click().run()
    said = " ".join(m.value for m in host.markdown)
    assert "**2 moved to the right answer** in round 2" in said
    assert "right 25% of 4 in round 1, 75% of 4 now" in said
    fig = json.loads(host.get_by_key("class_revote").proto.spec)
    assert [t["name"] for t in fig["data"]] == ["round 1", "round 2"]
    csv = host.get("download_button")
    assert csv  # the class's CSV carries both rounds (its rows: tests/test_classroom_report.py)


def test_a_timer_closes_the_question_on_every_page_and_a_late_tap_is_told():
    import time

    from xattn.ui.room import class_store
    host, code, key = start_class()
    early, late = page(room=code), page(room=code)
    predict(early).set_value(1).run()
    class_store().start_timer(code, key, 1, 5)
    for at in (host, early, late):
        at.run()
        assert any("xattn-countdown" in h.proto.body for h in at.get("html"))
    assert not predict(late).disabled
    time.sleep(5.2)
    late.run()
    assert "Time is up" in receipt(late) and predict(late).disabled
    host.run()
    assert "Time is up: answers are closed." in " ".join(c.value for c in host.caption)
    assert stored(code, early) == 1 and stored(code, late) is None


def test_a_student_link_on_localhost_warns_and_a_public_address_is_used(monkeypatch):
    host, code, _ = start_class()
    warned = " ".join(w.value for w in host.warning)
    assert "phones cannot open it" in warned and "XATTN_PUBLIC_URL" in warned
    monkeypatch.setenv("XATTN_PUBLIC_URL", "http://192.168.1.20:8501/")
    host.run()
    assert "phones cannot open it" not in " ".join(w.value for w in host.warning)
    assert f"http://192.168.1.20:8501/?room={code}" in " ".join(m.value for m in host.markdown)


def answer_any(student: AppTest, code: str) -> bool:
    """The student answers the step's question, whatever its kind (a tap, a number, a job
    for the first head, a link); False when the step asks nothing."""
    from xattn.classroom import NO_QUESTION
    from xattn.ui.room import class_store
    q = class_store().room_view(code).question
    if q == NO_QUESTION:
        return False
    controls = {w.key.rsplit("-", 1)[-1]: w for kind in ("button_group", "number_input")
                for w in student.get(kind) if (w.key or "").startswith("predict-")}
    if q.kind == "links":                                    # tap a target, then a source
        controls["open_tgt"].set_value(0).run()
        next(w for w in student.get("button_group") if w.key.endswith("_src")).set_value(
            0).run()
    elif q.kind == "parts":
        controls["open_part_0"].set_value(q.choices[0]).run()
    else:
        (control,) = controls.values()
        assert not control.disabled
        control.set_value(q.low if q.kind == "number" else q.options()[0]).run()
    assert not student.exception, student.exception
    assert receipt(student).startswith("Saved: "), receipt(student)
    return True


def test_every_step_of_the_lesson_works_in_a_class_for_the_host_and_a_student():
    from xattn.lesson import STEPS
    host, code, _ = start_class()
    student = page(room=code)
    for n in range(1, len(STEPS) + 1):
        student.run()
        assert not student.exception, (n, student.exception)
        assert student.markdown[1].value.startswith(f"#### {n}. {STEPS[n - 1].title}"), n
        answered = answer_any(student, code)
        if answered:
            assert count(host) == "1 of 1 answered", n
        host.button(key="reveal").click().run()
        assert not host.exception, (n, host.exception)
        student.run()
        assert not student.exception, (n, student.exception)
        charts = [c.key for c in student.get("plotly_chart") if c.key != "preload_chart"]
        assert charts, f"step {n}: no chart answers the question"
        said = " ".join(m.value for m in student.markdown)
        assert not answered or any(v in said for v in (
            "**Right", "**Not this time", "**Off by", "**The right word", " right**",
            "**Your AER")), (n, said)
        if n < len(STEPS):
            host.button(key="class_next").click().run()
            assert host.session_state["lesson"] == n + 1


# --- a store that fails: only "no such room" or "wrong key" leaves a room --------------------

@pytest.fixture
def redis_class(tmp_path, monkeypatch):
    from classroom_helpers import RedisServer, redis_or_skip

    from xattn.ui.room import _relays, _stores
    redis_or_skip()
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis", persist=True)
    monkeypatch.setenv("XATTN_REDIS_URL", server.url)
    _stores.clear()
    _relays.clear()
    yield server
    server.stop()
    _stores.clear()
    _relays.clear()


def test_redis_down_during_a_hosts_run_keeps_the_room_and_the_key_in_the_link(redis_class):
    host, code, key = start_class()
    student = page(room=code)
    predict(student).set_value(3).run()
    redis_class.kill()
    for at in (host, student):
        at.run()
        assert not at.exception, at.exception
        said = " ".join(w.value for w in at.warning)
        assert "class store is not answering" in said and "Type the class code" not in said
    assert dict(host.query_params)["room"] == code and dict(host.query_params)["host"] == key
    assert dict(student.query_params)["room"] == code
    assert "1. One head and the formula" in student.markdown[1].value   # the last step read
    reloaded = page(room=code, host=key)                     # a reload during the outage
    assert dict(reloaded.query_params).get("host") == key
    redis_class.start()
    host.run()
    assert "not answering" not in " ".join(w.value for w in host.warning)
    assert host.metric[0].value == "1 of 1 answered"


@pytest.mark.parametrize("setting", [
    {"XATTN_CLASS_STORE": "/proc/no-such-folder/classes.sqlite3"},    # a folder that cannot be made
    {"XATTN_CLASS_STORE": "NOT-A-DATABASE"},                          # a file that is not one
    {"XATTN_REDIS_URL": "redis//:nope@@:port"},                       # a malformed URL
])
@pytest.mark.parametrize("link", [{"room": "ABCDEF"}, {"class": "new"}])
def test_a_store_that_cannot_be_opened_is_a_notice_not_a_traceback(setting, link, tmp_path,
                                                                   monkeypatch):
    from xattn.ui.room import _relays, _stores
    for name, value in setting.items():
        if value == "NOT-A-DATABASE":
            junk = tmp_path / "junk.sqlite3"
            junk.write_bytes(b"this is not a database\n" * 100)
            value = str(junk)
        monkeypatch.setenv(name, value)
    _stores.clear()
    _relays.clear()
    try:
        at = page(**link)
        said = " ".join(w.value for w in at.warning)
        assert "class store" in said or "No class could be started" in said, said
        assert "Traceback" not in said
        if "room" in link:
            assert dict(at.query_params).get("room") == "ABCDEF"   # kept: it may come back
    finally:
        _stores.clear()
        _relays.clear()
