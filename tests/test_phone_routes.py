"""The phone's routes (xattn/server/phone.py) on a real HTTP server (uvicorn, as Streamlit
serves them) and a real SQLite store: the page and its cookie, the stream, the answers and
every way a request can be wrong."""

from __future__ import annotations

import asyncio
import gzip
import http.client
import json
import re
import socket
import threading
import time
from contextlib import asynccontextmanager
from urllib.parse import quote

import pytest
import uvicorn
from classroom_helpers import wait_for
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from xattn.classroom import Limits, Question, RoomNotFound, SQLiteStore
from xattn.classroom.codes import solve_work, work_done
from xattn.classroom.hub import Hub, Message
from xattn.server import live
from xattn.server.phone import MAX_BODY, ROUTES, PhoneMiddleware
from xattn.ui.room.identity import STUDENT_COOKIE

QUESTIONS = (Question("choice", ("up", "down")), Question("number", low=0, high=1))


def build(view) -> Message:
    body = json.dumps({"code": view.code, "step": view.step, "phase": view.phase,
                       "round": view.round, "version": view.version}).encode()
    return Message((view.code, view.version, view.phase, view.step, view.round), body,
                   view.step, view.round, view.question, lambda text: {"mine": text})


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The phone's routes and middleware in front of a stand-in for Streamlit, on uvicorn."""

    def __init__(self, store, build=build):
        self.store, self.port = store, _free_port()
        self.hub = Hub(store, build)

        @asynccontextmanager
        async def lifespan(app):
            self.hub.start(asyncio.get_running_loop())
            yield
            self.hub.stop()

        app = Starlette(routes=[*ROUTES, Route("/", lambda r: PlainTextResponse("streamlit"))],
                        middleware=[Middleware(PhoneMiddleware)], lifespan=lifespan)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        wait_for(lambda: self.server.started, 30, what="uvicorn to start")

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r, data


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "c.sqlite3", Limits(new_students=(3, 600.0),
                                                   browser_failed_joins=(2, 600.0),
                                                   join_work_bits=8, join_work_pieces=1))
    yield s
    s.close()


@pytest.fixture
def site(store, monkeypatch):
    server = Server(store)
    monkeypatch.setattr(live, "_made", [server.hub])
    yield server
    server.stop()


def cookie_of(response, code=None) -> str | None:
    prefix = STUDENT_COOKIE + (code or "")
    for name, value in response.getheaders():
        if name.lower() == "set-cookie" and value.startswith(prefix):
            return value
    return None


def page_of(site, code, cookie=None):
    headers = {"Accept-Encoding": "gzip", **({"Cookie": cookie} if cookie else {})}
    r, body = site.request("GET", f"/?room={quote(code)}", headers=headers)
    page = gzip.decompress(body).decode() if r.getheader("content-encoding") else body.decode()
    return r, page, json.loads(page.split("const JOIN = ")[1].split(";\n")[0])


def join(site, code, *, work=True):
    """The phone's page, then its join with the work done (as its JavaScript does): the
    response, the page and the room's student cookie (None: not joined)."""
    r, page, data = page_of(site, code)
    if "challenge" not in data:
        return r, page, None
    nonce = solve_work(data["challenge"], data["bits"], data["pieces"]) if work else "0"
    joined, said = site.request("POST", f"/live/{data['code']}/join",
                                json.dumps({"challenge": data["challenge"], "nonce": nonce}),
                                {"Content-Type": "application/json"})
    joined.said = json.loads(said)
    cookie = cookie_of(joined, data["code"])
    return joined, page, cookie.split(";")[0] if cookie else None


def test_a_students_link_is_the_phones_page_and_its_work_joins_the_room(site, store):
    code, _ = store.create_room(QUESTIONS)
    r, page, data = page_of(site, code.lower())
    assert r.status == 200 and r.getheader("content-type").startswith("text/html")
    assert r.getheader("content-encoding") == "gzip" and int(r.getheader("content-length")) \
        < 20_000
    assert f'"code":"{code}"' in page and "EventSource" in page and "XATTN_WORK" in page
    assert cookie_of(r) is None and data["bits"] == 8          # no vote before the work
    assert r.getheader("referrer-policy") == "no-referrer"
    joined, _, cookie = join(site, code)
    set_cookie = cookie_of(joined, code)
    assert joined.status == 200 and "HttpOnly" in set_cookie and "SameSite=Lax" in set_cookie
    assert "Max-Age=43200" in set_cookie
    again, _, data = page_of(site, code, cookie)
    assert "challenge" not in data and cookie_of(again) is None   # in the room: kept


