"""A browser tab without a browser: Streamlit's websocket protocol, for tests and benchmarks.

Every benchmark and test that opens the page over ``/_stcore/stream`` does it through `Client`:
``GET /`` and ``GET /_stcore/health`` first as a browser does (HAProxy's affinity cookie comes
with the page, Streamlit's XSRF cookie with the health check), then one websocket with those
cookies, read by a background task, and one script run at a time: a
``rerun_script`` with the link's query string and the widget states the browser would send
(and, for a tap inside a fragment, that fragment's id), answered by ``ForwardMsg``s until
``script_finished``. Every run the page receives is also recorded as a `Run` of its own, the
ones the server starts by itself (a page the browser asks to rerun: a component's trigger, a timer)
included: ``on_run`` is called with each, and `Client.until` waits for one that shows
something. Why protocol clients and not browsers:
on a 2-core machine thirty headless Chromium tabs measure the browsers, not the server. The
``websockets`` package is a dependency of Streamlit itself.

`load_page` is the one-line use: open a link in a new session and wait for its first run.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

__all__ = ["Client", "PageLoad", "Run", "http_get", "load_page", "rss_mb", "run_async"]

CACHED_MESSAGES = 200     # like the browser's message cache: recent large messages only


@dataclass
class Run:
    """What one script run sent, in order, and how it ended.

    ``status`` is a ``ForwardMsg.ScriptFinishedStatus`` (None: no end within the timeout).
    A run `Client.run` answers with holds every element sent from the request to its end
    (a run cut short by a newer one included; ``fragment_ids`` and ``started`` are the first
    run's); a run given to ``on_run`` holds one run's.
    """

    status: int | None = None
    seconds: float = float("nan")
    elements: list = field(default_factory=list)      # Element protos (delta.new_element)
    fragments: list = field(default_factory=list)     # each element's delta.fragment_id
    fragment_ids: tuple = ()     # the fragments this run reran; () the whole page
    started: float = float("nan")   # time.monotonic() its new_session arrived
    ended: float = float("nan")     # ... its script_finished arrived
    bytes: int = 0                  # what the websocket brought from start to end

    @property
    def ok(self) -> bool:
        return self.status in (ForwardMsg.FINISHED_SUCCESSFULLY,
                               ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)

    @property
    def full(self) -> bool:
        """A run of the whole page (not of some fragments)."""
        return not self.fragment_ids

    def problems(self) -> list[str]:
        """Exceptions shown, and an end other than success."""
        out = [f"exception {e.exception.type}: {e.exception.message[:160]}"
               for e in self.elements if e.WhichOneof("type") == "exception"]
        if self.status is None:
            out.append("no script_finished within the timeout")
        elif not self.ok:
            out.append(f"script finished: {ForwardMsg.ScriptFinishedStatus.Name(self.status)}")
        return out

    def of(self, kind: str) -> list:
        """The elements of one kind (``"plotly_chart"``, ``"alert"``, ...), as their protos."""
        return [getattr(e, kind) for e in self.elements if e.WhichOneof("type") == kind]

    def widget(self, key: str):
        """The proto of the element whose id ends with ``-key`` (a widget's or a chart's
        user key), or None."""
        for e in self.elements:
            proto = getattr(e, e.WhichOneof("type"))
            if getattr(proto, "id", "").endswith("-" + key):
                return proto
        return None

    def fragment_of(self, key: str) -> str:
        """The id of the fragment that drew the element keyed ``key`` ("": none, or outside
        any fragment)."""
        for e, fragment in zip(self.elements, self.fragments, strict=False):
            if getattr(getattr(e, e.WhichOneof("type")), "id", "").endswith("-" + key):
                return fragment
        return ""


class Client:
    """One browser tab on ``base`` (``http://host:port/``): its cookies, its session, its runs.

    Use as ``async with Client(base) as tab: run = await tab.run("seed=3")``.

    Parameters
    ----------
    base : str
        The app's URL (a Streamlit server, or HAProxy in front of several).
    cookies : dict, optional
        Cookies the tab starts with; ``GET /`` adds the ones the page sets.
    headers : dict, optional
        Headers of the websocket's handshake (a proxy's ``X-Forwarded-For``).
    cache : bool
        Keep large messages and advertise their hashes on every run, as the browser does; the
        server then answers an unchanged element with a ``ref_hash`` (off: full messages, the
        server's worst case).
    open_timeout : float
        Seconds for ``GET /`` and the websocket handshake.
    on_run : callable, optional
        Called on the reader's task with every run the page receives, as it ends (any
        status): asked for by this client or started by the server.
    """

    def __init__(self, base: str, *, cookies: dict[str, str] | None = None, cache: bool = False,
                 open_timeout: float = 60.0, headers: dict[str, str] | None = None,
                 on_run: Callable[[Run], None] | None = None) -> None:
        self.base = base if base.endswith("/") else base + "/"
        self.cookies = dict(cookies or {})
        self.headers = dict(headers or {})    # sent with the websocket's handshake
        self.open_timeout = open_timeout
        self.session_id = self.page_hash = ""
        self.query_string = ""       # the link as the page last set it (page_info_changed)
        self.on_run = on_run
        self.backend = ""            # the process holding the session (HAProxy's header)
        self.bytes_received = self.ref_hashes = 0
        self.problems: list[str] = []               # what the reader met outside any run
        self._cache: dict[str, ForwardMsg] | None = {} if cache else None
        self._ws = None
        self._stack: contextlib.AsyncExitStack | None = None
        self.reader: asyncio.Task | None = None
        self._run: Run | None = None           # what `run` answers: from its request on
        self._asked = False                    # `run` sent a request no run has begun since
        self._done: asyncio.Future | None = None
        self._now: Run | None = None           # the run being received
        self._waiters: list[tuple[Callable[[Run], bool], asyncio.Future]] = []
        self._answers: dict[str, asyncio.Future] = {}

    def __repr__(self) -> str:
        return f"Client({self.base!r}, session {self.session_id or 'not open'})"

    async def __aenter__(self) -> Client:
        # The page (HAProxy's affinity cookie comes with it), then the health check the
        # frontend makes before it connects (Streamlit's XSRF cookie comes with that).
        for url in (self.base, self.base + "_stcore/health"):
            status, _, set_cookies, _ = await http_get(url, self.cookies, self.open_timeout)
            if status != 200:
                raise ConnectionError(f"GET {url} answered {status}")
            self.cookies.update(dict(set_cookies))
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        stream = "ws" + self.base.removeprefix("http") + "_stcore/stream"
        self._stack = contextlib.AsyncExitStack()
        self._ws = await self._stack.enter_async_context(connect(
            stream, subprotocols=["streamlit"], max_size=None, open_timeout=self.open_timeout,
            ping_interval=None,
            additional_headers={**({"Cookie": cookie} if cookie else {}), **self.headers}))
        self.backend = self._ws.response.headers.get("X-Xattn-Server", "streamlit")
        self.reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc) -> None:
        if self.reader.done() and not self.reader.cancelled() and self.reader.exception():
            self.problems.append(f"reader: {self.reader.exception()!r}")
        self.reader.cancel()
        await self._stack.aclose()

    @property
    def closed(self) -> bool:
        """The server closed the websocket (or the reader failed)."""
        return self.reader is not None and self.reader.done()

    # -- one script run at a time -------------------------------------------------------------
    async def run(self, query: str = "", widgets: Iterable[WidgetState] = (), *,
                  fragment: str = "", timeout: float = 60.0) -> Run:
        """Send a rerun as the browser does (the link's ``query``, the widgets' states; a
        tap inside a fragment names the ``fragment``) and collect what the runs begun after
        it send until ``script_finished`` (a run cut short by a newer one is not the end)."""
        self._run, self._done = Run(), asyncio.get_running_loop().create_future()
        run, start = self._run, time.perf_counter()
        self._asked = True
        await self.send(query, widgets, fragment=fragment)
        with contextlib.suppress(TimeoutError):
            run.status = await asyncio.wait_for(self._done, timeout)
        run.seconds = time.perf_counter() - start
        return run

    async def send(self, query: str = "", widgets: Iterable[WidgetState] = (), *,
                   fragment: str = "") -> None:
        """Send a rerun and return at once: its runs come to ``on_run`` and `until`."""
        msg = BackMsg()
        rerun = msg.rerun_script
        rerun.query_string, rerun.page_script_hash = query, self.page_hash
        # the page's address as the browser's page sends it, without its query
        # (st.context.url: what the student link is made of where XATTN_PUBLIC_URL is unset)
        rerun.context_info.url = self.base
        rerun.fragment_id = fragment
        if self._cache:
            rerun.cached_message_hashes.extend(self._cache)
        rerun.widget_states.widgets.extend(widgets)
        await self._ws.send(msg.SerializeToString())

    def until(self, done: Callable[[Run], bool], timeout: float = 60.0):
        """An awaitable of the first run that ends from now on (asked for or started by the
        server) for which ``done(run)`` holds; TimeoutError after ``timeout`` seconds,
        ConnectionError if the connection ends first."""
        future = asyncio.get_running_loop().create_future()
        if self.closed:
            future.set_exception(ConnectionError("the connection has ended"))
        else:
            self._waiters.append((done, future))
        return asyncio.wait_for(future, timeout)

    # -- requests answered by id ---------------------------------------------------------------
    async def deferred_file_url(self, file_id: str, *, timeout: float = 60.0) -> str:
        """A download made on click, step one: the session's process runs the button's
        callable and answers with the file's URL. Raises RuntimeError with the server's
        error."""
        msg = BackMsg()
        op = msg.backend_operation_request
        op.request_id, op.session_id = uuid.uuid4().hex, self.session_id
        op.deferred_file.file_id = file_id
        answer = await self._ask(msg, op.request_id, timeout)
        if answer.error_msg:
            raise RuntimeError(f"the server could not make the file: {answer.error_msg}")
        return self.base.rstrip("/") + answer.deferred_file.url

    async def upload_urls(self, name: str, *, timeout: float = 60.0):
        """Where to PUT a file for the uploader (a ``FileURLs``: ``upload_url``, ``file_id``)."""
        msg = BackMsg()
        req = msg.file_urls_request
        req.request_id, req.session_id = uuid.uuid4().hex, self.session_id
        req.file_names.append(name)
        return (await self._ask(msg, req.request_id, timeout)).file_urls[0]

    async def _ask(self, msg: BackMsg, request_id: str, timeout: float):
        future = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        await self._ws.send(msg.SerializeToString())
        try:
            return await asyncio.wait_for(future, timeout)
        finally:
            self._answers.pop(request_id, None)

    # -- the one reader ------------------------------------------------------------------------
    async def _read(self) -> None:
        try:
            await self._messages()
        finally:                    # whoever waits for a run hears that none will come
            for _, future in self._waiters:
                if not future.done():
                    future.set_exception(ConnectionError("the connection has ended"))
            self._waiters.clear()

    async def _messages(self) -> None:
        async for raw in self._ws:
            self.bytes_received += len(raw)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "ref_hash":
                self.ref_hashes += 1
                msg = self._cache.get(msg.ref_hash) if self._cache is not None else None
                if msg is None:
                    self.problems.append("ref_hash of a message this client never cached")
                    continue
                kind = msg.WhichOneof("type")
            elif self._cache is not None and msg.metadata.cacheable:
                self._cache[msg.hash] = msg
                while len(self._cache) > CACHED_MESSAGES:
                    del self._cache[next(iter(self._cache))]
            if kind == "new_session":
                if self._now is not None:          # the server never sent that run's end
                    self._ended(self._now, None)
                self.page_hash = msg.new_session.main_script_hash
                self.session_id = msg.new_session.initialize.session_id
                self._now = Run(fragment_ids=tuple(msg.metadata.run.fragment_ids),
                                started=time.monotonic())
                if self._asked:                    # `run` collects from this run on
                    self._asked = False
                    self._run.fragment_ids, self._run.started = self._now.fragment_ids, \
                        self._now.started
            runs = [r for r in (self._now, self._answering()) if r is not None]
            for run in runs:
                run.bytes += len(raw)
            if kind == "page_info_changed":
                self.query_string = msg.page_info_changed.query_string
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                for run in runs:
                    run.elements.append(msg.delta.new_element)
                    run.fragments.append(msg.delta.fragment_id)
            elif kind == "script_finished":
                self._finished(msg.script_finished)
            elif kind == "backend_operation_response":
                self._answer(msg.backend_operation_response.request_id,
                             msg.backend_operation_response)
            elif kind == "file_urls_response":
                self._answer(msg.file_urls_response.response_id, msg.file_urls_response)

    def _answering(self) -> Run | None:
        """What `run` collects now: the runs begun after its request, until one ends."""
        if self._asked or self._done is None or self._done.done():
            return None
        return self._run

    def _finished(self, status: int) -> None:
        if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN and self._answering() is not None:
            self._run.ended = time.monotonic()
            self._done.set_result(status)
        if self._now is not None:
            self._ended(self._now, status)

    def _ended(self, run: Run, status: int | None) -> None:
        """A run ended (``status`` None: the next run began before its end came)."""
        self._now = None
        run.status, run.ended = status, time.monotonic()
        run.seconds = run.ended - run.started
        if self.on_run is not None:
            self.on_run(run)
        waiting, self._waiters = self._waiters, []
        for done, future in waiting:
            if future.done():
                continue
            try:
                met = done(run)
            except Exception as err:  # noqa: BLE001 - a failing test of a run is the waiter's
                future.set_exception(err)
                continue
            if met:
                future.set_result(run)
            else:
                self._waiters.append((done, future))

    def _answer(self, request_id: str, answer) -> None:
        future = self._answers.get(request_id)
        if future is not None and not future.done():
            future.set_result(answer)


@dataclass
class PageLoad:
    """What one page load brought: seconds until the script finished, what it sent."""

    seconds: float = float("nan")
    elements: int = 0
    bytes: int = 0
    problems: list[str] = field(default_factory=list)


async def load_page(port: int, query: str = "", *, timeout: float = 120.0,
                    host: str = "127.0.0.1") -> PageLoad:
    """Open ``?query`` in a new session and wait for its first run to finish."""
    out = PageLoad()
    start = time.perf_counter()
    try:
        async with Client(f"http://{host}:{port}/", open_timeout=timeout) as tab:
            run = await tab.run(query, timeout=timeout)
            out.elements, out.bytes = len(run.elements), tab.bytes_received
            out.problems += run.problems()
    except Exception as err:  # noqa: BLE001 - a refused, dropped or slow connection is a result
        out.problems.append(f"{type(err).__name__}: {err}")
    out.seconds = time.perf_counter() - start
    return out


async def http_get(url: str, cookies: dict[str, str], timeout: float = 30.0
                   ) -> tuple[int, dict[str, str], list[tuple[str, str]], bytes]:
    """GET over plain asyncio (HTTP/1.0: the body ends with the connection, never chunked;
    over TLS for ``https://``).

    Returns status, headers (lower-case names, last wins), the Set-Cookie pairs and the body.
    """
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    request = (f"GET {path or '/'} HTTP/1.0\r\nHost: {parts.netloc}\r\n"
               + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n")
    tls = parts.scheme == "https"                # a hosted deployment: the system's certificates

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection(
            parts.hostname, parts.port or (443 if tls else 80), ssl=True if tls else None)
        try:
            writer.write(request.encode("latin-1"))
            await writer.drain()
            return await reader.read()
        finally:
            writer.close()

    raw = await asyncio.wait_for(exchange(), timeout)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers, set_cookies = {}, []
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
        if name.strip().lower() == "set-cookie":
            pair = value.strip().split(";", 1)[0]
            set_cookies.append(tuple(pair.split("=", 1)))
    return status, headers, set_cookies, body


def rss_mb(pid: int) -> float:
    """Resident memory of a process, from /proc (Linux)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid} (is /proc mounted? {os.name})")


def run_async(coroutine):
    """``asyncio.run(coroutine)`` in a thread of its own, for tests: once a browser test's
    Playwright (its sync API) has started, the main thread has an event loop marked running
    for the rest of the pytest process, and ``asyncio.run`` refuses to start there."""
    with ThreadPoolExecutor(1, thread_name_prefix="run-async") as pool:
        return pool.submit(asyncio.run, coroutine).result()
