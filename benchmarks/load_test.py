"""Classroom load test: N students on `streamlit run app.py`, each changing controls.

    python -m benchmarks.load_test [--sessions 30] [--duration 60] [--settle 20]
    python -m benchmarks.load_test --processes 2 [--no-affinity]   # behind HAProxy
    python -m benchmarks.load_test --url http://host:8501/ [--pids 123,456]   # running server

Starts the app on a free 127.0.0.1 port (or ``deploy/serve.sh N`` on free ports with
``--processes N``: N processes behind HAProxy with cookie affinity), opens N sessions that each
load the page and then, every 2 to 4 seconds for ``--duration`` seconds, change one control
(number of heads, seed or mask), and reports:

- p50 / p95 / max time from a control change to the updated figure: from sending the rerun to
  receiving ``script_finished``, checking that the Heads view's charts of that run (one per
  head, keys ``head_1``, ``head_2``, …) arrived with one heatmap per head asked for;
- errors: exception elements, error alerts, URL notices, missing or wrong figures, timeouts,
  closed connections;
- the server's resident memory (VmRSS from /proc) before, at peak and after the sessions close,
  and its CPU time, per process;
- per session, like a browser: ``GET /`` first, keeping the cookies it sets (HAProxy's
  affinity cookie ``XATTN_SERVER``, Streamlit's XSRF cookie) and sending them on the websocket
  and every later request; which process held the session (HAProxy's ``X-Xattn-Server`` header
  on the websocket handshake), and how the sessions spread over the processes;
- one CSV download per session after its first change, the way the frontend does it: an HTTP
  GET of the button's ``/media/<id>.csv`` URL with the session's cookies. (For large settings
  the app makes the file on click, Streamlit's deferred download: the client first sends a
  ``backend_operation_request`` over the websocket, which runs the callable in the session's
  process and answers with the URL.) The file exists only in that process: without affinity
  the GET can reach another one and fail (404). Failed downloads are counted apart from
  errors.

Targets: no errors, no failed downloads, p95 < 2 s with 30 sessions, memory after within 50 MB
of before (each process).

``--cache-messages`` makes the clients keep large messages and advertise their hashes on every
rerun (``cached_message_hashes``) as the browser does; the server then answers an unchanged
element with a ``ref_hash`` reference instead of the full message.

Why protocol clients and not 30 browsers: on a 2-core machine, 30 headless Chromium tabs would
need several GB and both cores for layout and WebGL-less Plotly drawing, so the test would
measure the browsers, not the server. Each client here speaks Streamlit's own websocket protocol
(``/_stcore/stream``, ``BackMsg``/``ForwardMsg`` protobufs from ``streamlit.proto``), like the
frontend does: it sends ``rerun_script`` with the page's query string and the changed widget's
value keyed by the widget id taken from the previous run's elements, and reads every message the
server sends (each run's deltas are full elements: the browser's message cache is not used, so
this is the server's worst case, unless ``--cache-messages``). What it leaves out is the
browser's own drawing time (about 0.3 to 2 s for Plotly, on the student's machine, not the
server's). The clients use the ``websockets`` package, a dependency of Streamlit itself, and
plain asyncio HTTP/1.0 for the few HTTP requests. Everything stays on 127.0.0.1 (unless
``--url``) and the run stops by itself: each wait has a timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from benchmarks.machine import machine_line
from devtools.browser import StreamlitServer
from devtools.lecture_hall import LectureHall, haproxy_missing

ROOT = Path(__file__).resolve().parent.parent

HEADS = (1, 2, 4, 8, 16)          # the divisors of the default d_model 32, up to 16
MASKS = ("none", "wait-k", "window")
SEEDS = 40                        # seeds 0..39: many distinct settings, some repeated (--seeds)
DEFAULTS = {"heads": 4, "seed": 0, "mask": "none"}
KEYS = ("heads", "seed", "mask")
RUN_TIMEOUT = 60.0
CSV_HEADER = b"head,tgt_pos,tgt_token,src_pos,src_token,weight"
CACHED_MESSAGES = 200             # like the browser's cache: recent large messages only
# The Heads view: one chart per head (head_1, head_2, …); before #12 one chart, per_head.
HEAD_CHART = re.compile(r"-(head_\d+|per_head)$")


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def runqueue_wait_seconds(pid: int) -> float:
    """Time the process's main thread (Streamlit's event loop: every websocket send and
    receive) was ready to run but waited for a CPU (/proc/PID/schedstat, second field)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[1]) / 1e9


