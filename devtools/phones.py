"""Phones without browsers: a student's phone in a class, over the protocol its page speaks.

A student's link (``/?room=CODE``) is answered with the phone's own light page
(``xattn/server/phone.py``), whose script follows the room on server-sent events and
POSTs its answers. A `Phone` does what that script does, with nothing but asyncio streams, so
that a thousand of them run in one process beside the servers on a 2-core machine:

- `Phone.join`: ``GET /?room=CODE`` (gzip accepted, the signed ``xattn_student`` cookie and
  HAProxy's affinity cookie kept, the page's bytes on the wire counted), then its stream;
- the stream (`EventStream`): ``GET /live/CODE/events`` on HTTP/1.1, chunked, gzip if the
  server sends it; each frame is parsed and the arrival of each state of the room (step,
  phase, round, version) is recorded with its bytes. It reconnects as a browser's
  ``EventSource`` does: after the ``retry`` the server gave, on a network error or the end of
  the response; a response that is not ``200 text/event-stream`` fails it for good, as in a
  browser (recorded as a problem);
- `Phone.choose` / `Phone.answer`: an answer as the page sends it (``POST /live/CODE/answer``,
  ``{"step", "round", "value"}``, with ``Origin``; where the room asks how sure, with a
  ``"confidence"`` too, as the page's tap sends it), kept until the class has it: the
  receipt says *saved* or *refused*, or the stream's ``me`` shows it stored; a failed or
  unfinished send is sent again 4 s after the last one and at once when the stream
  reconnects (``phone.js``'s ``pending``, ``send`` and ``resend``);
- `random_value`: an answer of every kind drawn from the message's ``ask`` (a token's
  position, a choice's text, a number at its decimals, one choice or None per part, a list of
  ``[target, source]`` links); `random_level`: how sure, where the ``ask`` offers levels.

Connections are HTTP/1.1 keep-alive, as a browser's: the stream holds one, answers reuse an
idle one (a connection the proxy closed meanwhile is replaced); over TLS for an ``https://``
base (a hosted deployment), with the system's certificates. The room part of a frame is
the same bytes for every phone of a process, so it is parsed once (`_ROOMS`) and shared
read-only.

``benchmarks/bench_room.py`` runs a class of them; ``devtools/lecturer.py``'s host page
follows its room's pulse with an `EventStream` too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
import zlib
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from xattn.classroom.codes import solve_work

__all__ = ["Phone", "Pick", "EventStream", "HttpConnection", "JoinRefused", "random_value",
           "random_level",
           "canonical", "same", "plain", "where", "authority", "post", "STUDENT_COOKIE",
           "RESEND_AFTER"]

STUDENT_COOKIE = "xattn_student_"   # + the room's code: xattn.ui.room.identity.STUDENT_COOKIE
RESEND_AFTER = 4.0                  # phone.js: a tap not saved yet is sent again after 4 s
DEFAULT_RETRY = 3.0                 # an EventSource's wait before the server names one
USER_AGENT = "xattn-phone/1 (devtools.phones)"
_ROOMS: dict[bytes, dict] = {}      # a room's JSON -> parsed (shared by every phone)


class JoinRefused(RuntimeError):
    """The page said this phone could not join (``problem`` in its JOIN data)."""


def where(base: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of a base URL (``http://host:port/``, ``https://host/``)."""
    parts = urlsplit(base)
    tls = parts.scheme == "https"
    return parts.hostname or "127.0.0.1", parts.port or (443 if tls else 80), tls


def authority(host: str, port: int, tls: bool) -> str:
    """The ``Host`` header a browser sends: the port only where it is not the scheme's."""
    return host if port == (443 if tls else 80) else f"{host}:{port}"


