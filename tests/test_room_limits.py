"""Limits a class never meets but a script does, on a real server (``streamlit run app.py``:
the lecturer's page over Streamlit's websocket protocol, a phone over HTTP, the client's
address as a local proxy reports it, ``X-Forwarded-For``), with small limits set for the test
(``XATTN_LIMITS``): one vote per browser and per room (a phone without a student id the
server signed for that room answers nothing; a join needs the page's work), new students
and new classes per address (failed codes count per browser: tests/test_no_hall_lockout.py);
and, with the default limits, a whole hall behind one address: 1,000 phones join and answer,
300 of them with 30 mistyped codes among them.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import re
from urllib.parse import urlsplit

import pytest

from devtools.browser import ARTIFACTS, StreamlitServer, browser_missing, unavailable
from devtools.protocol import Client, run_async
from xattn.classroom import SQLiteStore
from xattn.classroom.codes import solve_work
from xattn.ui.room.identity import STUDENT_COOKIE

pytestmark = pytest.mark.server

LIMITS = "new_students=3/600,failed_joins=3/600,new_rooms=2/3600,join_work_bits=8"
# The hall's server: the default limits but for the work of a join (4 x 2**15 hashes in Python is
# 0.13 s a phone: these phones share the test's two cores, a hall's each have their own CPU)
HALL_LIMITS = "join_work_bits=10"


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


def _http(server, method, path, address, cookie=None, body=None):
    c = http.client.HTTPConnection(urlsplit(server.url).hostname, urlsplit(server.url).port,
                                   timeout=30)
    headers = {"X-Forwarded-For": address, "Cookie": cookie or ""}
    if body is not None:
        headers["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read().decode()
    c.close()
    return r, data


def phone(server, code: str, address: str, cookie: str | None = None, *,
          work: bool = True) -> tuple[str, str | None]:
    """Open a student's link ``?room=code`` as a phone at ``address``, then join as its
    JavaScript does (the work done, unless ``work`` is False): what the page and the join
    said, and the room's student cookie it got, if any."""
    r, page = _http(server, "GET", f"/?room={code}", address, cookie)
    said = page.split("const JOIN = ", 1)[1].split(";\n", 1)[0]
    data = json.loads(said)
    if "challenge" not in data:
        return said, None
    nonce = solve_work(data["challenge"], data["bits"], data["pieces"]) if work else "0"
    r, out = _http(server, "POST", f"/live/{data['code']}/join", address,
                   body=json.dumps({"challenge": data["challenge"], "nonce": nonce}))
    set_cookie = next((v for k, v in r.getheaders() if k.lower() == "set-cookie"
                       and v.startswith(STUDENT_COOKIE + data["code"])), None)
    return out, set_cookie.split(";")[0] if set_cookie else None


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


def test_codes_that_open_no_class_never_lock_the_address(hall):
    """Failed codes count per browser (tests/test_no_hall_lockout.py): fresh browsers past
    the address's old bound (``failed_joins=3``) are told the code is wrong after their work,
    and a right code still opens its class at that address."""
    from xattn.classroom import Question
    code, _ = hall.store.create_room([Question("choice", ("up", "down"))])
    for _ in range(5):
        said, cookie = phone(hall, "ZZZZZZ", "203.0.113.20")
        assert "No class is running with the code ZZZZZZ" in said and cookie is None
    said, cookie = phone(hall, code, "203.0.113.20")
    assert "problem" not in said and cookie is not None


def test_twenty_phones_without_a_valid_student_id_add_no_answer(hall):
    code = host_link(visit(hall, "class=new", "203.0.113.31"))     # the lesson's questions
    joins = [phone(hall, code, "203.0.113.30") for _ in range(10)]
    forged = [f"{STUDENT_COOKIE}{code}=s{i:021d}.{'0' * 32}" for i in range(10)]
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


def test_a_join_without_the_pages_work_mints_no_voter(hall):
    code = host_link(visit(hall, "class=new", "203.0.113.41"))
    for _ in range(5):
        said, cookie = phone(hall, code, "203.0.113.40", work=False)
        assert cookie is None and "work is not done" in said
    status, _ = answer(hall, code, None, 2)
    assert status == 401 and hall.store.room_view(code).n_answered == 0


def test_the_lecturer_is_never_locked_out_by_the_halls_mistyped_codes(hall):
    for _ in range(4):                        # past the failed codes of this address
        said, _ = phone(hall, "ZZZZZZ", "203.0.113.50")
    assert "No class is running" in said or "were tried" in said
    run = visit(hall, "class=new", "203.0.113.50")           # the lecturer, behind the NAT
    assert "you drive this class" in texts(run), texts(run)


# --- a whole hall behind one address, with the default limits -----------------------------------

@pytest.fixture(scope="module")
def big_hall(tmp_path_factory):
    store = tmp_path_factory.mktemp("hall") / "classes.sqlite3"
    with StreamlitServer(log=ARTIFACTS / "room-hall-server.log",
                         env={"XATTN_CLASS_STORE": str(store), "XATTN_REDIS_URL": "",
                              "XATTN_LIMITS": HALL_LIMITS}) as server:
        server.store = SQLiteStore(store)
        yield server


async def _hall(server, code: str, n: int, mistyped: int, *, at_once: int = 100):
    """``n`` phones from one address join room ``code`` (``mistyped`` of them type a code
    that opens no class first, then the right one) and answer its first question."""
    from devtools.phones import Phone

    gate = asyncio.Semaphore(at_once)
    phones = [Phone(i, server.url, "ZZZZZZ" if i < mistyped else code) for i in range(n)]

    async def one(p):
        async with gate:
            if p.code == "ZZZZZZ":
                with contextlib.suppress(Exception):
                    await p.join()
                p.code = code                         # ... then the code on the screen
            await p.join()
            return await p.answer(timeout=60)
    try:
        return await asyncio.gather(*(one(p) for p in phones), return_exceptions=True)
    finally:
        await asyncio.gather(*(p.leave() for p in phones), return_exceptions=True)


@pytest.mark.parametrize("n,mistyped", [(300, 30), (1000, 0)])
def test_a_whole_hall_behind_one_address_joins_and_every_phone_answers(big_hall, n, mistyped):
    code = host_link(visit(big_hall, "class=new", "127.0.0.1"))
    picks = run_async(_hall(big_hall, code, n, mistyped))
    failed = [p for p in picks if isinstance(p, BaseException) or not p.is_saved]
    assert not failed, f"{len(failed)} of {n} phones: {failed[:3]}"
    assert big_hall.store.room_view(code).n_answered == n