def cpu_pressure_seconds() -> float | None:
    """Machine-wide time during which some runnable task waited for a CPU (Linux PSI)."""
    try:
        with open("/proc/pressure/cpu") as f:
            return int(f.readline().rsplit("total=", 1)[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return None


class MemorySampler(threading.Thread):
    """RSS of each server process every ``every`` seconds: ``samples[name]`` = [(t, MB)]."""

    def __init__(self, pids: dict[str, int], every: float = 0.25):
        super().__init__(daemon=True)
        self.pids, self.every = pids, every
        self.samples: dict[str, list[tuple[float, float]]] = {name: [] for name in pids}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            for name, pid in self.pids.items():
                with contextlib.suppress(OSError, RuntimeError):   # a restarting process
                    self.samples[name].append((time.monotonic(), rss_mb(pid)))
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join()


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)       # control change -> figure
    fresh: list[float] = field(default_factory=list)           # settings nobody asked before
    repeat: list[float] = field(default_factory=list)          # settings seen before (cached)
    loads: list[float] = field(default_factory=list)           # first run of a session
    downloads: list[float] = field(default_factory=list)       # click -> CSV received
    errors: list[str] = field(default_factory=list)
    failed_downloads: list[str] = field(default_factory=list)
    backends: dict[str, int] = field(default_factory=dict)     # process -> sessions it held
    ref_hashes: int = 0                                        # cached messages referenced
    bytes_received: int = 0
    seen: set = field(default_factory=set)

    def merge(self, other: Stats) -> None:
        for name in ("latencies", "fresh", "repeat", "loads", "downloads", "errors",
                     "failed_downloads"):
            getattr(self, name).extend(getattr(other, name))
        for name, n in other.backends.items():
            self.backends[name] = self.backends.get(name, 0) + n
        self.ref_hashes += other.ref_hashes
        self.bytes_received += other.bytes_received
        self.seen |= other.seen


async def http_get(url: str, cookies: dict[str, str], timeout: float = 30.0
                   ) -> tuple[int, dict[str, str], list[tuple[str, str]], bytes]:
    """GET over plain asyncio (HTTP/1.0: the body ends with the connection, never chunked).

    Returns status, headers (lower-case names, last wins), the Set-Cookie pairs and the body.
    """
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    request = (f"GET {path or '/'} HTTP/1.0\r\nHost: {parts.netloc}\r\n"
               + (f"Cookie: {cookie}\r\n" if cookie else "") + "\r\n")

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 80)
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