# --- HTTP/1.1 ------------------------------------------------------------------------------
class HttpConnection:
    """One keep-alive HTTP/1.1 connection; ``wire`` counts every byte read from it."""

    __slots__ = ("reader", "writer", "wire", "used")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer, self.wire, self.used = reader, writer, 0, 0

    @classmethod
    async def open(cls, host: str, port: int, timeout: float,
                   tls: bool = False) -> HttpConnection:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            host, port, ssl=True if tls else None), timeout)
        return cls(reader, writer)

    @property
    def usable(self) -> bool:
        return not (self.reader.at_eof() or self.writer.is_closing())

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()

    def send(self, head: str, body: bytes = b"") -> None:
        self.used += 1
        self.writer.write(head.encode("latin-1") + body)

    async def head(self) -> tuple[int, dict[str, str], list[str]]:
        """The response's status, headers (lower-case names, the last of each) and its
        Set-Cookie values."""
        raw = await self.reader.readuntil(b"\r\n\r\n")
        self.wire += len(raw)
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers, cookies = {}, []
        for line in lines[1:]:
            if not line:
                continue
            name, _, value = line.partition(":")
            name, value = name.strip().lower(), value.strip()
            headers[name] = value
            if name == "set-cookie":
                cookies.append(value)
        return status, headers, cookies

    async def body(self, headers: dict[str, str]) -> bytes:
        """The whole body (content-length, chunked or until the connection closes),
        decompressed if gzip."""
        if headers.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                line = await self.reader.readuntil(b"\r\n")
                size = int(line.split(b";")[0], 16)
                data = await self.reader.readexactly(size + 2)
                self.wire += len(line) + len(data)
                if size == 0:                          # no trailers are sent here
                    break
                parts.append(data[:-2])
            raw = b"".join(parts)
        elif "content-length" in headers:
            raw = await self.reader.readexactly(int(headers["content-length"]))
            self.wire += len(raw)
        else:
            raw = await self.reader.read()
            self.wire += len(raw)
        if headers.get("content-encoding", "").lower() == "gzip":
            raw = zlib.decompress(raw, 31)
        return raw


class Dechunk:
    """Chunked transfer coding, decoded as it arrives."""

    __slots__ = ("buf", "need", "done")

    def __init__(self):
        self.buf, self.need, self.done = bytearray(), -1, False

    def feed(self, data: bytes) -> bytes:
        self.buf += data
        out = []
        while not self.done:
            if self.need < 0:
                i = self.buf.find(b"\r\n")
                if i < 0:
                    break
                size = int(bytes(self.buf[:i]).split(b";")[0], 16)
                del self.buf[:i + 2]
                if size == 0:
                    self.done = True
                    break
                self.need = size
            if len(self.buf) < self.need + 2:
                break
            out.append(bytes(self.buf[:self.need]))
            del self.buf[:self.need + 2]
            self.need = -1
        return b"".join(out)


class SSEParser:
    """Server-sent events as the HTML standard reads them: ``(event, data)`` per dispatched
    event (``"message"`` by default), ``("comment", text)`` for a frame of comments only,
    ``("retry", ms)`` and ``("id", text)`` (sent back as ``Last-Event-ID`` on a
    reconnection)."""

    __slots__ = ("buf",)

    def __init__(self):
        self.buf = b""

    def feed(self, data: bytes) -> list[tuple[str, object]]:
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        self.buf += data
        out = []
        while True:
            i = self.buf.find(b"\n\n")
            if i < 0:
                return out
            block, self.buf = self.buf[:i], self.buf[i + 2:]
            event, lines, comment = "message", [], None
            for line in block.split(b"\n"):
                if line.startswith(b":"):
                    comment = line[1:].strip().decode("utf-8", "replace")
                    continue
                name, _, value = line.partition(b":")
                if value.startswith(b" "):
                    value = value[1:]
                if name == b"data":
                    lines.append(value)
                elif name == b"event":
                    event = value.decode("utf-8", "replace") or "message"
                elif name == b"retry" and value.isdigit():
                    out.append(("retry", int(value)))
                elif name == b"id" and b"\0" not in value:
                    out.append(("id", value.decode("utf-8", "replace")))
            if lines:
                out.append((event, b"\n".join(lines)))
            elif comment is not None:
                out.append(("comment", comment))


