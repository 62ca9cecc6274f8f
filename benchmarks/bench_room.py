"""A class in one room: a host and N students (200) through every lesson step on serve.sh 2.

    python -m benchmarks.bench_room [--students 200] [--backends sqlite redis]
                                    [--out benchmarks/results/room.md]
    python -m benchmarks.bench_room --students 30 --backends sqlite    # a quick run

Starts ``deploy/serve.sh 2`` (two Streamlit processes behind HAProxy with cookie affinity, port
8850 and the next two by default) with the class store on a SQLite file, then again on Redis
(a ``redis-server`` this script starts on a unix socket). Everyone is a protocol client
(``benchmarks/room_people.py``): no page polls; each process's relay reruns the pages whose
room moved, and the clients look at every run the server sends.

The class: the host opens ``?class=new``; the students join over ``--ramp`` seconds (the join
screen, its cookie, the page), then nobody does anything for ``--idle`` seconds. Then, for every
step: the host presses *Next step* (not on step 1) and waits until every student's page shows
the step; each student taps an answer ``--think`` seconds after seeing it (a random option, or
a number in the question's range) and waits for its receipt to say *Saved*; the host waits
until its count shows every answer, presses *Reveal*, waits until every student's page drew
the answer's chart, and pauses. Steps 12 and 14 ask a choice a head and links between words,
which these students do not tap (the browser tests do): Next, a pause, Reveal. Last, the host
goes back (the step picker) to the last step they answered and presses *Ask again*, the class
answers a second round, and
``--kill-after`` seconds into it the backend holding the most students (not the host) is
killed with SIGKILL: its students reconnect as a browser does, and no answer may be lost.

Measured, each beside its target (issue 24): Next → a student's page shows the step;
Reveal → it shows the answer; an answer → the host's count includes it (the first count the
host's page drew in a run that began after the student's page showed *Saved*); answers lost
(what each student last sent against what the store has, per step and round); bytes each
student received per step; server CPU per student per minute of class, and of the idle class;
the host's own page after its click; runs whose end never came; exceptions. The load generator
runs on the same 2-core machine (its CPU is printed), and so does other work: the load average
and CPU pressure (PSI) are printed with the numbers.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.process_stats import cpu_pressure_seconds, cpu_seconds, pct
from benchmarks.room_people import Host, Student, random_answer
from benchmarks.room_report import report
from devtools.lecture_hall import LectureHall, haproxy_missing
from devtools.redis_server import RedisServer, redis_binary
from xattn.lesson import STEPS

ROOT = Path(__file__).resolve().parent.parent


def say(text: str) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


@dataclass
class Measures:
    """Everything one class measured (seconds unless named otherwise)."""

    students: int = 0
    follow: dict = field(default_factory=dict)      # step -> [Next -> page shows it]
    by_process: dict = field(default_factory=dict)  # step -> {process: [Next -> page]}
    reveal: dict = field(default_factory=dict)      # step -> [Reveal -> page shows answer]
    to_host: dict = field(default_factory=dict)     # step -> [answer -> host's count]
    clicks: dict = field(default_factory=dict)      # button -> [click -> host's page]
    kb: dict = field(default_factory=dict)          # step -> [kB each student received]
    runs: dict = field(default_factory=dict)        # step -> (full, fragment) runs a student
    sent: dict = field(default_factory=dict)        # (step, round) -> answers sent
    lost: dict = field(default_factory=dict)        # (step, round) -> [students' losses]
    cpu: dict = field(default_factory=dict)         # phase -> (server CPU s, wall s)
    pressure: dict = field(default_factory=dict)    # phase -> PSI share of the time
    client_cpu: float = 0.0
    uncounted: int = 0                              # answers the host's page never counted
    kill: dict = field(default_factory=dict)        # what the kill did
    servers: dict = field(default_factory=dict)     # process -> students (at the start)
    problems: list = field(default_factory=list)


class Meter:
    """CPU seconds of the server processes, across restarts: each pid's last reading counts."""

    def __init__(self, hall: LectureHall, redis_pid: int = 0):
        self.hall, self.redis_pid, self.seen = hall, redis_pid, {}

    def __call__(self) -> float:
        for pid, _ in list(self.hall.backends.values()):
            try:
                self.seen[pid] = cpu_seconds(pid)
            except (OSError, IndexError):
                pass                                   # gone: its last reading stays
        return sum(self.seen.values())

    def redis(self) -> float:
        return cpu_seconds(self.redis_pid) if self.redis_pid else 0.0