class Session:
    """One student: a websocket speaking BackMsg/ForwardMsg, one run at a time, plus the few
    HTTP requests a browser makes (the page, one CSV download), with its cookies."""

    def __init__(self, n: int, base: str, stats: Stats, rng: random.Random, seeds: int = SEEDS,
                 *, cache: bool = False, download: bool = True,
                 query: dict[str, str] | None = None):
        self.n, self.base, self.stats, self.rng, self.seeds = n, base, stats, rng, seeds
        self.download = download
        self.query = query or {}     # URL parameters of every run, e.g. src, tgt, d_model
        self.values = dict(DEFAULTS)
        self.ids: dict[str, str] = {}
        self.page_hash = ""
        self.session_id = ""
        self.cookies: dict[str, str] = {}
        self.backend = ""
        # hash -> message, like the browser's ForwardMsgCache (None: no cache, full messages)
        self.cache: dict[str, ForwardMsg] | None = {} if cache else None
        self.reader: asyncio.Task | None = None
        self._csv_file_id = ""       # a file made on click (deferred), or
        self._csv_url = ""           # one sent with the page
        self._operations: dict[str, asyncio.Future] = {}
        self._done: asyncio.Future | None = None
        self._heatmaps: int | None = None
        self._paged = False          # long sentences: the heads come a page at a time
        self._crosses: bool | None = None
        self._config = ""
        self._problems: list[str] = []

    # -- receiving ---------------------------------------------------------------------------
    async def _read(self, ws) -> None:
        async for raw in ws:
            self.stats.bytes_received += len(raw)
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "ref_hash":
                self.stats.ref_hashes += 1
                cached = self.cache.get(msg.ref_hash) if self.cache is not None else None
                if cached is None:
                    self._problems.append("ref_hash for a message this client never cached")
                    continue
                msg, kind = cached, cached.WhichOneof("type")
            elif self.cache is not None and msg.metadata.cacheable:
                self.cache[msg.hash] = msg
                while len(self.cache) > CACHED_MESSAGES:
                    del self.cache[next(iter(self.cache))]
            if kind == "new_session":
                self.page_hash = msg.new_session.main_script_hash
                self.session_id = msg.new_session.initialize.session_id
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element(msg.delta.new_element)
            elif kind == "script_finished" and self._done and not self._done.done():
                if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    self._done.set_result(msg.script_finished)
            elif kind == "backend_operation_response":
                future = self._operations.pop(msg.backend_operation_response.request_id, None)
                if future is not None and not future.done():
                    future.set_result(msg.backend_operation_response)

    def _element(self, el) -> None:
        kind = el.WhichOneof("type")
        proto = getattr(el, kind)
        wid = getattr(proto, "id", "")
        for key in KEYS:
            if wid.endswith(f"-{key}"):
                self.ids[key] = wid
        if wid.endswith("-hpage"):
            self._paged = True
        if kind == "plotly_chart" and HEAD_CHART.search(wid):
            traces = json.loads(proto.spec)["data"]
            self._heatmaps = (self._heatmaps or 0) + sum(t.get("type") == "heatmap"
                                                         for t in traces)
            self._crosses = bool(self._crosses) or any(t.get("type") == "scatter"
                                                       for t in traces)
            self._config = self._config or proto.config
        elif kind == "download_button" and wid.endswith("-dl_csv"):
            self._csv_file_id, self._csv_url = proto.deferred_file_id, proto.url
        elif kind == "exception":
            self._problems.append(f"exception: {proto.type}: {proto.message[:120]}")
        elif kind == "alert" and proto.format in (Alert.ERROR, Alert.WARNING):
            self._problems.append(f"alert: {proto.body[:120]}")

    # -- sending -----------------------------------------------------------------------------
    def _back_msg(self) -> bytes:
        msg = BackMsg()
        state = msg.rerun_script
        state.page_script_hash = self.page_hash
        if self.cache:
            state.cached_message_hashes.extend(self.cache)
        state.query_string = urlencode({**self.query, **{k: v for k, v in self.values.items()
                                                         if v != DEFAULTS[k]}})
        for key in KEYS:          # like the frontend: every widget the client has a value for
            if key not in self.ids:
                continue
            w = state.widget_states.widgets.add()
            w.id = self.ids[key]
            value = self.values[key]
            if key == "heads":
                w.string_array_value.data.append(str(value))
            elif key == "seed":
                w.int_value = value
            else:
                w.string_value = value
        return msg.SerializeToString()

    async def rerun(self, ws) -> float | None:
        """Send a rerun with the current values; the time to script_finished, or None after an
        error (recorded in stats)."""
        self._done = asyncio.get_running_loop().create_future()
        self._heatmaps, self._crosses, self._config, self._problems = None, None, "", []
        self._paged = False
        start = time.perf_counter()
        await ws.send(self._back_msg())
        try:
            status = await asyncio.wait_for(self._done, RUN_TIMEOUT)
        except TimeoutError:
            self.stats.errors.append(f"session {self.n}: no script_finished in {RUN_TIMEOUT} s")
            return None
        elapsed = time.perf_counter() - start
        want = self.values["heads"]
        if status != ForwardMsg.FINISHED_SUCCESSFULLY:
            self._problems.append(f"script finished with status {status}")
        if not (self._heatmaps == want or self._paged and 0 < (self._heatmaps or 0) < want):
            self._problems.append(f"Heads view: {self._heatmaps} heatmaps, expected {want}"
                                  f"{' (or a page of them)' if self._paged else ''}")
        elif self._crosses != (self.values["mask"] != "none"):
            self._problems.append(f"Heads view: mask crosses {self._crosses}")
        elif "-seed" in self._config and f"-seed{self.values['seed']}-" not in self._config:
            self._problems.append("Heads view: not drawn with the seed asked for")
        for p in self._problems:
            self.stats.errors.append(f"session {self.n} ({self.values}): {p}")
        return None if self._problems else elapsed

    def _change(self) -> str:
        key = self.rng.choice(KEYS)
        current = self.values[key]
        if key == "heads":
            self.values[key] = self.rng.choice([h for h in HEADS if h != current])
        elif key == "seed":
            self.values[key] = self.rng.choice([s for s in range(self.seeds) if s != current])
        else:
            self.values[key] = self.rng.choice([m for m in MASKS if m != current])
        return key

    async def _download_csv(self, ws) -> None:
        """"Download the weights as CSV" as the frontend does it: GET the button's /media URL
        with this session's cookies; for a file made on click (large settings), ask the
        session's process to run the button's callable first, for that URL."""
        def failed(why: str) -> None:
            self.stats.failed_downloads.append(f"session {self.n} (on {self.backend}): {why}")

        start = time.perf_counter()
        if self._csv_url:            # sent with the page: fetch it, as the browser does
            url = self.base.rstrip("/") + self._csv_url
        elif self._csv_file_id:      # made on click: ask the session's process first
            url = await self._deferred_url(ws, failed)
            if url is None:
                return None
        else:
            return failed("no dl_csv button (with a URL or a deferred_file_id) in the page")
        try:
            status, headers, _, body = await http_get(url, self.cookies)
        except (OSError, TimeoutError, ValueError, IndexError) as err:
            return failed(f"GET {url}: {type(err).__name__}: {err}")
        served = headers.get("x-xattn-server", self.backend)
        if status != 200 or not body.startswith(CSV_HEADER):
            where = ("its own process: the file was already gone" if served == self.backend
                     else "ANOTHER process")
            return failed(f"GET /media/...csv: HTTP {status} from {served}, {where}")
        self.stats.downloads.append(time.perf_counter() - start)

    async def _deferred_url(self, ws, failed) -> str | None:
        """A deferred download's step one: the session's process runs the button's callable
        and answers with the file's URL (None after a failure, recorded)."""
        msg = BackMsg()
        op = msg.backend_operation_request
        op.request_id = f"csv-{self.n}-{self.rng.getrandbits(32):08x}"
        op.session_id = self.session_id
        op.deferred_file.file_id = self._csv_file_id
        future = asyncio.get_running_loop().create_future()
        self._operations[op.request_id] = future
        await ws.send(msg.SerializeToString())
        try:
            response = await asyncio.wait_for(future, RUN_TIMEOUT)
        except TimeoutError:
            return failed(f"no backend_operation_response in {RUN_TIMEOUT} s")
        if response.error_msg:
            return failed(f"server: {response.error_msg}")
        return self.base.rstrip("/") + response.deferred_file.url

    async def _open_page(self) -> bool:
        """GET / like a browser: the affinity and XSRF cookies come with it."""
        try:
            status, _, set_cookies, _ = await http_get(self.base, self.cookies)
        except (OSError, TimeoutError, ValueError, IndexError) as err:
            self.stats.errors.append(f"session {self.n}: GET /: {type(err).__name__}: {err}")
            return False
        self.cookies.update(dict(set_cookies))
        if status != 200:
            self.stats.errors.append(f"session {self.n}: GET / answered {status}")
        return status == 200

    @contextlib.asynccontextmanager
    async def connected(self):
        """GET / (cookies), then the websocket with those cookies, read by a background task."""
        if not await self._open_page():
            raise ConnectionError("GET / failed")
        stream = "ws" + self.base.removeprefix("http").rstrip("/") + "/_stcore/stream"
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        async with connect(stream, subprotocols=["streamlit"], max_size=None, open_timeout=30,
                           additional_headers={"Cookie": cookie} if cookie else None) as ws:
            # which process holds the session: HAProxy says so on the handshake
            self.backend = ws.response.headers.get("X-Xattn-Server", "streamlit")
            self.stats.backends[self.backend] = self.stats.backends.get(self.backend, 0) + 1
            self.reader = asyncio.create_task(self._read(ws))
            try:
                yield ws
            finally:
                if self.reader.done() and self.reader.exception():
                    self.stats.errors.append(f"session {self.n}: {self.reader.exception()!r}")
                self.reader.cancel()

    async def run(self, start_at: float, stop_at: float, pause=(2.0, 4.0)) -> None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        try:
            async with self.connected() as ws:
                load = await self.rerun(ws)
                if load is not None:
                    self.stats.loads.append(load)
                changes = 0
                while True:
                    await asyncio.sleep(self.rng.uniform(*pause))
                    if time.monotonic() >= stop_at or self.reader.done():
                        break
                    self._change()
                    settings = tuple(self.values.items())
                    fresh = settings not in self.stats.seen
                    self.stats.seen.add(settings)
                    took = await self.rerun(ws)
                    if took is not None:
                        self.stats.latencies.append(took)
                        (self.stats.fresh if fresh else self.stats.repeat).append(took)
                    changes += 1
                    if changes == 1 and self.download:
                        # this student's own numbers, not the default page's (a file other
                        # sessions, or the warm-up, may already have put in every process)
                        await self._download_csv(ws)
        except Exception as err:  # a refused or dropped connection is an error to report
            self.stats.errors.append(f"session {self.n}: {type(err).__name__}: {err}")