def test_a_join_without_the_work_or_with_anothers_challenge_is_refused(site, store):
    code, _ = store.create_room(QUESTIONS)
    other, _ = store.create_room(QUESTIONS)
    _, _, data = page_of(site, code)
    wrong = next(str(n) for n in range(10_000) if not work_done(data["challenge"], str(n), 8))
    cases = [({"challenge": data["challenge"], "nonce": wrong}, code, 403, "work is not done"),
             ({"challenge": data["challenge"],                   # solved, another room's
               "nonce": solve_work(data["challenge"], 8)}, other, 403, "work is not done"),
             ({"challenge": "1.2.3", "nonce": "0"}, code, 403, "work is not done"),
             ({"challenge": data["challenge"]}, code, 400, "A join is sent as"),
             ("not json", code, 400, "A join is sent as")]
    for body, room, status, why in cases:
        r, out = site.request("POST", f"/live/{room}/join",
                              body if isinstance(body, str) else json.dumps(body),
                              {"Content-Type": "application/json"})
        assert r.status == status and why in json.loads(out)["why"], (body, out)
        assert cookie_of(r) is None
    nonce = solve_work(data["challenge"], 8)
    r, out = site.request("POST", f"/live/{code}/join", json.dumps(
        {"challenge": data["challenge"], "nonce": nonce}), {"Origin": "http://evil.example"})
    assert r.status == 403 and cookie_of(r) is None


def test_the_page_is_sent_without_indentation_or_comment_lines():
    """``scripts.lean`` is sound only while no string of the assets spans lines: no template
    literal (a backtick outside a comment) in their code."""
    from xattn.server.phone import page_html
    from xattn.server.scripts import PHONE_MODULES, asset
    for name in ("work.js", *(f"phone/{m}" for m in PHONE_MODULES)):
        code = "\n".join(line.split("//")[0] for line in asset(name).splitlines())
        assert "`" not in code, name
    lines = page_html({"code": "HJK23M"}).splitlines()
    assert not [ln for ln in lines if ln != ln.strip() or ln.startswith("//")]
    assert "function connect(had)" in "\n".join(lines)


def test_a_solved_challenge_sent_again_is_the_same_student(site, store):
    code, _ = store.create_room(QUESTIONS)
    _, _, data = page_of(site, code)
    body = json.dumps({"challenge": data["challenge"],
                       "nonce": solve_work(data["challenge"], 8)})
    cookies = {cookie_of(site.request("POST", f"/live/{code}/join", body,
                                      {"Content-Type": "application/json"})[0], code)
               .split(";")[0] for _ in range(2)}
    assert len(cookies) == 1                                    # one voter, however often


def test_a_cookie_of_one_class_counts_in_no_other(site, store):
    code, _ = store.create_room(QUESTIONS)
    other, _ = store.create_room(QUESTIONS)
    cookie = join(site, code)[2]
    moved = cookie.replace(STUDENT_COOKIE + code, STUDENT_COOKIE + other)
    r, body = answer(site, other, moved, "up")
    assert r.status == 401 and store.room_view(other).n_answered == 0


def test_a_locked_room_takes_no_new_student_and_keeps_those_in_it(site, store):
    code, secret = store.create_room(QUESTIONS)
    inside = join(site, code)[2]
    _, _, data = page_of(site, code)                             # solved before the lock
    body = json.dumps({"challenge": data["challenge"],
                       "nonce": solve_work(data["challenge"], 8)})
    store.lock(code, secret, True)
    joined, page, late = join(site, code)         # a fresh browser learns it after the work
    assert late is None and "closed to new students" in joined.said["why"]
    r, out = site.request("POST", f"/live/{code}/join", body,
                          {"Content-Type": "application/json"})
    assert r.status == 403 and "closed to new students" in json.loads(out)["why"]
    assert json.loads(out)["say"] == ["why.locked", {}]
    assert json.loads(answer(site, code, inside, "up")[1])["state"] == "saved"
    store.lock(code, secret, False)
    assert join(site, code)[2] is not None


