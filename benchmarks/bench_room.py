"""A class in one room: a host and N phones (1,000) through every lesson step on serve.sh 2.

    python -m benchmarks.bench_room [--students 1000] [--backends sqlite redis] [--steps 14]
                                    [--out benchmarks/results/room.md]
    python -m benchmarks.bench_room --students 50 --steps 3 --backends sqlite   # a quick run

Starts ``deploy/serve.sh 2`` (two Streamlit processes behind HAProxy with cookie affinity, on
``--port`` and the next two) with the class store on a SQLite file, then again on Redis (a
``redis-server`` this script starts on a unix socket, with an append-only file). The
lecturer is a Streamlit page over the protocol (``devtools/lecturer.py``: its buttons,
its count, and its follow component on the room's pulse); the students are
``devtools.phones.Phone``s: each speaks what the phone's page speaks (the page and its cookie,
the room's server-sent events, answers POSTed until a receipt says *saved*), a thousand in
this one asyncio process.

The class: the host opens ``?class=new``; the phones join over ``--ramp`` seconds, then nobody
does anything for ``--idle`` seconds. Then, for every step: the host presses *Next step* (not
on step 1) and waits until every phone shows the step; each phone answers ``--think`` seconds
after (a random answer of the step's kind, drawn from the message's ``ask``: a word, a choice,
a number, a job per head on step 12, links on step 14; with how sure, *sure*, *think so* or
*guess*, one in ten saying nothing: the room asks it unless ``--no-confidence``) and waits
for its receipt; the host
waits until its count shows every answer, presses *Reveal*, waits until every phone shows the
answer and its chart, and pauses. Then two rounds on the last step answered:

- *the kill round*: the host presses *Ask again*; ``--kill-after`` seconds into it the
  backend holding the most phones (not the host's) is killed with SIGKILL, some of its phones
  tapping just before, half of the others after: they reconnect as an ``EventSource`` does
  and send again what was not saved;
- *the store's outage* (``--outage`` seconds, 60): *Ask again*, then SQLite's write lock is
  held by another connection (``BEGIN IMMEDIATE``), or redis-server is killed and started
  again on its append-only file; the phones answer during the outage and must all be saved
  once the store is back.

Measured, each beside its target: Next → a phone shows the step; Reveal → it shows the answer
and its chart; an answer → the host's count includes it (the first count drawn by a run that
began after the phone's answer was saved); answers lost (what each phone last sent against
what the store has, every round); server CPU per phone per move (the two processes' CPU from
the click until every phone has the move, less the idle rate, over the phones); server CPU
of the idle class; the processes' memory; bytes each phone's stream read per move; the host's
own page after its click. The load generator shares the 2-core machine (its CPU and its event
loop's lag are printed), and so does other work: the load average and CPU pressure (PSI) are
printed with the numbers. ``--profile`` samples both server processes with py-spy during the
class and prints where their time goes.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import gc
import io
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.process_stats import cpu_pressure_seconds, cpu_seconds, pct, rss_mb
from benchmarks.pyspy import PROFILE_RATE, print_profile
from benchmarks.room_report import report
from devtools.lecture_hall import LectureHall, haproxy_missing
from devtools.lecturer import Host
from devtools.phones import Phone, plain
from devtools.redis_server import RedisServer, redis_binary
from xattn.lesson import STEPS

ROOT = Path(__file__).resolve().parent.parent


def say(text: str) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


@dataclass
class Measures:
    """Everything one class measured (seconds unless named otherwise)."""

    students: int = 0
    joins: list = field(default_factory=list)       # seconds: the page and the first frame
    follow: dict = field(default_factory=dict)      # step -> [Next -> phone shows it]
    by_process: dict = field(default_factory=dict)  # step -> {process: [Next -> phone]}
    reveal: dict = field(default_factory=dict)      # step -> [Reveal -> answer and chart]
    to_host: dict = field(default_factory=dict)     # step -> [answer -> host's count]
    saved: dict = field(default_factory=dict)       # step -> [tap -> receipt says saved]
    clicks: dict = field(default_factory=dict)      # button -> [click -> host's page]
    move_kb: dict = field(default_factory=dict)     # (step, move) -> [kB a phone's stream read]
    frame_kb: dict = field(default_factory=dict)    # (step, move) -> kB of the move's frame
    answer_kb: dict = field(default_factory=dict)   # step -> [kB of a phone's answer requests]
    move_cpu: list = field(default_factory=list)    # (step, move, wall s, {process:
    #                                                  (CPU s less idle, phones, the host's)})
    sent: dict = field(default_factory=dict)        # (step, round) -> answers sent
    sure: dict = field(default_factory=dict)        # (step, round) -> ... saying how sure
    lost: dict = field(default_factory=dict)        # (step, round) -> [phones' losses]
    cpu: dict = field(default_factory=dict)         # phase -> (server CPU s, wall s)
    pressure: dict = field(default_factory=dict)    # phase -> PSI share of the time
    proxy_cpu: dict = field(default_factory=dict)   # phase -> HAProxy's CPU s
    memory: dict = field(default_factory=dict)      # process -> (start MB, max MB)
    client_cpu: float = 0.0
    client_lag: list = field(default_factory=list)  # the load generator's loop lag, s
    client_gc: list = field(default_factory=list)   # its GC pauses: (generation, s)
    uncounted: int = 0                              # answers the host's page never counted
    kill: dict = field(default_factory=dict)        # what the kill did
    outage: dict = field(default_factory=dict)      # what the store's outage did
    follow_up: dict = field(default_factory=dict)   # the follow-up round: its latencies
    servers: dict = field(default_factory=dict)     # process -> phones (at the start)
    host: dict = field(default_factory=dict)        # the host page's runs and triggers
    page_kb: float = 0.0                            # the phone's page on the wire
    languages: dict = field(default_factory=dict)   # asked -> (phones, served in it, kB)
    profile: str = ""
    problems: list = field(default_factory=list)


class Meter:
    """CPU seconds of the server processes, across restarts: each pid's last reading counts."""

    def __init__(self, hall: LectureHall):
        self.hall, self.seen, self.redis_seen = hall, {}, {}
        self.redis_pid = 0

    def per(self) -> dict[str, float]:
        """CPU seconds so far per process name (``s1``: the killed pid and its restart)."""
        for name, (pid, _) in list(self.hall.backends.items()):
            try:
                self.seen[pid] = (name, cpu_seconds(pid))
            except (OSError, IndexError):
                pass                                   # gone: its last reading stays
        out: dict[str, float] = {}
        for name, seconds in self.seen.values():
            out[name] = out.get(name, 0.0) + seconds
        return out

    def __call__(self) -> float:
        return sum(self.per().values())

    def proxy(self) -> float:
        try:
            return cpu_seconds(self.hall.haproxy_pid)
        except (OSError, IndexError):
            return 0.0

    def redis(self) -> float:
        if self.redis_pid:
            with contextlib.suppress(OSError, IndexError):
                self.redis_seen[self.redis_pid] = cpu_seconds(self.redis_pid)
        return sum(self.redis_seen.values())