async def run_sessions(base: str, n: int, duration: float, ramp: float, seed: int,
                       seen: set | None = None, seeds: int = SEEDS, *, cache: bool = False,
                       download: bool = True) -> Stats:
    stats = Stats(seen=seen if seen is not None else set())
    t0 = time.monotonic()
    sessions = [Session(i, base, stats, random.Random(seed * 1000 + i), seeds, cache=cache,
                        download=download) for i in range(n)]
    await asyncio.gather(*(s.run(t0 + ramp * i / max(1, n - 1), t0 + duration)
                           for i, s in enumerate(sessions)))
    return stats


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def fmt_s(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"{pct(values, 50):.2f} / {pct(values, 95):.2f} / {max(values):.2f} s"


PROFILE_RATE = 50     # py-spy samples per second


def print_profile(path: Path, top: int = 25, instants: int = 0) -> None:
    """Inclusive share of the server's CPU samples per function, from py-spy's collapsed
    stacks ("frame;frame;... count"), for the frames of the app, Streamlit and Plotly.

    Stacks recorded with --threads start with "thread (tid): name": then the share of the
    ``instants`` (rate × seconds) at which each kind of thread was sampled comes first; with
    --gil that is how often that kind of thread held the GIL.
    """
    inclusive: dict[str, int] = {}
    leaf: dict[str, int] = {}
    threads: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        total += n
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        if frames[0].startswith("thread ("):
            kind = re.sub(r"_\d+$", "_N", frames.pop(0).partition(": ")[2])
            threads[kind] = threads.get(kind, 0) + n
        for f in set(frames):
            inclusive[f] = inclusive.get(f, 0) + n
        leaf[frames[-1]] = leaf.get(frames[-1], 0) + n
    if not total:
        print("profile: no samples")
        return
    interesting = ("xattn", "app.py", "streamlit/elements", "streamlit/runtime", "plotly",
                   "numpy", "json", "protobuf", "websockets", "uvicorn", "starlette")
    if threads and instants:
        print(f"\nSampled threads ({total} samples at {instants} sampling instants; with "
              f"--profile-gil: who held the GIL): {100 * total / instants:.0f} % of instants")
        for kind, n in sorted(threads.items(), key=lambda kv: -kv[1])[:8]:
            print(f"  {100 * n / instants:5.1f} %  {kind}")
    print(f"\nServer CPU profile ({total} samples, py-spy): inclusive share per function")
    print("\n| share | function |\n|---|---|")
    ranked = sorted(inclusive.items(), key=lambda kv: -kv[1])
    shown = [(f, n) for f, n in ranked if any(k in f for k in interesting)][:top]
    for f, n in shown:
        print(f"| {100 * n / total:.0f} % | `{f[:110]}` |")
    print("\nTop self time:")
    for f, n in sorted(leaf.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {100 * n / total:4.1f} %  {f[:120]}")


@dataclass
class Target:
    """What the sessions talk to: one URL, and the server processes behind it."""

    url: str
    label: str
    pids: dict[str, int]                                  # process name -> pid
    direct: dict[str, str] = field(default_factory=dict)  # process name -> its own URL
    proxy_pid: int = 0                                    # HAProxy, when there is one


@contextlib.contextmanager
def serve(a, extra: tuple[str, ...]):
    """One `streamlit run app.py`, or deploy/serve.sh N, or a server already running."""
    if a.url:
        pids = {f"pid {p}": int(p) for p in a.pids.split(",") if p} if a.pids else {}
        yield Target(a.url if a.url.endswith("/") else a.url + "/", f"running server {a.url}",
                     pids)
    elif a.processes:
        affinity = "cookie affinity" if not a.no_affinity else "NO affinity (round robin)"
        with LectureHall(a.processes, affinity=not a.no_affinity,
                         run_dir=ROOT / "test-artifacts" / "load-test-hall",
                         env={"XATTN_STREAMLIT_ARGS": " ".join(extra)}) as hall:
            yield Target(hall.url, f"{a.processes} process{'es' if a.processes > 1 else ''} "
                         f"behind HAProxy, {affinity}",
                         {name: pid for name, (pid, _) in hall.backends.items()},
                         {name: f"http://127.0.0.1:{port}/"
                          for name, (_, port) in hall.backends.items()}, hall.haproxy_pid)
    else:
        log = ROOT / "test-artifacts" / "load-test-server.log"
        with StreamlitServer(log=log, extra_args=extra) as server:
            yield Target(server.url, "one process, no proxy", {"streamlit": server.pid},
                         {"streamlit": server.url})


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=30)
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of changes")
    ap.add_argument("--ramp", type=float, default=5.0, help="seconds over which sessions join")
    ap.add_argument("--settle", type=float, default=20.0,
                    help="seconds to watch memory after the sessions close")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, default=SEEDS,
                    help="sessions pick seeds from 0..SEEDS-1: few seeds, few distinct settings "
                         "(the shared cache stops growing)")
    ap.add_argument("--waves", type=int, default=1,
                    help="run the sessions this many times, one wave after the other: memory "
                         "that grows wave after wave is a per-session leak")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--processes", type=int, metavar="N",
                       help="start deploy/serve.sh N on free ports (N processes behind HAProxy) "
                            "instead of one process without a proxy")
    where.add_argument("--url", help="test a server that is already running (no RSS/CPU "
                                     "unless --pids)")
    ap.add_argument("--pids", help="with --url: comma-separated pids of its Streamlit processes")
    ap.add_argument("--no-affinity", action="store_true",
                    help="with --processes: XATTN_AFFINITY=0, to show what fails without it")
    ap.add_argument("--cache-messages", action="store_true",
                    help="clients keep large messages and advertise their hashes, like the "
                         "browser (the server then sends ref_hash references)")
    ap.add_argument("--profile", type=Path, metavar="FILE",
                    help="sample the (first) server process with py-spy during the sessions "
                         "and write its collapsed stacks to FILE; prints where the time goes")
    ap.add_argument("--profile-gil", action="store_true",
                    help="with --profile: sample only the thread holding the GIL, idle frames "
                         "included, per thread (py-spy --gil --idle --threads); prints how "
                         "often the GIL was held, and by which kind of thread")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="a Streamlit config option for the server(s), e.g. "
                         "server.enableWebsocketCompression=true (repeatable)")
    a = ap.parse_args()
    if a.profile and not shutil.which("py-spy"):
        ap.error("--profile needs py-spy on PATH (pip install py-spy)")
    if a.processes and haproxy_missing():
        ap.error(f"--processes needs HAProxy: {haproxy_missing()}")
    if a.no_affinity and not a.processes:
        ap.error("--no-affinity needs --processes")
    return a