@pytest.mark.parametrize("query", ["/?room=HJK23M&host=x", "/", "/?view=Heads"])
def test_everything_else_is_streamlits(site, query):
    r, body = site.request("GET", query)
    assert body == b"streamlit"


def host_cookie(response, code) -> str | None:
    return next((v for k, v in response.getheaders() if k.lower() == "set-cookie"
                 and v.startswith(f"xattn_host_{code}=")), None)


def test_a_host_link_is_traded_for_a_cookie_and_the_address_keeps_no_key(site, store):
    code, key = store.create_room(QUESTIONS)
    r, _ = site.request("GET", f"/?room={code.lower()}&host={key}&view=Lesson&present=1")
    assert r.status == 303 and r.getheader("location") == \
        f"./?room={code}&view=Lesson&present=1"                # the same link, without the key
    assert key not in r.getheader("location") and r.getheader("referrer-policy") == \
        "no-referrer"
    cookie = host_cookie(r, code)
    assert cookie.startswith(f"xattn_host_{code}={key};")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Max-Age=43200" in cookie
    held = {"Cookie": cookie.split(";")[0]}
    r, body = site.request("GET", f"/?room={code}&view=Lesson", headers=held)
    assert body == b"streamlit"                                # the lecturer's page
    store.rotate_host(code, key)                               # signed out by another device
    r, body = site.request("GET", f"/?room={code}", headers=held)
    assert b"EventSource" in body                              # a student's phone page
    assert host_cookie(r, code).startswith(f"xattn_host_{code}=;")   # dropped: a student now


def test_a_device_link_is_streamlits_and_a_refused_key_is_dropped_from_the_full_page(site,
                                                                                     store):
    code, key = store.create_room(QUESTIONS)
    token = token_cookie(site)
    _, body = site.request("GET", f"/?room={code}&device=ABCDEFGH", headers={"Cookie": token})
    assert body == b"streamlit"                                # the page trades the code
    held = {"Cookie": f"xattn_host_{code}={key}; {token}"}
    r, body = site.request("GET", f"/?room={code}&explore=1", headers=held)
    assert body == b"streamlit" and host_cookie(r, code) is None     # a key that drives
    store.rotate_host(code, key)
    r, body = site.request("GET", f"/?room={code}&explore=1", headers=held)
    assert body == b"streamlit" and host_cookie(r, code).startswith(f"xattn_host_{code}=;")


@pytest.mark.parametrize("key", ["wrong", "", "a;b", "x" * 200])
def test_a_host_link_whose_key_is_refused_is_not_traded(site, store, key):
    code, _ = store.create_room(QUESTIONS)
    r, body = site.request("GET", f"/?room={code}&host={quote(key)}")
    assert body == b"streamlit" and host_cookie(r, code) is None   # the page says it is wrong
    r, body = site.request("GET", f"/?room={code}", headers={"Cookie": f"xattn_host_{code}=x"})
    assert body != b"streamlit"                                # a student's phone page


def test_the_lecturers_page_hands_its_key_to_a_cookie_from_its_own_origin_only(site, store):
    code, key = store.create_room(QUESTIONS)
    same = {"Content-Type": "application/json", "Origin": f"http://127.0.0.1:{site.port}"}
    r, _ = site.request("POST", f"/live/{code}/host", json.dumps({"key": key}), same)
    assert r.status == 204 and host_cookie(r, code).startswith(f"xattn_host_{code}={key};")
    for body, headers, status in [
            (json.dumps({"key": key}), {**same, "Origin": "http://evil.example"}, 403),
            (json.dumps({"key": key}), {"Content-Type": "application/json"}, 403),
            (json.dumps({"key": "wrong"}), same, 403),
            (json.dumps({"key": 3}), same, 400), ("not json", same, 400)]:
        r, data = site.request("POST", f"/live/{code}/host", body, headers)
        assert r.status == status and host_cookie(r, code) is None, (body, headers, data)
        assert "why" in json.loads(data)
    r, _ = site.request("POST", "/live/NOTACODE!/host", json.dumps({"key": key}), same)
    assert r.status == 404


def test_every_response_says_no_referrer(site, store):
    for path in ("/", "/?view=Heads", "/live/HJK23M/events"):
        r, _ = site.request("GET", path)
        assert r.getheader("referrer-policy") == "no-referrer", path


