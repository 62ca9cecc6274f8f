"""Classroom load test: N students on one `streamlit run app.py`, each changing controls.

    python -m benchmarks.load_test [--sessions 30] [--duration 60] [--settle 20]

Starts the app on a free 127.0.0.1 port, opens N sessions that each load the page and then,
every 2 to 4 seconds for ``--duration`` seconds, change one control (number of heads, seed or
mask), and reports:

- p50 / p95 / max time from a control change to the updated figure: from sending the rerun to
  receiving ``script_finished``, checking that the ``per_head`` Plotly element of that run
  arrived with one heatmap per head asked for;
- errors: exception elements, error alerts, URL notices, missing or wrong figures, timeouts,
  closed connections;
- the server's resident memory (VmRSS from /proc) before, at peak and after the sessions close.

Targets: no errors, p95 < 2 s with 30 sessions, memory after within 50 MB of before.

Why protocol clients and not 30 browsers: on a 2-core machine, 30 headless Chromium tabs would
need several GB and both cores for layout and WebGL-less Plotly drawing, so the test would
measure the browsers, not the server. Each client here speaks Streamlit's own websocket protocol
(``/_stcore/stream``, ``BackMsg``/``ForwardMsg`` protobufs from ``streamlit.proto``), like the
frontend does: it sends ``rerun_script`` with the page's query string and the changed widget's
value keyed by the widget id taken from the previous run's elements, and reads every message the
server sends (each run's deltas are full elements: the browser's message cache is not used, so
this is the server's worst case). What it leaves out is the browser's own drawing time (about
0.3 to 2 s for Plotly, on the student's machine, not the server's). The clients use the
``websockets`` package, a dependency of Streamlit itself. Everything stays on 127.0.0.1 and the
run stops by itself: each wait has a timeout.
"""

from __future__ import annotations

import argparse
import asyncio
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
from urllib.parse import urlencode

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from devtools.browser import StreamlitServer

ROOT = Path(__file__).resolve().parent.parent

HEADS = (1, 2, 4, 8, 16)          # the divisors of the default d_model 32, up to 16
MASKS = ("none", "wait-k", "window")
SEEDS = 40                        # seeds 0..39: many distinct settings, some repeated (--seeds)
DEFAULTS = {"heads": 4, "seed": 0, "mask": "none"}
KEYS = ("heads", "seed", "mask")
RUN_TIMEOUT = 60.0


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


class MemorySampler(threading.Thread):
    def __init__(self, pid: int, every: float = 0.25):
        super().__init__(daemon=True)
        self.pid, self.every, self.samples = pid, every, []
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            self.samples.append((time.monotonic(), rss_mb(self.pid)))
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
    errors: list[str] = field(default_factory=list)
    seen: set = field(default_factory=set)

    def merge(self, other: Stats) -> None:
        for name in ("latencies", "fresh", "repeat", "loads", "errors"):
            getattr(self, name).extend(getattr(other, name))
        self.seen |= other.seen


