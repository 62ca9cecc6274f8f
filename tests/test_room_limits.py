"""Limits a class never meets but a script does, on a real server (``streamlit run app.py``:
the lecturer's page over Streamlit's websocket protocol, a phone over HTTP, the client's
address as a local proxy reports it, ``X-Forwarded-For``), with small limits set for the test
(``XATTN_LIMITS``): one vote per browser (a phone without a student id the server signed
answers nothing), new students, failed joins and new classes per address.
"""

from __future__ import annotations

import http.client
import json
import re
from urllib.parse import urlsplit

import pytest

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


def phone(server, code: str, address: str, cookie: str | None = None) -> tuple[str, str | None]:
    """Open a student's link ``?room=code`` as a phone at ``address``: the page's join
    state (JSON) and the cookie it set, if any."""
    c = http.client.HTTPConnection(urlsplit(server.url).hostname, urlsplit(server.url).port,
                                   timeout=30)
    c.request("GET", f"/?room={code}", headers={"X-Forwarded-For": address,
                                                "Cookie": cookie or ""})
    r = c.getresponse()
    page = r.read().decode()
    c.close()
    set_cookie = next((v for k, v in r.getheaders() if k.lower() == "set-cookie"
                       and v.startswith(STUDENT_COOKIE)), None)
    joined = page.split("const JOIN = ", 1)[1].split(";\n", 1)[0]
    return joined, set_cookie.split(";")[0] if set_cookie else None


def answer(server, code: str, cookie: str | None, value) -> tuple[int, dict]:
    c = http.client.HTTPConnection(urlsplit(server.url).hostname, urlsplit(server.url).port,
                                   timeout=30)
    c.request("POST", f"/live/{code}/answer", json.dumps({"step": 1, "round": 1,
                                                          "value": value}),
              {"Content-Type": "application/json", "Cookie": cookie or ""})
    r = c.getresponse()
    out = json.loads(r.read())
    c.close()
    return r.status, out


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
        said, cookie = phone(hall, "ZZZZZZ", "203.0.113.20")
        assert "No class is running with the code ZZZZZZ" in said and cookie is None
    refused, cookie = phone(hall, code, "203.0.113.20")
    assert "class codes that open no class were tried from your network" in refused
    assert cookie is None
    said, cookie = phone(hall, code, "203.0.113.21")
    assert "problem" not in said and cookie is not None


def test_twenty_phones_without_a_valid_student_id_add_no_answer(hall):
    code = host_link(visit(hall, "class=new", "203.0.113.31"))     # the lesson's questions
    joins = [phone(hall, code, "203.0.113.30") for _ in range(10)]
    forged = [f"{STUDENT_COOKIE}=s{i:021d}.{'0' * 32}" for i in range(10)]
    joins += [phone(hall, code, "203.0.113.30", cookie) for cookie in forged]
    issued = [cookie for _, cookie in joins if cookie]
    assert len(issued) == 3                                  # new students: 3 per address
    assert all("new students joined classes from your network" in said
               for said, cookie in joins if not cookie)
    for cookie in [None, *forged]:
        status, receipt = answer(hall, code, cookie, 2)
        assert status == 401 and receipt["state"] == "refused"
    assert hall.store.room_view(code).n_answered == 0
    for _ in range(2):                       # a browser that keeps its cookie answers, once
        status, receipt = answer(hall, code, issued[0], 2)
        assert (status, receipt["state"], receipt["value"]) == (200, "saved", 2)
    assert hall.store.room_view(code).n_answered == 1