def test_a_code_that_opens_no_class_is_told_after_the_work_and_counts_per_browser(site,
                                                                                 store):
    r, page, data = page_of(site, "HJK23M")     # a fresh browser learns nothing for free
    assert "challenge" in data and "problem" not in data and "xattn_browser" not in page
    joined, _, cookie = join(site, "HJK23M")
    assert joined.status == 404 and "No class is running with the code" in joined.said["why"]
    token = joined.getheader("set-cookie").split(";")[0]
    assert cookie is None and token.startswith("xattn_browser=")
    _, page, _ = join(site, "NOT A CODE <b>")
    assert "is not a room code" in page
    assert "<b>" not in page.split("const JOIN = ")[1].split(";")[0]     # escaped in JSON
    _, _, data = page_of(site, "HJK24M", token)   # with its token: told at once, counted
    assert "No class is running with the code" in data["problem"]
    code, _ = store.create_room(QUESTIONS)
    _, _, data = page_of(site, code, token)       # 2 failures: this browser waits
    assert "were tried in this browser" in data["problem"] and "challenge" not in data
    _, _, cookie = join(site, code)               # another browser at the same address: in
    assert cookie is not None


def test_a_solved_join_of_no_class_sent_again_is_the_same_token_and_its_count(site, store):
    _, _, data = page_of(site, "HJK23M")
    body = json.dumps({"challenge": data["challenge"],
                       "nonce": solve_work(data["challenge"], 8)})
    said = [site.request("POST", "/live/HJK23M/join", body,
                         {"Content-Type": "application/json"}) for _ in range(3)]
    tokens = {r.getheader("set-cookie").split(";")[0] for r, _ in said}
    assert len(tokens) == 1                       # no fresh token without fresh work
    assert [r.status for r, _ in said] == [404, 404, 429]
    assert "were tried in this browser" in json.loads(said[2][1])["why"]


def token_cookie(site, query="/?room=HJK23M&device=ABCDEFGH", *, work=True) -> str | None:
    """The token page of a link that may guess, its work done as its JavaScript does: the
    browser's token cookie (None: refused)."""
    r, body = site.request("GET", query)
    page = body.decode()
    assert r.status == 200 and "XATTN_WORK" in page, page[:200]
    data = json.loads(page.split("const T = ")[1].split(";\n")[0])
    nonce = solve_work(data["challenge"], data["bits"], data["pieces"]) if work else "0"
    r, _ = site.request("POST", "/live/token", json.dumps({"challenge": data["challenge"],
                                                          "nonce": nonce}),
                        {"Content-Type": "application/json"})
    value = r.getheader("set-cookie")
    return value.split(";")[0] if r.status == 204 else None


@pytest.mark.parametrize("query", ["/?room=HJK23M&device=ABCDEFGH", "/?room=HJK23M&explore=1"])
def test_a_link_that_may_guess_asks_a_browser_without_a_token_for_the_work_first(site, query):
    assert token_cookie(site, query, work=False) is None
    cookie = token_cookie(site, query)
    assert cookie.startswith("xattn_browser=")
    _, body = site.request("GET", query, headers={"Cookie": cookie})
    assert body == b"streamlit"
    _, body = site.request("GET", query, headers={"Cookie": cookie[:-1] + "x"})   # forged
    assert body != b"streamlit"


def test_new_students_per_address_are_bounded(site, store):
    code, _ = store.create_room(QUESTIONS)
    assert all(join(site, code)[2] for _ in range(3))
    _, _, data = page_of(site, code)
    r, out = site.request("POST", f"/live/{code}/join", json.dumps(
        {"challenge": data["challenge"], "nonce": solve_work(data["challenge"], 8)}),
        {"Content-Type": "application/json"})
    assert r.status == 429 and cookie_of(r) is None
    assert "new students joined classes from your network" in json.loads(out)["why"]


def answer(site, code, cookie, value, step=1, round_=1, **headers):
    body = json.dumps({"step": step, "round": round_, "value": value})
    return site.request("POST", f"/live/{code}/answer", body,
                        {"Content-Type": "application/json", "Cookie": cookie or "",
                         **headers})