class Session:
    """One student: a websocket speaking BackMsg/ForwardMsg, one run at a time."""

    def __init__(self, n: int, port: int, stats: Stats, rng: random.Random, seeds: int = SEEDS):
        self.n, self.port, self.stats, self.rng, self.seeds = n, port, stats, rng, seeds
        self.values = dict(DEFAULTS)
        self.ids: dict[str, str] = {}
        self.page_hash = ""
        self._done: asyncio.Future | None = None
        self._heatmaps: int | None = None
        self._crosses: bool | None = None
        self._config = ""
        self._problems: list[str] = []

    # -- receiving ---------------------------------------------------------------------------
    async def _read(self, ws) -> None:
        async for raw in ws:
            msg = ForwardMsg()
            msg.ParseFromString(raw)
            kind = msg.WhichOneof("type")
            if kind == "new_session":
                self.page_hash = msg.new_session.main_script_hash
            elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
                self._element(msg.delta.new_element)
            elif kind == "script_finished" and self._done and not self._done.done():
                if msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    self._done.set_result(msg.script_finished)
            elif kind == "ref_hash":
                self._problems.append("unexpected ref_hash (cached message)")

    def _element(self, el) -> None:
        kind = el.WhichOneof("type")
        proto = getattr(el, kind)
        wid = getattr(proto, "id", "")
        for key in KEYS:
            if wid.endswith(f"-{key}"):
                self.ids[key] = wid
        if kind == "plotly_chart" and wid.endswith("-per_head"):
            traces = json.loads(proto.spec)["data"]
            self._heatmaps = sum(t.get("type") == "heatmap" for t in traces)
            self._crosses = any(t.get("type") == "scatter" for t in traces)
            self._config = proto.config
        elif kind == "exception":
            self._problems.append(f"exception: {proto.type}: {proto.message[:120]}")
        elif kind == "alert" and proto.format in (Alert.ERROR, Alert.WARNING):
            self._problems.append(f"alert: {proto.body[:120]}")

    # -- sending -----------------------------------------------------------------------------
    def _back_msg(self) -> bytes:
        msg = BackMsg()
        state = msg.rerun_script
        state.page_script_hash = self.page_hash
        state.query_string = urlencode({k: v for k, v in self.values.items()
                                        if v != DEFAULTS[k]})
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

    async def _rerun(self, ws) -> float | None:
        self._done = asyncio.get_running_loop().create_future()
        self._heatmaps, self._crosses, self._config, self._problems = None, None, "", []
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
        if self._heatmaps != want:
            self._problems.append(f"per_head figure: {self._heatmaps} heatmaps, expected {want}")
        elif self._crosses != (self.values["mask"] != "none"):
            self._problems.append(f"per_head figure: mask crosses {self._crosses}")
        elif "-seed" in self._config and f"-seed{self.values['seed']}-" not in self._config:
            self._problems.append("per_head figure: not drawn with the seed asked for")
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

    async def run(self, start_at: float, stop_at: float, pause=(2.0, 4.0)) -> None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        try:
            async with connect(f"ws://127.0.0.1:{self.port}/_stcore/stream",
                               subprotocols=["streamlit"], max_size=None, open_timeout=30) as ws:
                reader = asyncio.create_task(self._read(ws))
                load = await self._rerun(ws)
                if load is not None:
                    self.stats.loads.append(load)
                while True:
                    await asyncio.sleep(self.rng.uniform(*pause))
                    if time.monotonic() >= stop_at or reader.done():
                        break
                    self._change()
                    settings = tuple(self.values.items())
                    fresh = settings not in self.stats.seen
                    self.stats.seen.add(settings)
                    took = await self._rerun(ws)
                    if took is not None:
                        self.stats.latencies.append(took)
                        (self.stats.fresh if fresh else self.stats.repeat).append(took)
                if reader.done() and reader.exception():
                    self.stats.errors.append(f"session {self.n}: {reader.exception()!r}")
                reader.cancel()
        except Exception as err:  # a refused or dropped connection is an error to report
            self.stats.errors.append(f"session {self.n}: {type(err).__name__}: {err}")


async def run_sessions(port: int, n: int, duration: float, ramp: float, seed: int,
                       seen: set | None = None, seeds: int = SEEDS) -> Stats:
    stats = Stats(seen=seen if seen is not None else set())
    t0 = time.monotonic()
    sessions = [Session(i, port, stats, random.Random(seed * 1000 + i), seeds)
                for i in range(n)]
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


