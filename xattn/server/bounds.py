"""What one client may hold open in one server process: one client cannot fill the hall, and
no flood starves a hall or its lecturer.

A lecture hall is one network address, so the bounds are per address and sized for a hall:
a phone holds one stream of its room (server-sent events, ``/live/CODE/events``) and no
websocket, while a Streamlit page (the lecturer's, a student on the full page) holds one
websocket (``/_stcore/stream``) and a session in this process (about 0.6 MB). An attacker at
the hall's address (its Wi-Fi) must not take what the hall needs, so `Bounds` sorts each
connection by the cookie it carries, checked, before it counts it:

- **a host's** (a ``xattn_host_CODE`` cookie whose key drives its room; for a host page's
  stream ``/live/CODE/pulse``, that room's): never counted against anyone's bound, only
  against ``XATTN_HOST_SESSIONS`` websockets in all (hosts are bounded by the rooms a store
  takes: ``Limits.max_rooms``);
- **a joined student's** (a ``xattn_student_CODE`` cookie the servers signed; for a phone's
  stream ``/live/CODE/events``, that room's): at most ``XATTN_PER_STUDENT`` streams and as
  many websockets per student (a phone, a second tab, a reload's overlap), not counted
  against the address. So an address may hold ``XATTN_STREAMS_PER_ADDRESS`` + that many
  per student joined from it: its bound grows with the class that joined, and each joined
  student cost a join's proof of work;
- **anyone else's**: ``XATTN_WS_PER_ADDRESS`` websockets and ``XATTN_STREAMS_PER_ADDRESS``
  streams per address; and anonymous websockets take at most 3/4 of
  ``XATTN_MAX_SESSIONS``, so joined students always find a quarter free.

A refused websocket is closed before it is accepted (the browser sees HTTP 403 and tries
again later), a refused stream gets HTTP 503 with why (its ``EventSource`` tries again).
Behind ``deploy/serve.sh`` HAProxy bounds every address's cookie-less connections first
(``XATTN_CONN_PER_ADDRESS``, ``XATTN_WS_PER_ADDRESS``) and leaves those with a class's cookie
to these checks (HAProxy cannot check a signature); these are the same bounds for a plain
``streamlit run app.py``.

Settings (environment, read when the process starts):

- ``XATTN_WS_PER_ADDRESS`` (200): anonymous Streamlit websockets of one address here;
- ``XATTN_MAX_SESSIONS`` (600): students' and anonymous Streamlit websockets here in all
  (700 sessions measured 443 MB, the budget is 600 MB);
- ``XATTN_HOST_SESSIONS`` (100): hosts' websockets here in all (on top of those 600);
- ``XATTN_STREAMS_PER_ADDRESS`` (300): anonymous streams of one address here (a phone's page
  follows its room while it does its join's work, about a second: a hall arriving together);
- ``XATTN_PER_STUDENT`` (4): streams, and websockets, of one joined student here.
"""

from __future__ import annotations

import os
import threading
from typing import NamedTuple

from xattn.classroom import ClassroomError, normalize_code
from xattn.live.cookies import HOST_COOKIE, STUDENT_COOKIE
from xattn.server import host as hosts
from xattn.server import join, live

__all__ = ["Bounds", "limits", "Holder"]

_DEFAULTS = {"XATTN_WS_PER_ADDRESS": 200, "XATTN_MAX_SESSIONS": 600,
             "XATTN_HOST_SESSIONS": 100, "XATTN_STREAMS_PER_ADDRESS": 300,
             "XATTN_PER_STUDENT": 4}
_MAX_COOKIES = 4            # a class's cookies of one request checked (each a read or a MAC)


def limits() -> dict[str, int]:
    """The bounds this process applies (the environment's, else the defaults)."""
    out = {}
    for name, default in _DEFAULTS.items():
        try:
            out[name] = max(1, int(os.environ.get(name, "") or default))
        except ValueError:
            out[name] = default
    return out


class Holder(NamedTuple):
    """Whom a connection is counted against: ``kind`` ("host", "student" or "anonymous")
    and who (a student id, an address; "" for a host)."""

    kind: str
    who: str