class Phase:
    """``with Phase(m, name, meter):`` server CPU, PSI and wall time of a part of the class."""

    def __init__(self, m: Measures, name: str, meter: Meter):
        self.m, self.name, self.meter = m, name, meter

    def __enter__(self):
        self.cpu, self.t, self.psi = self.meter(), time.monotonic(), cpu_pressure_seconds()
        return self

    def __exit__(self, *exc):
        wall = time.monotonic() - self.t
        self.m.cpu[self.name] = (self.meter() - self.cpu, wall)
        psi = cpu_pressure_seconds()
        if psi is not None and self.psi is not None:
            self.m.pressure[self.name] = (psi - self.psi) / wall


async def until(condition, what: str, timeout: float, m: Measures) -> bool:
    """Poll ``condition()`` every 50 ms; a problem (and False) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            m.problems.append(f"timed out after {timeout:.0f} s waiting for {what}")
            return False
        await asyncio.sleep(0.05)
    return True


async def answer_round(students, step: int, round_: int, a, rng, m: Measures,
                       at: dict | None = None) -> list:
    """Every student whose page asks taps ``--think`` seconds after it showed the question
    (or ``at[n]`` seconds, for student ``n``)."""
    at = at or {}

    async def one(s: Student):
        await asyncio.sleep(at.get(s.n, rng.uniform(*a.think)))
        return await s.answer(random_answer(random.Random(rng.random())))
    asking = [s for s in students if s.prediction and s.prediction[:2] == (step, round_)]
    results = await asyncio.gather(*(one(s) for s in asking), return_exceptions=True)
    picks = [r for r in results if not isinstance(r, BaseException)]
    m.problems += [f"an answer failed: {r!r}" for r in results if isinstance(r, BaseException)]
    m.sent[(step, round_)] = len(picks)
    return picks


async def counted(host: Host, picks: list, step: int, since: float, a, m: Measures,
                  open_store) -> None:
    """Wait until the host's count shows every answer; the latency of each answer (an answer
    the host's page never counted is counted apart)."""
    def counts():
        return [c for c in host.counts if c[2] == step and c[0] >= since]
    if not await until(lambda: any(n >= len(picks) for *_, n in counts()),
                       f"the host's count of {len(picks)} answers at step {step}",
                       a.count_wait, m):
        store = open_store()
        try:
            view, pulse = store.room_view(host.code), store.pulse([host.code])[host.code]
        finally:
            store.close()
        m.problems.append(f"the host's page stays at {max((c[3] for c in counts()), default=0)}"
                          f" while the store counts {view.n_answered} (pulse {pulse}); its "
                          f"last runs (ended, kind, status, step, count), now "
                          f"{time.monotonic():.2f}: {list(host.trace)}")
    for p in picks:      # the first count drawn by a run begun after "Saved", or of all
        after = [ended for started, ended, _, n in counts()
                 if started > p.saved or n >= len(picks)]
        if after:
            m.to_host.setdefault(step, []).append(min(after) - p.sent)
        else:
            m.uncounted += 1


def check_store(open_store, code: str, students, picks_of, step: int, round_: int,
                m: Measures) -> None:
    """Each student's last answer to this round against what the store has."""
    store = open_store()
    try:
        question = store.room_view(code).question
        lost = []
        for s in students:
            pick = picks_of(s)
            if pick is None:
                continue
            want = (question.options()[pick.option] if question.kind != "number"
                    else round(pick.option, question.decimals))
            got = store.my_answer(code, step, s.student_id)
            if got != want:
                lost.append(f"student {s.n} sent {pick.shown}, the store has {got!r}")
        m.lost[(step, round_)] = lost
    finally:
        store.close()


