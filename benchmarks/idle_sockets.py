"""Idle websockets from one client: can one address fill the lecture hall?

    python -m benchmarks.idle_sockets --sockets 600 --processes 2
    python -m benchmarks.idle_sockets --sockets 300 --variants bare client --hold 30
    python -m benchmarks.idle_sockets --sockets 600 --server-maxconn 300 --maxconn 1000

Starts ``deploy/serve.sh N`` (``devtools.lecture_hall.LectureHall``, a SQLite class store, no
Redis) once per variant and, from this one process (one client address), opens ``--sockets``
websockets to ``/_stcore/stream`` the way a script without a browser does, keeps them open for
``--hold`` seconds from the first one, then closes them. Variants (``--variants``):

- ``bare``: the websocket handshake alone, no cookie, then nothing sent (HAProxy's
  ``balance leastconn`` spreads them over the processes);
- ``cookie``: one ``GET /`` first, and its affinity cookie (``XATTN_SERVER``) on every
  websocket: all of them on the process the cookie names; then nothing sent;
- ``client``: ``devtools.protocol.Client`` per socket (its own ``GET /`` and health check,
  their cookies, the websocket, a reader), then nothing sent;
- ``rerun``: as ``client``, plus one ``rerun_script`` BackMsg per socket (the session runs the
  page once, as a browser's first load does), then nothing more; the client reads every
  message;
- ``unread``: as ``bare``, plus one ``rerun_script`` BackMsg, and nothing read after it (the
  ``websockets`` library stops reading from the socket once 16 messages wait: the server's
  sends back up).

Every second, during the ``--before`` seconds before, the hold and ``--after`` seconds after,
it measures (each probe a task of its own, so a probe that waits 30 s does not hold the others
back):

- ``GET /`` through HAProxy: status and time (a fresh connection, no cookie: a new page);
- ``GET /_stcore/health`` through HAProxy, and directly on each backend's port (what HAProxy's
  check sees: ``inter 2s fall 3``, a check that takes 2 s fails);
- a fresh session: ``Client(url)`` then ``await tab.run("")``, the page's first run;
- each backend's (and HAProxy's) RSS and CPU share, the established TCP connections on each
  backend port (HAProxy's side of every socket), the load generator's own event-loop lag;
- HAProxy's own view: its log (the run directory's ``haproxy.log``): every request's status and
  termination state (``sQ``: queue timeout, ``SC``: no server, ``--``: normal), queue wait, and
  the health state changes (``Server streamlit/s1 is DOWN``), read as they appear.

It prints a table (one row a second) and a summary per phase (before, while open, after
closing) beside the targets, for each variant. The run directory (HAProxy's configuration and
log, each Streamlit process's log) is kept under ``--run-dir`` (default: a temporary directory,
removed).

``--server-maxconn`` and ``--maxconn`` set serve.sh's ``XATTN_SERVER_MAXCONN`` and
``XATTN_MAXCONN`` (HAProxy's ``maxconn`` per server and in all): with the bounds serve.sh had
before commit d77beb6 (300 and 1,000), 600 idle sockets fill both processes and every new
request waits in HAProxy's queue until its 30 s ``timeout queue``, then gets a 503.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime
import os
import re
import resource
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from websockets.asyncio.client import connect
from websockets.protocol import State

from benchmarks.process_stats import cpu_seconds, rss_mb
from devtools.lecture_hall import LectureHall, haproxy_missing
from devtools.protocol import Client, http_get

VARIANTS = ("bare", "cookie", "client", "rerun", "unread")
RAW = ("bare", "cookie", "unread")          # websockets of the library, not Clients

# Targets, the same while the sockets are open as before: one client must not change what a
# new student sees.
PAGE_P95_MS = 1000          # GET / through HAProxy, p95 (and every answer a 200)
HEALTH_MAX_MS = 1000        # a backend's own /_stcore/health: HAProxy's check fails at 2,000
FRESH_P95_MS = 3000         # a fresh session's first run of the page, p95 (and all ok)

# option httplog's fields as deploy/serve.sh's log-format writes them
_LOG = re.compile(
    r"^(?P<client>\S+) \[(?P<date>[^\]]+)\] (?P<frontend>\S+) (?P<backend>[^/\s]+)/(?P<server>\S+) "
    r"(?P<TR>-?\d+)/(?P<Tw>-?\d+)/(?P<Tc>-?\d+)/(?P<Tr>-?\d+)/(?P<Ta>-?\d+) (?P<status>-?\d+) "
    r"(?P<bytes>\d+) \S+ \S+ (?P<tsc>\S{4}) (?P<conns>\S+) (?P<queues>\S+) "
    r"\"(?P<method>\S+) (?P<path>\S*)")
_EVENT = re.compile(r"^\[(WARNING|ALERT|NOTICE)\].*?: ((?:Server|backend|Proxy) .*)$")
_STATE = re.compile(r"Server \S+/(s\d+) is (DOWN|UP)")


# -- measures ----------------------------------------------------------------------------------

@dataclass
class Probe:
    """One answer: an HTTP status (or an error's name) and the time it took."""

    status: str = ""
    ms: float = float("nan")

    @property
    def ok(self) -> bool:
        return self.status in ("200", "ok")

    def cell(self) -> str:
        if not self.status:
            return "…"
        if self.ms != self.ms:
            return self.status
        return f"{self.status} {self.ms:.0f}ms" if self.ms < 10_000 else \
            f"{self.status} {self.ms / 1000:.1f}s"


@dataclass
class Row:
    """One second's measures."""

    at: float                     # time.monotonic() of the tick
    phase: str
    t: float = 0.0                # seconds since the first socket was asked for
    open: int = 0                 # sockets of ours open now
    conns: dict[str, int] = field(default_factory=dict)    # established, per backend port
    page: Probe = field(default_factory=Probe)
    health: Probe = field(default_factory=Probe)           # through HAProxy
    direct: dict[str, Probe] = field(default_factory=dict)  # per backend
    fresh: Probe = field(default_factory=Probe)
    cpu: dict[str, float] = field(default_factory=dict)     # % of a core since the last row
    rss: dict[str, float] = field(default_factory=dict)     # MB
    lag_ms: float = 0.0           # the load generator's loop: how late this tick started
    events: list[str] = field(default_factory=list)         # HAProxy's health state changes


@dataclass
class Request:
    """One line of HAProxy's log."""

    at: float                     # epoch seconds HAProxy received it
    server: str
    tw: int                       # ms in the queue (-1: never left it)
    ta: int                       # ms in all
    status: int
    tsc: str                      # termination state, e.g. "----", "sQ--", "SC--"
    path: str


async def timed(coroutine) -> Probe:
    start = time.perf_counter()
    try:
        status, _, _, _ = await coroutine
    except Exception as err:  # noqa: BLE001 - a refused or slow answer is a measure
        name = "timeout" if isinstance(err, (TimeoutError, asyncio.TimeoutError)) else \
            type(err).__name__
        return Probe(name, (time.perf_counter() - start) * 1000)
    return Probe(str(status), (time.perf_counter() - start) * 1000)


async def fresh_session(base: str, timeout: float) -> Probe:
    """A new tab: ``GET /``, the health check, the websocket, the page's first run."""
    start = time.perf_counter()
    try:
        async with Client(base, open_timeout=timeout) as tab:
            run = await tab.run("", timeout=timeout)
        status = "ok" if run.ok else ("no end" if run.status is None else "failed")
    except Exception as err:  # noqa: BLE001 - a refused, dropped or slow session is a measure
        status = "timeout" if isinstance(err, (TimeoutError, asyncio.TimeoutError)) else \
            type(err).__name__
        if isinstance(err, ConnectionError) and "answered" in str(err):
            status = str(err).rsplit(" ", 1)[-1]          # "GET ... answered 503"
    return Probe(status, (time.perf_counter() - start) * 1000)


def established(ports: dict[str, int]) -> dict[str, int]:
    """Established TCP connections whose local port is each backend's (HAProxy's side)."""
    wanted = {port: name for name, port in ports.items()}
    counts = dict.fromkeys(ports, 0)
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError), open(table) as f:
            next(f)
            for line in f:
                cols = line.split()
                if cols[3] == "01":
                    name = wanted.get(int(cols[1].rsplit(":", 1)[1], 16))
                    if name:
                        counts[name] += 1
    return counts