class Phase:
    """``with Phase(m, name, meter):`` server CPU, PSI and wall time of a part of the class."""

    def __init__(self, m: Measures, name: str, meter: Meter):
        self.m, self.name, self.meter = m, name, meter

    def __enter__(self):
        self.cpu, self.t, self.psi = self.meter(), time.monotonic(), cpu_pressure_seconds()
        self.proxy = self.meter.proxy()
        return self

    def __exit__(self, *exc):
        wall = time.monotonic() - self.t
        self.m.cpu[self.name] = (self.meter() - self.cpu, wall)
        self.m.proxy_cpu[self.name] = self.meter.proxy() - self.proxy
        psi = cpu_pressure_seconds()
        if psi is not None and self.psi is not None:
            self.m.pressure[self.name] = (psi - self.psi) / wall


class Memory(threading.Thread):
    """The largest RSS of each server process (restarted ones too), every half second."""

    def __init__(self, hall: LectureHall):
        super().__init__(daemon=True)
        self.hall, self.seen, self.halt = hall, {}, threading.Event()

    def run(self) -> None:
        while not self.halt.wait(0.5):
            for name, (pid, _) in list(self.hall.backends.items()):
                with contextlib.suppress(OSError, RuntimeError):
                    mb = rss_mb(pid)
                    start, top = self.seen.get((name, pid), (mb, mb))
                    self.seen[(name, pid)] = (start, max(top, mb))

    def stop(self) -> dict:
        self.halt.set()
        self.join()
        return {f"{name} (pid {pid})": v for (name, pid), v in self.seen.items()}


class Lag:
    """The load generator's own event-loop lag (how late a 50 ms sleep wakes) and its
    garbage collector's pauses (a full collection over a thousand phones' objects takes
    tenths of a second: the class's objects are frozen after the joins and after each step,
    ``gc.freeze``, so that a collection looks at the new ones only)."""

    def __init__(self):
        self.values: list[float] = []
        self.pauses: list[tuple[int, float]] = []      # (generation, seconds)
        self.task: asyncio.Task | None = None
        self._t: float | None = None

    async def _run(self) -> None:
        while True:
            t = time.monotonic()
            await asyncio.sleep(0.05)
            self.values.append(time.monotonic() - t - 0.05)

    def _gc(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._t = time.perf_counter()
        elif self._t is not None:
            self.pauses.append((info["generation"], time.perf_counter() - self._t))
            self._t = None

    def start(self) -> None:
        gc.freeze()
        gc.callbacks.append(self._gc)
        self.task = asyncio.get_running_loop().create_task(self._run())

    def stop(self) -> tuple[list[float], list[tuple[int, float]]]:
        if self.task is not None:
            self.task.cancel()
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._gc)
        return self.values, self.pauses


