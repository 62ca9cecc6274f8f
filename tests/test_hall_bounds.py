"""Bounded connections that don't starve a hall (xattn/server/bounds.py) and one origin
(origin.py), with real clients (websockets, raw HTTP streams) against the app's real
middleware and routes on uvicorn (a stand-in for Streamlit's own websocket): an attacker at
the hall's address fills its anonymous share, and the hall's joined phones and its
lecturer's pages still get in; a page of another origin opens no websocket."""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import json
import os
import socket
import subprocess
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
import uvicorn
from classroom_helpers import wait_for
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from devtools.lecture_hall import haproxy_missing, haproxy_path
from devtools.protocol import run_async
from xattn.classroom import Limits, Question, SQLiteStore
from xattn.classroom.codes import solve_work
from xattn.classroom.hub import Hub
from xattn.server import ROUTES, live, middleware
from xattn.ui.serving import upload_bytes

QUESTIONS = (Question("choice", ("up", "down")),)
HALL = "198.51.100.7"                         # the hall's one address (its campus NAT)
BOUNDS = {"XATTN_WS_PER_ADDRESS": "5", "XATTN_STREAMS_PER_ADDRESS": "5",
          "XATTN_MAX_SESSIONS": "40", "XATTN_HOST_SESSIONS": "10", "XATTN_PER_STUDENT": "2"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def _page(ws):                           # Streamlit's websocket, held until closed
    await ws.accept(subprotocol="streamlit")
    with contextlib.suppress(Exception):
        while True:
            await ws.receive_bytes()


class Site:
    """The app's middleware and routes in front of a stand-in Streamlit, on uvicorn."""

    def __init__(self, store):
        self.store, self.port = store, _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.hub = Hub(store, lambda view: None)

        @asynccontextmanager
        async def lifespan(app):
            self.hub.start(asyncio.get_running_loop())
            yield
            self.hub.stop()

        app = Starlette(routes=[*ROUTES, Route("/", lambda r: PlainTextResponse("streamlit")),
                                Route("/_stcore/health", lambda r: PlainTextResponse("ok")),
                                WebSocketRoute("/_stcore/stream", _page)],
                        middleware=middleware(upload_bytes), lifespan=lifespan)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        wait_for(lambda: self.server.started, 30, what="uvicorn to start")

    def request(self, method, path, body=None, headers=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        c.request(method, path, body=body, headers=headers or {})
        r = c.getresponse()
        data = r.read()
        c.close()
        return r, data

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def site(tmp_path, monkeypatch):
    for name, value in BOUNDS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("XATTN_PUBLIC_URL", "")
    store = SQLiteStore(tmp_path / "c.sqlite3", Limits(join_work_bits=6, join_work_pieces=1))
    server = Site(store)
    monkeypatch.setattr(live, "_made", [server.hub])
    yield server
    server.stop()
    store.close()


def joined(site, code: str, address: str) -> str:
    """A phone at ``address`` joins room ``code`` as its page does: its cookies."""
    xff = {"X-Forwarded-For": address}
    r, body = site.request("GET", f"/?room={code}", headers=xff)
    data = json.loads(body.decode().split("const JOIN = ")[1].split(";\n")[0])
    nonce = solve_work(data["challenge"], data["bits"], data["pieces"])
    r, _ = site.request("POST", f"/live/{code}/join", json.dumps(
        {"challenge": data["challenge"], "nonce": nonce}),
        {"Content-Type": "application/json", **xff})
    assert r.status == 200
    return "; ".join(v.split(";")[0] for k, v in r.getheaders() if k.lower() == "set-cookie")


async def page(site, address: str, cookie: str = "", origin: str | None = None, *,
               port: int | None = None):
    """A page's websocket from ``address`` (to ``port``: HAProxy in front): the
    connection, or the HTTP status refusing it."""
    headers = {"X-Forwarded-For": address, **({"Cookie": cookie} if cookie else {})}
    try:
        return await connect(f"ws://127.0.0.1:{port or site.port}/_stcore/stream",
                             subprotocols=["streamlit"], additional_headers=headers,
                             origin=origin, open_timeout=30)
    except InvalidStatus as err:
        return err.response.status_code


async def stream(site, path: str, address: str, cookie: str = ""):
    """A stream (``/live/CODE/events``) held open: (its HTTP status, its writer)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", site.port)
    writer.write((f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{site.port}\r\n"
                  f"X-Forwarded-For: {address}\r\n" + (f"Cookie: {cookie}\r\n" if cookie else "")
                  + "\r\n").encode())
    await writer.drain()
    status = int((await asyncio.wait_for(reader.readline(), 30)).split()[1])
    return status, writer


def test_a_flood_at_the_halls_address_leaves_its_phones_and_lecturer_in(site):
    code, key = site.store.create_room(QUESTIONS)
    host = f"xattn_host_{code}={key}"
    phones = [joined(site, code, HALL) for _ in range(12)]       # before the flood

    async def main():
        flood = [await page(site, HALL) for _ in range(12)]       # anonymous pages
        opened = [ws for ws in flood if not isinstance(ws, int)]
        assert len(opened) == 5 and flood[5:] == [403] * 7        # XATTN_WS_PER_ADDRESS
        streams = [await stream(site, f"/live/{code}/events", HALL) for _ in range(8)]
        assert [s for s, _ in streams] == [200] * 5 + [503] * 3  # anonymous streams: 5
        # the lecturer's reloads at the same address: never counted against the flood
        lecturer = [await page(site, HALL, host) for _ in range(8)]
        assert not any(isinstance(ws, int) for ws in lecturer), lecturer
        # every joined phone of the hall opens its stream, and a second tab
        held = [await stream(site, f"/live/{code}/events", HALL, c) for c in phones * 2]
        assert [s for s, _ in held] == [200] * 24, [s for s, _ in held]
        third, w = await stream(site, f"/live/{code}/events", HALL, phones[0])
        assert third == 503                                       # XATTN_PER_STUDENT: 2
        w.close()
        # a student cookie that does not verify is anonymous: refused like the flood
        assert await page(site, HALL, f"xattn_student_{code}=x{'0' * 21}.{'0' * 32}") == 403
        # a joined phone on the full page is in; the host page's stream is too
        full = await page(site, HALL, phones[1])
        pulse, pw = await stream(site, f"/live/{code}/pulse", HALL, host)
        assert not isinstance(full, int) and pulse == 200
        pw.close()
        for ws in [*opened, *lecturer, full]:
            await ws.close()
        for _, writer in [*streams, *held]:
            writer.close()
    run_async(main())


def test_anonymous_pages_leave_a_quarter_of_the_sessions_to_joined_students(site):
    code, _ = site.store.create_room(QUESTIONS)
    students = [joined(site, code, f"203.0.113.{i}") for i in range(12)]

    async def main():
        flood = [await page(site, f"192.0.2.{i // 5}") for i in range(40)]   # 8 addresses
        opened = [ws for ws in flood if not isinstance(ws, int)]
        assert len(opened) == 30 and set(flood[30:]) == {403}           # 3/4 of 40
        pages = [await page(site, f"203.0.113.{i}", c) for i, c in enumerate(students)]
        got = [ws for ws in pages if not isinstance(ws, int)]
        assert len(got) == 10 and set(pages[10:]) == {403}              # the last quarter
        for ws in [*opened, *got]:
            await ws.close()
    run_async(main())


def test_a_page_of_another_origin_opens_no_websocket_and_acts_on_no_route(site):
    code, key = site.store.create_room(QUESTIONS)
    host = f"xattn_host_{code}={key}"
    own, other = site.url, f"http://127.0.0.1:{_free_port()}"      # another port, same host

    async def main():
        assert await page(site, HALL, host, origin=other) == 403
        assert await page(site, HALL, host, origin="null") == 403
        ws = await page(site, HALL, host, origin=own)               # its own page: in
        assert not isinstance(ws, int)
        await ws.close()
        ws = await page(site, HALL, host)                           # no Origin: no browser
        assert not isinstance(ws, int)
        await ws.close()
    run_async(main())
    for path in (f"/live/{code}/end", f"/live/{code}/answer", f"/live/{code}/join"):
        r, body = site.request("POST", path, "{}", {"Origin": other, "Cookie": host,
                                                    "Content-Type": "application/json"})
        assert r.status == 403 and b"may not use it" in body, (path, body)
    assert site.store.room_view(code).code == code                  # not ended
    r, _ = site.request("POST", f"/live/{code}/end", "", {"Origin": own, "Cookie": host})
    assert r.status == 204                                          # from its own origin


def test_the_public_urls_origin_is_its_own(site, monkeypatch):
    monkeypatch.setenv("XATTN_PUBLIC_URL", "https://class.example.org/xattn/")
    code, key = site.store.create_room(QUESTIONS)

    async def main():
        ws = await page(site, HALL, origin="https://class.example.org")
        assert not isinstance(ws, int)
        await ws.close()
        assert await page(site, HALL, origin="https://evil.example.org") == 403
    run_async(main())


SERVE = Path(__file__).resolve().parent.parent / "deploy" / "serve.sh"


@pytest.fixture
def proxied(site, tmp_path):
    """deploy/serve.sh's HAProxy configuration, in front of the site: its port."""
    if haproxy_missing():
        pytest.skip(haproxy_missing())
    port = _free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("XATTN_")},
           "XATTN_BACKEND_PORT": str(site.port), "XATTN_WS_PER_ADDRESS": "3"}
    cfg = subprocess.run(["bash", str(SERVE), "--config", "1", str(port)], env=env,
                         capture_output=True, text=True, check=True).stdout
    (tmp_path / "haproxy.cfg").write_text(cfg)
    proc = subprocess.Popen([haproxy_path(), "-db", "-f", str(tmp_path / "haproxy.cfg")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(lambda: _answers(port), 30, what="HAProxy to reach the site")
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def _answers(port: int) -> bool:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/_stcore/health")
        ok = c.getresponse().status == 200
        c.close()
        return ok
    except OSError:
        return False


def test_haproxy_bounds_cookie_less_websockets_and_lets_the_lecturers_through(site, proxied):
    code, key = site.store.create_room(QUESTIONS)
    host = f"xattn_host_{code}={key}"

    async def main():
        flood = [await page(site, HALL, port=proxied) for _ in range(6)]
        opened = [ws for ws in flood if not isinstance(ws, int)]
        assert len(opened) == 3 and flood[3:] == [429] * 3          # XATTN_WS_PER_ADDRESS
        lecturer = [await page(site, HALL, host, port=proxied) for _ in range(6)]
        assert not any(isinstance(ws, int) for ws in lecturer), lecturer   # all 6 reloads
        forged = await page(site, HALL, f"xattn_host_{code}=forged", port=proxied)
        assert not isinstance(forged, int)       # past HAProxy: the process counts it ...
        more = [await page(site, HALL, f"xattn_host_{code}=forged", port=proxied)
                for _ in range(3)]               # ... as the address's (5 in the process)
        assert [isinstance(ws, int) for ws in more] == [False, True, True], more
        for ws in [*opened, *lecturer, forged, *[w for w in more if not isinstance(w, int)]]:
            await ws.close()
    run_async(main())