class LogTail:
    """New lines of HAProxy's log, read each tick: health state changes, dated as they come."""

    def __init__(self, path: Path):
        self.path, self.offset, self.partial = path, 0, ""
        self.events: list[tuple[float, str]] = []

    def read(self) -> list[str]:
        try:
            with open(self.path, errors="replace") as f:
                f.seek(self.offset)
                chunk = f.read()
                self.offset = f.tell()
        except OSError:
            return []
        lines = (self.partial + chunk).split("\n")
        self.partial = lines.pop()
        found = []
        for line in lines:
            if m := _EVENT.match(line):
                found.append(m[2])
                self.events.append((time.time(), m[2]))
        return found


def haproxy_bounds(path: Path) -> list[str]:
    """The configuration's lines that bound connections and waits (maxconn, timeouts, checks)."""
    keep = re.compile(r"^\s*(maxconn|timeout (queue|connect|tunnel)|default-server|balance)\b")
    with contextlib.suppress(OSError), open(path) as f:
        return [" ".join(line.split()) for line in f if keep.match(line)]
    return []


def parse_log(path: Path) -> list[Request]:
    out = []
    with contextlib.suppress(OSError), open(path, errors="replace") as f:
        for line in f:
            m = _LOG.match(line)
            if not m:
                continue
            at = datetime.datetime.strptime(m["date"], "%d/%b/%Y:%H:%M:%S.%f").timestamp()
            out.append(Request(at, m["server"], int(m["Tw"]), int(m["Ta"]), int(m["status"]),
                               m["tsc"], m["path"]))
    return out