def test_an_answer_is_saved_and_its_receipt_says_so(site, store):
    code, secret = store.create_room(QUESTIONS)
    cookie = join(site, code)[2]
    r, body = answer(site, code, cookie, "down")
    receipt = json.loads(body)
    assert r.status == 200 and (receipt["state"], receipt["value"]) == ("saved", "down")
    assert store.room_view(code).counts == {"up": 0, "down": 1}
    r, body = answer(site, code, cookie, "up")                   # the last answer wins
    assert store.room_view(code).counts == {"up": 1, "down": 0}
    store.reveal(code, secret, 1)
    r, body = answer(site, code, cookie, "down")
    assert json.loads(body)["state"] == "refused" and "revealed" in json.loads(body)["why"]


def test_an_answer_to_a_round_asked_again_is_refused_and_its_receipt_says_so(site, store):
    code, secret = store.create_room(QUESTIONS)
    cookie = join(site, code)[2]
    store.reveal(code, secret, 1)
    store.ask_again(code, secret, 1)                  # round 2 opened while a tap was in flight
    r, body = answer(site, code, cookie, "down", round_=1)
    receipt = json.loads(body)
    assert (receipt["state"], receipt["step"], receipt["round"]) == ("refused", 1, 1)
    assert "for round 1 of step 1, and the class is on round 2 now" in receipt["why"]
    assert store.room_view(code).n_answered == 0
    r, body = answer(site, code, cookie, "down", round_=2)
    assert json.loads(body)["state"] == "saved" and store.room_view(code).n_answered == 1


def test_an_answer_carries_how_sure_and_its_receipt_says_what_was_saved(site, store):
    code, secret = store.create_room(QUESTIONS)
    store.set_options(code, secret, confidence=True)
    cookie = join(site, code)[2]
    headers = {"Content-Type": "application/json", "Cookie": cookie}
    sent = [({"value": "down", "confidence": "guess"}, "guess"),
            ({"value": "down", "confidence": "sure"}, "sure"),        # surer, the same answer
            ({"value": "up", "confidence": None}, None),               # none: still an answer
            ({"value": "up"}, None),
            ({"value": "down", "confidence": "think_so"}, "think_so")]
    for body, level in sent:
        r, out = site.request("POST", f"/live/{code}/answer",
                              json.dumps({"step": 1, "round": 1, **body}), headers)
        receipt = json.loads(out)
        assert r.status == 200 and (receipt["state"], receipt["value"], receipt["confidence"]) \
            == ("saved", body["value"], level)
        assert store.mine(code, 1, store.round_answers(code, 1, 1).popitem()[0]) == \
            (body["value"], level)
    assert store.confidence(code, secret, 1, 1) == {("down", "think_so"): 1}


@pytest.mark.parametrize("level", ["certain", "Sure", "think so", "", 3, True, ["sure"],
                                   {"level": "sure"}, "<b>sure</b>"])
def test_a_confidence_that_is_not_a_level_is_refused_in_words(site, store, level):
    code, _ = store.create_room(QUESTIONS)
    cookie = join(site, code)[2]
    r, out = site.request("POST", f"/live/{code}/answer",
                          json.dumps({"step": 1, "round": 1, "value": "up",
                                      "confidence": level}),
                          {"Content-Type": "application/json", "Cookie": cookie})
    refused = json.loads(out)
    assert r.status == 400 and refused["state"] == "refused"
    assert refused["why"] == ("a confidence is one of 'sure', 'think_so' or 'guess' (or none); "
                              f"received {level!r}.")                   # literal, as text
    assert r.getheader("content-type") == "application/json"
    assert store.room_view(code).n_answered == 0


@pytest.mark.parametrize(("body", "headers", "status", "why"), [
    (b'{"step": 1, "round": 1}', {}, 400, "An answer is"),
    (b"not json", {}, 400, "An answer is"),
    (b'{"step": true, "round": 1, "value": "up"}', {}, 400, "An answer is"),
    (b'{"step": 1, "round": 1, "value": "' + b"x" * MAX_BODY + b'"}', {}, 413, "at most"),
    (b'{"step": 1, "round": 1, "value": "up"}', {"Content-Type": "text/plain"}, 415, "JSON"),
    (b'{"step": 1, "round": 1, "value": "up"}', {"Origin": "http://evil.example"}, 403,
     "class's own page"),
])
def test_a_bad_answer_request_is_refused_with_what_is_wrong(site, store, body, headers, status,
                                                            why):
    code, _ = store.create_room(QUESTIONS)
    cookie = join(site, code)[2]
    r, out = site.request("POST", f"/live/{code}/answer", body,
                          {"Content-Type": "application/json", "Cookie": cookie, **headers})
    assert r.status == status and why in json.loads(out)["why"]
    assert json.loads(out)["say"] == [{413: "why.too.big", 403: "why.origin"}.get(
        status, "why.bad.request"), {}]                 # the phone's words for it (said.py)
    assert store.room_view(code).n_answered == 0