def per_process(values: dict[str, str]) -> str:
    return ", ".join(f"{name}: {v}" for name, v in values.items()) or "n/a"


def main() -> int:
    a = parse_args()
    extra = tuple(arg for opt in a.option for arg in (f"--{opt.partition('=')[0]}",
                                                      opt.partition("=")[2]))
    load_before = os.getloadavg()
    stats = Stats()
    after_waves: list[dict[str, tuple[float, float]]] = []   # RSS 5 s after close, at the end
    with serve(a, extra) as target:
        pids = target.pids
        rss_start = {name: rss_mb(pid) for name, pid in pids.items()}
        # warm-up: one session per process imports numpy/plotly and the app's modules there
        async def warm_up() -> None:
            await asyncio.gather(*(run_sessions(url, 1, 5.0, 0.0, seed=a.seed + 99)
                                   for url in (target.direct or {"": target.url}).values()))
        asyncio.run(warm_up())
        rss_before = {name: rss_mb(pid) for name, pid in pids.items()}
        sampler = MemorySampler(pids)
        sampler.start()
        spy = None
        if a.profile and pids:
            gil = ["--gil", "--idle", "--threads"] if a.profile_gil else []
            spy = subprocess.Popen(["py-spy", "record", "--pid", str(next(iter(pids.values()))),
                                    "--format", "raw", "--output", str(a.profile), "--rate",
                                    str(PROFILE_RATE), "--nonblocking", "--duration",
                                    str(int(a.duration + a.ramp)), *gil],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wall = client_cpu = proxy_cpu = pressure = 0.0
        server_cpu = dict.fromkeys(pids, 0.0)
        loop_wait = dict.fromkeys(pids, 0.0)
        for wave in range(a.waves):
            cpu0 = {name: cpu_seconds(pid) for name, pid in pids.items()}
            wait0 = {name: runqueue_wait_seconds(pid) for name, pid in pids.items()}
            proxy0 = cpu_seconds(target.proxy_pid) if target.proxy_pid else 0.0
            pressure0 = cpu_pressure_seconds()
            client_cpu0, wall0 = time.process_time(), time.monotonic()
            wave_stats = asyncio.run(run_sessions(target.url, a.sessions, a.duration, a.ramp,
                                                  a.seed + 7919 * wave, stats.seen, a.seeds,
                                                  cache=a.cache_messages))
            wall += time.monotonic() - wall0
            for name, pid in pids.items():
                server_cpu[name] += cpu_seconds(pid) - cpu0[name]
                loop_wait[name] += runqueue_wait_seconds(pid) - wait0[name]
            if target.proxy_pid:
                proxy_cpu += cpu_seconds(target.proxy_pid) - proxy0
            if pressure0 is not None:
                pressure += cpu_pressure_seconds() - pressure0
            client_cpu += time.process_time() - client_cpu0
            stats.merge(wave_stats)
            closed = time.monotonic()
            if spy is not None:
                spy.wait(timeout=60)
                spy = None
            # after: every websocket is closed; watch the server release what sessions held
            while time.monotonic() < closed + a.settle:
                time.sleep(0.25)
            after = {}
            for name, samples in sampler.samples.items():
                late = [r for t, r in samples if t > closed] or [rss_mb(pids[name])]
                at_5 = next((r for t, r in samples if t >= closed + 5), late[-1])
                after[name] = (at_5, late[-1])
            after_waves.append(after)
        sampler.stop()
        load_after = os.getloadavg()
    report(a, target, stats, load_before, load_after, rss_start, rss_before, sampler,
           after_waves, server_cpu, client_cpu, wall,
           {"loop_wait": loop_wait, "proxy_cpu": proxy_cpu, "pressure": pressure})
    ok = (pct(stats.latencies, 95) < 2.0 and not stats.errors and not stats.failed_downloads
          and all(after_waves[-1][n][1] - rss_before[n] <= 50 for n in pids))
    return 0 if ok else 1


def report(a, target: Target, stats: Stats, load_before, load_after, rss_start, rss_before,
           sampler: MemorySampler, after_waves, server_cpu, client_cpu, wall, waits) -> None:
    changes = len(stats.latencies)
    runs = changes + len(stats.loads)
    ok_p95 = pct(stats.latencies, 95) < 2.0
    names = list(target.pids)
    ok_mem = all(after_waves[-1][n][1] - rss_before[n] <= 50 for n in names)
    waves = f" × {a.waves} waves" if a.waves > 1 else ""
    peak = {n: max((r for _, r in sampler.samples[n]), default=rss_before[n]) for n in names}
    cpu_total = sum(server_cpu.values())
    sessions = ", ".join(f"{name}: {n}" for name, n in sorted(stats.backends.items()))
    rows = [
        ("servers", target.label, ""),
        ("sessions × duration", f"{a.sessions} × {a.duration:.0f} s{waves} (joined over "
         f"{a.ramp:.0f} s, a change every 2–4 s)", ""),
        ("server options", " ".join(a.option) or "defaults (.streamlit/config.toml)", ""),
        ("client message cache", "on (hashes advertised, like the browser)"
         if a.cache_messages else "off (full messages every run: worst case)", ""),
        ("load average (1 min) before / after", f"{load_before[0]:.2f} / {load_after[0]:.2f} "
         f"({os.cpu_count()} CPUs, shared with other work)", ""),
        ("sessions per process", sessions or "n/a",
         "" if len(stats.backends) == max(1, len(names)) else "⚠ not every process used"),
        ("control changes measured", f"{changes} ({len(stats.fresh)} new settings, "
         f"{len(stats.repeat)} repeated)", ""),
        ("change → figure, p50 / p95 / max", fmt_s(stats.latencies),
         "✅" if ok_p95 else "❌ p95 ≥ 2 s"),
        ("… settings never asked before (cache miss)", fmt_s(stats.fresh), ""),
        ("… settings asked before (cache hit)", fmt_s(stats.repeat), ""),
        ("page load (first run), p50 / p95 / max", fmt_s(stats.loads), ""),
        ("errors", str(len(stats.errors)), "✅" if not stats.errors else "❌"),
        ("CSV downloads ok / failed", f"{len(stats.downloads)} / {len(stats.failed_downloads)}",
         "✅" if not stats.failed_downloads else "❌"),
        ("CSV download (request → file), p50 / p95 / max", fmt_s(stats.downloads), ""),
        ("received by the clients", f"{stats.bytes_received / 1e6:.1f} MB"
         + (f", {stats.ref_hashes} cached-message references" if a.cache_messages else ""), ""),
        ("RSS at start / after warm-up (before)",
         per_process({n: f"{rss_start[n]:.0f} / {rss_before[n]:.0f} MB" for n in names}), ""),
        ("RSS peak during sessions",
         per_process({n: f"{peak[n]:.0f} MB (+{peak[n] - rss_before[n]:.0f})" for n in names}),
         ""),
        (f"RSS 5 s / {a.settle:.0f} s after close" + (" (each wave)" if waves else ""),
         "; ".join(per_process({n: f"{w[n][0]:.0f} / {w[n][1]:.0f} MB "
                                   f"(+{w[n][1] - rss_before[n]:.0f})" for n in names})
                   for w in after_waves), "✅" if ok_mem else "❌ > 50 MB above before"),
        ("server CPU during sessions",
         per_process({n: f"{server_cpu[n]:.1f} s ({100 * server_cpu[n] / wall:.0f} % of a core)"
                      for n in names}) + f" in {wall:.0f} s", ""),
        ("server CPU per script run (all processes)",
         f"{1e3 * cpu_total / runs:.0f} ms ({runs} runs, downloads and HTTP included)"
         if runs and names else "n/a", ""),
        ("load generator CPU", f"{client_cpu:.1f} s ({100 * client_cpu / wall:.0f} % of one core)",
         ""),
        ("HAProxy CPU", f"{waits['proxy_cpu']:.1f} s ({100 * waits['proxy_cpu'] / wall:.0f} % "
         "of one core)" if target.proxy_pid else "no proxy", ""),
        ("event loop ready but waiting for a CPU (run queue)",
         per_process({n: f"{waits['loop_wait'][n]:.1f} s ({100 * waits['loop_wait'][n] / wall:.0f}"
                         " % of the time)" for n in names}), ""),
        ("machine: some task waiting for a CPU (PSI)",
         f"{100 * waits['pressure'] / wall:.0f} % of the time", ""),
    ]
    print(f"\n{machine_line()}")
    print("\n| measure | value | target |\n|---|---|---|")
    for name, value, verdict in rows:
        print(f"| {name} | {value} | {verdict} |")
    if a.profile:
        print_profile(a.profile, instants=PROFILE_RATE * int(a.duration + a.ramp))
    for label, problems in (("ERROR", stats.errors), ("FAILED DOWNLOAD", stats.failed_downloads)):
        for e in problems[:10]:
            print(f"{label}: {e}")
        if len(problems) > 10:
            print(f"... and {len(problems) - 10} more")


if __name__ == "__main__":
    sys.exit(main())