# -- the sockets -------------------------------------------------------------------------------

class Sockets:
    """``count`` websockets of one variant, opened ``concurrency`` at a time, held, closed."""

    def __init__(self, base: str, variant: str, count: int, concurrency: int, timeout: float):
        self.base, self.variant, self.count = base, variant, count
        self.stream = "ws" + base.removeprefix("http") + "_stcore/stream"
        self.limit = asyncio.Semaphore(concurrency)
        self.timeout = timeout
        self.held: list = []                  # websockets (RAW variants) or Clients
        self.failures: collections.Counter = collections.Counter()
        self.opened_in = float("nan")        # seconds to open them all
        self.cookie = ""

    def open_now(self) -> int:
        if self.variant in RAW:
            return sum(ws.state is State.OPEN for ws in self.held)
        return sum(not tab.closed for tab in self.held)

    async def open(self) -> None:
        start = time.perf_counter()
        if self.variant == "cookie":
            _, _, set_cookies, _ = await http_get(self.base, {}, self.timeout)
            self.cookie = "; ".join(f"{k}={v}" for k, v in set_cookies)
        await asyncio.gather(*(self._one() for _ in range(self.count)))
        self.opened_in = time.perf_counter() - start

    async def _one(self) -> None:
        async with self.limit:
            try:
                if self.variant in RAW:
                    headers = {"Cookie": self.cookie} if self.cookie else {}
                    ws = await connect(self.stream, subprotocols=["streamlit"], max_size=None,
                                       ping_interval=None, open_timeout=self.timeout,
                                       additional_headers=headers)
                    self.held.append(ws)
                    if self.variant == "unread":
                        msg = BackMsg()
                        msg.rerun_script.query_string = ""
                        await ws.send(msg.SerializeToString())
                    return
                tab = Client(self.base, open_timeout=self.timeout)
                await tab.__aenter__()
                self.held.append(tab)
                if self.variant == "rerun":
                    await tab.send("")
            except Exception as err:  # noqa: BLE001 - a refused socket is a result
                self.failures[_failure(err)] += 1

    async def close(self) -> None:
        async def one(item) -> None:
            with contextlib.suppress(Exception):
                if isinstance(item, Client):
                    await item.__aexit__(None, None, None)
                else:
                    await item.close()
        await asyncio.gather(*(one(item) for item in self.held))
        self.held.clear()


