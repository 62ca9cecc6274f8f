"""One student taps a hundred times in a second: is the rest of the room slowed down?

    python -m benchmarks.bench_flood [--students 30] [--taps 100] [--rounds 3]
                                     [--out benchmarks/results/flood.md]

One Streamlit process (``devtools.browser.StreamlitServer``) with its class store on a
temporary SQLite file. A host opens ``?class=new``; ``--students`` students open
``?room=CODE`` as protocol clients (``benchmarks.bench_room.Tab``: a websocket each, every
``run_every`` poll on its own timer as the frontend keeps it). Then, ``--rounds`` times and
alternating: the students answer lesson step 1, one after another at a class's pace (one
answer every ``--gap`` seconds), while

- *quiet*: nobody else does anything;
- *flood*: one more student sends ``--taps`` answer changes in one second (a new tap every
  ``1/taps`` s, each a rerun as the browser sends it, the way a frantic or scripted phone
  could), starting with the class's first answer.

Between rounds the host asks again (a new round: everyone answers afresh). Measured per
condition: each other student's answer -> their own page's confirmation ("Your prediction is
in"), the server's CPU per second, the flooder's answers counted in the store (its record: one,
the last tap), and the host's count. Server and clients share this 2-core machine, whose load
is printed with the results.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qsl

from benchmarks.bench_room import Stats, Tab, say
from benchmarks.load_test import cpu_seconds, pct
from benchmarks.machine import machine_line
from devtools.browser import StreamlitServer

ROOT = Path(__file__).resolve().parent.parent


def asks(page) -> bool:
    return page.full and page.predict is not None and not page.predict.disabled


async def answer(tab: Tab, option: int) -> float:
    """One student's tap and the seconds until their own page confirms it."""
    tab.answer(option)
    sent = time.monotonic()
    await tab.rerun(lambda p: p.full and p.said_in)
    return time.monotonic() - sent


async def flood(tab: Tab, taps: int) -> int:
    """``taps`` changes of the prediction in one second; the last one is ``taps - 1``'s
    option. Returns the option the store must end up with."""
    n = len(tab.page.predict.options)
    for k in range(taps):
        tab.answer(k % n)
        await tab.send()
        await asyncio.sleep(1.0 / taps)
    await tab.rerun(lambda p: p.full and p.said_in)       # the page settles on the last tap
    return (taps - 1) % n


async def run(a, url: str, pid: int, store_path: Path) -> dict:
    from xattn.classroom.sqlite_store import SQLiteStore

    stats = Stats()
    host = Tab("host", url, "class=new", stats)
    await host.open()
    q = dict(parse_qsl(host.query))
    code, key = q["room"], q["host"]
    students = [Tab(f"student {i}", url, f"room={code}", stats) for i in range(a.students)]
    flooder = Tab("flooder", url, f"room={code}", stats)
    everyone = [*students, flooder]
    for t in everyone:
        await t.open()
    say(f"{len(everyone)} pages open in room {code}")
    results: dict[str, dict[str, list[float]]] = {
        c: {"change": [], "cpu": [], "flooder": []} for c in ("quiet", "flood")}
    store = SQLiteStore(store_path)
    for r in range(a.rounds):
        for condition in ("quiet", "flood") if r % 2 == 0 else ("flood", "quiet"):
            # every page shows this round's question, open and unanswered
            for t in everyone:
                if not (asks(t.page) and not t.page.said_in):
                    await t.until(lambda p: asks(p) and not p.said_in)
            n = len(flooder.page.predict.options)
            say(f"round {r + 1}, {condition}: answering")
            cpu0, t0 = cpu_seconds(pid), time.monotonic()
            storm = asyncio.create_task(flood(flooder, a.taps)) if condition == "flood" \
                else None
            jobs = []
            for i, t in enumerate(students):
                jobs.append(asyncio.create_task(answer(t, i % n)))
                await asyncio.sleep(a.gap)
            results[condition]["change"] += await asyncio.gather(*jobs)
            want = await storm if storm is not None else None
            results[condition]["cpu"].append((cpu_seconds(pid) - cpu0) / (time.monotonic() - t0))
            expected = [sum(1 for i in range(a.students) if i % n == k) + (k == want)
                        for k in range(n)]
            # the flooder's last tap reaches the store by its page's next poll
            deadline = time.monotonic() + 30
            while True:
                tally = [t for t in store.results(code, key) if t.step == 1][-1]
                counted = list(tally.counts.values())
                if counted == expected or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.5)
            if counted != expected:
                stats.problems.append(f"{condition}, round {r + 1}: counted {counted}, "
                                      f"expected {expected}")
            if want is not None:
                results[condition]["flooder"].append(float(counted == expected))
            say(f"round {r + 1}, {condition}: counted {counted}")
            store.ask_again(code, key, 1)          # a new round: every page asks afresh
            for t in everyone:     # ... and each browser drops its pick, as the page tells it
                t.widgets.pop(t.page.predict.id, None)
            await asyncio.sleep(a.settle)
    store.close()
    for t in [host, *students, flooder]:
        await t.close()
    return {"results": results, "problems": stats.problems}


def report(out: dict, a, load: tuple[float, float]) -> str:
    lines = [f"# One student taps {a.taps} times in a second (`python -m benchmarks.bench_flood`)",
             "", machine_line(), f"Load average {load[0]:.1f} before, {load[1]:.1f} after; "
             f"{a.students} students and a host on one Streamlit process, {a.rounds} rounds "
             f"a condition, one answer every {a.gap} s.", "",
             "| condition | answers | answer -> own page p50 | p95 | max | server CPU (cores) |",
             "|---|---:|---:|---:|---:|---:|"]
    for c, r in out["results"].items():
        ch = r["change"]
        cpu = sum(r["cpu"]) / len(r["cpu"]) if r["cpu"] else float("nan")
        lines.append(f"| {c} | {len(ch)} | {pct(ch, 50):.3f} s | {pct(ch, 95):.3f} s | "
                     f"{max(ch, default=float('nan')):.3f} s | {cpu:.2f} |")
    kept = out["results"]["flood"]["flooder"]
    lines += ["", f"The flooder's {a.taps} taps counted as one answer, its last, in "
              f"{int(sum(kept))} of {len(kept)} flood rounds (the store's counts equal the "
              "answers cast, the flooder's last tap among them).",
              "", "Problems: " + ("; ".join(out["problems"]) or "none") + "."]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--taps", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--gap", type=float, default=0.1, help="seconds between two answers")
    ap.add_argument("--settle", type=float, default=4.0, help="seconds after a new round")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="xattn-flood-") as tmp:
        store_path = Path(tmp) / "classes.sqlite3"
        os.environ["XATTN_CLASS_STORE"] = str(store_path)
        os.environ.pop("XATTN_REDIS_URL", None)
        load0 = os.getloadavg()[0]
        with StreamlitServer(log=ROOT / "test-artifacts" / "bench-flood-server.log") as server:
            out = asyncio.run(run(a, server.url, server.pid, store_path))
    text = report(out, a, (load0, os.getloadavg()[0]))
    print(text)
    if a.out:
        a.out.write_text(text)
    return 1 if out["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
