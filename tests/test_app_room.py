"""A class in a room: the lecturer's page under AppTest, and phones (tests/phone_helpers.py)
that answer as the phone's route does and read the message every server process sends them.
The store is a real SQLite file. The phone's own page, stream and receipts over HTTP are in
tests/test_phone_routes.py and the browser tests."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from apptest_helpers import APP, decode, heatmaps
from phone_helpers import Phone, chart_values
from streamlit.testing.v1 import AppTest

from xattn.ui.room.typed import JOIN_FORM

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


def everything_sent(at: AppTest) -> str:
    """Every element the page sent, as text (what reached the browser)."""
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
    code = host.session_state["room"]
    key = host.session_state["_xattn_host_keys"][code]      # this session's, not the link's
    assert dict(host.query_params)["room"] == code and "host" not in host.query_params
    assert "class" not in host.query_params                 # the action is not repeated
    return host, code, key


def count(host: AppTest) -> str:
    host.run()
    return next(m.value for m in host.metric if m.value.endswith(" answered"))


VERDICTS = ("<strong>Right", "<strong>Not this time", "<strong>Off by",
            "<strong>The right word", " right</strong>", "<strong>Your AER")


def test_a_host_and_three_phones_predict_then_see():
    host, code, key = start_class()
    phones = [Phone(code) for _ in range(3)]
    for p in phones:                                         # step 1: the weights wait
        m = p.message()
        assert m["room"]["step"] == 1 and m["room"]["title"] == "One head and the formula"
        assert m["room"]["ask"]["kind"] == "token" and "answer" not in m["room"]
        assert key not in json.dumps(m)                      # the host key never reaches them
    for p, token in zip(phones, (5, 5, 2), strict=True):
        assert p.answer(token) == token
    assert count(host) == "3 of 3 answered"
    host.button(key="reveal").click().run()
    for p in phones:
        m = p.message()
        assert m["room"]["phase"] == "revealed" and m["room"]["answer"]["charts"]
        assert m["me"]["mine"] == p.mine() and m["me"]["verdict"].startswith("<p>")
        assert any(v in m["me"]["verdict"] for v in VERDICTS)
    host.button(key="class_next").click().run()
    assert host.session_state["lesson"] == 2
    for p in phones:
        m = p.message()
        assert m["room"]["step"] == 2 and m["room"]["phase"] == "asking"
        assert m["me"] == {"mine": None}


@pytest.mark.parametrize("link", [{}, {"present": "1"}])
def test_the_host_and_the_phones_see_the_same_weights(link):
    """A class started from a link opens step 1 with the step's own settings on the host's
    page too, so the chart the host reveals is the one every phone shows."""
    host, code, _ = start_class(**link)
    p = Phone(code)
    p.answer(5)
    host.run()
    host.button(key="reveal").click().run()
    assert dict(host.query_params).get("heads") == "1"          # step 1: one head
    host_z = decode(heatmaps(json.loads(host.get_by_key("class_taps").proto.spec))[0]["z"])
    (taps,) = p.message()["room"]["answer"]["charts"]
    np.testing.assert_allclose(chart_values(taps)[0], host_z, atol=1e-3)


def test_step_13_s_chart_beside_the_answer_is_the_layer_the_answer_is_about():
    """Issue 44: on step 13 the host's chart beside the answer was layer 1's heads averaged
    while the answer (and the phone) is about layer 2."""
    from xattn.lesson import SHIPPED
    from xattn.live.answers import class_step
    from xattn.live.stores import class_store

    host, code, key = start_class()
    class_store().set_step(code, key, 13)
    host.run()
    p = Phone(code)
    p.answer(2)
    host.run()
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    a, told = class_step(SHIPPED, 13)
    assert told.layer == 1
    taps = json.loads(host.get_by_key("class_taps").proto.spec)
    host_z = decode(heatmaps(taps)[0]["z"])
    i = told.row[0]
    np.testing.assert_allclose(host_z[1], a.layer(1)[:, i].mean(0), atol=1e-3)
    assert heatmaps(taps)[0]["y"][1].startswith("layer 2, all heads")
    (phone,) = p.message()["room"]["answer"]["charts"]
    np.testing.assert_allclose(chart_values(phone)[0], host_z, atol=1e-3)


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
    assert any(JOIN_FORM in h.proto.body for h in at.get("html"))


def test_the_host_can_hand_the_room_a_new_key_without_losing_answers():
    host, code, key = start_class()
    Phone(code).answer(0)
    host.run()
    host.button(key="rotate_host").click().run()
    new = host.session_state["_xattn_host_keys"][code]
    assert new != key and "host" not in host.query_params
    assert [m.value for m in host.metric] == ["1 of 1 answered"]
    old = page(room=code, host=key)
    assert not any(b.key == "reveal" for b in old.button)
    assert any(b.key == "reveal" for b in page(room=code, host=new).button)


def device_code(host) -> str:
    """*Add a device* on a host page: the one-time code it shows (its link's ``device=``)."""
    host.button(key="add_device").click().run()
    words = " ".join(m.value for m in host.markdown)
    typed = re.search(r"Device code \*\*([A-Z2-9]{4})-([A-Z2-9]{4})\*\*", words)
    assert typed, words
    link = re.search(r"device=([A-Z2-9]{8})", words)
    assert link and link[1] == typed[1] + typed[2], words
    return link[1]


def drives(at) -> bool:
    return any(b.key == "reveal" or b.key == "ask_again" for b in at.button)


def test_a_device_code_lets_another_device_drive_the_class_once():
    host, code, key = start_class()
    device = device_code(host)
    assert key not in everything_sent(host)                  # the code, never the key
    projector = page(room=code, device=device, view="Lesson", present="1")
    assert drives(projector) and "device" not in projector.query_params
    assert "host" not in projector.query_params
    projector.button(key="class_next").click().run()         # it drives the class
    assert class_store_of().room_view(code).step == 2
    again = page(room=code, device=device)                   # a photo of the code: used up
    said = " ".join(w.value for w in again.warning)
    assert "works once" in said and not drives(again)
    assert again.session_state["lesson"] == 2                # a student's page of the class
    typed = device_code(host)
    tablet = page(room=code, device=f"{typed[:4].lower()}-{typed[4:]}")   # as typed
    assert drives(tablet)


def test_signing_every_other_device_out_keeps_this_one_and_stops_the_others_at_once():
    host, code, key = start_class()
    projector = page(room=code, device=device_code(host))
    stale = device_code(host)                                # made, never used
    Phone(code).answer(0)
    host.button(key="rotate_host").click().run()
    assert drives(host)                                      # the device that signed out
    host.button(key="reveal").click().run()
    assert class_store_of().room_view(code).phase == "revealed"
    projector.run()                                          # its follow component's rerun
    said = " ".join(w.value for w in projector.warning)
    assert f"no longer drives class {code}" in said and not drives(projector)
    assert dict(projector.query_params)["room"] == code      # ... a student's page of it
    projector.run()
    assert not drives(projector)
    late = page(room=code, device=stale)                     # a code made before: refused
    assert not drives(late) and "works once" in " ".join(w.value for w in late.warning)
    assert [m.value for m in host.metric] == ["1 of 1 answered"]   # the class stays


def class_store_of():
    from xattn.live.stores import class_store
    return class_store()


def test_the_share_link_of_a_host_is_a_student_link():
    host, code, key = start_class()
    host.session_state["share"] = True
    link = host.run().code[0].value
    assert f"room={code}" in link and key not in link and "host=" not in link


def test_a_new_round_asks_again_and_no_earlier_answer_counts_in_it():
    host, code, _ = start_class()
    phone = Phone(code)
    phone.answer(2)
    host.run()
    host.button(key="reveal").click().run()
    host.button(key="ask_again").click().run()
    m = phone.message()
    assert (m["room"]["round"], m["room"]["phase"]) == (2, "asking") and m["me"]["mine"] is None
    assert count(host) == "0 of 1 answered"
    phone.answer(2)                                          # the phone's own new answer
    assert count(host) == "1 of 1 answered" and phone.message()["me"]["mine"] == 2


def test_two_host_pages_drive_one_class_and_it_never_goes_back():
    laptop, code, key = start_class()
    projector = page(room=code, host=key)                    # the same link, a second device
    phone = Phone(code)
    for n in range(2, 7):
        laptop.button(key="class_next").click().run()
        assert laptop.session_state["lesson"] == n
        for at in (projector, projector):                    # every page, run again and again
            at.run()
            assert not at.exception, at.exception
        assert projector.session_state["lesson"] == n
        assert phone.message()["room"]["step"] == n
    from xattn.live.stores import class_store
    assert class_store().room_view(code).step == 6
    projector.button(key="reveal").click().run()             # either page drives it
    laptop.run()
    assert any(b.key == "ask_again" for b in laptop.button)
    assert class_store().room_view(code).step == 6


def test_a_press_on_a_screen_the_class_has_left_moves_nothing_and_says_so():
    from xattn.live.stores import class_store
    from xattn.ui.room.actions import STALE
    laptop, code, key = start_class()
    projector = page(room=code, host=key)                    # drawn at step 1
    laptop.button(key="class_next").click().run()            # the class is on step 2
    projector.button(key="class_next").click().run()         # pressed on step 1's screen
    assert class_store().room_view(code).step == 2           # not 3
    assert projector.session_state["lesson"] == 2            # it shows the class as it is
    assert STALE in [e.value for e in projector.warning]
    projector.button(key="class_next").click().run()         # pressed again, on step 2's
    assert class_store().room_view(code).step == 3
    assert STALE not in [e.value for e in projector.warning]
    picker = next(s for s in laptop.selectbox if s.key.startswith("lesson_pick_"))
    picker.set_value(5).run()                                # laptop drawn at step 2
    assert class_store().room_view(code).step == 3           # the class had moved to 3
    assert STALE in [e.value for e in laptop.warning]
    picker = next(s for s in laptop.selectbox if s.key.startswith("lesson_pick_"))
    assert picker.value == 3
    picker.set_value(5).run()
    assert class_store().room_view(code).step == 5 and laptop.session_state["lesson"] == 5


def test_a_host_link_opened_mid_class_shows_the_rooms_step_with_that_steps_settings():
    from xattn.lesson import STEPS
    from xattn.live.stores import class_store
    host, code, key = start_class()
    class_store().set_step(code, key, 14)
    want = {k: v for k, v in STEPS[13].state.items() if k != "view"}
    # the link as the address bar held it on step 1 (its settings), opened again on step 14
    stale = page(room=code, host=key, view="Lesson", lesson="1", heads="1", weights="random")
    assert stale.session_state["lesson"] == 14
    assert {k: stale.session_state[k] for k in want} == want
    assert not any("Not this step's setting" in w.value for w in stale.warning)
    # a reload on the same step keeps what the lecturer changed on it
    same = page(room=code, host=key, view="Lesson", lesson="14", heads="8")
    assert same.session_state["heads"] == 8


def test_the_revote_shows_both_rounds_and_who_moved_to_the_right_answer():
    from xattn.live.stores import class_store
    host, code, key = start_class()
    store = class_store()
    store.set_step(code, key, 4)                             # wait-k: a choice question
    host.run()
    phones = [Phone(code) for _ in range(4)]
    options = phones[0].message()["room"]["ask"]["choices"]
    truth = "the first 2: the black"
    wrong = next(o for o in options if o != truth)
    for p, pick in zip(phones, (wrong, wrong, truth, wrong), strict=True):
        p.answer(pick)
    host.run()
    host.button(key="reveal").click().run()
    host.button(key="ask_again").click().run()
    late = Phone(code)                        # did not vote in round 1 (issue 44, G7)
    for p, pick in zip([*phones, late], (truth, truth, truth, wrong, truth), strict=True):
        p.answer(pick)
    host.run()
    host.button(key="reveal").click().run()
    said = " ".join(m.value for m in host.markdown)
    assert "**2 moved to the right answer** in round 2 (of those who answered both rounds)" \
        in said
    assert "right 25% of 4 in round 1, 80% of 5 now; 1 answered only now." in said
    fig = json.loads(host.get_by_key("class_revote").proto.spec)
    assert [t["name"] for t in fig["data"]] == ["round 1", "round 2"]
    csv = host.get("download_button")
    assert csv  # the class's CSV carries both rounds (its rows: tests/test_classroom_report.py)


def test_a_timer_closes_the_question_on_every_page_and_a_late_tap_is_told():
    import time

    from xattn.classroom import AnswerRefused
    from xattn.live.stores import class_store
    host, code, key = start_class()
    early, late = Phone(code), Phone(code)
    early.answer(1)
    class_store().start_timer(code, key, 1, 5)
    host.run()
    assert any("xattn-countdown" in h.proto.body for h in host.get("html"))
    timer = late.message()["room"]["timer"]
    assert timer["seconds"] == 5 and timer["ends_at"] > time.time()   # every phone counts down
    time.sleep(5.2)
    assert late.message()["room"]["phase"] == "closed"
    with pytest.raises(AnswerRefused, match="time is up"):
        late.answer(2)                                       # the phone's route says so
    host.run()
    assert "Time is up: answers are closed." in " ".join(c.value for c in host.caption)
    assert early.mine() == 1 and late.mine() is None


def test_a_student_link_on_localhost_warns_and_a_public_address_is_used(monkeypatch):
    host, code, _ = start_class()
    warned = " ".join(w.value for w in host.warning)
    assert "phones cannot open it" in warned and "XATTN_PUBLIC_URL" in warned
    monkeypatch.setenv("XATTN_PUBLIC_URL", "http://192.168.1.20:8501/")
    host.run()
    assert "phones cannot open it" not in " ".join(w.value for w in host.warning)
    assert f"http://192.168.1.20:8501/?room={code}" in " ".join(m.value for m in host.markdown)


def test_every_step_of_the_lesson_works_in_a_class_for_the_host_and_a_phone():
    from xattn.lesson import STEPS
    host, code, _ = start_class()
    phone = Phone(code)
    for n in range(1, len(STEPS) + 1):
        m = phone.message()
        assert (m["room"]["step"], m["room"]["title"]) == (n, STEPS[n - 1].title)
        answered = phone.answer_any()
        assert answered == (m["room"]["ask"] is not None), n
        if answered:
            assert count(host) == "1 of 1 answered", n
        host.button(key="reveal").click().run()
        assert not host.exception, (n, host.exception)
        m = phone.message()
        assert m["room"]["answer"]["charts"], f"step {n}: no chart answers the question"
        assert len(json.dumps(m).encode()) <= 10_000, n      # a move's message stays small
        assert not answered or any(v in m["me"]["verdict"] for v in VERDICTS), (n, m["me"])
        if n < len(STEPS):
            host.button(key="class_next").click().run()
            assert host.session_state["lesson"] == n + 1


# --- a store that fails: only "no such room" or "wrong key" leaves a room --------------------

@pytest.fixture
def redis_class(tmp_path, monkeypatch):
    from classroom_helpers import RedisServer, redis_or_skip

    from xattn.live.stores import stores as _stores
    redis_or_skip()
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis", persist=True)
    monkeypatch.setenv("XATTN_REDIS_URL", server.url)
    _stores.clear()
    yield server
    server.stop()
    _stores.clear()


def test_redis_down_during_a_hosts_run_keeps_the_room_and_its_key(redis_class):
    host, code, key = start_class()
    student = page(room=code, explore="1")                   # a student's full page
    Phone(code).answer(3)
    redis_class.kill()
    for at in (host, student):
        at.run()
        assert not at.exception, at.exception
        said = " ".join(w.value for w in at.warning)
        assert "class store is not answering" in said and "Type the class code" not in said
    assert dict(host.query_params)["room"] == code and "host" not in host.query_params
    assert host.session_state["_xattn_host_keys"][code] == key
    assert dict(student.query_params)["room"] == code
    reloaded = page(room=code, host=key)                     # a reload during the outage
    assert reloaded.session_state["_xattn_host_keys"][code] == key
    assert "host" not in reloaded.query_params
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
    from xattn.live.stores import stores as _stores
    for name, value in setting.items():
        if value == "NOT-A-DATABASE":
            junk = tmp_path / "junk.sqlite3"
            junk.write_bytes(b"this is not a database\n" * 100)
            value = str(junk)
        monkeypatch.setenv(name, value)
    _stores.clear()
    try:
        at = page(**link)
        said = " ".join(w.value for w in at.warning)
        assert "class store" in said or "No class could be started" in said, said
        assert "Traceback" not in said
        if "room" in link:
            assert dict(at.query_params).get("room") == "ABCDEF"   # kept: it may come back
    finally:
        _stores.clear()


def test_the_count_says_how_many_voters_joined_after_the_question_opened():
    """Voters a script mints while a question is open show beside the count; a class that
    was in the room before the question opened does not."""
    host, code, key = start_class()
    before = [Phone(code) for _ in range(2)]                  # in the room before step 2
    host.button(key="class_next").click().run()               # step 2 opens now
    after = [Phone(code) for _ in range(3)]
    for p in before + after:
        p.answer_step(2, 0.5)
    assert count(host) == "5 of 5 answered"
    said = " ".join(c.value for c in host.caption)
    assert "3 of these voters joined after the question opened" in said, said
    host.button(key="class_next").click().run()               # step 3: nobody answered yet
    assert "joined after the question opened" not in " ".join(c.value for c in host.caption)


def test_the_class_csv_is_made_on_click_not_at_every_run_of_the_class_panel(monkeypatch):
    """The class panel reruns at each answer's tally; its CSV read every round's counts and
    confidences each time (the host's page slowed as the class went on). Both CSV buttons are
    now made on click (deferred), and the file they make holds the class's answers."""
    import gc

    from streamlit.runtime.media_file_manager import MediaFileManager

    from xattn.live.stores import class_store
    host, code, _ = start_class()
    for i, p in enumerate([Phone(code) for _ in range(3)]):
        p.answer(i)
    store, reads = class_store(), []
    read = store.confidences
    monkeypatch.setattr(store, "confidences", lambda *a: reads.append(a) or read(*a))
    host.run()
    assert count(host) == "3 of 3 answered" and reads == []          # no CSV made by a run
    buttons = {b.proto.id.rsplit("-", 1)[-1]: b.proto for b in host.get("download_button")}
    assert {"class_csv", "class_csv_end"} <= buttons.keys()
    made = {}
    for manager in (m for m in gc.get_objects() if isinstance(m, MediaFileManager)):
        made.update({f: e["callable"] for f, e in manager._deferred_callables.items()})
    for key in ("class_csv", "class_csv_end"):
        assert buttons[key].url == "" and buttons[key].deferred_file_id in made
        text = made[buttons[key].deferred_file_id]()
        assert text.splitlines()[0].startswith("step,") and len(text.splitlines()) >= 4
    assert reads                                                     # ... made on click