def _failure(err: Exception) -> str:
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status is not None:
        return f"HTTP {status}"
    if isinstance(err, (TimeoutError, asyncio.TimeoutError)):
        return "timeout"
    return f"{type(err).__name__}: {str(err)[:60]}"


# -- one variant -------------------------------------------------------------------------------

@dataclass
class Result:
    variant: str
    sockets: int
    rows: list[Row]
    requests: list[Request]
    events: list[tuple[float, str]]
    bounds: dict[str, float]          # phase -> epoch seconds it began
    opened: int
    opened_in: float
    failures: collections.Counter
    backends: list[str]
    logs: dict[str, list[str]]        # each Streamlit log's warnings and errors
    bounds_cfg: list[str]             # HAProxy's bounds as serve.sh configured them


async def measure(hall: LectureHall, variant: str, args) -> Result:
    base = hall.url
    ports = {name: port for name, (_, port) in hall.backends.items()}
    pids = {name: pid for name, (pid, _) in hall.backends.items()}
    pids["haproxy"] = hall.haproxy_pid
    tail = LogTail(hall.run_dir_used / "haproxy.log")
    tail.read()                                    # what came before the measures
    # warm both processes: the page's first run in a process imports and caches what it needs
    for name in ports:
        async with Client(base, cookies={"XATTN_SERVER": name}) as tab:
            await tab.run("", timeout=args.timeout)

    sockets = Sockets(base, variant, args.sockets, args.concurrency, args.timeout)
    rows: list[Row] = []
    probes: list[asyncio.Task] = []
    bounds: dict[str, float] = {}
    loop = asyncio.get_running_loop()
    cpu_then = {name: cpu_seconds(pid) for name, pid in pids.items()}
    tick_then = time.monotonic()

    async def fill(row: Row) -> None:
        direct = {name: asyncio.create_task(timed(http_get(
            f"http://127.0.0.1:{port}/_stcore/health", {}, args.timeout)))
            for name, port in ports.items()}
        page = asyncio.create_task(timed(http_get(base, {}, args.timeout)))
        health = asyncio.create_task(timed(http_get(base + "_stcore/health", {}, args.timeout)))
        fresh = asyncio.create_task(fresh_session(base, args.timeout))
        row.page, row.health, row.fresh = await page, await health, await fresh
        row.direct = {name: await task for name, task in direct.items()}

    async def ticks(phase: str, seconds: float) -> None:
        nonlocal cpu_then, tick_then
        bounds[phase] = time.time()
        end = loop.time() + seconds
        due = loop.time()
        while due < end:
            await asyncio.sleep(max(0.0, due - loop.time()))
            lag = (loop.time() - due) * 1000
            now = time.monotonic()
            cpu_now = {}
            for name, pid in pids.items():
                with contextlib.suppress(OSError):
                    cpu_now[name] = cpu_seconds(pid)
            row = Row(at=now, phase=phase, open=sockets.open_now(),
                      conns=established(ports), lag_ms=lag, events=tail.read())
            row.cpu = {name: 100 * (cpu_now[name] - cpu_then.get(name, cpu_now[name]))
                       / max(now - tick_then, 1e-3) for name in cpu_now}
            for name, pid in pids.items():
                with contextlib.suppress(OSError, RuntimeError):
                    row.rss[name] = rss_mb(pid)
            cpu_then, tick_then = cpu_now, now
            rows.append(row)
            probes.append(asyncio.create_task(fill(row)))
            due += 1.0

    await ticks("before", args.before)
    await asyncio.gather(*probes)                 # the baseline ends before the first socket
    t0 = time.monotonic()                          # t = 0: the first socket is asked for
    opening = asyncio.create_task(sockets.open())
    await ticks("open", args.hold)
    if not opening.done():                        # still opening after the hold: stop there
        opening.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await opening
    opened = len(sockets.held)
    bounds["closing"] = time.time()
    await sockets.close()
    await ticks("after", args.after)
    await asyncio.gather(*probes)
    for row in rows:
        row.t = row.at - t0
    await asyncio.sleep(1.0)                      # HAProxy writes the last lines
    tail.read()
    bounds["end"] = time.time()
    logs = {}
    for name in ports:
        path = hall.run_dir_used / f"{name}.log"
        with contextlib.suppress(OSError), open(path, errors="replace") as f:
            logs[name] = [line.rstrip() for line in f
                          if re.search(r"error|warning|exception|traceback", line, re.I)]
    return Result(variant, args.sockets, rows, parse_log(hall.run_dir_used / "haproxy.log"),
                  tail.events, bounds, opened, sockets.opened_in, sockets.failures,
                  list(ports), logs, haproxy_bounds(hall.run_dir_used / "haproxy.cfg"))