async def post(base: str, path: str, body: bytes, cookies: dict[str, str],
               timeout: float = 60.0) -> tuple[int, dict[str, str], dict[str, str], bytes]:
    """One POST of JSON ``body`` to ``path`` (below ``base``'s path) from ``base``'s own
    origin (as the app's own page sends it), on a connection of its own: status, headers,
    the cookies it set, body."""
    host, port, tls = where(base)
    path = urlsplit(base).path.rstrip("/") + path        # an app served below a path
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    conn = await HttpConnection.open(host, port, timeout, tls)
    try:
        conn.send(f"POST {path} HTTP/1.1\r\nHost: {authority(host, port, tls)}\r\n"
                  f"User-Agent: {USER_AGENT}\r\nOrigin: {'https' if tls else 'http'}://"
                  f"{authority(host, port, tls)}\r\nContent-Type: application/json\r\n"
                  f"Content-Length: {len(body)}\r\nConnection: close\r\n"
                  + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n", body)
        status, headers, set_cookies = await asyncio.wait_for(conn.head(), timeout)
        data = await asyncio.wait_for(conn.body(headers), timeout)
    finally:
        conn.close()
    return status, headers, _cookie_pairs(set_cookies), data


def _cookie_pairs(values: list[str]) -> dict[str, str]:
    pairs = {}
    for value in values:
        name, _, rest = value.partition("=")
        pairs[name.strip()] = rest.split(";", 1)[0].strip()
    return pairs


class EventStream:
    """A browser's ``EventSource`` on ``path``: reconnects after ``retry`` ms on a network
    error or the response's end; fails for good on a status other than 200 or another
    content type (``failed`` says why). ``on_event(event, data, t)`` gets every event (the
    arrival time ``t``, ``time.monotonic()``); ``on_open()`` every (re)connection.

    ``cookies`` is shared with the owner and updated from every response (HAProxy's affinity
    cookie changes when the process it named is gone). ``wire`` counts the bytes read."""

    def __init__(self, host: str, port: int, path: str, cookies: dict[str, str], *,
                 on_event: Callable[[str, object, float], None],
                 on_open: Callable[[], None] | None = None,
                 headers: dict[str, str] | None = None, timeout: float = 60.0,
                 connection: Callable[[], HttpConnection | None] | None = None,
                 tls: bool = False):
        self.host, self.port, self.path, self.cookies = host, port, path, cookies
        self.tls = tls
        self.on_event, self.on_open = on_event, on_open
        self.headers, self.timeout = dict(headers or {}), timeout
        self.connection = connection            # an idle keep-alive connection to reuse
        self.retry = DEFAULT_RETRY
        self.wire = 0
        self.opens = 0                           # successful (re)connections
        self.errors: list[tuple[float, str]] = []  # (time, what ended a connection)
        self.failed: str | None = None
        self.backend = ""                        # the process that answered (X-Xattn-Server)
        self.connected = False
        self.last_id = ""
        self._conn: HttpConnection | None = None
        self._task: asyncio.Task | None = None
        self._closing = False
        self.opened = asyncio.Event()

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        self._closing = True
        if self._conn is not None:
            self._conn.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    def _request(self) -> str:
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        extra = "".join(f"{k}: {v}\r\n" for k, v in self.headers.items())
        return (f"GET {self.path} HTTP/1.1\r\nHost: {authority(self.host, self.port, self.tls)}\r\n"
                f"User-Agent: {USER_AGENT}\r\nAccept: text/event-stream\r\n"
                "Cache-Control: no-cache\r\nAccept-Encoding: gzip\r\n"
                + (f"Cookie: {cookie}\r\n" if cookie else "")
                + (f"Last-Event-ID: {self.last_id}\r\n" if self.last_id else "")
                + extra + "\r\n")

    async def _run(self) -> None:
        while not self._closing:
            try:
                await self._once()
                what = "the response ended"
            except asyncio.CancelledError:
                raise
            except (OSError, EOFError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    TimeoutError, ValueError, zlib.error) as err:
                what = f"{type(err).__name__}: {err}"
            finally:
                self.connected = False
                self.opened.clear()
                if self._conn is not None:
                    self._conn.close()
                    self._conn = None
            if self.failed or self._closing:
                return
            self.errors.append((time.monotonic(), what))
            await asyncio.sleep(self.retry)

    async def _once(self) -> None:
        conn = self.connection() if self.connection is not None else None
        if conn is None:
            conn = await HttpConnection.open(self.host, self.port, self.timeout, self.tls)
        self._conn = conn
        before = conn.wire
        conn.send(self._request())
        status, headers, set_cookies = await asyncio.wait_for(conn.head(), self.timeout)
        self.cookies.update(_cookie_pairs(set_cookies))
        self.backend = headers.get("x-xattn-server", self.backend)
        self.wire += conn.wire - before
        if status != 200 or not headers.get("content-type", "").startswith("text/event-stream"):
            body = b""
            with contextlib.suppress(Exception):
                body = await asyncio.wait_for(conn.body(headers), 5)
            self.failed = (f"HTTP {status} {headers.get('content-type', '')}: "
                           f"{body[:160].decode('utf-8', 'replace')} (a browser's EventSource "
                           "does not reconnect after this)")
            return
        chunked = headers.get("transfer-encoding", "").lower() == "chunked"
        dechunk = Dechunk() if chunked else None
        gunzip = (zlib.decompressobj(31) if headers.get("content-encoding", "").lower()
                  == "gzip" else None)
        parser = SSEParser()
        self.connected = True
        self.opens += 1
        self.opened.set()
        if self.on_open is not None:
            self.on_open()
        reader = conn.reader
        while True:
            data = await reader.read(65536)
            if not data:
                return
            self.wire += len(data)
            if dechunk is not None:
                data = dechunk.feed(data)
            if gunzip is not None and data:
                data = gunzip.decompress(data)
            if data:
                t = time.monotonic()
                for event, payload in parser.feed(data):
                    if event == "retry":
                        self.retry = payload / 1000
                    elif event == "id":
                        self.last_id = payload
                    else:
                        self.on_event(event, payload, t)
            if dechunk is not None and dechunk.done:
                return


# --- answers ---------------------------------------------------------------------------------
def plain(value):
    """An answer as JSON holds it: tuples as lists, everything else as is."""
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def canonical(ask: dict, value):
    """An answer as the page sends it (``phone.js``'s ``canonical``): a number at the
    question's decimals, links sorted and once each."""
    if value is None:
        return None
    if ask["kind"] == "number":
        return round(float(value), ask["decimals"]) + 0.0
    if ask["kind"] == "links":
        return [list(link) for link in sorted({(int(t), int(s)) for t, s in value})]
    return plain(value)


def same(a, b) -> bool:
    return plain(a) == plain(b)


def random_value(ask: dict, rng: random.Random):
    """A random answer to the ``ask`` of a room's message, of its kind: a token's position, a
    choice's text, a number in range at its decimals, one choice (or None) per part with at
    least one, or 1 to 32 links ``[target, source]``."""
    kind = ask["kind"]
    if kind == "token":
        return rng.randrange(len(ask["choices"]))
    if kind == "choice":
        return rng.choice(ask["choices"])
    if kind == "number":
        return round(rng.uniform(ask["low"], ask["high"]), ask["decimals"])
    if kind == "parts":
        value = [rng.choice(ask["choices"]) if rng.random() < 0.85 else None
                 for _ in ask["rows"]]
        if all(v is None for v in value):
            value[rng.randrange(len(value))] = rng.choice(ask["choices"])
        return value
    if kind == "links":
        links = []
        for t in range(len(ask["rows"])):
            for _ in range(1 + (rng.random() < 0.15)):     # a word now and then has two
                if rng.random() < 0.9:
                    links.append([t, rng.randrange(len(ask["choices"]))])
        if not links:
            links.append([0, rng.randrange(len(ask["choices"]))])
        return canonical(ask, links[:32])
    raise ValueError(f"an ask of an unknown kind: {kind!r}")


def random_level(ask: dict, rng: random.Random):
    """How sure a student is, where the ``ask`` offers levels (``ask["levels"]``, the room
    asks it): one of them, or None (one student in ten says nothing); None where it offers
    none (nothing is sent)."""
    levels = ask.get("levels")
    if not levels:
        return None
    return None if rng.random() < 0.1 else rng.choice(levels)[0]


@dataclass(eq=False)
class Pick:
    """One answer of a phone to one round of one step: what it sent and what became of it
    (times are ``time.monotonic()``)."""

    step: int
    round: int
    value: object                 # as sent (canonical)
    chosen: float                 # the tap
    confidence: str | None = None  # how sure, as sent (None: not asked, or not said)
    sends: int = 0                # POSTs made
    failures: int = 0             # POSTs with no receipt (network, proxy, server gone)
    states: list = field(default_factory=list)     # every receipt's state, in order
    saved: float = float("nan")   # the first sign the class has it (receipt or ``me``)
    how: str = ""                 # "receipt" or "stream": what said so first
    refused: str | None = None
    dropped: str | None = None    # the room moved on before it was saved (phone.js drops it)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def is_saved(self) -> bool:
        return self.saved == self.saved


class Phone:
    """One student's phone in room ``code`` behind ``base`` (``http://host:port/``).

    What it saw: ``shown[(step, round, phase, version)]`` is when the first frame of that
    state of the room arrived, ``first_step[step]`` when the step first showed, and
    ``revealed[(step, round)]`` when its answer and charts did; ``frames`` holds (time, step,
    round, phase, version, bytes of the frame) of every room frame; ``wire`` the bytes read
    from the network for the page and the answers, `stream_bytes` for the stream. ``work``
    is where its join's proof of work runs (None: the loop's threads, one core between them
    for the GIL; a process pool lets a class's work use every core). ``language`` is sent as
    its browser's ``Accept-Language``; ``page_language`` is the ``lang`` its page came in.
    """

    def __init__(self, n: int, base: str, code: str, *, timeout: float = 60.0,
                 rng: random.Random | None = None, work: Executor | None = None,
                 language: str | None = None):
        self.n, self.code, self.timeout, self.work = n, code, timeout, work
        self.language, self.page_language = language, ""
        self.host, self.port, self.tls = where(base)
        self.prefix = urlsplit(base).path.rstrip("/")    # an app served below a path
        self.origin = f"{'https' if self.tls else 'http'}://" \
                      f"{authority(self.host, self.port, self.tls)}"
        self.rng = rng or random.Random(n)
        self.cookies: dict[str, str] = {}
        self.join_data: dict = {}
        self.join_waits = 0               # joins the room's bucket told to try again later
        self.room: dict | None = None
        self.me: dict = {"mine": None}
        self.receipt: dict | None = None
        self.problem: str | None = None           # the last ``status`` event's problem
        self.problems_seen: list[tuple[float, str | None]] = []
        self.gone: str | None = None
        self.shown: dict[tuple, float] = {}
        self.first_step: dict[int, float] = {}
        self.revealed: dict[tuple, float] = {}
        self.frames: list[tuple] = []
        self.heard: list[float] = []      # when each room frame or own part ("me") came
        self.me_events = self.pings = 0
        self.wire = {"page": 0, "answers": 0}    # the stream's own: `stream_bytes`
        self.picks: dict[tuple, Pick] = {}
        self.pending: Pick | None = None
        self.problems: list[str] = []
        self.backends: list[str] = []             # the processes its stream was on, in order
        self.joined = self.page_seconds = self.work_seconds = float("nan")
        self.stream: EventStream | None = None
        self._idle: list[HttpConnection] = []
        self._inflight = False
        self._last_send = 0.0
        self._resend: asyncio.TimerHandle | None = None
        self._sending: set[asyncio.Task] = set()   # held: a task nobody holds may vanish
        self._first_frame = asyncio.Event()

    def __repr__(self) -> str:
        where = f"step {self.room['step']}" if self.room else "not in the room"
        return f"Phone({self.n}, {self.code}, {where}, on {self.backends})"

    # --- connections ----------------------------------------------------------------------
    @property
    def student_id(self) -> str:
        return self.cookies.get(STUDENT_COOKIE + self.code, "").split(".")[0]

    @property
    def reconnects(self) -> int:
        return max(0, (self.stream.opens if self.stream else 0) - 1)

    @property
    def stream_bytes(self) -> int:
        """Bytes its stream read from the network so far, every connection of it."""
        return self.stream.wire if self.stream is not None else 0

    @property
    def connected(self) -> bool:
        return self.stream is not None and self.stream.connected

    def _take_idle(self) -> HttpConnection | None:
        while self._idle:
            conn = self._idle.pop()
            if conn.usable:
                return conn
            conn.close()
        return None

    async def request(self, method: str, target: str, purpose: str, *,
                      body: bytes = b"", headers: dict[str, str] | None = None
                      ) -> tuple[int, dict[str, str], bytes]:
        """One request on an idle keep-alive connection (a new one if none, or if the reused
        one turns out closed before any answer), its bytes counted under ``purpose``."""
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        head = (f"{method} {target} HTTP/1.1\r\n"
                f"Host: {authority(self.host, self.port, self.tls)}\r\n"
                f"User-Agent: {USER_AGENT}\r\nAccept-Encoding: gzip\r\n"
                + "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
                + (f"Cookie: {cookie}\r\n" if cookie else "")
                + (f"Content-Length: {len(body)}\r\n" if body or method == "POST" else "")
                + "\r\n")
        for attempt in (0, 1):
            conn = self._take_idle() if attempt == 0 else None
            reused = conn is not None
            if conn is None:
                conn = await HttpConnection.open(self.host, self.port, self.timeout, self.tls)
            before = conn.wire
            try:
                conn.send(head, body)
                status, got, set_cookies = await asyncio.wait_for(conn.head(), self.timeout)
                data = await asyncio.wait_for(conn.body(got), self.timeout)
            except (OSError, EOFError, asyncio.IncompleteReadError) as err:
                conn.close()
                self.wire[purpose] += conn.wire - before
                if reused and conn.wire == before:
                    continue                    # closed while idle: as a browser, once more
                raise ConnectionError(f"{method} {target}: {type(err).__name__}: {err}") \
                    from None
            except BaseException:
                conn.close()
                raise
            self.wire[purpose] += conn.wire - before
            self.cookies.update(_cookie_pairs(set_cookies))
            if got.get("connection", "").lower() == "close":
                conn.close()
            else:
                self._idle.append(conn)
            return status, got, data
        raise AssertionError("unreachable")

    # --- joining, following ---------------------------------------------------------------
    async def join(self, *, wait: bool = True) -> None:
        """The student's link (the page sets the cookie), then the room's stream; with
        ``wait``, until the first frame of the room came."""
        t0 = time.monotonic()
        status, headers, page = await self.request(
            "GET", f"{self.prefix}/?room={quote(self.code)}", "page",
            headers={"Accept": "text/html,application/xhtml+xml"}
            | ({"Accept-Language": self.language} if self.language else {}))
        self.page_seconds = time.monotonic() - t0
        lang = re.search(rb"<html[^>]*\blang=\"([^\"]*)\"", page[:2000])
        self.page_language = lang.group(1).decode("ascii", "replace") if lang else ""
        if status != 200:
            raise JoinRefused(f"phone {self.n}: the page answered HTTP {status}")
        self.join_data = _join_data(page)
        if self.join_data.get("problem"):
            raise JoinRefused(f"phone {self.n}: {self.join_data['problem']}")
        self.code = self.join_data.get("code", self.code)
        if self.join_data.get("challenge"):       # the page's work, then its join
            t1 = time.monotonic()
            nonce = await asyncio.get_running_loop().run_in_executor(
                self.work, solve_work, self.join_data["challenge"], self.join_data["bits"],
                self.join_data.get("pieces", 1))
            self.work_seconds = time.monotonic() - t1
            while True:           # a room's bucket for this address says when: as phone.js
                status, _, body = await self.request(
                    "POST", f"{self.prefix}/live/{quote(self.code)}/join", "page",
                    body=json.dumps({"challenge": self.join_data["challenge"],
                                     "nonce": nonce}).encode(),
                    headers={"Content-Type": "application/json"})
                retry = _retry(status, body)
                if retry is None:
                    break
                self.join_waits += 1
                await asyncio.sleep(retry + random.random())
            if status != 200:
                raise JoinRefused(f"phone {self.n}: the join answered HTTP {status}: "
                                  f"{body[:200]!r}")
        if not self.student_id:
            raise JoinRefused(f"phone {self.n}: no {STUDENT_COOKIE}{self.code} cookie")
        self.stream = EventStream(
            self.host, self.port, f"{self.prefix}/live/{quote(self.code)}/events", self.cookies,
            on_event=self._event, on_open=self._opened, timeout=self.timeout,
            connection=self._take_idle, tls=self.tls)
        self.stream.start()
        if wait:
            await self.first_frame()
        self.joined = time.monotonic() - t0

    def first_frame_after(self, t: float) -> float | None:
        """When the first room frame at or after ``t`` arrived (None: none yet)."""
        return next((f[0] for f in self.frames if f[0] >= t), None)

    def first_heard_after(self, t: float) -> float | None:
        """When the stream first said the room at or after ``t``: its frame, or only the
        phone's own part where the phone has that frame (a reconnect's ``Last-Event-ID``)."""
        return next((h for h in self.heard if h >= t), None)

    async def first_frame(self) -> None:
        await asyncio.wait_for(self._first_frame.wait(), self.timeout)

    async def leave(self) -> None:
        if self._resend is not None:
            self._resend.cancel()
        for task in list(self._sending):
            task.cancel()
        if self.stream is not None:
            await self.stream.close()
            if self.stream.failed:
                self.problems.append(f"phone {self.n}: its stream failed: {self.stream.failed}")
        for conn in self._idle:
            conn.close()
        self._idle.clear()

    def _opened(self) -> None:
        self.backends.append(self.stream.backend)
        if self.pending is not None:                      # phone.js: es.onopen -> resend()
            self._last_send = 0.0
            self._kick()

    def _event(self, event: str, data, t: float) -> None:
        if event in ("message", "me"):
            self.heard.append(t)
        if event == "message":
            self._room_frame(data, t)
        elif event == "me":
            frame = json.loads(data)
            self.me_events += 1
            self._me(frame.get("me"))
        elif event == "status":
            self.problem = json.loads(data).get("problem")
            self.problems_seen.append((t, self.problem))
        elif event == "gone":
            self.gone = json.loads(data).get("gone")
            self.problems.append(f"phone {self.n}: gone from the room: {self.gone}")
            self.stream._closing = True
        elif event == "comment":
            self.pings += 1

    def _room_frame(self, data: bytes, t: float) -> None:
        try:
            i, j = data.index(b',"room":'), data.rindex(b',"me":')
            raw = data[i + 8:j]
            room = _ROOMS.get(raw)
            if room is None:
                if len(_ROOMS) > 256:
                    _ROOMS.clear()
                room = _ROOMS[raw] = json.loads(raw)
            me = json.loads(data[j + 6:-1])
        except ValueError:
            frame = json.loads(data)
            room, me = frame["room"], frame.get("me")
        self.room = room
        step, round_, phase = room["step"], room["round"], room["phase"]
        self.shown.setdefault((step, round_, phase, room["version"]), t)
        self.first_step.setdefault(step, t)
        answer = room.get("answer")
        if phase == "revealed" and answer is not None:
            if not answer.get("charts"):
                self.problems.append(f"phone {self.n}: step {step} revealed without a chart")
            self.revealed.setdefault((step, round_), t)
        self.frames.append((t, step, round_, phase, room["version"], len(data) + 8))
        self._me(me)
        self._first_frame.set()

    def _me(self, me: dict | None) -> None:
        """``phone.js``'s ``me()``: the stored answer, and what it says of the pending one."""
        self.me = me or {"mine": None}
        if me and me.get("receipt"):
            self.receipt = me["receipt"]
        p, room = self.pending, self.room
        if p is None or room is None:
            return
        if (p.step, p.round) != (room["step"], room["round"]):
            self._settle(p, dropped=f"the class moved to step {room['step']} round "
                                    f"{room['round']} before it was saved")
        elif self.me.get("mine") is not None and same(self.me["mine"], p.value) and (
                "level" not in self.me or self.me["level"] == p.confidence):
            self._settle(p, saved="stream")
        elif room["phase"] != "asking":
            self._settle(p, refused="the question closed before the answer reached the class")

    def _settle(self, p: Pick, *, saved: str = "", refused: str | None = None,
                dropped: str | None = None) -> None:
        if saved and not p.is_saved:
            p.saved, p.how = time.monotonic(), saved
        if refused is not None:
            p.refused = refused
        if dropped is not None:
            p.dropped = dropped
        if self.pending is p:
            self.pending = None
            if self._resend is not None:
                self._resend.cancel()
                self._resend = None
        p.done.set()

    # --- answering ----------------------------------------------------------------------------
    @property
    def ask(self) -> dict | None:
        """The open question's control, if the room asks one now."""
        room = self.room
        if room is None or room["phase"] != "asking" or not room.get("ask"):
            return None
        timer = room.get("timer")
        if timer and time.time() >= timer["ends_at"]:
            return None
        return room["ask"]

    def choose(self, value=None, level: str | None = "random") -> Pick:
        """A tap (``value``, or a random answer of the open question's kind) with how sure
        (``level``: where the room asks it, a random one by default): kept pending and sent;
        returns its `Pick` at once."""
        ask, room = self.ask, self.room
        if ask is None:
            raise RuntimeError(f"phone {self.n}: no open question on step "
                               f"{room['step'] if room else '?'}")
        value = canonical(ask, random_value(ask, self.rng) if value is None else value)
        if level == "random":
            level = random_level(ask, self.rng)
        if self.pending is not None:
            self.pending.dropped = "a newer tap replaced it"
            self.pending.done.set()
        pick = Pick(room["step"], room["round"], value, time.monotonic(),
                    level if ask.get("levels") else None)
        self.picks[(pick.step, pick.round)] = pick
        self.pending = pick
        self._last_send = 0.0
        self._kick()
        return pick

    async def answer(self, value=None, *, level: str | None = "random",
                     timeout: float | None = None) -> Pick:
        """`choose`, then wait until the class has it or refused it (``timeout``: the phone's
        own; the pick says what became of it either way)."""
        pick = self.choose(value, level)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(pick.done.wait(), timeout or self.timeout)
        return pick

    def _kick(self) -> None:
        if self.pending is not None and not self._inflight:
            task = asyncio.get_running_loop().create_task(self._send())
            self._sending.add(task)
            task.add_done_callback(self._sending.discard)

    def _schedule_resend(self) -> None:
        if self._resend is not None:
            self._resend.cancel()
        wait = max(0.05, self._last_send + RESEND_AFTER - time.monotonic())
        self._resend = asyncio.get_running_loop().call_later(wait, self._kick)

    async def _send(self) -> None:
        p = self.pending
        if p is None or self._inflight:
            return
        self._inflight = True
        self._last_send = time.monotonic()
        p.sends += 1
        sent = {"step": p.step, "round": p.round, "value": p.value}
        if p.confidence is not None:
            sent["confidence"] = p.confidence
        body = json.dumps(sent, separators=(",", ":")).encode()
        try:
            status, _, data = await self.request(
                "POST", f"{self.prefix}/live/{quote(self.code)}/answer", "answers", body=body,
                headers={"Content-Type": "application/json", "Origin": self.origin,
                         "Accept": "*/*"})
            try:
                receipt = json.loads(data)
            except ValueError:
                raise ConnectionError(f"HTTP {status}, not a receipt: {data[:80]!r}") from None
            if self.pending is p:
                p.states.append(receipt.get("state"))
                self.receipt = {"step": p.step, "round": p.round, "value": p.value, **receipt}
                if receipt.get("state") == "saved":
                    room = self.room
                    if room is not None and (room["step"], room["round"]) == (p.step, p.round):
                        self.me = {**self.me, "mine": receipt.get("value")}   # phone.js too
                    if not same(receipt.get("value"), p.value) \
                            or receipt.get("confidence") != p.confidence:
                        self.problems.append(f"phone {self.n}: sent {p.value!r} "
                                             f"({p.confidence}), the receipt saved "
                                             f"{receipt.get('value')!r} "
                                             f"({receipt.get('confidence')})")
                    self._settle(p, saved="receipt")
                elif receipt.get("state") == "refused":
                    self._settle(p, refused=receipt.get("why") or f"HTTP {status}")
                    if status == 401:
                        self.problems.append(f"phone {self.n}: HTTP 401: {receipt.get('why')}")
        except (ConnectionError, OSError, TimeoutError, asyncio.IncompleteReadError) as err:
            p.failures += 1
            p.states.append(f"failed: {type(err).__name__}")
        except asyncio.CancelledError:
            raise
        except Exception as err:  # noqa: BLE001 - a phone must keep its answer whatever happened
            p.failures += 1
            p.states.append(f"failed: {type(err).__name__}")
            self.problems.append(f"phone {self.n}: answering failed: {err!r}")
        finally:
            self._inflight = False
        if self.pending is not None and self.pending is not p:
            self._kick()                        # a newer tap came meanwhile: it wins
        elif self.pending is not None:
            self._schedule_resend()


def _retry(status: int, body: bytes) -> float | None:
    """The seconds a refused join says to wait before trying again (429 with ``retry``: the
    room's join bucket for this address), else None."""
    if status != 429:
        return None
    try:
        retry = json.loads(body).get("retry")
    except (ValueError, AttributeError):
        return None
    return float(retry) if isinstance(retry, (int, float)) else None


def _join_data(page: bytes) -> dict:
    """The page's ``JOIN`` (how joining went), as its script reads it."""
    text = page.decode("utf-8", "replace")
    at = text.find("const JOIN = ")
    if at < 0:
        raise JoinRefused("the page holds no JOIN data: not the phone's page")
    data, _ = json.JSONDecoder().raw_decode(text, at + len("const JOIN = "))
    return data or {}