def test_a_browser_without_the_cookie_cannot_answer(site, store):
    code, _ = store.create_room(QUESTIONS)
    forged = f"{STUDENT_COOKIE}=abcdefghijklmnopqrstuv.{'0' * 32}"
    for cookie in (None, forged):
        r, body = answer(site, code, cookie, "up")
        assert r.status == 401 and "not joined the class yet" in json.loads(body)["why"]
        assert json.loads(body)["say"] == ["why.not.joined", {}]
    assert store.room_view(code).n_answered == 0


def read_events(site, path, cookie, until, timeout=15.0):
    """Read the stream at ``path`` until ``until(event, data)`` holds; the events read."""
    s = socket.create_connection(("127.0.0.1", site.port), timeout=timeout)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nCookie: {cookie or ''}\r\n\r\n".encode())
    buf, seen, deadline = b"", [], time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            buf += s.recv(65536)
            while b"\n\n" in buf:
                block, buf = buf.split(b"\n\n", 1)
                lines = block.decode().split("\n")
                event = next((ln[7:] for ln in lines if ln.startswith("event: ")), "message")
                data = next((json.loads(ln[6:]) for ln in lines if ln.startswith("data: ")),
                            None)
                if data is not None:
                    seen.append((event, data))
                    if until(event, data):
                        return seen
    finally:
        s.close()
    raise AssertionError(f"the stream did not say it: {seen}")


def test_the_stream_sends_the_room_and_the_phones_own_answer(site, store):
    code, _ = store.create_room(QUESTIONS)
    cookie = join(site, code)[2]
    answer(site, code, cookie, "down")
    seen = read_events(site, f"/live/{code}/events", cookie,
                       lambda e, d: e in ("message", "me") and d["me"]["mine"] == "1")
    room = next(d["room"] for e, d in seen if e == "message")
    assert room == {"code": code, "step": 1, "phase": "asking", "round": 1, "version": 0}


def test_a_host_pages_stream_hears_the_tally(site, store):
    code, _ = store.create_room(QUESTIONS)
    cookie = join(site, code)[2]
    first = read_events(site, f"/live/{code}/pulse", None, lambda e, d: e == "pulse")[-1][1]
    answer(site, code, cookie, "up")
    later = read_events(site, f"/live/{code}/pulse", None,
                        lambda e, d: e == "pulse" and d["tally"] > first["tally"])[-1][1]
    assert later["version"] == first["version"]


def test_a_page_that_drives_the_class_ends_it_and_every_phone_is_told(site, store):
    """The hub that serves the room keeps its snapshot (to give a store that lost the room its
    room back): an ended class is not given back; its phones hear that it ended."""
    code, key = store.create_room(QUESTIONS)
    cookie = join(site, code)[2]
    answer(site, code, cookie, "up")
    opened, heard = threading.Event(), []

    def until(event, data):
        if event == "message":
            opened.set()                      # the hub built the room: it holds a snapshot
        return event == "gone"
    reading = threading.Thread(target=lambda: heard.extend(
        read_events(site, f"/live/{code}/events", cookie, until, timeout=30)))
    reading.start()
    assert opened.wait(30)
    same = f"http://127.0.0.1:{site.port}"
    host = f"xattn_host_{code}={key}"
    for headers in ({"Origin": same}, {"Origin": same, "Cookie": f"xattn_host_{code}=wrong"},
                    {"Origin": "http://evil.example", "Cookie": host}, {"Cookie": host},
                    {"Origin": same, "Cookie": f"xattn_host_HJK23M={key}"}):
        r, data = site.request("POST", f"/live/{code}/end", b"", headers)
        assert r.status == 403 and "why" in json.loads(data), headers
    assert store.room_view(code).n_answered == 1                     # still running
    r, _ = site.request("POST", f"/live/{code}/end", b"", {"Origin": same, "Cookie": host})
    assert r.status == 204 and host_cookie(r, code).startswith(f"xattn_host_{code}=;")
    reading.join(30)
    assert heard and heard[-1][0] == "gone" and "has ended" in heard[-1][1]["gone"], heard
    with pytest.raises(RoomNotFound):
        store.room_view(code)
    time.sleep(1.0)                     # the hub's looks meanwhile give nothing back
    with pytest.raises(RoomNotFound):
        store.room_view(code)
    r, _ = site.request("POST", "/live/NOTACODE!/end", b"", {"Origin": same, "Cookie": host})
    assert r.status == 404


