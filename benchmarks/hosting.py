"""How big a class each way of hosting holds: the readiness check (devtools/ready.py) at
growing class sizes on two setups, with each server process's peak memory.

    python -m benchmarks.hosting --setup one-core --students 50 100 200 300
    python -m benchmarks.hosting --setup two-cores --students 200 500 1000

- ``one-core``: Streamlit Community Cloud's smallest app, as near as this machine comes: one
  ``streamlit run app.py`` with every thread pinned to CPU 0 (``taskset``), its memory
  watched against 690 MB, and the phones (this process) on CPU 1. Community Cloud may give
  less CPU than a whole core (its floor is 0.078 cores), so this is the most it could hold.
- ``two-cores``: ``deploy/serve.sh 2``, what the image runs on a 2-vCPU Space or a 2-core VM,
  the phones sharing the same two cores (as ``benchmarks/bench_room.py`` does).

Each class: ``--steps`` steps (3), answers, *Reveal*, *Next*, as the readiness check walks
them; its table and verdict are the check's (targets from README: *Next* / *Reveal* →
phone p95 ≤ 0.5 s up to 200 phones, ≤ 1 s beyond, every answer counted, a first load
≤ 150 kB). The phones share this machine, so a join's proof of work is 4 × 2^10 hashes
(``XATTN_LIMITS``), not a phone's 4 × 2^15: the server's part of a join is the same.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.machine import machine_line
from benchmarks.process_stats import cpu_pressure_seconds, cpu_seconds, pct, rss_mb
from devtools.browser import StreamlitServer
from devtools.lecture_hall import LectureHall
from devtools.ready import check
from devtools.ready_report import Report, move_target, verdict

ROOT = Path(__file__).resolve().parent.parent
BUDGET_MB = {"one-core": 690.0, "two-cores": 600.0}   # Community Cloud's least; our budget
LIMITS = "join_work_bits=10,new_rooms=1000/3600,new_students=100000/600"


class Peak(threading.Thread):
    """The largest RSS of each process in ``pids`` since the last `take`."""

    def __init__(self, pids: dict[str, int]):
        super().__init__(daemon=True)
        self.pids, self.top, self.halt = pids, dict.fromkeys(pids, 0.0), threading.Event()

    def run(self) -> None:
        while not self.halt.wait(0.25):
            for name, pid in self.pids.items():
                with contextlib.suppress(OSError, RuntimeError):
                    self.top[name] = max(self.top[name], rss_mb(pid))

    def take(self) -> dict[str, float]:
        top, self.top = self.top, dict.fromkeys(self.pids, 0.0)
        return top


@contextlib.contextmanager
def serving(setup: str, folder: Path):
    """The setup's server: (its URL, {process: pid})."""
    env = {"XATTN_CLASS_STORE": str(folder / "classes.sqlite3"), "XATTN_REDIS_URL": "",
           "XATTN_LIMITS": LIMITS}
    if setup == "one-core":
        with StreamlitServer(env=env, log=ROOT / "test-artifacts" / "hosting-one-core.log") as s:
            subprocess.run(["taskset", "-a", "-p", "-c", "0", str(s.pid)], check=True,
                           capture_output=True)
            os.sched_setaffinity(0, {1})          # the phones: the other core
            yield s.url, {"streamlit": s.pid}
        return
    with LectureHall(processes=2, env=env) as hall:
        yield hall.url, {name: pid for name, (pid, _) in hall.backends.items()}


def row(n: int, r: Report, peak: dict[str, float], cpu: float, psi: float | None) -> str:
    holds, line = verdict(r)

    def p(values: list[float], q: int) -> str:
        return f"{pct(values, q):.2f}" if values else "–"
    return (f"| {n} | {r.joined} | {p(r.next_s, 50)} / {p(r.next_s, 95)} s | "
            f"{p(r.reveal_s, 50)} / {p(r.reveal_s, 95)} s | {r.counted} of {r.saved} | "
            f"{sum(r.first_load) / max(1, len(r.first_load)):.1f} kB | "
            + ", ".join(f"{mb:.0f}" for mb in peak.values()) + f" MB | {cpu:.1f} s | "
            + (f"{psi:.0%}" if psi is not None else "–") + f" | {'holds' if holds else line} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup", choices=sorted(BUDGET_MB), required=True)
    ap.add_argument("--students", type=int, nargs="+", default=[50, 100, 200])
    ap.add_argument("--steps", type=int, default=3)
    a = ap.parse_args()
    print(f"Machine: {machine_line()}\n\n`python -m benchmarks.hosting --setup {a.setup} "
          f"--students {' '.join(map(str, a.students))}`; targets: Next / Reveal → phone p95 "
          f"≤ {move_target(200):g} s up to 200 phones, ≤ {move_target(201):g} s beyond; every "
          f"answer counted; first load ≤ 150 kB; memory ≤ {BUDGET_MB[a.setup]:g} MB a "
          "process\n")
    print("| phones | joined | Next → phone p50 / p95 | Reveal → phone p50 / p95 | counted | "
          "first load | peak RSS a process | server CPU | CPU pressure | verdict |")
    print("|---:|---:|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="xattn-hosting-") as tmp, \
            serving(a.setup, Path(tmp)) as (url, pids):
        peak = Peak(pids)
        peak.start()
        for n in a.students:
            peak.take()
            cpu0 = sum(cpu_seconds(pid) for pid in pids.values())
            psi0, t0 = cpu_pressure_seconds(), time.monotonic()
            r = asyncio.run(check(url, n, a.steps, say=lambda _: None))
            psi1 = cpu_pressure_seconds()
            psi = None if psi0 is None else (psi1 - psi0) / (time.monotonic() - t0)
            cpu = sum(cpu_seconds(pid) for pid in pids.values()) - cpu0
            print(row(n, r, peak.take(), cpu, psi), flush=True)
            for problem in r.problems[:3]:
                print(f"  problem: {problem}", file=sys.stderr)
            time.sleep(5)                         # the class's streams close, memory settles
    print(f"\nLoad average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