def run_variant(variant: str, args) -> Result:
    run_dir = args.run_dir / f"{variant}-{args.sockets}"
    shutil.rmtree(run_dir, ignore_errors=True)
    env = {"XATTN_CLASS_STORE": str(args.class_store), "XATTN_REDIS_URL": ""}
    if args.server_maxconn:
        env["XATTN_SERVER_MAXCONN"] = str(args.server_maxconn)
    if args.maxconn:
        env["XATTN_MAXCONN"] = str(args.maxconn)
    hall = LectureHall(processes=args.processes, env=env, port=args.port, run_dir=run_dir)
    hall.start()
    try:
        return asyncio.run(measure(hall, variant, args))
    finally:
        hall.__exit__(None, None, None)


# -- printing ----------------------------------------------------------------------------------

def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def print_table(result: Result) -> None:
    names = result.backends
    print("HAProxy: " + "; ".join(result.bounds_cfg))
    head = (f"{'t s':>5} {'phase':<6} {'open':>4} {'conns ' + '/'.join(names):>12} "
            f"{'GET /':>11} {'health':>11} "
            + " ".join(f"{name + ' direct':>10}" for name in names)
            + f" {'fresh session':>14} {'CPU % ' + '/'.join(names) + '/hap':>18} "
            f"{'RSS MB':>9} {'lag':>5}  HAProxy")
    print(head)
    print("-" * len(head))
    for row in result.rows:
        conns = "/".join(str(row.conns.get(n, 0)) for n in names)
        cpu = "/".join(f"{row.cpu.get(n, 0):.0f}" for n in [*names, "haproxy"])
        rss = "/".join(f"{row.rss.get(n, 0):.0f}" for n in names)
        events = "; ".join(_short(e) for e in row.events)
        print(f"{row.t:5.0f} {row.phase:<6} {row.open:>4} {conns:>12} {row.page.cell():>11} "
              f"{row.health.cell():>11} "
              + " ".join(f"{row.direct.get(n, Probe()).cell():>10}" for n in names)
              + f" {row.fresh.cell():>14} {cpu:>18} {rss:>9} {row.lag_ms:>4.0f}m  {events}")


def _short(event: str) -> str:
    m = _STATE.search(event)
    if m:
        reason = re.search(r"reason: ([^,]+)", event)
        return f"{m[1]} {m[2]}" + (f" ({reason[1]})" if reason else "")
    return event[:60]


def _phase_of(at: float, bounds: dict[str, float]) -> str:
    if at < bounds["open"]:
        return "before"
    if at < bounds["closing"]:
        return "open"
    return "after"


