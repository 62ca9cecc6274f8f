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
- per session, like a browser (``devtools.protocol.Client``): ``GET /`` and the health check
  first, keeping the cookies they set (HAProxy's affinity cookie ``XATTN_SERVER``, Streamlit's
  XSRF cookie) and sending them on the websocket and every later request; which process held
  the session (HAProxy's ``X-Xattn-Server`` header on the websocket handshake), and how the
  sessions spread over the processes;
- one CSV download per session after its first change, the way the frontend does it: an HTTP
  GET of the button's ``/media/<id>.csv`` URL with the session's cookies. (For large settings
  the app makes the file on click, Streamlit's deferred download: the client first asks the
  session's process over the websocket to run the callable, and gets the URL back.) The file
  exists only in that process: without affinity the GET can reach another one and fail (404).
  Failed downloads are counted apart from errors.

Targets: no errors, no failed downloads, p95 < 2 s with 30 sessions, memory after within 50 MB
of before (each process).

The clients send the changed widget's value keyed by the widget id taken from the previous
run's elements, and read every message (the browser's message cache is off, so this is the
server's worst case, unless ``--cache-messages``: the clients then keep large messages and
advertise their hashes, and the server answers an unchanged element with a reference). What
they leave out is the browser's own drawing time (about 0.3 to 2 s for Plotly, on the
student's machine, not the server's). Everything stays on 127.0.0.1 (unless ``--url``) and the
run stops by itself: each wait has a timeout.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.machine import machine_line
from benchmarks.process_stats import (
    MemorySampler,
    cpu_pressure_seconds,
    cpu_seconds,
    fmt_s,
    pct,
    runqueue_wait_seconds,
)
from benchmarks.pyspy import PROFILE_RATE, print_profile
from benchmarks.students import SEEDS, Stats, run_sessions
from devtools.browser import StreamlitServer
from devtools.lecture_hall import LectureHall, haproxy_missing
from devtools.protocol import rss_mb

__all__ = ["main"]

ROOT = Path(__file__).resolve().parent.parent

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
