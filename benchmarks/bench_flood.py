"""One student taps a hundred times in a second: is the rest of the room slowed down, and does
the last tap win?

    python -m benchmarks.bench_flood [--students 30] [--taps 100] [--rounds 3]
                                     [--out benchmarks/results/flood.md]

One Streamlit process (``devtools.browser.StreamlitServer``) with its class store on a
temporary SQLite file. A host opens ``?class=new``; ``--students`` students and one flooder
join it as protocol clients (``benchmarks/room_people.py``: the join screen's cookie, then the
page; the relay reruns their pages, nobody polls). Then, ``--rounds`` times and alternating:
the students answer lesson step 1, one after another at a class's pace (one tap every
``--gap`` seconds), while

- *quiet*: nobody else does anything;
- *flood*: the flooder sends ``--taps`` changes of its pick in one second (a tap every
  ``1/taps`` s, each a fragment run as the browser sends it), starting with the class's first.

Between rounds the store asks again (a new round: every page asks afresh). Measured per
condition: each other student's tap -> their own receipt saying *Saved*, the server's CPU per
second, the flooder's answer in the store (the last tap: its receipt and the store must agree),
and the store's counts against the answers cast. Server and clients share this 2-core machine,
whose load is printed with the results.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.machine import machine_line
from benchmarks.process_stats import cpu_seconds, pct
from benchmarks.room_people import Host, Student
from devtools.browser import StreamlitServer

ROOT = Path(__file__).resolve().parent.parent
WAIT = 120.0


def say(text: str) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


async def flood(tab: Student, taps: int) -> int:
    """``taps`` changes of the pick in one second; the option the store must end up with."""
    n = len(tab.prediction[2].options)
    pick = None
    for k in range(taps):
        pick = await tab.tap(lambda _w, k=k: k % n)
        await asyncio.sleep(1.0 / taps)
    await tab.saved(pick)                   # the receipt settles on the last tap
    return pick.option


async def one_round(a, store, host: Host, students, flooder, condition: str, round_: int,
                    pid: int, out: dict, problems: list) -> None:
    everyone = [*students, flooder]
    ok = await _until(lambda: all(s.prediction and s.prediction[:2] == (1, round_)
                                  for s in everyone), WAIT)
    if not ok:
        problems.append(f"{condition}, round {round_}: not every page asked afresh")
        return
    n = len(flooder.prediction[2].options)
    say(f"round {round_}, {condition}: answering")
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    storm = asyncio.create_task(flood(flooder, a.taps)) if condition == "flood" else None
    jobs = []
    for i, s in enumerate(students):
        jobs.append(asyncio.create_task(s.answer(lambda _w, i=i: i % n)))
        await asyncio.sleep(a.gap)
    picks = await asyncio.gather(*jobs)
    out["change"] += [p.saved - p.sent for p in picks]
    want = await storm if storm is not None else None
    out["cpu"].append((cpu_seconds(pid) - cpu0) / (time.monotonic() - t0))
    expected = [sum(1 for i in range(len(students)) if i % n == k) + (k == want)
                for k in range(n)]
    counted = await _until(lambda: list(store.room_view(host.code).counts.values())
                           == expected, 30)
    if not counted:
        problems.append(f"{condition}, round {round_}: counted "
                        f"{list(store.room_view(host.code).counts.values())}, expected "
                        f"{expected}")
    if want is not None:
        mine = store.my_answer(host.code, 1, flooder.student_id)
        out["flooder"].append(float(counted and mine == want))
    say(f"round {round_}, {condition}: counted {'as expected' if counted else 'WRONG'}")
    store.ask_again(host.code, host.key, 1)           # a new round: every page asks afresh


async def _until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


async def run(a, url: str, pid: int, store_path: Path) -> dict:
    from xattn.classroom.sqlite_store import SQLiteStore

    host = Host(url, WAIT)
    await host.open()
    students = [Student(i, url, host.code, WAIT) for i in range(a.students)]
    flooder = Student(a.students, url, host.code, WAIT)
    for s in [*students, flooder]:
        await s.join()
    say(f"{a.students + 1} pages open in room {host.code}")
    results = {c: {"change": [], "cpu": [], "flooder": []} for c in ("quiet", "flood")}
    problems: list[str] = []
    store = SQLiteStore(store_path)
    for r in range(a.rounds):
        for k, condition in enumerate(("quiet", "flood") if r % 2 == 0 else ("flood", "quiet")):
            await one_round(a, store, host, students, flooder, condition, 2 * r + k + 1, pid,
                            results[condition], problems)
    store.close()
    for s in [*students, flooder]:
        problems += s.problems
        await s.leave()
    await host.close()
    return {"results": results, "problems": problems + host.problems}


def report(out: dict, a, load: tuple[float, float]) -> str:
    lines = [f"# One student taps {a.taps} times in a second (`python -m benchmarks.bench_flood`)",
             "", machine_line(), f"Load average {load[0]:.1f} before, {load[1]:.1f} after; "
             f"{a.students} students, a flooder and a host on one Streamlit process, "
             f"{a.rounds} rounds a condition, one answer every {a.gap} s.", "",
             "| condition | answers | tap -> own receipt Saved, p50 | p95 | max | "
             "server CPU (cores) |", "|---|---:|---:|---:|---:|---:|"]
    for c, r in out["results"].items():
        ch = r["change"]
        cpu = sum(r["cpu"]) / len(r["cpu"]) if r["cpu"] else float("nan")
        lines.append(f"| {c} | {len(ch)} | {pct(ch, 50):.3f} s | {pct(ch, 95):.3f} s | "
                     f"{max(ch, default=float('nan')):.3f} s | {cpu:.2f} |")
    kept = out["results"]["flood"]["flooder"]
    lines += ["", f"The flooder's {a.taps} taps counted as one answer, its last, in "
              f"{int(sum(kept))} of {len(kept)} flood rounds (the store's counts equal the "
              "answers cast, the flooder's last tap among them, and its receipt said so).",
              "", "Problems: " + ("; ".join(out["problems"]) or "none") + "."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--taps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gap", type=float, default=0.1, help="seconds between two answers")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="xattn-flood-") as tmp:
        store_path = Path(tmp) / "classes.sqlite3"
        env = {"XATTN_CLASS_STORE": str(store_path), "XATTN_REDIS_URL": ""}
        load0 = os.getloadavg()[0]
        with StreamlitServer(log=ROOT / "test-artifacts" / "bench-flood-server.log",
                             env=env) as server:
            out = asyncio.run(run(a, server.url, server.pid, store_path))
    text = report(out, a, (load0, os.getloadavg()[0]))
    print(text)
    if a.out:
        a.out.write_text(text)
    return 1 if out["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