def print_summary(result: Result) -> None:
    names = result.backends
    took = (f"in {result.opened_in:.1f} s" if result.opened_in == result.opened_in
            else "(still opening when the hold ended)")
    print(f"\nsockets: {result.opened} of {result.sockets} opened {took}"
          + (f", failures {dict(result.failures)}" if result.failures else ", no failures"))
    phases = ("before", "open", "after")
    labels = {"before": "before", "open": "while open", "after": "after closing"}
    print(f"\n{'measure':<50} {'target':<12} " + " ".join(f"{labels[p]:>22}" for p in phases))

    def line(name: str, target: str, values: dict[str, str]) -> None:
        print(f"{name:<50} {target:<12} " + " ".join(f"{values[p]:>22}" for p in phases))

    rows = {p: [r for r in result.rows if r.phase == p] for p in phases}

    def probe_stats(get, target_ms: float) -> tuple[dict[str, str], dict[str, str]]:
        ok_cells, time_cells = {}, {}
        for p in phases:
            probes = [get(r) for r in rows[p]]
            bad = collections.Counter(x.status for x in probes if not x.ok)
            ms = [x.ms for x in probes if x.ok]
            ok_cells[p] = f"{len(probes) - sum(bad.values())}/{len(probes)}" + (
                " " + ",".join(f"{k}x{v}" for k, v in bad.most_common(2)) if bad else "")
            time_cells[p] = (f"{_pct(ms, 50):.0f} / {_pct(ms, 95):.0f} / {max(ms):.0f}"
                             if ms else "n/a")
            if p == "open" and ms:
                time_cells[p] += " *" if _pct(ms, 95) > target_ms or bad else ""
        return ok_cells, time_cells

    ok, times = probe_stats(lambda r: r.page, PAGE_P95_MS)
    line("GET / (new page) ok", "all", ok)
    line("GET / p50 / p95 / max ms", f"p95 < {PAGE_P95_MS}", times)
    ok, times = probe_stats(lambda r: r.health, HEALTH_MAX_MS)
    line("health via HAProxy ok", "all", ok)
    line("health via HAProxy p50 / p95 / max ms", f"p95 < {HEALTH_MAX_MS}", times)
    for name in names:
        ok, times = probe_stats(lambda r, n=name: r.direct.get(n, Probe()), HEALTH_MAX_MS)
        line(f"health direct on {name} ok", "all", ok)
        line(f"health direct on {name} p50 / p95 / max ms", f"max < {HEALTH_MAX_MS}", times)
    ok, times = probe_stats(lambda r: r.fresh, FRESH_P95_MS)
    line("fresh session (Client + first run) ok", "all", ok)
    line("fresh session p50 / p95 / max ms", f"p95 < {FRESH_P95_MS}", times)

    downs = {p: [e for at, e in result.events if _phase_of(at, result.bounds) == p
                 and " is DOWN" in e] for p in phases}
    line("HAProxy: a server marked DOWN", "0", {p: str(len(downs[p])) for p in phases})
    measured = [r for r in result.requests if r.at >= result.bounds["before"]]
    others = [r for r in measured if r.path != "/_stcore/stream"]
    streams = [r for r in measured if r.path == "/_stcore/stream"]
    for label, subset in (("requests", others), ("websockets", streams)):
        by = {p: collections.Counter() for p in phases}
        waited = {p: [] for p in phases}
        for r in subset:
            p = _phase_of(r.at, result.bounds)
            by[p][f"{r.status} {r.tsc[:2]}"] += 1
            waited[p].append(r.tw)
        line(f"HAProxy log {label}: status termination", "200/101 --",
             {p: ", ".join(f"{k} x{v}" for k, v in by[p].most_common(3)) or "-"
              for p in phases})
        line(f"HAProxy log {label}: max queue wait ms", "0",
             {p: str(max(waited[p])) if waited[p] else "-" for p in phases})
    spread = {p: collections.Counter(r.server for r in streams
                                     if _phase_of(r.at, result.bounds) == p) for p in phases}
    line("websockets per server (HAProxy log)", "",
         {p: " ".join(f"{k}:{v}" for k, v in sorted(spread[p].items())) or "-" for p in phases})
    for name in [*names, "haproxy"]:
        cpu = {p: [r.cpu.get(name, 0) for r in rows[p]] for p in phases}
        rss = {p: [r.rss.get(name, 0) for r in rows[p]] for p in phases}
        line(f"{name}: CPU % of a core mean / max, RSS MB max", "",
             {p: (f"{statistics.mean(cpu[p]):.0f} / {max(cpu[p]):.0f}, {max(rss[p]):.0f}"
                  if cpu[p] else "n/a") for p in phases})
    lag = {p: f"{max((r.lag_ms for r in rows[p]), default=0):.0f}" for p in phases}
    line("load generator's loop lag max ms", "< 200", lag)
    for name, lines in result.logs.items():
        if lines:
            print(f"\n{name}.log: {len(lines)} warning/error lines, the last:")
            for text in lines[-5:]:
                print("    " + text[:160])
    if result.events:
        print("\nHAProxy's events (seconds from the first socket):")
        first = result.bounds["open"]
        for at, event in result.events:
            print(f"  {at - first:6.1f}  {event[:150]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=600)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    parser.add_argument("--hold", type=float, default=63.0,
                        help="seconds the sockets stay open, from the first (63)")
    parser.add_argument("--before", type=float, default=5.0, help="seconds measured before (5)")
    parser.add_argument("--after", type=float, default=20.0,
                        help="seconds measured after closing (20)")
    parser.add_argument("--concurrency", type=int, default=100,
                        help="handshakes under way at once (100)")
    parser.add_argument("--timeout", type=float, default=40.0,
                        help="seconds any probe or handshake may take (40: beyond HAProxy's "
                             "30 s queue timeout)")
    parser.add_argument("--port", type=int, default=0,
                        help="HAProxy's port, the backends on the next ones (0: free ports)")
    parser.add_argument("--server-maxconn", type=int, default=0,
                        help="XATTN_SERVER_MAXCONN for serve.sh: connections per process "
                             "(default: serve.sh's, 3000; before d77beb6 it was 300)")
    parser.add_argument("--maxconn", type=int, default=0,
                        help="XATTN_MAXCONN for serve.sh: HAProxy's connections in all "
                             "(default: serve.sh's, 6000; before d77beb6 1000)")
    parser.add_argument("--class-store", type=Path, default=None,
                        help="the SQLite class store (default: classes.sqlite3 in --run-dir)")
    parser.add_argument("--run-dir", type=Path, default=None,
                        help="where each variant's configuration and logs are kept "
                             "(default: a temporary directory, removed)")
    args = parser.parse_args(argv)
    if (why := haproxy_missing()) is not None:
        print(f"idle_sockets: {why}", file=sys.stderr)
        return 2
    keep = args.run_dir is not None
    args.run_dir = args.run_dir or Path(tempfile.mkdtemp(prefix="xattn-idle-"))
    args.run_dir.mkdir(parents=True, exist_ok=True)
    args.class_store = args.class_store or args.run_dir / "classes.sqlite3"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < args.sockets + 200:      # this client's own sockets (serve.sh raises the hall's)
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, args.sockets + 1000), hard))
    print(f"idle_sockets: {args.sockets} sockets from one client, {args.processes} processes, "
          f"hold {args.hold:.0f} s, open-file limit {hard}, {os.cpu_count()} CPUs, load "
          f"average {os.getloadavg()[0]:.1f}, run dir {args.run_dir}")
    try:
        for variant in args.variants:
            print(f"\n=== variant {variant}: {args.sockets} sockets ===", flush=True)
            result = run_variant(variant, args)
            print_table(result)
            print_summary(result)
            sys.stdout.flush()
    finally:
        if not keep:
            shutil.rmtree(args.run_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
