"""Sixty students over thirty-one new training settings at once: with and without the queue.

    python -m benchmarks.bench_training_queue [--compare REF ...] [--trainers 1 2]
                                              [--sessions 60] [--ramp 5] [--port PORT]

For each version (commits of ``--compare`` in temporary worktrees, then this working tree
unless ``--no-working-tree``) and each ``XATTN_TRAINERS`` value of ``--trainers`` (a commit
without the queue runs once), a fresh ``streamlit run app.py`` (nothing trained yet), then
``--sessions`` protocol clients (``devtools.protocol.Client``: one websocket each, a browser's
``rerun_script`` for a link) open ``?weights=trained&tr_heads=H&tr_steps=S&tr_seed=K`` within
``--ramp`` seconds. The 31 settings: twenty of 8 heads and 400 steps (seeds 1-20) and eleven
small ones (1, 2 or 4 heads, 25-200 steps); session i asks for setting i mod 31, so 29 settings
are asked for twice, and the second student should join the first one's run.

Meanwhile ``--others`` students on random weights open a new link (``?seed=K``, a new seed
each time) every second, as other students clicking would, until the class is served.

Printed per run: time to first figure (link opened to the script's end, when the page's
charts have arrived) p50 / p95 / max, for every session and for the 8-head 400-step ones, and
the same counted in the server's CPU seconds (how much CPU the server had used when that page
finished: the machine's other load, which varies, drops out); trainings at once (the server's
threads that used CPU in each 1-second window, its main thread excluded: each training is one
script thread); the most "n ahead of you" a page showed; the other students' page loads p50 /
p95; the server's CPU time and the cores it used on average; the cores every other process on
the machine used meanwhile; errors. ``--repeat N`` runs every variant N times, interleaved.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import statistics
import threading
import time
from pathlib import Path

from benchmarks.checkouts import checkouts
from benchmarks.machine import machine_line
from benchmarks.process_stats import pct
from devtools.browser import ROOT, StreamlitServer, free_port
from devtools.protocol import Client

BIG = [(8, 400, seed) for seed in range(1, 21)]
SMALL = [(h, s, 20 + k) for k, (h, s) in enumerate(
    [(1, 25), (1, 50), (1, 100), (2, 50), (2, 100), (2, 200), (4, 25), (4, 50), (4, 100),
     (4, 200), (2, 25)], start=1)]
SETTINGS = BIG + SMALL              # 31
AHEAD = re.compile(r"(\d+) ahead of you")


def cpu_seconds(pid: int, tid: int | None = None) -> float:
    path = f"/proc/{pid}/task/{tid}/stat" if tid else f"/proc/{pid}/stat"
    with open(path) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Busy(threading.Thread):
    """Every ``window`` seconds: how many of the server's threads (its main thread excluded)
    used at least ``least`` CPU seconds in it. A training thread does, even when thirty share
    the GIL; a page waiting in the queue (a short update every 2 s) or an ordinary page load
    (tens of milliseconds) does not."""

    def __init__(self, pid: int, window: float = 5.0, least: float = 0.1):
        super().__init__(daemon=True)
        self.pid, self.window, self.least = pid, window, least
        self.counts, self._halt = [], threading.Event()

    def _threads(self) -> dict[int, float]:
        out = {}
        for tid in os.listdir(f"/proc/{self.pid}/task"):
            if int(tid) != self.pid:
                try:
                    out[int(tid)] = cpu_seconds(self.pid, int(tid))
                except (OSError, IndexError):
                    continue                              # a thread that just ended
        return out

    def run(self) -> None:
        before = self._threads()
        while not self._halt.wait(self.window):
            now = self._threads()
            self.counts.append(sum(1 for tid, t in now.items()
                                   if t - before.get(tid, 0.0) >= self.least))
            before = now

    def stop(self) -> None:
        self._halt.set()
        self.join()


async def open_link(port: int, query: str, timeout: float) -> tuple[float, int, list[str]]:
    """Seconds from connecting to the script's end, the most "n ahead" shown, problems."""
    start, ahead, problems = time.perf_counter(), 0, []
    try:
        async with Client(f"http://127.0.0.1:{port}/", open_timeout=timeout) as tab:
            run = await tab.run(query, timeout=timeout)
        shown = [int(m[1]) for p in run.of("progress") if (m := AHEAD.search(p.text))]
        ahead = max(shown, default=0)
        problems += run.problems() + [a.body[:160] for a in run.of("alert") if a.format == 1]
    except Exception as err:  # noqa: BLE001 - a dropped or slow connection is a result
        problems.append(f"{type(err).__name__}: {err}")
    return time.perf_counter() - start, ahead, problems