async def one_step(host, students, step: int, a, rng, m: Measures, open_store) -> None:
    marks = {s.n: (s.bytes, len(s.runs)) for s in students}
    if step > 1:
        sent, took = await host.click("class_next", lambda h: h.step == step)
        m.clicks.setdefault("Next step", []).append(took)
        if not await until(lambda: all(step in s.steps for s in students),
                           f"every student's page at step {step}", a.wait, m):
            m.problems.append(_laggards([s for s in students if step not in s.steps]))
        m.follow[step] = [s.steps[step] - sent for s in students if step in s.steps]
        for s in students:
            if step in s.steps:
                mark = "*" if s.backends[-1] == host.tab.backend else ""
                m.by_process.setdefault(step, {}).setdefault(
                    s.backends[-1] + mark, []).append(s.steps[step] - sent)
    since = time.monotonic()
    picks = await answer_round(students, step, 1, a, rng, m)
    if picks:
        await counted(host, picks, step, since, a, m, open_store)
        await asyncio.to_thread(check_store, open_store, host.code, students,
                                lambda s: s.picks.get((step, 1)), step, 1, m)
    else:
        await asyncio.sleep(a.pause)
    sent, took = await host.click("reveal", lambda h: h.step == step and "ask_again" in h.buttons)
    m.clicks.setdefault("Reveal", []).append(took)
    if not await until(lambda: all(step in s.answers for s in students),
                       f"every student's answer at step {step}", a.wait, m):
        m.problems.append(_laggards([s for s in students if step not in s.answers]))
    m.reveal[step] = [s.answers[step] - sent for s in students if step in s.answers]
    await asyncio.sleep(a.pause)
    m.kb[step] = [(s.bytes - marks[s.n][0]) / 1000 for s in students]
    m.runs[step] = [(sum(r[1] for r in s.runs[marks[s.n][1]:]),
                     sum(not r[1] for r in s.runs[marks[s.n][1]:])) for s in students]


async def back_to(step: int, host, students, a, m: Measures, open_store) -> None:
    """The host goes back to ``step`` with the step picker (the store's ``set_step``, as the
    picker calls it), and every page follows: the last step whose question these students
    answer (steps 12 and 14 ask one choice a head or links, which they do not tap)."""
    if host.step == step:
        return
    store = open_store()
    try:
        store.set_step(host.code, host.key, step)
    finally:
        store.close()
    await until(lambda: host.step == step and "ask_again" in host.buttons and all(
        s.step == step for s in students),
        f"every page back at step {step}", a.wait, m)


async def kill_round(host, students, hall, a, rng, m: Measures, open_store) -> None:
    """Ask again on the class's step (`back_to` chose it); while the class answers, kill the
    backend that holds the most students (not the host's), ``--kill-taps`` of its students
    tapping just before; then every answer must be in the store and every page must follow
    the reveal."""
    step = host.step
    await host.click("ask_again", lambda h: h.step == step and "reveal" in h.buttons)
    await until(lambda: all(s.prediction and s.prediction[:2] == (step, 2) for s in students),
                f"every student's round 2 of step {step}", a.wait, m)
    on = {}
    for s in students:
        on.setdefault(s.backends[-1], []).append(s)
    victim = max((b for b in on if b != host.tab.backend), key=lambda b: len(on[b]))
    at_kill = {s.n: a.kill_after for s in on[victim][:a.kill_taps]}
    think = {s.n: a.kill_after + rng.uniform(*a.think) - a.think[0] for s in on[victim]
             if s.n not in at_kill and rng.random() < 0.5}      # half of them after it
    since = time.monotonic()
    answering = asyncio.create_task(answer_round(students, step, 2, a, rng, m,
                                                 {**think, **at_kill}))
    await asyncio.sleep(a.kill_after + 0.005)          # just after the last taps were sent
    mine = [s.picks.get((step, 2)) for s in on[victim]]
    unsaved = sum(1 for p in mine if p is not None and p.saved != p.saved)
    os.kill(hall.backends[victim][0], signal.SIGKILL)
    say(f"killed {victim} ({len(on[victim])} students; {sum(p is not None for p in mine)} had "
        f"tapped, {unsaved} of them not yet saved)")
    picks = await answering
    await counted(host, picks, step, since, a, m, open_store)
    await asyncio.to_thread(check_store, open_store, host.code, students,
                            lambda s: s.picks.get((step, 2)), step, 2, m)
    await until(lambda: all(s.reconnects for s in on[victim]),
                f"the {len(on[victim])} students of {victim} back", a.wait, m)
    for s in students:
        s.answers.pop(step, None)
    sent, _ = await host.click("reveal", lambda h: h.step == step and "ask_again" in h.buttons)
    await until(lambda: all(step in s.answers for s in students),
                f"every student's answer to round 2 of step {step}", a.wait, m)
    m.kill = {"victim": victim, "students": len(on[victim]),
              "tapped before": sum(p is not None for p in mine), "unsaved at the kill": unsaved,
              "reconnected": sum(s.reconnects > 0 for s in students),
              "sent": len(picks), "lost": len(m.lost[(step, 2)]),
              "reveal": [s.answers[step] - sent for s in students if step in s.answers]}


