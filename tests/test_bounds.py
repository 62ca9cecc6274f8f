"""xattn/server/bounds.py: what one client address may hold open in a process, counted
and given back as connections open and close (ASGI, no server)."""

from __future__ import annotations

import asyncio

import pytest

from devtools.protocol import run_async
from xattn.classroom import SQLiteStore
from xattn.classroom.hub import Hub
from xattn.server import live
from xattn.server.bounds import Bounds, limits


def scope(kind: str, path: str, address: str) -> dict:
    return {"type": kind, "path": path, "client": (address, 1234), "headers": []}


@pytest.fixture
def no_cookies_checked(tmp_path, monkeypatch):
    """A hub on a store of the test's own: connections without cookies are anonymous."""
    store = SQLiteStore(tmp_path / "c.sqlite3")
    monkeypatch.setattr(live, "_made", [Hub(store, lambda view: None)])
    yield
    store.close()


def test_websockets_and_streams_per_address_and_sessions_in_all_are_bounded(monkeypatch,
                                                                            no_cookies_checked):
    monkeypatch.setenv("XATTN_WS_PER_ADDRESS", "2")
    monkeypatch.setenv("XATTN_MAX_SESSIONS", "4")      # anonymous pages: 3 of them
    monkeypatch.setenv("XATTN_STREAMS_PER_ADDRESS", "1")
    release = None                                  # made inside the test's own event loop
    async def app(scope, receive, send):            # a connection held until released
        if scope["path"].endswith(("/_stcore/stream", "/events")):
            await release.wait()
        else:
            await send({"type": "http.response.start", "status": 200})

    async def main():
        nonlocal release
        release = asyncio.Event()
        bounds = Bounds(app)
        sent = []

        async def receive():
            return {"type": "websocket.connect"}

        async def send(message):
            sent.append(message)

        held = [asyncio.create_task(bounds(scope("websocket", "/_stcore/stream", a), receive,
                                           send)) for a in ("10.0.0.1", "10.0.0.1", "10.0.0.2")]
        await asyncio.sleep(0)
        for who, why in [("10.0.0.1", "from your network"),        # its 2 are taken
                         ("10.0.0.3", "as many pages of the app")]:  # 3 sessions in all
            sent.clear()
            await bounds(scope("websocket", "/_stcore/stream", who), receive, send)
            assert sent[0]["type"] == "websocket.close" and why in sent[0]["reason"]
        stream = asyncio.create_task(bounds(scope("http", "/live/HJK23M/events", "10.0.0.1"),
                                            receive, send))
        await asyncio.sleep(0)
        sent.clear()
        await bounds(scope("http", "/live/HJK23M/events", "10.0.0.1"), receive, send)
        assert sent[0]["status"] == 503                            # one stream per address
        sent.clear()
        await bounds(scope("http", "/live/HJK23M/answer", "10.0.0.1"), receive, send)
        assert sent == [{"type": "http.response.start", "status": 200}]  # anything else passes
        release.set()
        await asyncio.gather(*held, stream)
        assert bounds._open == {} and sum(bounds._sessions.values()) == 0   # all given back
    run_async(main())               # its own thread: a browser test may hold this one's loop


def test_bad_settings_fall_back_to_the_defaults(monkeypatch):
    monkeypatch.setenv("XATTN_WS_PER_ADDRESS", "many")
    monkeypatch.setenv("XATTN_MAX_SESSIONS", "-5")
    got = limits()
    assert got["XATTN_WS_PER_ADDRESS"] == 200 and got["XATTN_MAX_SESSIONS"] == 1