def test_a_stream_of_no_class_is_told_so(site):
    seen = read_events(site, "/live/HJK23M/events", None, lambda e, d: e == "gone")
    assert "No class is running" in seen[-1][1]["gone"]
    r, body = site.request("GET", "/live/nonsense!/events")
    assert r.status == 404


def test_a_servers_listening_socket_gets_no_delay_and_its_connections_inherit_it():
    """Streamlit binds its socket with protocol 0, so asyncio leaves Nagle on for accepted
    connections (a response in two writes waited ~40 ms for a delayed ACK): the lifespan sets
    TCP_NODELAY on the listening sockets, which accepted ones inherit on Linux."""
    if not __import__("os").path.isdir("/proc/self/fd"):
        pytest.skip("no /proc/self/fd (not Linux): nothing is set")
    listener = socket.socket(family=socket.AF_INET)            # protocol 0, as Streamlit's
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    try:
        assert live.nodelay_on_listeners() >= 1
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        assert listener.fileno() >= 0                           # still the server's
        client.close()
        accepted.close()
    finally:
        listener.close()


# --- cookies in a frame (xattn/server/cookies.py): their attributes per request kind --------

HTTPS = {"X-Forwarded-Proto": "https"}
FRAMED_PAGE = {"Sec-Fetch-Dest": "iframe"}          # a frame's navigation, as Chromium says it
FRAMED_FETCH = {"X-Xattn-Framed": "1"}              # a script of a framed page, as it says it


@pytest.mark.parametrize("headers,attributes", [
    ({}, "HttpOnly; SameSite=Lax"),
    (HTTPS, "HttpOnly; SameSite=Lax; Secure"),
    ({**HTTPS, **FRAMED_FETCH}, "HttpOnly; SameSite=None; Secure; Partitioned"),
    (FRAMED_FETCH, "HttpOnly; SameSite=Lax")])       # plain http: no browser keeps it framed
def test_a_joins_cookies_are_partitioned_in_a_frame_over_https_only(site, store, headers,
                                                                     attributes):
    code, _ = store.create_room(QUESTIONS)
    _, _, data = page_of(site, code)
    r, _ = site.request("POST", f"/live/{code}/join", json.dumps(
        {"challenge": data["challenge"], "nonce": solve_work(data["challenge"], 8)}),
        {"Content-Type": "application/json", **headers})
    cookies = [v for k, v in r.getheaders() if k.lower() == "set-cookie"]
    assert r.status == 200 and len(cookies) == 2              # the student's and the token
    assert all(c.endswith("; Path=/; Max-Age=43200; " + attributes) for c in cookies), cookies


@pytest.mark.parametrize("headers,attributes", [
    (FRAMED_PAGE, "HttpOnly; SameSite=Lax"),
    ({**HTTPS, **FRAMED_PAGE}, "HttpOnly; SameSite=None; Secure; Partitioned")])
def test_a_host_links_cookie_and_its_claim_are_partitioned_in_a_frame_over_https(
        site, store, headers, attributes):
    code, key = store.create_room(QUESTIONS)
    r, _ = site.request("GET", f"/?room={code}&host={key}", headers=headers)
    assert r.status == 303 and host_cookie(r, code).endswith(f"; {attributes}")
    fetch = {k: v for k, v in headers.items() if k != "Sec-Fetch-Dest"}
    r, _ = site.request("POST", f"/live/{code}/host", json.dumps({"key": key}), {
        "Content-Type": "application/json", "Origin": f"http://127.0.0.1:{site.port}",
        **fetch, **FRAMED_FETCH})
    assert r.status == 204 and host_cookie(r, code).endswith(f"; {attributes}")



