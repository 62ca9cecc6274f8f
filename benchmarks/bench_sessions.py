"""Memory per open session: the server's RSS with N sessions open from links, and after they close.

    python -m benchmarks.bench_sessions [--counts 300 700] [--after 150] [--trace] [--port P]

Starts ``streamlit run app.py`` (with ``--trace``: under ``tracemalloc``, 12 frames, far
slower), opens sessions from links the way a browser does (a websocket, a ``rerun_script`` for
``?seed=K``, K in 0..39 as in the load test; ``--link`` for another query) twenty at a time
until each count of ``--counts`` is open, keeps them open (each client keeps reading, as an idle
browser tab does), and reads the server's resident memory (VmRSS) at each count. Then it closes
every session and reads RSS again right away, and every 10 s for ``--after`` seconds
(Streamlit keeps up to 128 closed sessions for ``server.disconnectedSessionTTL``, 120 s by
default, in case their browser reconnects).

With ``--trace`` the server takes a ``tracemalloc`` snapshot on SIGUSR1 after start-up (one
session opened and closed), with every count open, and after the close; the largest growths
between them are printed per session, by the allocating line (Python's own allocations: what
Python holds, apart from memory the allocator keeps without handing it back to the system).

``python -m benchmarks.bench_sessions --serve-traced ARGS`` is the traced server itself
(``streamlit run ARGS`` under tracemalloc with the SIGUSR1 handler): started by ``--trace``.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from benchmarks.machine import machine_line
from devtools.browser import ROOT, StreamlitServer, free_port
from devtools.protocol import rss_mb

SNAPSHOT_ENV = "XATTN_SNAPSHOT"      # the traced server writes snapshots to $XATTN_SNAPSHOT.N


# ---------------------------------------------------------------- the traced server
def serve_traced(args: list[str]) -> None:
    """``streamlit run ARGS`` under tracemalloc; SIGUSR1 writes a snapshot."""
    tracemalloc.start(12)
    taken = [0]

    def dump(signum, frame) -> None:
        gc.collect()
        taken[0] += 1
        tracemalloc.take_snapshot().dump(f"{os.environ[SNAPSHOT_ENV]}.{taken[0]}")

    signal.signal(signal.SIGUSR1, dump)
    from streamlit.web.cli import main
    sys.argv = ["streamlit", "run", *args]
    main()


class TracedServer(StreamlitServer):
    """``StreamlitServer`` run through ``serve_traced``."""

    def __init__(self, snapshot: Path, **kwargs):
        super().__init__(**kwargs)
        self.snapshot, self.taken = snapshot, 0

    def start(self, timeout: float = 180.0) -> TracedServer:
        cmd = [sys.executable, "-m", "benchmarks.bench_sessions", "--serve-traced", self.script,
               "--server.port", str(self.port), "--server.address", "127.0.0.1",
               "--server.headless", "true", "--browser.gatherUsageStats", "false",
               "--server.fileWatcherType", "none", *self.extra_args]
        env = dict(os.environ, **{SNAPSHOT_ENV: str(self.snapshot)},
                   PYTHONPATH=os.pathsep.join([str(self.root), str(ROOT)]))
        self.proc = subprocess.Popen(cmd, cwd=self.root, env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        self._wait_healthy(timeout)
        return self

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
        self.open: list[tuple] = []            # (connection context, websocket, reader task)
        self.errors: list[str] = []

    async def _one(self, k: int) -> None:
        ctx = connect(f"ws://127.0.0.1:{self.port}/_stcore/stream", subprotocols=["streamlit"],
                      max_size=None, open_timeout=120, ping_interval=None)
        ws = await ctx.__aenter__()
        msg = BackMsg()
        msg.rerun_script.query_string = self.link(k)
        await ws.send(msg.SerializeToString())
        finished = asyncio.get_running_loop().create_future()

        async def read():
            async for raw in ws:
                fwd = ForwardMsg()
                fwd.ParseFromString(raw)
                if fwd.WhichOneof("type") == "script_finished" and not finished.done():
                    finished.set_result(fwd.script_finished)
                elif (fwd.WhichOneof("type") == "delta"
                      and fwd.delta.WhichOneof("type") == "new_element"
                      and fwd.delta.new_element.WhichOneof("type") == "exception"):
                    self.errors.append(fwd.delta.new_element.exception.message[:120])

        task = asyncio.create_task(read())
        try:
            await asyncio.wait_for(finished, 300)
        except TimeoutError:
            self.errors.append(f"session {k}: no script_finished in 300 s")
        self.open.append((ctx, ws, task))

    async def grow_to(self, n: int, batch: int = 20) -> None:
        while len(self.open) < n:
            k0 = len(self.open)
            await asyncio.gather(*(self._one(k) for k in range(k0, min(n, k0 + batch))))

    async def close_all(self) -> None:
        for ctx, _, task in self.open:
            task.cancel()
            await ctx.__aexit__(None, None, None)
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
    for d in sorted(diff, key=lambda d: -d.size_diff)[:n]:
        frames = [f for f in d.traceback if "site-packages" in f.filename
                  or "/xattn/" in f.filename or "app.py" in f.filename]
        where = " < ".join(f"{Path(f.filename).name}:{f.lineno}" for f in frames[-4:][::-1])
        lines.append(f"  {d.size_diff / per / 1e3:7.1f} kB/session  {d.count_diff / per:6.1f} "
                     f"blocks  {where}")
    return lines


async def measure(server, a) -> None:
    pid, traced = server.pid, isinstance(server, TracedServer)
    sessions = Sessions(server.port, lambda k: a.link.format(k=k % 40))
    await sessions.grow_to(1)
    await sessions.close_all()
    await asyncio.sleep(2)
    base = server.take() if traced else None
    print(f"| after start-up and one session | 0 | {rss_mb(pid):.0f} MB | |", flush=True)
    start = rss_mb(pid)
    for count in a.counts:
        t0 = time.perf_counter()
        await sessions.grow_to(count)
        await asyncio.sleep(5)
        rss = rss_mb(pid)
        print(f"| {count} sessions open ({time.perf_counter() - t0:.0f} s to open) | {count} | "
              f"{rss:.0f} MB | {(rss - start) / count * 1e3:.0f} kB a session over start-up |",
              flush=True)
        if traced:
            snapshot = await asyncio.to_thread(server.take)
            print("\n".join(top_growth(base, snapshot, count)), flush=True)
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
    if traced:
        print("\n".join(top_growth(base, server.take(), n)), flush=True)
    if sessions.errors:
        print(f"errors: {len(sessions.errors)}, first: {sessions.errors[0]}")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--serve-traced":
        serve_traced(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", nargs="+", type=int, default=[300, 700])
    parser.add_argument("--after", type=float, default=150.0, help="seconds to watch after close")
    parser.add_argument("--link", default="seed={k}", help="query of session k ({k}: 0..39)")
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--port", type=int)
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to serve")
    parser.add_argument("--args", nargs=argparse.REMAINDER, default=[],
                        help="more `streamlit run` options, e.g. "
                             "--server.disconnectedSessionTTL 30")
    a = parser.parse_args()
    print(machine_line())
    kwargs = dict(port=a.port or free_port(), root=a.root, extra_args=tuple(a.args))
    server = TracedServer(Path(f"/tmp/xattn-sessions-{os.getpid()}"), **kwargs) if a.trace \
        else StreamlitServer(**kwargs)
    print(f"links: ?{a.link}; server {'under tracemalloc' if a.trace else 'plain'} "
          f"{' '.join(a.args)}")
    print("| moment | sessions open | server RSS | |\n|---|---:|---:|---|")
    with server:
        asyncio.run(measure(server, a))


if __name__ == "__main__":
    main()
