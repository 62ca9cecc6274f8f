"""Limits a class never meets but a script does, on a real server over Streamlit's websocket
protocol (the client's address as a local proxy reports it, ``X-Forwarded-For``), with small
limits set for the test (``XATTN_LIMITS``): one vote per browser (a session without a student
id the server signed answers nothing), new students, failed joins and new classes per address.
"""

from __future__ import annotations

import re

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

from devtools.browser import ARTIFACTS, StreamlitServer, browser_missing, unavailable
from devtools.protocol import Client, run_async
from xattn.classroom import SQLiteStore
from xattn.ui.identity import STUDENT_COOKIE

pytestmark = pytest.mark.server

LIMITS = "new_students=3/600,failed_joins=3/600,new_rooms=2/3600"


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    reason = browser_missing()      # no browser needed, but the same server harness
    if reason and "Chromium" not in reason:
        unavailable(reason)
    store = tmp_path_factory.mktemp("limits") / "classes.sqlite3"
    with StreamlitServer(log=ARTIFACTS / "room-limits-server.log",
                         env={"XATTN_CLASS_STORE": str(store), "XATTN_REDIS_URL": "",
                              "XATTN_LIMITS": LIMITS}) as server:
        server.store = SQLiteStore(store)
        yield server


def visit(server, query: str, address: str, *, cookies=None, widgets=()):
    """Open ``?query`` as a browser at ``address``; the run's texts, html and widgets."""
    async def go():
        async with Client(server.url, headers={"X-Forwarded-For": address},
                          cookies=cookies) as tab:
            run = await tab.run(query)
            if widgets:
                run = await tab.run(query, widgets(run))
            return run
    run = run_async(go())
    assert run.ok and not run.problems(), run.problems()
    return run


def texts(run) -> str:
    return " ".join([a.body for a in run.of("alert")] + [m.body for m in run.of("markdown")])


def host_link(run) -> tuple[str, str] | None:
    html = " ".join(m.body for m in run.of("markdown"))
    found = re.search(r"\?room=([A-Z0-9]{6})", html)
    return found and found.group(1)


def test_classes_per_address_are_limited_and_another_address_is_not(hall):
    made = [visit(hall, "class=new", "203.0.113.10") for _ in range(3)]
    assert all("you drive this class" in texts(r) for r in made[:2])
    assert "more than 2 classes were started from your network" in texts(made[2])
    assert "you drive this class" in texts(visit(hall, "class=new", "203.0.113.11"))


def test_codes_that_open_no_class_are_limited_then_even_a_right_code_waits(hall):
    from xattn.classroom import Question
    code, _ = hall.store.create_room([Question("choice", ("up", "down"))])
    for _ in range(3):
        assert "No class is running with the code ZZZZZZ" in texts(
            visit(hall, "room=ZZZZZZ", "203.0.113.20"))
    refused = texts(visit(hall, f"room={code}", "203.0.113.20"))
    assert "class codes that open no class were tried from your network" in refused
    assert "Joining class" in texts(visit(hall, f"room={code}", "203.0.113.21"))


def test_twenty_sessions_without_a_valid_student_id_add_no_answer(hall):
    code = host_link(visit(hall, "class=new", "203.0.113.31"))     # the lesson's questions
    runs = [visit(hall, f"room={code}", "203.0.113.30") for _ in range(10)]
    runs += [visit(hall, f"room={code}", "203.0.113.30",
                   cookies={STUDENT_COOKIE: f"s{i:021d}.{'0' * 32}"}) for i in range(10)]
    for run in runs:
        assert not run.of("button_group")                # no prediction to answer
    said = [texts(r) for r in runs]
    assert sum("Joining class" in t for t in said) == 3   # new students: 3 per address
    assert all("new students joined classes from your network" in t for t in said
               if "Joining class" not in t)
    assert hall.store.room_view(code).n_answered == 0
    # a browser that keeps the cookie it was given answers, once
    issued = re.search(r"const v = '([^']+)'",
                       " ".join(h.body for h in runs[0].of("html"))).group(1)

    def pick(run):
        (pills,) = run.of("button_group")
        state = WidgetState(id=pills.id)
        state.string_array_value.data.append("`cat`")
        return [state]
    for _ in range(2):
        answered = visit(hall, f"room={code}", "203.0.113.30",
                         cookies={STUDENT_COOKIE: issued}, widgets=pick)
        assert "Saved: `cat`" in texts(answered)
    assert hall.store.room_view(code).n_answered == 1