def _kind(scope) -> str | None:
    path = scope.get("path", "")
    if scope["type"] == "websocket" and path.endswith("/_stcore/stream"):
        return "ws"
    if scope["type"] == "http" and path.startswith("/live/") and path.endswith(
            ("/events", "/pulse")):
        return "stream"
    return None


def _path_code(scope) -> str | None:
    parts = scope.get("path", "").split("/")
    try:
        return normalize_code(parts[-2]) if len(parts) >= 4 else None
    except (ClassroomError, TypeError):
        return None


async def holder(scope) -> Holder:
    """Whom this websocket or stream is counted against, from its checked cookies."""
    jar = join.cookies(scope)
    address = join.client(scope)
    try:
        hub = live.hub()
    except ClassroomError:
        return Holder("anonymous", address)
    path = scope.get("path", "")
    if scope["type"] == "http":                    # a stream names its room
        code = _path_code(scope)
        codes = [code] if code else []
    else:
        codes = [name[len(HOST_COOKIE):] for name in jar if name.startswith(HOST_COOKIE)]
        codes += [name[len(STUDENT_COOKIE):] for name in jar if name.startswith(STUDENT_COOKIE)]
    codes = list(dict.fromkeys(codes))[:_MAX_COOKIES]
    if not path.endswith("/events"):               # a host page's stream, or a page
        for code in codes:
            if await hosts.is_host(hub, code, jar):
                return Holder("host", "")
    if not path.endswith("/pulse"):
        for code in codes:
            try:
                sid = await join.student(scope, hub, normalize_code(code))
            except (ClassroomError, TypeError):
                sid = None
            if sid is not None:
                return Holder("student", sid)
    return Holder("anonymous", address)


class Bounds:
    """ASGI middleware: hosts' connections apart, at most so many per joined student, so many
    anonymous ones per client address, and so many Streamlit websockets in all."""

    def __init__(self, app):
        self.app = app
        self.limits = limits()
        self._open: dict[tuple[str, str, str], int] = {}
        self._sessions = {"host": 0, "student": 0, "anonymous": 0}
        self._lock = threading.Lock()

    def _refused(self, kind: str, h: Holder) -> str | None:
        """Why one more ``kind`` of ``h`` is refused, or None (under the lock)."""
        n = self._open.get((kind, *h), 0)
        lim, s = self.limits, self._sessions
        if h.kind == "host":
            if kind == "ws" and s["host"] >= lim["XATTN_HOST_SESSIONS"]:
                return "this server process holds as many lecturers' pages as it takes"
            return None
        if h.kind == "student" and n >= lim["XATTN_PER_STUDENT"]:
            return "this browser holds as many pages of its class as it may"
        if kind == "ws" and s["student"] + s["anonymous"] >= lim["XATTN_MAX_SESSIONS"]:
            return "this server process holds as many pages of the app as it takes"
        if h.kind == "student":
            return None
        if kind == "ws" and n >= lim["XATTN_WS_PER_ADDRESS"]:
            return "too many pages of the app are open from your network"
        if kind == "ws" and s["anonymous"] >= lim["XATTN_MAX_SESSIONS"] * 3 // 4:
            return "this server process holds as many pages of the app as it takes"
        if kind == "stream" and n >= lim["XATTN_STREAMS_PER_ADDRESS"]:
            return ("too many streams of phones that have not joined yet are open from your "
                    "network on this server process")
        return None

    def _take(self, kind: str, h: Holder) -> str | None:
        """None once counted, else why not."""
        with self._lock:
            why = self._refused(kind, h)
            if why is None:
                self._open[(kind, *h)] = self._open.get((kind, *h), 0) + 1
                if kind == "ws":
                    self._sessions[h.kind] += 1
            return why

    def _give(self, kind: str, h: Holder) -> None:
        with self._lock:
            n = self._open.get((kind, *h), 1) - 1
            if n > 0:
                self._open[(kind, *h)] = n
            else:
                self._open.pop((kind, *h), None)
            if kind == "ws":
                self._sessions[h.kind] -= 1

    async def __call__(self, scope, receive, send):
        kind = _kind(scope)
        if kind is None:
            await self.app(scope, receive, send)
            return
        h = await holder(scope)
        why = self._take(kind, h)
        if why is not None:
            await _refuse(kind, why, receive, send)
            return
        try:
            await self.app(scope, receive, send)
        finally:
            self._give(kind, h)


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
