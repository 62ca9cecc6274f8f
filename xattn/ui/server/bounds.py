"""What one client may hold open in one server process: one client cannot fill the hall.

A lecture hall is one network address, so the bounds are per address and sized for a hall:
a phone holds one stream of its room (server-sent events, ``/live/CODE/events``) and no
websocket, while a Streamlit page (the lecturer's, a student on the full page) holds one
websocket (``/_stcore/stream``) and a session in this process (about 0.6 MB). `Bounds` counts
both per client address, and Streamlit sessions in all, and refuses what is past them: a
websocket is closed before it is accepted (the browser sees HTTP 403 and tries again later),
a stream gets HTTP 503 with why (its ``EventSource`` tries again). Behind
``deploy/serve.sh`` HAProxy bounds every address first (``XATTN_CONN_PER_ADDRESS``,
``XATTN_WS_PER_ADDRESS``); these are the same bounds for a plain ``streamlit run app.py``.

Settings (environment, read when the process starts):

- ``XATTN_WS_PER_ADDRESS`` (200): Streamlit websockets of one address in this process;
- ``XATTN_MAX_SESSIONS`` (600): Streamlit websockets in this process in all (700 sessions
  measured 443 MB, the budget is 600 MB);
- ``XATTN_STREAMS_PER_ADDRESS`` (2,500): rooms' streams of one address in this process (a hall
  of 1,000 phones, some with two tabs).
"""

from __future__ import annotations

import os
import threading

from xattn.ui.server.join import client

__all__ = ["Bounds", "limits"]

_DEFAULTS = {"XATTN_WS_PER_ADDRESS": 200, "XATTN_MAX_SESSIONS": 600,
             "XATTN_STREAMS_PER_ADDRESS": 2500}


def limits() -> dict[str, int]:
    """The bounds this process applies (the environment's, else the defaults)."""
    out = {}
    for name, default in _DEFAULTS.items():
        try:
            out[name] = max(1, int(os.environ.get(name, "") or default))
        except ValueError:
            out[name] = default
    return out


def _kind(scope) -> str | None:
    path = scope.get("path", "")
    if scope["type"] == "websocket" and path.endswith("/_stcore/stream"):
        return "ws"
    if scope["type"] == "http" and path.startswith("/live/") and path.endswith(
            ("/events", "/pulse")):
        return "stream"
    return None


class Bounds:
    """ASGI middleware: per client address, at most so many Streamlit websockets and rooms'
    streams open in this process, and so many Streamlit websockets in all."""

    def __init__(self, app):
        self.app = app
        self.limits = limits()
        self._open: dict[tuple[str, str], int] = {}
        self._sessions = 0
        self._lock = threading.Lock()

    def _take(self, kind: str, who: str) -> str | None:
        """None once counted, else why not."""
        with self._lock:
            n = self._open.get((kind, who), 0)
            if kind == "ws":
                if n >= self.limits["XATTN_WS_PER_ADDRESS"]:
                    return "too many pages of the app are open from your network"
                if self._sessions >= self.limits["XATTN_MAX_SESSIONS"]:
                    return "this server process holds as many pages of the app as it takes"
                self._sessions += 1
            elif n >= self.limits["XATTN_STREAMS_PER_ADDRESS"]:
                return ("too many phones' streams are open from your network on this server "
                        "process")
            self._open[(kind, who)] = n + 1
        return None

    def _give(self, kind: str, who: str) -> None:
        with self._lock:
            n = self._open.get((kind, who), 1) - 1
            if n > 0:
                self._open[(kind, who)] = n
            else:
                self._open.pop((kind, who), None)
            if kind == "ws":
                self._sessions -= 1

    async def __call__(self, scope, receive, send):
        kind = _kind(scope)
        if kind is None:
            await self.app(scope, receive, send)
            return
        who = client(scope)
        why = self._take(kind, who)
        if why is not None:
            await _refuse(kind, why, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._give(kind, who)


async def _refuse(kind: str, why: str, receive, send) -> None:
    if kind == "ws":
        message = await receive()                 # websocket.connect
        if message["type"] == "websocket.connect":
            await send({"type": "websocket.close", "code": 1013, "reason": why[:120]})
        return
    body = (f"{why[0].upper()}{why[1:]}: try again in a minute.").encode()
    await send({"type": "http.response.start", "status": 503, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store"),
        (b"retry-after", b"30")]})
    await send({"type": "http.response.body", "body": body})