async def run_class(url: str, hall: LectureHall, meter: Meter, open_store, a) -> Measures:
    m = Measures(students=a.students)
    rng = random.Random(a.seed)
    with Phase(m, "nobody connected", meter):
        await asyncio.sleep(a.baseline)
    host = Host(url, a.wait)
    await host.open()
    say(f"room {host.code}; {a.students} students join over {a.ramp:g} s")
    students = [Student(i, url, host.code, a.wait) for i in range(a.students)]
    t0 = time.monotonic()

    async def join(i: int, s: Student):
        await asyncio.sleep(max(0.0, t0 + a.ramp * i / max(1, a.students - 1) - time.monotonic()))
        await s.join()
    results = await asyncio.gather(*(join(i, s) for i, s in enumerate(students)),
                                   return_exceptions=True)
    m.problems += [f"a join failed: {r!r}" for r in results if isinstance(r, BaseException)]
    students = [s for s, r in zip(students, results, strict=True)
                if not isinstance(r, BaseException)]
    for s in students:
        m.servers[s.backends[0]] = m.servers.get(s.backends[0], 0) + 1
    await until(lambda: all(1 in s.steps for s in students), "every page at step 1", a.wait, m)
    with Phase(m, "idle class", meter):
        await asyncio.sleep(a.idle)
    say("the class begins")
    client0 = time.process_time()
    with Phase(m, "the class", meter):
        for step in range(1, a.steps + 1):
            await one_step(host, students, step, a, rng, m, open_store)
            say(f"step {step}: Next p95 {_p95(m.follow.get(step))}, Reveal p95 "
                f"{_p95(m.reveal.get(step))}, {sum(m.kb[step]) / len(students):.0f} kB each"
                + "".join(f"; Next on {b} (* the host's) p5 / p50 / p95 "
                          f"{pct(v, 5):.2f} / {pct(v, 50):.2f} / {pct(v, 95):.2f} s"
                          for b, v in sorted(m.by_process.get(step, {}).items())))
    m.client_cpu = time.process_time() - client0
    answered = [step for (step, round_), n in m.sent.items() if round_ == 1 and n]
    if a.kill_after > 0 and answered:
        with Phase(m, "the kill round", meter):
            await back_to(max(answered), host, students, a, m, open_store)
            await kill_round(host, students, hall, a, rng, m, open_store)
    for s in students:
        m.problems += s.problems
        if s.lost_ends:
            m.problems.append(f"student {s.n}: {s.lost_ends} runs whose end never came")
    m.problems += host.problems
    await asyncio.gather(*(s.leave() for s in students))
    await host.close()
    return m


def _laggards(late: list) -> str:
    """Who did not follow: the first few, their process and their last runs."""
    return f"{len(late)} pages did not follow: " + "; ".join(
        f"student {s.n} on {s.backends}, steps seen {sorted(s.steps)}, last runs "
        f"(ended, full, bytes) {s.runs[-3:]}" for s in late[:5])