def print_profile(path: Path, top: int = 25) -> None:
    """Inclusive share of the server's CPU samples per function, from py-spy's collapsed
    stacks ("frame;frame;... count"), for the frames of the app, Streamlit and Plotly."""
    inclusive: dict[str, int] = {}
    leaf: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        total += n
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        for f in set(frames):
            inclusive[f] = inclusive.get(f, 0) + n
        leaf[frames[-1]] = leaf.get(frames[-1], 0) + n
    if not total:
        print("profile: no samples")
        return
    interesting = ("xattn", "app.py", "streamlit/elements", "streamlit/runtime", "plotly",
                   "numpy", "json", "protobuf", "websockets", "uvicorn", "starlette")
    print(f"\nServer CPU profile ({total} samples, py-spy): inclusive share per function")
    print("\n| share | function |\n|---|---|")
    ranked = sorted(inclusive.items(), key=lambda kv: -kv[1])
    shown = [(f, n) for f, n in ranked if any(k in f for k in interesting)][:top]
    for f, n in shown:
        print(f"| {100 * n / total:.0f} % | `{f[:110]}` |")
    print("\nTop self time:")
    for f, n in sorted(leaf.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {100 * n / total:4.1f} %  {f[:120]}")


def main() -> int:
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
    ap.add_argument("--profile", type=Path, metavar="FILE",
                    help="sample the server with py-spy (pip install py-spy) during the sessions "
                         "and write its collapsed stacks to FILE; prints where the time goes")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="a Streamlit config option for the server, e.g. "
                         "runner.postScriptGC=false (repeatable)")
    a = ap.parse_args()
    extra = tuple(arg for opt in a.option for arg in (f"--{opt.partition('=')[0]}",
                                                      opt.partition("=")[2]))
    if a.profile and not shutil.which("py-spy"):
        ap.error("--profile needs py-spy on PATH (pip install py-spy)")

    log = ROOT / "test-artifacts" / "load-test-server.log"
    load_before = os.getloadavg()[0]
    stats = Stats()
    after_waves: list[tuple[float, float]] = []      # RSS 5 s after close, at the end of settle
    with StreamlitServer(log=log, extra_args=extra) as server:
        pid = server.pid
        rss_start = rss_mb(pid)
        # warm-up: one session imports numpy/plotly and the app's modules in the server
        asyncio.run(run_sessions(server.port, 1, 5.0, 0.0, seed=a.seed + 99))
        rss_before = rss_mb(pid)
        sampler = MemorySampler(pid)
        sampler.start()
        spy = None
        if a.profile:
            spy = subprocess.Popen(["py-spy", "record", "--pid", str(pid), "--format", "raw",
                                    "--output", str(a.profile), "--rate", "50", "--nonblocking",
                                    "--duration", str(int(a.duration + a.ramp))],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        wall = server_cpu = client_cpu = 0.0
        closed = []
        for wave in range(a.waves):
            cpu0, client_cpu0, wall0 = cpu_seconds(pid), time.process_time(), time.monotonic()
            wave_stats = asyncio.run(run_sessions(server.port, a.sessions, a.duration, a.ramp,
                                                  a.seed + 7919 * wave, stats.seen, a.seeds))
            wall += time.monotonic() - wall0
            server_cpu += cpu_seconds(pid) - cpu0
            client_cpu += time.process_time() - client_cpu0
            stats.merge(wave_stats)
            closed.append(time.monotonic())
            if spy is not None:
                spy.wait(timeout=60)
                spy = None
            # after: every websocket is closed; watch the server release what sessions held
            deadline = closed[-1] + a.settle
            while time.monotonic() < deadline:
                time.sleep(0.25)
            after = [r for t, r in sampler.samples if t > closed[-1]] or [rss_mb(pid)]
            after_5 = next((r for t, r in sampler.samples if t >= closed[-1] + 5), after[-1])
            after_waves.append((after_5, after[-1]))
        sampler.stop()
        rss_peak = max(r for _, r in sampler.samples)
        rss_after = after_waves[-1][1]

    changes = len(stats.latencies)
    ok_p95 = pct(stats.latencies, 95) < 2.0
    ok_mem = rss_after - rss_before <= 50
    waves = f" × {a.waves} waves" if a.waves > 1 else ""
    after_text = "; ".join(f"{x5:.0f} / {xe:.0f} MB (+{xe - rss_before:.0f})"
                           for x5, xe in after_waves)
    rows = [
        ("sessions × duration", f"{a.sessions} × {a.duration:.0f} s{waves} (joined over "
         f"{a.ramp:.0f} s, a change every 2–4 s)", ""),
        ("server options", " ".join(a.option) or "defaults (.streamlit/config.toml)", ""),
        ("machine", f"{os.cpu_count()} CPUs, load average {load_before:.1f} before the run", ""),
        ("control changes measured", f"{changes} ({len(stats.fresh)} new settings, "
         f"{len(stats.repeat)} repeated)", ""),
        ("change → figure, p50 / p95 / max", fmt_s(stats.latencies),
         "✅" if ok_p95 else "❌ p95 ≥ 2 s"),
        ("… settings never asked before (cache miss)", fmt_s(stats.fresh), ""),
        ("… settings asked before (cache hit)", fmt_s(stats.repeat), ""),
        ("page load (first run), p50 / p95 / max", fmt_s(stats.loads), ""),
        ("errors", str(len(stats.errors)), "✅" if not stats.errors else "❌"),
        ("server RSS at start / after warm-up (before)", f"{rss_start:.0f} / {rss_before:.0f} MB",
         ""),
        ("server RSS peak during sessions", f"{rss_peak:.0f} MB (+{rss_peak - rss_before:.0f})",
         ""),
        (f"server RSS 5 s / {a.settle:.0f} s after close" + (" (each wave)" if waves else ""),
         after_text, "✅" if ok_mem else "❌ > 50 MB above before"),
        ("server CPU during sessions", f"{server_cpu:.1f} s in {wall:.0f} s "
         f"({100 * server_cpu / wall:.0f} % of one core)", ""),
        ("load generator CPU", f"{client_cpu:.1f} s ({100 * client_cpu / wall:.0f} % of one core)",
         ""),
    ]
    print("\n| measure | value | target |\n|---|---|---|")
    for name, value, verdict in rows:
        print(f"| {name} | {value} | {verdict} |")
    if a.profile:
        print_profile(a.profile)
    for e in stats.errors[:20]:
        print("ERROR:", e)
    if len(stats.errors) > 20:
        print(f"... and {len(stats.errors) - 20} more errors")
    return 0 if ok_p95 and ok_mem and not stats.errors else 1


if __name__ == "__main__":
    sys.exit(main())