def test_the_server_sentences_in_a_language_are_one_cached_request(site):
    """``GET /live/words/LANG``: what a phone fetches when it first shows a server's sentence
    (``why.*``, xattn/classroom/said.py), gzipped and the same for everyone."""
    r, body = site.request("GET", "/live/words/fr", None, {"Accept-Encoding": "gzip"})
    assert r.status == 200 and r.getheader("content-encoding") == "gzip"
    assert "max-age=3600" in r.getheader("cache-control")
    words = json.loads(gzip.decompress(body))
    assert words["lang"] == "fr" and all(k.startswith("why.") for k in words["strings"])
    assert words["strings"]["why.revealed"] == "l'étape {step} est révélée\u00a0: les réponses sont closes."
    r, body = site.request("GET", "/live/words/pt", None, {})
    assert r.status == 404


def _first_frame(site, path, cookie, extra="") -> str:
    """The first event with data a stream sends (its raw text: ``id``, ``event``, ``data``,
    after the chunk's length)."""
    s = socket.create_connection(("127.0.0.1", site.port), timeout=15)
    s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\nCookie: {cookie or ''}\r\n{extra}\r\n".encode())
    buf, deadline = b"", time.monotonic() + 15
    try:
        while time.monotonic() < deadline:
            buf += s.recv(65536)
            body = buf.partition(b"\r\n\r\n")[2]
            blocks = [b for b in body.decode().split("\n\n")[:-1] if "data: " in b]
            if blocks:
                return blocks[0]
    finally:
        s.close()
    raise AssertionError(f"no frame came: {buf!r}")


def test_a_stream_sends_no_room_frame_the_phone_says_it_has(site, store):
    """Each room frame carries its id; the stream a phone opens once joined (``?had=``) or an
    ``EventSource`` that reconnects (``Last-Event-ID``) with that id gets only the phone's own
    part (``me``), not the room again; an id of another frame, or none, gets the room."""
    code, _ = store.create_room(QUESTIONS)
    first = _first_frame(site, f"/live/{code}/events", None)      # before joining
    had = re.search(r"^id: ([0-9a-f]{8})$", first, re.MULTILINE)[1]
    assert "event:" not in first and '"room":' in first
    cookie = join(site, code)[2]
    for path, extra in ((f"/live/{code}/events?had={had}", ""),
                        (f"/live/{code}/events", f"Last-Event-ID: {had}\r\n")):
        again = _first_frame(site, path, cookie, extra)
        assert "\nevent: me\n" in again and '"room":' not in again, again
        assert json.loads(again.split("data: ")[1])["me"] == {"mine": None}
    for path in (f"/live/{code}/events?had=0badf00d", f"/live/{code}/events?had=<x>",
                 f"/live/{code}/events"):
        assert f"id: {had}\n" in _first_frame(site, path, cookie)      # the room again


def test_a_late_module_is_one_cached_script_the_page_names(site, store):
    """``GET /live/late/charts-DIGEST.js`` (scripts.late_script): the charts, fetched when a
    phone first needs them, gzipped and kept a year under a name that changes with its
    text; the page names it (``LATE``), and carries no chart code of its own."""
    from xattn.server.scripts import late_name

    code, _ = store.create_room(QUESTIONS)
    _, page, _ = page_of(site, code)
    name = late_name("charts.js")
    assert f'const LATE = {{"charts":"live/late/{name}"}};' in page
    assert "function chart(" not in page and "function heat(" not in page
    r, body = site.request("GET", f"/live/late/{name}", None, {"Accept-Encoding": "gzip"})
    assert r.status == 200 and r.getheader("content-encoding") == "gzip"
    assert r.getheader("content-type").startswith("text/javascript")
    assert "immutable" in r.getheader("cache-control")
    script = gzip.decompress(body).decode()
    assert script.startswith('XATTN_LATE("charts",function(page){"use strict";const{say,el}=page;'
                             ) and "function heat(" in script, script[:200]
    for other in ("charts-0000000000.js", "state.js", "charts.js"):
        assert site.request("GET", f"/live/late/{other}")[0].status == 404