async def until(condition, what: str, timeout: float, m: Measures) -> bool:
    """Poll ``condition()`` every 20 ms; a problem (and False) after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            m.problems.append(f"timed out after {timeout:.0f} s waiting for {what}")
            return False
        await asyncio.sleep(0.02)
    return True


def _asking(p: Phone, step: int, round_: int) -> bool:
    r = p.room
    return r is not None and (r["step"], r["round"], r["phase"]) == (step, round_, "asking")


async def answer_round(phones, step: int, round_: int, a, rng, m: Measures,
                       at: dict | None = None) -> list:
    """Every phone whose room asks taps ``--think`` seconds after (or ``at[n]`` seconds, for
    phone ``n``) and waits for its receipt; the picks."""
    at = at or {}

    async def one(p: Phone):
        await asyncio.sleep(at.get(p.n, rng.uniform(*a.think)))
        return await p.answer(timeout=a.wait)
    asking = [p for p in phones if _asking(p, step, round_) and p.ask]
    results = await asyncio.gather(*(one(p) for p in asking), return_exceptions=True)
    picks = [r for r in results if not isinstance(r, BaseException)]
    m.problems += [f"an answer failed: {r!r}" for r in results if isinstance(r, BaseException)]
    m.sent[(step, round_)] = len(picks)
    m.sure[(step, round_)] = sum(pk.confidence is not None for pk in picks)
    unsaved = [pk for pk in picks if not pk.is_saved]
    for pk in unsaved[:5]:
        m.problems.append(f"step {step} round {round_}: an answer never saved: {pk.value!r}, "
                          f"receipts {pk.states}, refused {pk.refused!r}, dropped "
                          f"{pk.dropped!r}")
    if len(unsaved) > 5:
        m.problems.append(f"step {step} round {round_}: ... {len(unsaved) - 5} more unsaved")
    return picks


async def counted(host: Host, picks: list, step: int, since: float, a, m: Measures,
                  open_store, into: list | None = None) -> None:
    """Wait until the host's count shows every answer; the latency of each answer (an answer
    the host's page never counted is counted apart) goes to ``m.to_host[step]``; with ``into``
    (the kill's and the outage's rounds), when the count drew it."""
    def counts():
        return [c for c in host.counts if c[2] == step and c[0] >= since]
    if not await until(lambda: any(n >= len(picks) for *_, n in counts()),
                       f"the host's count of {len(picks)} answers at step {step}",
                       a.count_wait, m):
        def look():
            store = open_store()
            try:
                return store.room_view(host.code), store.pulse([host.code])[host.code]
            finally:
                store.close()
        view, pulse = await asyncio.to_thread(look)
        m.problems.append(f"the host's page stays at {max((c[3] for c in counts()), default=0)}"
                          f" while the store counts {view.n_answered} (pulse {pulse}, the "
                          f"host's last pulse {host.pulse}); its last runs (ended, kind, "
                          f"status, step, count), now {time.monotonic():.2f}: "
                          f"{list(host.trace)}")
    drawn = sorted(counts())                 # (started, ended, step, n), by start
    full = min((ended for _, ended, _, n in drawn if n >= len(picks)), default=None)
    # the first count drawn by a run begun after "saved" (or the first count of all)
    firsts, best = [], float("inf")
    for started, ended, _, _ in reversed(drawn):
        best = min(best, ended)
        firsts.append((started, best))
    firsts.reverse()
    starts = [f[0] for f in firsts]
    for p in picks:
        if not p.is_saved:
            continue
        i = bisect.bisect_right(starts, p.saved)
        seen = [t for t in (firsts[i][1] if i < len(firsts) else None, full) if t is not None]
        if seen and into is not None:
            into.append(min(seen))            # when the host's page counted it
        elif seen:
            m.to_host.setdefault(step, []).append(min(seen) - p.chosen)
        else:
            m.uncounted += 1


def check_store(open_store, code: str, phones, step: int, round_: int, m: Measures) -> None:
    """Each phone's last answer to this round, and how sure it said it was, against what the
    store has."""
    store = open_store()
    try:
        lost = []
        for p in phones:
            pick = p.picks.get((step, round_))
            if pick is None:
                continue
            got, level = store.mine(code, step, p.student_id)
            if plain(got) != plain(pick.value) or level != pick.confidence:
                lost.append(f"phone {p.n} sent {pick.value!r} ({pick.confidence}; receipts "
                            f"{pick.states}), the store has {got!r} ({level})")
        m.lost[(step, round_)] = lost
    finally:
        store.close()


async def move(host: Host, key: str, shows, phones, arrived, step: int, name: str, a,
               m: Measures, meter: Meter, idle_rate: dict) -> float:
    """The host presses ``key``; every phone must show it (``arrived(phone)``: when it did,
    or None). Each server process's CPU from the click until the last phone had it (0.3 s
    more, at most ``--think``'s least), less its idle rate, with the phones it serves.
    Returns when the click was sent."""
    cpu0, t0 = meter.per(), time.monotonic()
    sent, took = await host.click(key, shows)
    m.clicks.setdefault(name, []).append(took)
    if not await until(lambda: all(arrived(p) is not None for p in phones),
                       f"every phone's {name} at step {step}", a.wait, m):
        m.problems.append(_laggards([p for p in phones if arrived(p) is None]))
    last = max((arrived(p) for p in phones if arrived(p) is not None), default=sent)
    end = min(max(last, sent + took) + 0.3, sent + a.think[0])
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    wall = time.monotonic() - t0
    cpu1 = meter.per()
    served = {}
    for p in phones:
        served[p.backends[-1]] = served.get(p.backends[-1], 0) + 1
    m.move_cpu.append((step, name, wall, {
        b: (cpu1[b] - cpu0.get(b, 0.0) - idle_rate.get(b, 0.0) * wall, served.get(b, 0),
            b == host.tab.backend) for b in cpu1}))
    return sent


async def one_step(host, phones, step: int, a, rng, m: Measures, open_store, meter,
                   idle_rate: dict) -> None:
    mark = {p.n: (p.stream_bytes, p.wire["answers"]) for p in phones}
    if step > 1:
        sent = await move(host, "class_next", lambda h: h.step == step, phones,
                          lambda p: p.first_step.get(step), step, "Next", a, m, meter,
                          idle_rate)
        m.follow[step] = [p.first_step[step] - sent for p in phones if step in p.first_step]
        for p in phones:
            if step in p.first_step:
                b = p.backends[-1] + ("*" if p.backends[-1] == host.tab.backend else "")
                m.by_process.setdefault(step, {}).setdefault(b, []).append(
                    p.first_step[step] - sent)
        m.frame_kb[(step, "Next")] = _frame_kb(phones, step, "asking")
    since = time.monotonic()
    picks = await answer_round(phones, step, 1, a, rng, m)
    m.saved[step] = [pk.saved - pk.chosen for pk in picks if pk.is_saved]
    if picks:
        await counted(host, picks, step, since, a, m, open_store)
        await asyncio.to_thread(check_store, open_store, host.code, phones, step, 1, m)
    else:
        await asyncio.sleep(a.pause)
    if step > 1:
        m.move_kb[(step, "Next")] = [(p.stream_bytes - mark[p.n][0]) / 1000 for p in phones]
    m.answer_kb[step] = [(p.wire["answers"] - mark[p.n][1]) / 1000 for p in phones]
    mark = {p.n: p.stream_bytes for p in phones}
    sent = await move(host, "reveal", lambda h: h.step == step and "ask_again" in h.buttons,
                      phones, lambda p: p.revealed.get((step, 1)), step, "Reveal", a, m,
                      meter, idle_rate)
    m.reveal[step] = [p.revealed[(step, 1)] - sent for p in phones if (step, 1) in p.revealed]
    m.frame_kb[(step, "Reveal")] = _frame_kb(phones, step, "revealed")
    await asyncio.sleep(a.pause)
    m.move_kb[(step, "Reveal")] = [(p.stream_bytes - mark[p.n]) / 1000 for p in phones]


def _frame_kb(phones, step: int, phase: str) -> list[float]:
    """The room frame of the move, as each phone received it (its first of that state)."""
    out = []
    for p in phones:
        sizes = [f[5] for f in p.frames if f[1] == step and f[3] == phase]
        if sizes:
            out.append(sizes[0] / 1000)
    return out


async def back_to(step: int, host, phones, a, m: Measures, open_store) -> None:
    """The host goes back to ``step`` with the step picker (the store's ``set_step``, as the
    picker calls it), and every page follows."""
    if host.step == step:
        return

    def go():
        store = open_store()
        try:
            store.set_step(host.code, host.key, step)
        finally:
            store.close()
    await asyncio.to_thread(go)
    await until(lambda: host.step == step and "ask_again" in host.buttons and all(
        p.room and p.room["step"] == step for p in phones),
        f"every page back at step {step}", a.wait, m)


async def ask_again(host, phones, step: int, round_: int, a, m: Measures) -> bool:
    """*Ask again*, and every phone at the new round; False (a problem) if the host's page
    never showed it."""
    try:
        await host.click("ask_again", lambda h: h.step == step and "reveal" in h.buttons)
    except (RuntimeError, ConnectionError) as err:
        m.problems.append(f"the host could not ask round {round_} of step {step}: {err}")
        return False
    return await until(lambda: all(_asking(p, step, round_) for p in phones),
                       f"every phone's round {round_} of step {step}", a.wait, m)


async def reveal_round(host, phones, step: int, round_: int, a, m: Measures) -> list:
    try:
        sent, _ = await host.click("reveal",
                                   lambda h: h.step == step and "ask_again" in h.buttons)
    except (RuntimeError, ConnectionError) as err:
        m.problems.append(f"the host could not reveal round {round_} of step {step}: {err}")
        return []
    await until(lambda: all((step, round_) in p.revealed for p in phones),
                f"every phone's reveal of round {round_} of step {step}", a.wait, m)
    return [p.revealed[(step, round_)] - sent for p in phones if (step, round_) in p.revealed]


async def follow_up_round(host, phones, a, rng, m: Measures, open_store) -> None:
    """*Ask a follow-up* on step 1 (the same question on a new case): every phone must show
    the new round and its new question, every answer to it must be saved and counted, and
    its reveal must reach every phone (issue 35: the room's live targets with follow-ups)."""
    step = 1
    round_ = max(r for (s, r) in m.sent if s == step) + 1
    try:
        sent, _ = await host.click("follow_up", lambda h: h.step == step and "reveal" in
                                   h.buttons)
    except (RuntimeError, ConnectionError) as err:
        m.problems.append(f"the host could not ask a follow-up: {err}")
        return
    if not await until(lambda: all(_asking(p, step, round_) for p in phones),
                       f"every phone's follow-up (round {round_})", a.wait, m):
        return
    shown = [min(t for (st_, r, ph, _), t in p.shown.items()
                 if (st_, r, ph) == (step, round_, "asking")) - sent for p in phones]
    since = time.monotonic()
    picks = await answer_round(phones, step, round_, a, rng, m)
    if picks:
        await counted(host, picks, step, since, a, m, open_store,
                      into=m.follow_up.setdefault("to_host", []))
        await asyncio.to_thread(check_store, open_store, host.code, phones, step, round_, m)
    m.follow_up.update(round=round_, shown=shown,
                       reveal=await reveal_round(host, phones, step, round_, a, m))


async def kill_round(host, phones, hall, a, rng, m: Measures, open_store) -> None:
    """Ask again on the class's step; while the class answers, kill the backend that holds
    the most phones (not the host's), ``--kill-taps`` of its phones tapping just before;
    then every answer must be in the store and every phone must follow the reveal."""
    step = host.step
    if not await ask_again(host, phones, step, 2, a, m):
        return
    on = {}
    for p in phones:
        on.setdefault(p.backends[-1], []).append(p)
    victim = max((b for b in on if b != host.tab.backend), key=lambda b: len(on[b]))
    # some taps just before the kill, some in its instant: answers on their way
    at_kill = {p.n: a.kill_after - 0.02 + 0.03 * i / max(1, a.kill_taps - 1)
               for i, p in enumerate(on[victim][:a.kill_taps])}
    think = {p.n: a.kill_after + rng.uniform(*a.think) - a.think[0] for p in on[victim]
             if p.n not in at_kill and rng.random() < 0.5}      # half of them after it
    since = time.monotonic()
    answering = asyncio.create_task(answer_round(phones, step, 2, a, rng, m,
                                                 {**think, **at_kill}))
    await asyncio.sleep(a.kill_after)
    mine = [p.picks.get((step, 2)) for p in on[victim]]
    unsaved = sum(1 for pk in mine if pk is not None and not pk.is_saved)
    os.kill(hall.backends[victim][0], signal.SIGKILL)
    killed = time.monotonic()
    say(f"killed {victim} ({len(on[victim])} phones; {sum(pk is not None for pk in mine)} had "
        f"tapped, {unsaved} of them not yet saved)")
    picks = await answering
    await counted(host, picks, step, since, a, m, open_store, [])
    await asyncio.to_thread(check_store, open_store, host.code, phones, step, 2, m)
    await until(lambda: all(p.reconnects and p.connected for p in on[victim]),
                f"the {len(on[victim])} phones of {victim} back", a.wait, m)
    back = [p.stream.errors[-1][0] for p in on[victim] if p.stream.errors]
    reopened = [max(0.0, p.first_heard_after(killed) - killed) for p in on[victim]
                if p.first_heard_after(killed) is not None]    # (the room, or the phone's own
                                                                # part: it has the room's frame)
    reveal = await reveal_round(host, phones, step, 2, a, m)
    victims = {p.n for p in on[victim]}
    m.kill = {"victim": victim, "phones": len(on[victim]),
              "tapped before": sum(pk is not None for pk in mine),
              "unsaved at the kill": unsaved,
              "reconnected": sum(p.reconnects > 0 for p in phones),
              "sent": len(picks), "lost": len(m.lost[(step, 2)]),
              "resent": sum(pk.sends > 1 for pk in picks),
              "noticed": [t - killed for t in back],
              "back": reopened,
              "failed sends": sum(pk.failures for pk in picks),
              "reveal": reveal,
              "reveal_victims": [p.revealed[(step, 2)] - (killed + 0) for p in phones
                                 if p.n in victims and (step, 2) in p.revealed],
              "restarts": [line for line in hall.lines if "restarting" in line]}


class Outage:
    """The class store out for ``seconds``: SQLite's write lock held by another connection
    (``BEGIN IMMEDIATE``), or redis-server killed and started again on its append-only
    file."""

    def __init__(self, kind: str, path: Path, redis: RedisServer | None, meter: Meter):
        self.kind, self.path, self.redis, self.meter = kind, path, redis, meter
        self.started = self.ended = 0.0
        self._stop = threading.Event()
        self._held = threading.Event()
        self._thread: threading.Thread | None = None

    def _hold(self) -> None:
        con = sqlite3.connect(str(self.path), timeout=60, isolation_level=None)
        try:
            con.execute("BEGIN IMMEDIATE")
            self._held.set()
            self._stop.wait()
            con.execute("ROLLBACK")
        finally:
            con.close()

    async def begin(self) -> None:
        if self.kind == "sqlite":
            self._thread = threading.Thread(target=self._hold, daemon=True)
            self._thread.start()
            await asyncio.to_thread(self._held.wait, 60)
        else:
            self.meter.redis()
            await asyncio.to_thread(self.redis.kill)
        self.started = time.monotonic()

    async def end(self) -> None:
        if self.kind == "sqlite":
            self._stop.set()
            await asyncio.to_thread(self._thread.join, 60)
        else:
            await asyncio.to_thread(self.redis.start)
            self.meter.redis_pid = self.redis.pid
        self.ended = time.monotonic()


async def outage_round(kind: str, host, phones, a, rng, m: Measures, open_store,
                       outage: Outage) -> None:
    """Ask again; the store goes out for ``--outage`` seconds while the phones answer (at
    ``--outage-taps`` seconds into it); every answer must be saved once it is back."""
    step = host.step
    round_ = max(r for (s, r) in m.sent if s == step) + 1
    if not await ask_again(host, phones, step, round_, a, m):
        return
    await outage.begin()
    say(f"the store is out ({kind}: "
        f"{'write lock held' if kind == 'sqlite' else 'redis-server killed'}) for "
        f"{a.outage:g} s; the phones answer meanwhile")
    low, high = a.outage_taps
    answering = asyncio.create_task(answer_round(
        phones, step, round_, a, rng, m,
        {p.n: rng.uniform(low, min(high, a.outage - 1)) for p in phones}))
    await asyncio.sleep(max(0.0, outage.started + a.outage - time.monotonic()))
    before = [pk for p in phones if (pk := p.picks.get((step, round_))) is not None]
    saved_during = sum(pk.is_saved for pk in before)
    await outage.end()
    say(f"the store is back ({len(before)} had answered, {saved_during} saved meanwhile)")
    picks = await answering
    to_host = []
    await counted(host, picks, step, outage.ended, a, m, open_store, to_host)
    await asyncio.to_thread(check_store, open_store, host.code, phones, step, round_, m)
    reveal = await reveal_round(host, phones, step, round_, a, m)
    m.outage = {"kind": kind, "seconds": outage.ended - outage.started, "sent": len(picks),
                "lost": len(m.lost[(step, round_)]), "saved during": saved_during,
                "retrying": sum(any(s == "retrying" for s in pk.states) for pk in picks),
                "failed sends": sum(pk.failures for pk in picks),
                "resent": sum(pk.sends > 1 for pk in picks),
                "told": sum(any(pr for _, pr in p.problems_seen) for p in phones),
                "still told": sum(bool(p.problem) for p in phones),
                "back → saved": [pk.saved - outage.ended for pk in picks
                                 if pk.is_saved and pk.saved >= outage.ended],
                "back → host": [t - outage.ended for t in to_host],
                "reveal": reveal}


async def run_class(kind: str, url: str, hall: LectureHall, meter: Meter, open_store, a,
                    outage: Outage) -> Measures:
    m = Measures(students=a.students)
    rng = random.Random(a.seed)
    with Phase(m, "nobody connected", meter):
        await asyncio.sleep(a.baseline)
    host = Host(url, a.wait)
    await host.open()
    if a.confidence:                  # the host's switch: every answer says how sure
        await asyncio.to_thread(_ask_how_sure, open_store, host)
    say(f"room {host.code}; {a.students} phones join over {a.ramp:g} s")
    phones = [Phone(i, url, host.code, timeout=a.wait, rng=random.Random(a.seed * 7919 + i),
                    language=a.languages[i % len(a.languages)] if a.languages else None)
              for i in range(a.students)]
    t0 = time.monotonic()

    async def join(i: int, p: Phone):
        await asyncio.sleep(max(0.0, t0 + a.ramp * i / max(1, a.students - 1)
                                - time.monotonic()))
        await p.join()
    with Phase(m, "joining", meter):
        results = await asyncio.gather(*(join(i, p) for i, p in enumerate(phones)),
                                       return_exceptions=True)
    m.problems += [f"a join failed: {r!r}" for r in results if isinstance(r, BaseException)]
    for p, r in zip(phones, results, strict=True):
        if isinstance(r, BaseException):
            await p.leave()
    phones = [p for p, r in zip(phones, results, strict=True)
              if not isinstance(r, BaseException)]
    m.joins = [p.joined for p in phones]
    m.page_kb = sum(p.wire["page"] for p in phones) / max(1, len(phones)) / 1000
    for lang in a.languages or ():
        mine = [p for p in phones if p.language == lang]
        m.languages[lang] = (len(mine), sum(p.page_language == lang for p in mine),
                             sum(p.wire["page"] for p in mine) / max(1, len(mine)) / 1000)
    for p in phones:
        m.servers[p.backends[0]] = m.servers.get(p.backends[0], 0) + 1
    await until(lambda: all(p.room and p.room["step"] == 1 for p in phones),
                "every phone at step 1", a.wait, m)
    idle0 = meter.per()
    with Phase(m, "idle class", meter):
        await asyncio.sleep(a.idle)
    idle_rate = {b: (v - idle0.get(b, 0.0)) / m.cpu["idle class"][1]
                 for b, v in meter.per().items()}
    say(f"the class begins (idle: {100 * sum(idle_rate.values()):.1f} % of a core)")
    memory = Memory(hall)
    memory.start()
    lag = Lag()
    lag.start()
    spies = _profile_start(hall, a)
    client0 = time.process_time()
    with Phase(m, "the class", meter):
        for step in range(1, a.steps + 1):
            await one_step(host, phones, step, a, rng, m, open_store, meter, idle_rate)
            gc.freeze()                      # what this step kept: out of later collections
            say(f"step {step}: Next p95 {_p95(m.follow.get(step))}, Reveal p95 "
                f"{_p95(m.reveal.get(step))}, answer → host p95 {_p95(m.to_host.get(step))}"
                f", {m.sent.get((step, 1), 0)} answers ({m.sure.get((step, 1), 0)} saying how "
                f"sure), "
                f"{len(m.lost.get((step, 1), []))} lost; stream "
                f"{_mean(m.move_kb.get((step, 'Next'), [0])):.1f} / "
                f"{_mean(m.move_kb[(step, 'Reveal')]):.1f} kB a phone (Next / Reveal)")
    m.client_cpu = time.process_time() - client0
    m.client_lag, m.client_gc = lag.stop()
    m.profile = _profile_stop(spies, a)
    answered = [step for (step, round_), n in m.sent.items() if round_ == 1 and n]
    if a.follow_up and 1 in answered:
        with Phase(m, "the follow-up", meter):
            await back_to(1, host, phones, a, m, open_store)
            await follow_up_round(host, phones, a, rng, m, open_store)
    if a.kill_after > 0 and answered:
        with Phase(m, "the kill round", meter):
            await back_to(max(answered), host, phones, a, m, open_store)
            await kill_round(host, phones, hall, a, rng, m, open_store)
    if a.outage > 0 and answered:
        with Phase(m, "the store's outage", meter):
            await back_to(max(answered), host, phones, a, m, open_store)
            await outage_round(kind, host, phones, a, rng, m, open_store, outage)
    m.memory = memory.stop()
    m.host = {"runs": host.runs, "full runs": host.full_runs, "pulses": host.pulses,
              "triggers": dict(host.triggers), "moved mid-run": host.moved_mid_run,
              "lost ends": host.lost_ends}
    await asyncio.gather(*(p.leave() for p in phones))
    for p in phones:
        m.problems += p.problems
    m.problems += host.problems
    await host.close()
    return m


def _ask_how_sure(open_store, host: Host) -> None:
    store = open_store()
    try:
        store.set_options(host.code, host.key, confidence=True)
    finally:
        store.close()


def _profile_start(hall: LectureHall, a) -> list:
    if not a.profile:
        return []
    a.profile.mkdir(parents=True, exist_ok=True)
    spies = []
    for name, (pid, _) in hall.backends.items():
        out = a.profile / f"{name}.txt"
        spies.append((name, out, subprocess.Popen(
            ["py-spy", "record", "--pid", str(pid), "--format", "raw", "--output", str(out),
             "--rate", str(PROFILE_RATE), "--nonblocking", "--threads"],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)))
    return spies


def _profile_stop(spies: list, a) -> str:
    text = io.StringIO()
    for name, out, spy in spies:
        spy.send_signal(signal.SIGINT)
        try:
            spy.wait(60)
        except subprocess.TimeoutExpired:
            spy.kill()
        with contextlib.redirect_stdout(text):
            print(f"\n#### py-spy, server process {name} (the class, {PROFILE_RATE} Hz, "
                  f"{out})")
            if out.exists():
                print_profile(out, top=30)
            else:
                print("no profile written")
    return text.getvalue()


def _laggards(late: list) -> str:
    """Who did not follow: the first few, their process and what they saw last."""
    return f"{len(late)} phones did not follow: " + "; ".join(
        f"phone {p.n} on {p.backends}, connected {p.connected}, reconnects {p.reconnects}, "
        f"last frames {[f[1:5] for f in p.frames[-2:]]}, stream errors "
        f"{[e[1] for e in p.stream.errors[-2:]] if p.stream else None}" for p in late[:5])


def _p95(values) -> str:
    return f"{pct(values, 95):.2f} s" if values else "n/a"


def _mean(values) -> float:
    return sum(values) / len(values) if values else 0.0


def measure(kind: str, a) -> tuple[Measures, dict]:
    with tempfile.TemporaryDirectory(prefix=f"xattn-room-{kind}-") as tmp, ExitStack() as stack:
        path = Path(tmp) / "classes.sqlite3"
        redis = (stack.enter_context(RedisServer(Path(tmp), persist=True))
                 if kind == "redis" else None)
        env = {"XATTN_CLASS_STORE": str(path), "XATTN_REDIS_URL": redis.url if redis else "",
               # every phone comes from this machine: one address for all the new students;
               # a join's work at 4 x 2**10 (these phones share this machine's two cores with the
               # server; a hall's phones each do their own 4 x 2**15 on their own CPU, and what
               # the server does per join is the same either way: one HMAC and one SHA-256)
               "XATTN_LIMITS": f"new_students={max(5000, 2 * a.students)}/600,"
                               "join_work_bits=10"}

        def open_store():
            from xattn.classroom import open_store as opened
            return opened(redis_url=env["XATTN_REDIS_URL"], path=str(path))
        print(f"\n{kind}: deploy/serve.sh 2 on port {a.port} ...", flush=True)
        hall = stack.enter_context(LectureHall(
            processes=2, env=env, port=a.port,
            run_dir=ROOT / "test-artifacts" / f"bench-room-{kind}"))
        meter = Meter(hall)
        meter.redis_pid = redis.pid if redis else 0
        outage = Outage(kind, path, redis, meter)
        load0, redis0 = os.getloadavg(), meter.redis()
        m = asyncio.run(run_class(kind, hall.url, hall, meter, open_store, a, outage))
        info = {"load": (load0, os.getloadavg()),
                "redis cpu": meter.redis() - redis0 if redis else None,
                "restarts": [line for line in hall.lines if "restarting" in line]}
    return m, info


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=1000, help="phones in the class")
    ap.add_argument("--steps", type=int, default=len(STEPS), help="lesson steps (default all)")
    ap.add_argument("--backends", nargs="+", default=["sqlite", "redis"],
                    choices=["sqlite", "redis"])
    ap.add_argument("--port", type=int, default=9150,
                    help="HAProxy's port; the Streamlit processes take the next two")
    ap.add_argument("--ramp", type=float, default=30.0, help="seconds over which phones join")
    ap.add_argument("--idle", type=float, default=30.0,
                    help="seconds of the joined class doing nothing (server CPU)")
    ap.add_argument("--baseline", type=float, default=10.0,
                    help="seconds of server CPU with nobody connected")
    ap.add_argument("--think", type=float, nargs=2, default=(2.0, 10.0),
                    help="a phone answers this many seconds after the question shows")
    ap.add_argument("--pause", type=float, default=4.0,
                    help="seconds the class looks at an answer")
    ap.add_argument("--kill-after", type=float, default=4.0,
                    help="seconds into the second round of the last step the phones "
                         "answered to kill a backend (0: no such round)")
    ap.add_argument("--kill-taps", type=int, default=20,
                    help="phones of the killed backend that tap from 20 ms before the kill to "
                         "10 ms after it")
    ap.add_argument("--outage", type=float, default=60.0,
                    help="seconds the class store is out in the last round (0: no such "
                         "round)")
    ap.add_argument("--outage-taps", type=float, nargs=2, default=(1.0, 30.0),
                    help="the phones answer this many seconds into the outage")
    ap.add_argument("--wait", type=float, default=240.0,
                    help="the longest any one wait may take before it is a problem")
    ap.add_argument("--count-wait", type=float, default=30.0,
                    help="seconds the host waits for its count to show every answer before "
                         "it reveals anyway (a problem)")
    ap.add_argument("--confidence", action=argparse.BooleanOptionalAction, default=True,
                    help="the room asks how sure each answer is, and the phones say it "
                         "(default: on)")
    ap.add_argument("--follow-up", action=argparse.BooleanOptionalAction, default=True,
                    help="after the lesson, ask step 1 again on a new case (a follow-up) and "
                         "answer it")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--languages", nargs="+", metavar="LANG",
                    help="the phones' browser languages, in turn (Accept-Language), e.g. "
                         "en fr ar; each phone's page must come in its own")
    ap.add_argument("--profile", type=Path, metavar="DIR",
                    help="sample both server processes with py-spy during the class (raw "
                         "stacks in DIR) and print where their time goes")
    ap.add_argument("--out", type=Path, help="write the results here (Markdown)")
    a = ap.parse_args(argv)
    if haproxy_missing():
        ap.error(f"needs HAProxy: {haproxy_missing()}")
    if "redis" in a.backends and redis_binary() is None:
        ap.error("--backends redis needs redis-server (apt-get install redis-server)")
    if not 1 <= a.steps <= len(STEPS):
        ap.error(f"--steps is a number of lesson steps, 1 to {len(STEPS)}")
    if a.profile and not shutil.which("py-spy"):
        ap.error("--profile needs py-spy on PATH (pip install py-spy)")
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
        a.out.write_text(f"# A class in one room: {a.students} phones on deploy/serve.sh 2\n\n"
                         "    python -m benchmarks.bench_room " + " ".join(sys.argv[1:])
                         + "\n\n" + text + "\n")
    return 0 if all(not m.problems for m, _ in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
