"""Memory per open session: the server's RSS with N sessions open from links, and after they close.

    python -m benchmarks.bench_sessions [--counts 300 700] [--after 150] [--trace] [--port P]

Starts ``streamlit run app.py`` (with ``--trace``: under ``tracemalloc``, 12 frames, far
slower; ``--env NAME=VALUE`` sets its environment, e.g. ``MALLOC_ARENA_MAX=2``), opens sessions
from links the way a browser does (``devtools.protocol.Client``: ``GET /``, a websocket, a
``rerun_script`` for ``?seed=K``, K in 0..39 as in the load test; ``--link`` for another query,
``--distinct`` for a new K in every link) twenty at a time until each count of ``--counts`` is
open, keeps them open (each client keeps reading, as an idle browser tab does), and reads the
server's resident memory (VmRSS) at each count. Then it closes every session and reads RSS
again right away, and every 10 s for ``--after`` seconds (Streamlit keeps up to 128 closed
sessions for ``server.disconnectedSessionTTL``, 30 s in .streamlit/config.toml, in case their
browser reconnects, and ``xattn/ui/reaper.py`` drops them and trims the heap after that), then
once more after a new session came and went, and after the server called glibc's
``malloc_trim(0)`` (SIGUSR2): what RSS loses then was free memory the allocator kept.

``--warm N`` first fills the server's caches (bounded by bytes) the way a day of classes does:
N sessions, each on a large setting of its own (``--warm-link``: 16 heads, d_model 512, two
64-word sentences, a new seed each; 1.3 MB a run), opened and closed before anything is
measured, so that the start line is the baseline *with full caches* and every later row adds
only what the sessions hold themselves.

With ``--trace`` the server takes a ``tracemalloc`` snapshot on SIGUSR1 after start-up (one
session opened and closed), with every count open, and after the close; the largest growths
between them are printed per session, by the allocating line (Python's own allocations: what
Python holds, apart from memory the allocator keeps without handing it back to the system).

``python -m benchmarks.bench_sessions --serve ARGS`` is the server itself (``streamlit run
ARGS`` with the two signal handlers), as this benchmark starts it.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from benchmarks.machine import machine_line
from devtools.browser import ROOT, StreamlitServer, free_port
from devtools.protocol import Client, rss_mb

SNAPSHOT_ENV = "XATTN_SNAPSHOT"      # the traced server writes snapshots to $XATTN_SNAPSHOT.N


# ---------------------------------------------------------------- the server, with signals
def serve(args: list[str]) -> None:
    """``streamlit run ARGS`` with two signal handlers: SIGUSR1 writes a tracemalloc snapshot
    (when $XATTN_TRACE is set, tracing from the start), SIGUSR2 calls glibc's
    ``malloc_trim(0)``, which hands freed memory back to the system (what RSS then loses was
    free already, only kept by the allocator)."""
    if os.environ.get("XATTN_TRACE"):
        tracemalloc.start(12)
    taken = [0]

    def dump(signum, frame) -> None:
        gc.collect()
        taken[0] += 1
        tracemalloc.take_snapshot().dump(f"{os.environ[SNAPSHOT_ENV]}.{taken[0]}")

    def trim(signum, frame) -> None:
        gc.collect()
        ctypes.CDLL("libc.so.6").malloc_trim(0)

    signal.signal(signal.SIGUSR1, dump)
    signal.signal(signal.SIGUSR2, trim)
    from streamlit.web.cli import main
    sys.argv = ["streamlit", "run", *args]
    main()


class Server(StreamlitServer):
    """``StreamlitServer`` run through ``serve`` (with ``trace``: under tracemalloc)."""

    def __init__(self, snapshot: Path, trace: bool, env: dict[str, str], **kwargs):
        super().__init__(**kwargs)
        self.snapshot, self.trace, self.env, self.taken = snapshot, trace, env, 0

    def start(self, timeout: float = 180.0) -> Server:
        cmd = [sys.executable, "-m", "benchmarks.bench_sessions", "--serve", self.script,
               "--server.port", str(self.port), "--server.address", "127.0.0.1",
               "--server.headless", "true", "--browser.gatherUsageStats", "false",
               "--server.fileWatcherType", "none", *self.extra_args]
        env = dict(os.environ, **self.env, **{SNAPSHOT_ENV: str(self.snapshot)},
                   PYTHONPATH=os.pathsep.join([str(self.root), str(ROOT)]))
        if self.trace:
            env["XATTN_TRACE"] = "1"
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        self._wait_healthy(timeout)
        return self

    def trim(self) -> None:
        os.kill(self.pid, signal.SIGUSR2)

    def take(self) -> tracemalloc.Snapshot:
        """Ask the server for a snapshot and load it (waits until it is written)."""
        self.taken += 1
        path = Path(f"{self.snapshot}.{self.taken}")
        os.kill(self.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 600
        while True:                      # written when its size stops changing
            if path.exists():
                size = path.stat().st_size
                time.sleep(1.0)
                if size and path.stat().st_size == size:
                    snapshot = tracemalloc.Snapshot.load(str(path))
                    path.unlink()
                    return snapshot
            if time.monotonic() > deadline:
                raise TimeoutError(f"no snapshot at {path}")
            time.sleep(0.5)


# ---------------------------------------------------------------- the sessions
class Sessions:
    """Sessions opened from links and kept open (their clients keep reading)."""

    def __init__(self, port: int, link):
        self.port, self.link = port, link
        self.open: list[Client] = []
        self.errors: list[str] = []

    async def _one(self, k: int) -> None:
        tab = Client(f"http://127.0.0.1:{self.port}/", open_timeout=120)
        await tab.__aenter__()           # kept open until close_all, like an idle browser tab
        self.open.append(tab)
        run = await tab.run(self.link(k), timeout=300)
        self.errors += [f"session {k}: {p}" for p in run.problems()]

    async def grow_to(self, n: int, batch: int = 20) -> None:
        while len(self.open) < n:
            k0 = len(self.open)
            await asyncio.gather(*(self._one(k) for k in range(k0, min(n, k0 + batch))))

    async def close_all(self) -> None:
        for tab in self.open:
            await tab.__aexit__(None, None, None)
        self.open.clear()


def top_growth(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot, per: int,
               n: int = 12) -> list[str]:
    """The largest growths from ``before`` to ``after``, per ``per`` sessions, by line."""
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__),
              tracemalloc.Filter(False, "<frozen importlib._bootstrap*")]
    diff = after.filter_traces(ignore).compare_to(before.filter_traces(ignore), "traceback")
    total = sum(d.size_diff for d in diff)
    lines = [f"  Python's own allocations grew {total / 1e6:.1f} MB: "
             f"{total / per / 1e3:.0f} kB per session"]
    by_module: dict[str, int] = {}
    for d in diff:                   # by the innermost module of the app, Streamlit or a library
        mine = [f.filename for f in d.traceback if "site-packages" in f.filename
                or "/xattn/" in f.filename]
        name = mine[-1].split("site-packages/")[-1].split("/xattn/")[-1] if mine else "other"
        by_module[name] = by_module.get(name, 0) + d.size_diff
    top = sorted(by_module.items(), key=lambda kv: -kv[1])[:n]
    lines.append("  by module: " + ", ".join(f"{name} {size / per / 1e3:.1f} kB"
                                             for name, size in top))
    for d in sorted(diff, key=lambda d: -d.size_diff)[:n]:
        frames = [f for f in d.traceback if "site-packages" in f.filename
                  or "/xattn/" in f.filename or "app.py" in f.filename]
        where = " < ".join(f"{Path(f.filename).name}:{f.lineno}" for f in frames[-4:][::-1])
        lines.append(f"  {d.size_diff / per / 1e3:7.1f} kB/session  {d.count_diff / per:6.1f} "
                     f"blocks  {where}")
    return lines


WARM_WORDS = 64
WARM_LINK = ("seed={k}&heads=16&d_model=512&src=" + "+".join(f"w{i}" for i in range(WARM_WORDS))
             + "&tgt=" + "+".join(f"m{i}" for i in range(WARM_WORDS)))


async def warm_up(port: int, n: int, link: str) -> None:
    """Open ``n`` sessions of ``link`` (``{k}``: 1000 + their number), twenty at a time, and
    close each batch: the caches fill as after a day of classes."""
    for k0 in range(0, n, 20):
        batch = Sessions(port, lambda k, k0=k0: link.format(k=1000 + k0 + k))
        await batch.grow_to(min(20, n - k0))
        await batch.close_all()
        if batch.errors:
            print(f"warm-up errors: {len(batch.errors)}, first: {batch.errors[0]}")


async def measure(server, a) -> None:
    pid, traced = server.pid, server.trace
    if a.warm:
        await warm_up(server.port, a.warm, a.warm_link)
    sessions = Sessions(server.port, lambda k: a.link.format(k=k if a.distinct else k % 40))
    await sessions.grow_to(1)
    await sessions.close_all()
    await asyncio.sleep(2)
    base = server.take() if traced else None
    label = f"{a.warm} sessions of --warm-link" if a.warm else "start-up"
    print(f"| after {label} and one session | 0 | {rss_mb(pid):.0f} MB | |", flush=True)
    start, previous, opened = rss_mb(pid), base, 0
    for count in a.counts:
        t0 = time.perf_counter()
        await sessions.grow_to(count)
        await asyncio.sleep(5)
        rss = rss_mb(pid)
        print(f"| {count} sessions open ({time.perf_counter() - t0:.0f} s to open) | {count} | "
              f"{rss:.0f} MB | {(rss - start) / count * 1e3:.0f} kB a session over the start |",
              flush=True)
        if traced:          # growth per session since the previous count (caches full by then)
            snapshot = await asyncio.to_thread(server.take)
            print(f"  from {opened} to {count} sessions:")
            print("\n".join(top_growth(previous, snapshot, count - opened)), flush=True)
            previous = snapshot
        opened = count
    n = len(sessions.open)
    await sessions.close_all()
    t0 = time.monotonic()
    while True:
        waited = time.monotonic() - t0
        print(f"| {waited:.0f} s after closing all | 0 | {rss_mb(pid):.0f} MB | |", flush=True)
        if waited >= a.after:
            break
        await asyncio.sleep(min(10.0, a.after - waited))
    await sessions.grow_to(1)        # a new session's disconnect makes Streamlit reap the expired
    await sessions.close_all()
    await asyncio.sleep(5)
    print(f"| a new session opened and closed after that | 0 | {rss_mb(pid):.0f} MB | |",
          flush=True)
    server.trim()
    await asyncio.sleep(5)
    print(f"| then glibc's malloc_trim(0) in the server | 0 | {rss_mb(pid):.0f} MB | |",
          flush=True)
    if traced:
        print(f"  what {n} closed sessions left, per session, over start-up:")
        print("\n".join(top_growth(base, server.take(), n)), flush=True)
    if sessions.errors:
        print(f"errors: {len(sessions.errors)}, first: {sessions.errors[0]}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        serve(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", nargs="+", type=int, default=[300, 700])
    parser.add_argument("--after", type=float, default=150.0, help="seconds to watch after close")
    parser.add_argument("--link", default="seed={k}", help="query of session k ({k}: 0..39)")
    parser.add_argument("--distinct", action="store_true",
                        help="{k} counts every session: every link another setting")
    parser.add_argument("--warm", type=int, default=0,
                        help="sessions of --warm-link opened and closed first (full caches)")
    parser.add_argument("--warm-link", default=WARM_LINK, help="query of warm-up session k")
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--port", type=int)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--env", nargs="*", default=[], metavar="NAME=VALUE",
                        help="environment of the server, e.g. MALLOC_ARENA_MAX=2")
    parser.add_argument("--args", nargs=argparse.REMAINDER, default=[],
                        help="more `streamlit run` options, e.g. "
                             "--server.disconnectedSessionTTL 30")
    a = parser.parse_args()
    print(machine_line())
    env = dict(pair.split("=", 1) for pair in a.env)
    server = Server(Path(f"/tmp/xattn-sessions-{os.getpid()}"), a.trace, env,
                    port=a.port or free_port(), root=a.root, extra_args=tuple(a.args))
    print(f"links: ?{a.link}; server {'under tracemalloc' if a.trace else 'plain'} "
          f"{' '.join(a.env)} {' '.join(a.args)}")
    print("| moment | sessions open | server RSS | |\n|---|---:|---:|---|")
    with server:
        asyncio.run(measure(server, a))


if __name__ == "__main__":
    main()