def _p95(values) -> str:
    return f"{pct(values, 95):.2f} s" if values else "n/a"


def measure(kind: str, a) -> tuple[Measures, dict]:
    with tempfile.TemporaryDirectory(prefix=f"xattn-room-{kind}-") as tmp, ExitStack() as stack:
        path = Path(tmp) / "classes.sqlite3"
        redis = stack.enter_context(RedisServer(Path(tmp))) if kind == "redis" else None
        env = {"XATTN_CLASS_STORE": str(path), "XATTN_REDIS_URL": redis.url if redis else "",
               # every client comes from this machine: one address for 200 new students
               "XATTN_LIMITS": f"new_students={max(240, 2 * a.students)}/600"}

        def open_store():
            from xattn.classroom import open_store as opened
            return opened(redis_url=env["XATTN_REDIS_URL"], path=str(path))
        print(f"\n{kind}: deploy/serve.sh 2 on port {a.port} ...", flush=True)
        hall = stack.enter_context(LectureHall(
            processes=2, env=env, port=a.port,
            run_dir=ROOT / "test-artifacts" / f"bench-room-{kind}"))
        meter = Meter(hall, redis.pid if redis else 0)
        load0, redis0 = os.getloadavg(), meter.redis()
        m = asyncio.run(run_class(hall.url, hall, meter, open_store, a))
        info = {"load": (load0, os.getloadavg()), "redis cpu": meter.redis() - redis0
                if redis else None,
                "restarts": [line for line in hall.lines if "restarting" in line]}
    return m, info


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--steps", type=int, default=len(STEPS), help="lesson steps (default all)")
    ap.add_argument("--backends", nargs="+", default=["sqlite", "redis"],
                    choices=["sqlite", "redis"])
    ap.add_argument("--port", type=int, default=8850,
                    help="HAProxy's port; the Streamlit processes take the next two")
    ap.add_argument("--ramp", type=float, default=30.0, help="seconds over which students join")
    ap.add_argument("--idle", type=float, default=30.0,
                    help="seconds of the joined class doing nothing (server CPU)")
    ap.add_argument("--baseline", type=float, default=10.0,
                    help="seconds of server CPU with nobody connected")
    ap.add_argument("--think", type=float, nargs=2, default=(2.0, 10.0),
                    help="a student answers this many seconds after the question shows")
    ap.add_argument("--pause", type=float, default=4.0,
                    help="seconds the class looks at an answer (or a step without question)")
    ap.add_argument("--kill-after", type=float, default=4.0,
                    help="seconds into the second round of the last step the students "
                         "answered to kill a backend (0: no such round)")
    ap.add_argument("--kill-taps", type=int, default=3,
                    help="students of the killed backend who tap just before the kill")
    ap.add_argument("--wait", type=float, default=240.0,
                    help="the longest any one wait may take before it is a problem")
    ap.add_argument("--count-wait", type=float, default=30.0,
                    help="seconds the host waits for its count to show every answer before "
                         "it reveals anyway (a problem)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="write the results here (Markdown)")
    a = ap.parse_args(argv)
    if haproxy_missing():
        ap.error(f"needs HAProxy: {haproxy_missing()}")
    if "redis" in a.backends and redis_binary() is None:
        ap.error("--backends redis needs redis-server (apt-get install redis-server)")
    if not 1 <= a.steps <= len(STEPS):
        ap.error(f"--steps is a number of lesson steps, 1 to {len(STEPS)}")
    return a


def main() -> int:
    a = parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))   # the servers stop too
    results = {}
    for kind in a.backends:
        results[kind] = measure(kind, a)
        print(report({kind: results[kind]}, a), flush=True)
    text = report(results, a)
    if a.out:
        a.out.write_text(f"# A class in one room: {a.students} students on deploy/serve.sh 2\n\n"
                         "    python -m benchmarks.bench_room " + " ".join(sys.argv[1:])
                         + "\n\n" + text + "\n")
    return 0 if all(not m.problems for m, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
