"""A class in a room, under AppTest: one host and three students, each an AppTest session of
the same server (the store is a real SQLite file)."""

from __future__ import annotations

import json

import pytest
from apptest_helpers import APP
from streamlit.testing.v1 import AppTest

pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.fixture(autouse=True)
def class_file(tmp_path, monkeypatch):
    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "classes.sqlite3"))


def page(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def predict(at: AppTest):
    return next(w for w in at.get("button_group") if w.key == "predict")


def everything_sent(at: AppTest) -> str:
    """Every element the page sent, as text (what reached the student's browser)."""
    parts = []
    for kind in ("markdown", "caption", "info", "warning", "error", "code", "metric", "text",
                 "button", "button_group", "text_input", "number_input", "selectbox"):
        for el in at.get(kind):
            parts.append(str(getattr(el, "proto", el)))
    for el in at.get("plotly_chart"):
        parts.append(el.proto.spec)
    parts.append(json.dumps(dict(at.query_params)))
    return "\n".join(parts)


def start_class():
    host = page(**{"class": "new"})
    code, key = host.session_state["room"], host.session_state["host"]
    assert dict(host.query_params)["room"] == code and dict(host.query_params)["host"] == key
    assert "class" not in host.query_params                 # the action is not repeated
    return host, code, key


def test_a_host_and_three_students_predict_then_see():
    host, code, key = start_class()
    students = [page(room=code) for _ in range(3)]
    for s in students:                                       # step 1: the weights wait
        assert not s.get("plotly_chart") or all("class_answers" in (c.key or "")
                                                 for c in s.get("plotly_chart"))
        assert any("hidden until your teacher reveals" in i.value for i in s.info)
        assert key not in everything_sent(s)                 # the host key never reaches them
    for s, token in zip(students, (5, 5, 2), strict=True):
        predict(s).set_value(token).run()
        assert not s.exception
    host.run()
    assert [m.value for m in host.metric] == ["3 of 3 answered"]
    host.button(key="reveal").click().run()
    for s in students:
        s.run()
        assert any(m.value.startswith(("**Right**", "**Not this time**", "**The right word"))
                   for m in s.markdown)
        assert s.get_by_key("head_1")                        # the weights, at last
        assert s.get_by_key("class_answers")
    host.button(key="class_next").click().run()
    assert host.session_state["lesson"] == 2
    for s in students:
        s.run()
        assert s.session_state["lesson"] == 2                # they follow the host
        assert any("hidden until your teacher reveals" in i.value for i in s.info)


def class_counts(host: AppTest) -> list[int]:
    host.run()
    return list(json.loads(host.get_by_key("class_answers").proto.spec)["data"][0]["y"])


def test_a_student_answering_twice_counts_once_and_the_last_answer_wins(monkeypatch):
    from xattn.classroom import ClassStore
    from xattn.ui import room

    clock = [1000.0]                         # a burst of taps: no time passes between them
    monkeypatch.setattr(room, "_clock", lambda: clock[0])
    writes = []
    answer = ClassStore.answer
    monkeypatch.setattr(ClassStore, "answer",
                        lambda self, *args: writes.append(args[-1]) or answer(self, *args))
    host, code, _ = start_class()
    s = page(room=code)
    taps = (1, 2, 3, 4, 5, 6, 0, 2, 3, 4)
    for token in taps:
        predict(s).set_value(token).run()
    assert writes == [1]          # the store took the first tap; the others wait in the page
    assert class_counts(host) == [0, 1, 0, 0, 0, 0, 0]
    assert [m.value for m in host.metric] == ["1 of 1 answered"]
    clock[0] += room.ANSWER_EVERY            # the page's next poll sends the latest tap
    s.run()
    assert writes == [1, 4]
    assert class_counts(host) == [0, 0, 0, 0, 1, 0, 0]             # counted once, last wins
    assert [m.value for m in host.metric] == ["1 of 1 answered"]
    # a new round's first answer never waits, however soon after the last one it comes
    host.button(key="reveal").click().run()
    host.button(key="ask_again").click().run()
    s.run()
    s.run()                                   # the page's poll reopens the prediction
    predict(s).set_value(6).run()
    assert writes == [1, 4, 6]
    assert class_counts(host) == [0, 0, 0, 0, 0, 0, 1]


@pytest.mark.parametrize("link", [{"class": "new"}, {"class": "new", "present": "1"}])
def test_the_host_and_the_students_see_the_same_weights(link):
    """A class started from a link opens step 1 with the step's own settings on the host's
    page too, so the truth the host reveals is the one every student's page shows."""
    host = page(**link)
    s = page(room=host.session_state["room"])
    predict(s).set_value(5).run()
    host.run()
    host.button(key="reveal").click().run()
    s.run()
    for at in (host, s):
        assert dict(at.query_params).get("heads") == "1"        # step 1: one head
    rows = [json.loads(at.get_by_key("class_taps").proto.spec)["data"][0]["z"]
            for at in (host, s)]
    assert rows[0] == rows[1]                           # the class's guess and head 1's row


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


def test_a_stale_message_after_ask_again_does_not_cast_the_old_answer():
    # The browser shows the last pick until the new round's run reaches it; a message it sends
    # meanwhile (its poll) still carries that pick. Cast into the new round, the student would
    # be counted without predicting, and the host's count would be wrong.
    host, code, _ = start_class()
    student = page(room=code)
    predict(student).set_value(2).run()
    host.run()
    host.button(key="reveal").click().run()
    student.run()
    host.button(key="ask_again").click().run()
    student.run()                                            # the new round reaches the page
    assert predict(student).value is None                    # no pill lit from before
    stale = predict(student)       # what the browser's poll carries: not a user's action,
    stale._value = 2               # so past AppTest's guard against a disabled widget
    student.run()
    host.run()
    assert [m.value for m in host.metric] == ["0 of 1 answered"]
    assert predict(student).value is None and not predict(student).disabled   # reopened
    predict(student).set_value(2).run()                      # the student's own new pick
    host.run()
    assert [m.value for m in host.metric] == ["1 of 1 answered"]
    assert any("Your prediction is in" in c.value for c in student.caption)
