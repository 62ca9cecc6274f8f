"""One student taps a hundred times in a second: is the rest of the room slowed down, and does
the last tap win?

    python -m benchmarks.bench_flood [--students 30] [--taps 100] [--rounds 3] [--gap 0.1]
                                     [--out benchmarks/results/flood.md]

One Streamlit process (``devtools.browser.StreamlitServer``) with its class store on a
temporary SQLite file (``XATTN_LIMITS=new_students=1000/600``: every phone joins from
127.0.0.1). The lecturer's page (``devtools/lecturer.py``'s `Host`) opens ``?class=new``;
``--students`` students and one flooder join it as phones (``devtools.phones.Phone``: the
phone's own page and its cookie, the room's server-sent events, answers POSTed until a
receipt says *saved*). Then, ``--rounds`` times and alternating: the students answer lesson
step 1, one after another at a class's pace (one answer every ``--gap`` seconds), while

- *quiet*: nobody else does anything;
- *flood*: the flooder changes its pick ``--taps`` times in one second (a tap every
  ``1/taps`` s, as ``phone.js`` sends taps: one POST at a time, the newest pending tap
  next, the older ones dropped), starting with the class's first answer.

Between rounds the store asks again (a new round: every phone asks afresh). Measured per
condition: each other student's answer -> their own receipt saying *saved*, the server's CPU
per second; and the flooder's answer in the store (its last tap: its receipt, its stream's
``me`` and the store must agree), the store's counts against the answers cast. Server and
phones share this 2-core machine, whose load is printed with the results.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.machine import machine_line
from benchmarks.process_stats import cpu_seconds, pct
from devtools.browser import StreamlitServer
from devtools.lecturer import Host
from devtools.phones import Phone, Pick, plain, same

ROOT = Path(__file__).resolve().parent.parent
WAIT = 120.0


def say(text: str) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


class Student(Phone):
    """A `Phone` that notes when each answer's receipt came (``receipts``: time, receipt):
    `Pick.saved` is the first sign, which may be the stream's ``me``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.receipts: list[tuple[float, dict]] = []

    async def request(self, method, target, purpose, **kwargs):
        status, headers, data = await super().request(method, target, purpose, **kwargs)
        if purpose == "answers":
            with contextlib.suppress(ValueError):
                self.receipts.append((time.monotonic(), json.loads(data)))
        return status, headers, data

    def receipt_saved(self, p: Pick) -> float | None:
        """Seconds from the tap ``p`` to the first receipt saying it is saved."""
        return next((t - p.chosen for t, r in self.receipts if t >= p.chosen
                     and r.get("state") == "saved" and (r.get("step"), r.get("round"))
                     == (p.step, p.round) and same(r.get("value"), p.value)), None)


def option(ask: dict, k: int):
    """The ``k``-th answer (mod the options) of a token or choice question."""
    n = len(ask["choices"])
    if ask["kind"] == "token":
        return k % n
    if ask["kind"] == "choice":
        return ask["choices"][k % n]
    raise ValueError(f"step 1 asks a {ask['kind']!r} question: expected a token or a choice")


async def flood(phone: Phone, taps: int, out: dict):
    """``taps`` changes of the pick in one second; the last pick, once settled."""
    picks = []
    for k in range(taps):
        picks.append(phone.choose(option(phone.ask, k)))
        await asyncio.sleep(1.0 / taps)
    last = picks[-1]
    await asyncio.wait_for(last.done.wait(), WAIT)
    out["posts"].append(sum(p.sends for p in picks))
    return last