async def class_of(port: int, pid: int, a) -> tuple[list[tuple], list[float]]:
    """The training students' rows ((heads, steps), seconds, server CPU s, most ahead,
    problems), and the other students' page loads."""
    rng = random.Random(0)
    starts = sorted(rng.uniform(0, a.ramp) for _ in range(a.sessions))
    t0, cpu0, served = time.monotonic(), cpu_seconds(pid), asyncio.Event()

    async def student(i: int):
        await asyncio.sleep(max(0.0, t0 + starts[i] - time.monotonic()))
        heads, steps, seed = SETTINGS[i % len(SETTINGS)]
        query = f"weights=trained&tr_heads={heads}&tr_steps={steps}&tr_seed={seed}"
        took, ahead, problems = await open_link(port, query, a.timeout)
        return (heads, steps), took, cpu_seconds(pid) - cpu0, ahead, problems

    async def other(i: int, loads: list[float]):
        k = 0
        while not served.is_set():
            k += 1
            took, _, problems = await open_link(port, f"seed={1000 * i + k}", a.timeout)
            if not problems:
                loads.append(took)
            await asyncio.sleep(1.0)

    async def everyone():
        try:
            return await asyncio.gather(*(student(i) for i in range(a.sessions)))
        finally:
            served.set()

    loads: list[float] = []
    rows, *_ = await asyncio.gather(everyone(), *(other(i, loads) for i in range(a.others)))
    return rows, loads


def machine_busy() -> float:
    """CPU seconds every process of the machine used so far (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")   # not idle, iowait


def seconds(values: list[float]) -> str:
    return f"{pct(values, 50):.1f} / {pct(values, 95):.1f} / {max(values):.1f} s"


def run_one(root: Path, trainers: int, a) -> str:
    os.environ["XATTN_TRAINERS"] = str(trainers)
    with StreamlitServer(port=a.port or free_port(), root=root) as server:
        busy = Busy(server.pid)
        cpu0, wall0, machine0 = cpu_seconds(server.pid), time.perf_counter(), machine_busy()
        busy.start()
        rows, loads = asyncio.run(class_of(server.port, server.pid, a))
        busy.stop()
        cpu, wall = cpu_seconds(server.pid) - cpu0, time.perf_counter() - wall0
        others_cpu = machine_busy() - machine0 - cpu
    every = [r[1] for r in rows]
    big = [r[1] for r in rows if r[0] == (8, 400)]
    every_cpu = [r[2] for r in rows]
    active = [c for c in busy.counts if c] or [0]
    errors = sum(bool(r[4]) for r in rows)
    first = next((r[4][0] for r in rows if r[4]), "")
    return (f"{seconds(every)} | {seconds(big)} | {seconds(every_cpu)} | {max(active)} (median "
            f"{statistics.median(active):.0f}) | {max(r[3] for r in rows)} | "
            f"{seconds(loads) if loads else 'n/a'} | {cpu:.0f} s, {cpu / wall:.2f} cores over "
            f"{wall:.0f} s | {others_cpu / wall:.2f} cores | {errors}"
            + (f" ({first})" if first else ""))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compare", nargs="+", default=[], metavar="REF")
    parser.add_argument("--no-working-tree", action="store_true")
    parser.add_argument("--trainers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--sessions", type=int, default=60)
    parser.add_argument("--ramp", type=float, default=5.0)
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--others", type=int, default=5,
                        help="students on random weights opening a link every second")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--port", type=int)
    a = parser.parse_args()
    print(machine_line())
    print(f"{a.sessions} sessions over {len(SETTINGS)} settings, opened within {a.ramp:.0f} s")
    print(f"{a.others} other students open a link every second meanwhile")
    print("| version | XATTN_TRAINERS | first figure p50 / p95 / max (all) | same, 8 heads × 400 "
          "steps | first figure in server CPU s (all) | trainings at once: max (median) | most "
          "'ahead of you' | other students' page loads p50 / p95 / max | server CPU | other "
          "processes' CPU | errors |")
    print("|---|---:|---|---|---|---|---:|---|---|---|---:|")
    with checkouts(a.compare) as roots:
        variants = []
        for version, root in roots.items():
            if a.no_working_tree and root == ROOT:
                continue
            runs = [root / f for f in ("xattn/ui/weights/training_runs.py",
                                       "xattn/ui/training_runs.py", "xattn/ui/_store.py",
                                       "xattn/live/training.py")]
            queued = any("XATTN_TRAINERS" in f.read_text() for f in runs if f.exists())
            variants += [(version, root, t, queued) for t in
                         (a.trainers if queued else a.trainers[:1])]
        for _ in range(a.repeat):
            for version, root, trainers, queued in variants:
                print(f"| {version} | {trainers if queued else 'no queue'} | "
                      f"{run_one(root, trainers, a)} |", flush=True)


if __name__ == "__main__":
    main()