async def one_round(a, store, host: Host, students, flooder, condition: str, round_: int,
                    pid: int, out: dict, problems: list) -> None:
    where = f"{condition}, round {round_}"
    if not await _until(lambda: all(p.room and (p.room["step"], p.room["round"], p.room["phase"])
                                    == (1, round_, "asking") and p.ask
                                    for p in [*students, flooder]), WAIT):
        problems.append(f"{where}: not every phone asked afresh")
        return
    ask = flooder.ask
    say(f"{where}: answering")
    cpu0, t0 = cpu_seconds(pid), time.monotonic()
    storm = asyncio.create_task(flood(flooder, a.taps, out)) if condition == "flood" else None
    jobs = []
    for i, s in enumerate(students):
        jobs.append(asyncio.create_task(s.answer(option(ask, i), timeout=WAIT)))
        await asyncio.sleep(a.gap)
    picks = await asyncio.gather(*jobs)
    last = await storm if storm is not None else None
    out["cpu"].append((cpu_seconds(pid) - cpu0) / (time.monotonic() - t0))
    out["answers"] += len(picks)
    out["how"].update(p.how or "never" for p in picks)
    for p, s in zip(picks, students, strict=True):
        if (t := s.receipt_saved(p)) is not None:
            out["saved"].append(t)
            out["first"].append(p.saved - p.chosen)
        else:
            problems.append(f"{where}: phone {s.n}'s answer {p.value!r}: no receipt said "
                            f"saved (receipts {[r for _, r in s.receipts[-3:]]}, refused "
                            f"{p.refused!r}, saved by {p.how or 'nothing'})")
    cast = [p.value for p in picks] + ([last.value] if last is not None else [])
    expected = dict(collections.Counter(plain(v) for v in cast))

    def stored() -> dict:
        return {k: v for k, v in store.room_view(host.code).counts.items() if v}
    counted = await _until(lambda: stored() == expected, 30)
    if not counted:
        problems.append(f"{where}: the store counts {stored()}, the answers cast {expected}")
    if last is not None:
        mine = store.my_answer(host.code, 1, flooder.student_id)
        shown = await _until(lambda: same(flooder.me.get("mine"), last.value)
                             and flooder.receipt_saved(last) is not None, 10)
        kept = counted and same(mine, last.value) and shown
        out["flooder"].append(kept)
        if not kept:
            problems.append(f"{where}: the flooder's last tap {last.value!r} (receipts "
                            f"{flooder.receipts[-2:]}, saved by {last.how!r}); the store has "
                            f"{mine!r}, its stream's me {flooder.me.get('mine')!r}")
    mine_t = flooder.receipt_saved(last) if last is not None else None
    if mine_t is not None:
        out["last"].append(mine_t)
    took = [s.receipt_saved(p) or float("nan") for p, s in zip(picks, students, strict=True)]
    say(f"{where}: counted {'as expected' if counted else 'WRONG'}; CPU {out['cpu'][-1]:.2f}, "
        f"saved p50 {pct(took, 50):.3f} s, max {max(took):.3f} s")
    store.ask_again(host.code, host.key, 1)           # a new round: every phone asks afresh


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
    students = [Student(i, url, host.code, timeout=WAIT) for i in range(a.students)]
    flooder = Student(a.students, url, host.code, timeout=WAIT)
    for p in [*students, flooder]:
        await p.join()
    say(f"{a.students + 1} phones in room {host.code}")
    results = {c: {"saved": [], "first": [], "last": [], "answers": 0, "cpu": [],
                   "how": collections.Counter(), "flooder": [], "posts": []}
               for c in ("quiet", "flood")}
    problems: list[str] = []
    store = SQLiteStore(store_path)
    try:
        for r in range(a.rounds):
            for k, condition in enumerate(("quiet", "flood") if r % 2 == 0
                                          else ("flood", "quiet")):
                await one_round(a, store, host, students, flooder, condition, 2 * r + k + 1,
                                pid, results[condition], problems)
    finally:
        store.close()
        for p in [*students, flooder]:
            await p.leave()
            problems += p.problems
            if p.reconnects:
                problems.append(f"phone {p.n}: its stream reconnected {p.reconnects} times")
        await host.close()
    return {"results": results, "problems": problems + host.problems}


def report(out: dict, a, load: tuple[float, float]) -> str:
    lines = [f"# One student taps {a.taps} times in a second (`python -m benchmarks.bench_flood`)",
             "", machine_line(), f"Load average {load[0]:.1f} before, {load[1]:.1f} after; "
             f"{a.students} student phones, a flooder's phone and the lecturer's page on one "
             f"Streamlit process, {a.rounds} rounds a condition, one answer every {a.gap} s.",
             "", "| condition | answers | answer -> own receipt saved, p50 | p95 | max | "
             "server CPU (cores) |", "|---|---:|---:|---:|---:|---:|"]
    for c, r in out["results"].items():
        s = r["saved"]
        cpu = sum(r["cpu"]) / len(r["cpu"]) if r["cpu"] else float("nan")
        lines.append(f"| {c} | {r['answers']} | {pct(s, 50):.3f} s | {pct(s, 95):.3f} s | "
                     f"{max(s, default=float('nan')):.3f} s | {cpu:.2f} |")
    f = out["results"]["flood"]
    how = sum((r["how"] for r in out["results"].values()), collections.Counter())
    first = [t for r in out["results"].values() for t in r["first"]]
    lines += ["", f"The flooder's {a.taps} taps counted as one answer, its last, in "
              f"{sum(f['flooder'])} of {len(f['flooder'])} flood rounds (the store's counts "
              "equal the answers cast, the flooder's last tap among them, and its receipt and "
              "its stream's `me` said so). They went out as "
              f"{', '.join(map(str, f['posts'])) or '-'} POSTs (one at a time, the newest "
              "pending tap next, as `phone.js` sends them); its last tap -> its receipt saved: "
              + (", ".join(f"{t:.3f} s" for t in f["last"]) or "-") + ".",
              "", "What told a student's phone *saved* first (`Pick.how`): "
              + ", ".join(f"{k} {v}" for k, v in how.items()) + f"; answer -> that first "
              f"sign p50 {pct(first, 50):.3f} s, max {max(first, default=float('nan')):.3f} s.",
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
        env = {"XATTN_CLASS_STORE": str(store_path), "XATTN_REDIS_URL": "",
               # a join's work at 4 x 2**10: the phones share this machine (bench_room.py says why)
               "XATTN_LIMITS": f"new_students={max(1000, 2 * a.students)}/600,"
                               "join_work_bits=10"}
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
