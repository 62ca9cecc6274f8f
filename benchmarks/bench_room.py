"""A class in one room: N students (200) follow a host through the lesson on deploy/serve.sh 2.

    python -m benchmarks.bench_room [--students 200] [--steps 9] [--backends sqlite redis]
                                    [--out benchmarks/results/room.md]

Starts ``deploy/serve.sh 2`` (two Streamlit processes behind HAProxy with cookie affinity,
ports 8910-8912 by default) with the class store on one SQLite file, then again on Redis (a
``redis-server`` this script starts on a unix socket). Every person is a client that speaks
Streamlit's websocket protocol as the browser does (``benchmarks/load_test.py`` explains the
approach): ``GET /`` for HAProxy's affinity cookie, one websocket kept open, each rerun a
``rerun_script`` BackMsg carrying the page's link and every widget's state, and every
``run_every`` fragment rerun on its own timer, the way the frontend's ``setInterval`` does
(whatever is running; the server coalesces). So each student's page follows the class through
its own polling fragment (``follow`` in xattn/ui/room.py), and the host's page counts through
its own (``class_controls``).

The class: the host opens ``?class=new``; the students open ``?room=CODE`` over ``--ramp``
seconds and, before anyone answers, the room only polls for ``--idle`` seconds (what polling
alone costs). Then for each step: the host clicks *Next step* (a button in the host's
fragment, sent as the browser sends a click); each student answers once when their page shows
the step's question (a tap on ``st.pills``: the option's text as the browser sends it; or a
number in ``st.number_input``), after ``--think`` seconds; the host waits until its page
counts every student, clicks *Reveal*, and waits until every student's page drew the weights.

Measured:

- answers cast (sent) against answers counted (the store's results per step, and the host's
  last count before the reveal): they must be equal;
- answer → the host's count: from a student's answer to the first count on the host's page
  that *certainly* includes it (a count the host's page asked for after the student's page
  confirmed the answer), and, less strictly, to the first count at least as high as the
  answer's place in the step (by sending order). Target p95 < 3 s;
- change → page: a student's own answer to their page's updated run (script finished, the
  "Your prediction is in" caption drawn). Target p95 < 0.5 s;
- host's click → each student's page: the next step drawn (follow), the weights drawn (reveal);
- server CPU (utime + stime of both Streamlit processes, /proc): per student per minute of
  class, and per poll (one ``follow`` fragment rerun) from the idle window, less the
  processes' CPU with nobody connected;
- runs whose end never came: a page's ``new_session`` before the last run's
  ``script_finished`` (the server dropped the rest of that run). After a full run's
  ``new_session`` the browser has dropped every fragment timer, so a lost full run leaves the
  page *frozen* (no timer: it no longer follows the class) or *half drawn*. Such a page is
  tapped after 10 s, as its person would (a full rerun), and counted: a failure of the page.
  Cause (Streamlit 1.67, seen under CPU load): a rerun request that finds the session's
  ScriptRunner finished but its events not yet handled on the event loop makes a new runner,
  and ``AppSession`` ignores the old runner's remaining events (``sender is not
  self._scriptrunner``). The pages' histories go to ``test-artifacts/bench-room-*/pages.txt``.

The load generator runs on the same 2-core machine (its CPU is reported), and so did other
agents' work: the load average and the machine's CPU pressure (PSI) are printed with the
results.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qsl

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState
from websockets.asyncio.client import connect

from benchmarks.load_test import cpu_pressure_seconds, cpu_seconds, http_get, pct, rss_mb
from benchmarks.machine import machine_line
from devtools.lecture_hall import LectureHall, haproxy_missing
from xattn.lesson import STEPS

ROOT = Path(__file__).resolve().parent.parent
DONE = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
STEP = re.compile(r"^## Step (\d+) of (\d+)")
COUNT = re.compile(r"^(\d+) of (\d+) answered$")
HIDDEN = "hidden until"
IN = "Your prediction is in"
WAIT = 600.0            # seconds: the longest any one wait may take before it is an error


def say(text: str) -> None:
    print(f"  {time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)


# --- one browser tab, over the protocol -------------------------------------------------------

@dataclass
class Page:
    """What one run drew (a full run: the page; a fragment run: that fragment)."""

    full: bool
    at: float                                   # time.monotonic() the run finished
    step: int = 0
    hidden: bool = False                        # the weights wait for the reveal
    said_in: bool = False                       # "Your prediction is in"
    predict: object = None                      # the prediction widget's proto
    predict_kind: str = ""                      # "button_group" or "number_input"
    count: tuple[int, int] | None = None        # the host's "N of M answered"
    charts: list[str] = field(default_factory=list)   # plotly_chart ids (not the class's)
    buttons: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (id, fragment)
    widgets: set[str] = field(default_factory=set)
    asked_at: float = 0.0                       # when the request that led to it was sent
    complete: bool = True                       # False: ended early for a queued rerun
    alerts: list[str] = field(default_factory=list)

    @property
    def revealed(self) -> bool:
        return self.full and self.step > 0 and not self.hidden and bool(self.charts)


class Tab:
    """One person's page: a websocket kept open, a rerun per BackMsg, fragment timers."""

    def __init__(self, name: str, base: str, query: str, stats: Stats):
        self.name, self.base, self.query, self.stats = name, base, query, stats
        self.cookies: dict[str, str] = {}
        self.server = ""
        self.page_hash = ""
        self.ws = None
        self.page: Page | None = None            # the last full run
        self.widgets: dict[str, object] = {}     # widget id -> WidgetState, sent every rerun
        self.timers: dict[str, tuple[float, asyncio.Task]] = {}
        self.waiters: list[tuple[object, asyncio.Future]] = []
        self.listeners: list = []                # called with every finished run's Page
        self.asked: list[float] = []             # send times not yet answered by a run
        self.last_sent = float("nan")
        self.polls = 0                           # fragment runs finished
        self.early = 0                           # runs interrupted by the next request
        self.steps: set[int] = set()             # steps this page has shown
        self.reveals: set[int] = set()           # steps whose weights it has drawn
        self.done: set[int] = set()              # steps this student answered (or tried)
        self.trace: list[tuple] = []             # the host's runs, to explain a problem
        self.events = collections.deque(maxlen=150)   # the last messages each way, ditto
        self.running = ""                        # "full"/"fragment": a run started, not ended
        self.heard = time.monotonic()            # the last message from the server
        self.lost: list[list] = []               # runs whose end never came (their messages)
        self.woken = 0                           # frozen, so its person tapped the page
        self.broken_at = 0.0                     # a full run's end was lost then (0: not)
        self._elements: list = []
        self._fragments: set = set()             # ("", fragment id) drawn by this run
        self._run_full = True                    # the run under way started as a full run
        self.buttons: dict[str, tuple[str, str]] = {}   # on screen now: key -> (id, fragment)
        self._tasks: list[asyncio.Task] = []

    async def open(self) -> Page:
        status, _, set_cookies, _ = await http_get(self.base, self.cookies, timeout=WAIT)
        if status != 200:
            raise ConnectionError(f"{self.name}: GET / answered {status}")
        self.cookies.update(dict(set_cookies))
        stream = "ws" + self.base.removeprefix("http").rstrip("/") + "/_stcore/stream"
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        self.ws = await connect(stream, subprotocols=["streamlit"], max_size=None,
                                open_timeout=WAIT, additional_headers={"Cookie": cookie},
                                ping_interval=None)
        self.server = self.ws.response.headers.get("X-Xattn-Server", "?")
        self._tasks.append(asyncio.create_task(self._read()))
        return await self.rerun(lambda p: p.full)

    def _stop_timers(self) -> None:
        for _, task in self.timers.values():
            task.cancel()
        self.timers.clear()

    async def close(self) -> None:
        self._stop_timers()
        for task in self._tasks:
            task.cancel()
        if self.ws is not None:
            await self.ws.close()

    # -- sending -----------------------------------------------------------------------------
    async def send(self, fragment: str = "", trigger: str = "", auto: bool = False) -> float:
        msg = BackMsg()
        rerun = msg.rerun_script
        rerun.query_string, rerun.page_script_hash = self.query, self.page_hash
        rerun.fragment_id, rerun.is_auto_rerun = fragment, auto
        rerun.widget_states.widgets.extend(self.widgets.values())
        if trigger:
            rerun.widget_states.widgets.add(id=trigger, trigger_value=True)
        at = self.last_sent = time.monotonic()
        self.asked.append(at)
        self.events.append((round(at, 2), "send", fragment[-6:], auto, trigger[-12:]))
        await self.ws.send(msg.SerializeToString())
        return at

    async def rerun(self, done, **send) -> Page:
        """Send a rerun; the first finished run after it for which ``done(page)`` holds."""
        future = self.until(done)
        await self.send(**send)
        return await future

    def until(self, done, timeout: float = WAIT):
        future = asyncio.get_running_loop().create_future()
        self.waiters.append((done, future))
        return asyncio.wait_for(future, timeout)

    def answer(self, value) -> None:
        """Set the prediction widget's state as the browser does after a tap or a number."""
        p = self.page.predict
        state = WidgetState(id=p.id)
        if self.page.predict_kind == "button_group":
            state.string_array_value.data.append(p.options[value].content)
        else:
            state.double_value = value
        self.widgets[p.id] = state

    # -- receiving ---------------------------------------------------------------------------
    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                self.stats.bytes += len(raw)
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                self._handle(msg, msg.WhichOneof("type"))
        except Exception as err:  # noqa: BLE001 - a dead reader must not go unnoticed
            self.stats.problems.append(f"{self.name}: its connection ended: {err!r}")

    def _handle(self, msg: ForwardMsg, kind: str) -> None:
        self.heard = time.monotonic()
        if kind == "new_session":
            starts = "fragment" if msg.metadata.run.fragment_ids else "full"
            if self.running:
                # a run began before the last one ended: the server never sent the rest of
                # that run (its elements, its fragments' timers, its script_finished)
                self.lost.append([self.running, starts, list(self.events)[-12:]])
                self.stats.lost[(self.running, starts)] = \
                    self.stats.lost.get((self.running, starts), 0) + 1
                if self.running == "full":     # the page is half drawn, half stale
                    self.broken_at = self.broken_at or time.monotonic()
            self.running = starts
        elif kind == "script_finished":
            self.running = ""
        if kind == "new_session":
            self.events.append((round(time.monotonic(), 2), kind,
                                [f[-6:] for f in msg.metadata.run.fragment_ids]))
        elif kind in ("auto_rerun", "stop_auto_rerun", "script_finished"):
            detail = getattr(msg, kind)
            self.events.append((round(time.monotonic(), 2), kind,
                                detail if kind == "script_finished" else
                                str(detail).replace("\n", " ")[-60:]))
        if kind == "new_session":
            self.page_hash = msg.new_session.page_script_hash or self.page_hash
            self._elements = []
            self._run_full = not msg.metadata.run.fragment_ids
            if self._run_full:
                self._stop_timers()       # a full run: the frontend drops every timer;
                                          # the run registers its fragments' again
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":
            self._timer(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids:
                if fid in self.timers:
                    self.timers.pop(fid)[1].cancel()
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._elements.append((msg.delta.new_element, msg.delta.fragment_id))
            self._fragments.add(("", msg.delta.fragment_id))
        elif kind == "script_finished":
            if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                self.early += 1          # what it drew stays on screen, as in the browser
            elif msg.script_finished not in DONE:
                self.stats.problems.append(f"{self.name}: script finished with status "
                                           f"{msg.script_finished}")
            self._finished(msg.script_finished)

    def _finished(self, status: int) -> None:
        """A run ended. A full run ended early (another rerun was queued) still drew what
        it drew, and the browser keeps it: it is the page too, just not ``complete``."""
        full = self._run_full
        page = read_page(self._elements, full, self.stats.problems, self.name)
        page.complete = status in DONE
        page.asked_at = self.asked[0] if self.asked else self.last_sent
        if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            self.asked.clear()       # an interrupted run: the rerun it yields to was asked too
        self._elements, self._fragments = [], set()
        if self.name == "host":
            self.trace.append((round(page.at, 2), status, page.step, sorted(page.buttons),
                               page.count, page.alerts))
        else:
            self.trace = [*self.trace[-29:], (round(page.at, 2), status, full, page.step,
                                             page.hidden, len(page.charts), page.alerts)]
        if full:
            if status == ForwardMsg.FINISHED_SUCCESSFULLY:
                self.broken_at = 0.0
            self.page = page
            self.buttons = dict(page.buttons)
            if page.complete:
                self.widgets = {k: v for k, v in self.widgets.items() if k in page.widgets}
            elif self.name == "host":
                self.stats.host_full_early += 1
        else:                        # a fragment redraws its own buttons only
            drawn = {f for _, f in page.buttons.values()} | {f for _, f in self._fragments}
            self.buttons = {k: v for k, v in self.buttons.items() if v[1] not in drawn}
            self.buttons.update(page.buttons)
            self.polls += page.complete
        for listener in self.listeners:
            listener(self, page)
        for done, future in list(self.waiters):
            if future.done():
                self.waiters.remove((done, future))
            elif done(page):
                future.set_result(page)
                self.waiters.remove((done, future))

    def _timer(self, fragment: str, every: float) -> None:
        if fragment in self.timers and self.timers[fragment][0] == every:
            return                                  # the frontend keeps a running timer
        if fragment in self.timers:
            self.timers[fragment][1].cancel()

        async def tick():
            while True:                              # setInterval: whatever is running
                await asyncio.sleep(every)
                await self.send(fragment=fragment, auto=True)
        self.timers[fragment] = (every, asyncio.create_task(tick()))


def read_page(elements, full: bool, problems: list[str], name: str) -> Page:
    page = Page(full, time.monotonic())
    for el, fragment in elements:
        kind = el.WhichOneof("type")
        proto = getattr(el, kind)
        wid = getattr(proto, "id", "") or ""
        if wid:
            page.widgets.add(wid)
        if kind == "markdown":
            if m := STEP.match(proto.body):
                page.step = int(m[1])
            page.said_in = page.said_in or IN in proto.body
        elif kind == "alert":
            page.hidden = page.hidden or HIDDEN in proto.body
            page.alerts.append(proto.body[:100])
            if proto.format in (Alert.ERROR, Alert.WARNING):
                problems.append(f"{name}: {proto.body[:160]}")
        elif kind == "metric" and (m := COUNT.match(proto.body)):
            page.count = (int(m[1]), int(m[2]))
        elif kind in ("button_group", "number_input") and wid.endswith("-predict"):
            page.predict, page.predict_kind = proto, kind
        elif kind == "button":
            page.buttons[wid.rsplit("-", 1)[-1]] = (wid, fragment)
        elif kind == "plotly_chart" and "class_" not in wid:
            page.charts.append(wid)
        elif kind == "exception":
            problems.append(f"{name}: exception {proto.type}: {proto.message[:160]}")
    return page


# --- the class --------------------------------------------------------------------------------

@dataclass
class Stats:
    problems: list[str] = field(default_factory=list)
    bytes: int = 0
    loads: list[float] = field(default_factory=list)            # a student's first page
    change: list[float] = field(default_factory=list)           # answer -> own page
    to_host: list[float] = field(default_factory=list)          # answer -> host's count (sure)
    to_host_rank: list[float] = field(default_factory=list)     # ... by place in the step
    follow: dict[int, list[float]] = field(default_factory=dict)   # Next -> student's step
    reveal: dict[int, list[float]] = field(default_factory=dict)   # Reveal -> weights drawn
    cast: dict[int, int] = field(default_factory=dict)          # answers sent per step
    host_count: dict[int, int] = field(default_factory=dict)    # host's count at the reveal
    counted: dict[int, int] = field(default_factory=dict)       # the store's, per step
    answers: list[tuple[int, float, float]] = field(default_factory=list)  # step, sent, sure
    counts: list[tuple[int, float, float, int]] = field(default_factory=list)  # host's counts
    servers: dict[str, int] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)         # phase -> server CPU seconds
    seconds: dict[str, float] = field(default_factory=dict)     # phase -> wall seconds
    polls: dict[str, int] = field(default_factory=dict)         # phase -> fragment runs
    host_clicks: dict[str, list[float]] = field(default_factory=dict)
    client: dict[str, float] = field(default_factory=dict)      # phase -> this process's CPU
    pressure: dict[str, float] = field(default_factory=dict)    # phase -> PSI "some" seconds
    received: dict[str, int] = field(default_factory=dict)      # phase -> bytes to clients
    host_runs: tuple[int, int] = (0, 0)          # the host's fragment runs: done, interrupted
    host_full_early: int = 0                     # the host's full runs that ended early
    notes: list[str] = field(default_factory=list)   # oddities that are not failures
    student_early: int = 0                       # students' runs interrupted by a rerun
    lost: dict[tuple[str, str], int] = field(default_factory=dict)  # (lost run, next run)
    woken: list[str] = field(default_factory=list)   # pages their person had to tap
    dumps: list[str] = field(default_factory=list)   # pages' histories, for pages.txt


@dataclass
class Plan:
    """What the host did when: students' pages are timed against it."""

    students: int
    step: int = 0
    moved: dict[int, float] = field(default_factory=dict)
    revealed: dict[int, float] = field(default_factory=dict)
    answering: asyncio.Event = field(default_factory=asyncio.Event)
    over: asyncio.Event = field(default_factory=asyncio.Event)


def watch_student(plan: Plan, stats: Stats):
    """Times a student's page against the host's clicks: its first run at each step the
    host moved to, and its first run with the weights drawn after each reveal."""
    def listener(tab: Tab, page: Page) -> None:
        s = page.step
        if not page.full or not s:
            return
        if s in plan.moved and s not in tab.steps:
            tab.steps.add(s)
            if s > 1:                            # step 1: the page's first load
                stats.follow.setdefault(s, []).append(page.at - plan.moved[s])
        if page.revealed and s in plan.revealed and s not in tab.reveals:
            tab.reveals.add(s)
            stats.reveal.setdefault(s, []).append(page.at - plan.revealed[s])
    return listener




async def student(tab: Tab, plan: Plan, stats: Stats, rng: random.Random, delay: float,
                  think: tuple[float, float]) -> None:
    """Join after ``delay``; then answer each step once, ``think`` seconds after the page
    shows its question (a tap on a random option, or a random number in the box's range)."""
    await asyncio.sleep(delay)
    tab.listeners.append(watch_student(plan, stats))
    start = time.monotonic()
    await tab.open()
    stats.loads.append(time.monotonic() - start)
    stats.servers[tab.server] = stats.servers.get(tab.server, 0) + 1
    tab.done = done = set()
    await plan.answering.wait()

    def asks(p: Page) -> bool:
        return (p.full and p.step not in done and p.predict is not None and p.hidden
                and not p.predict.disabled)
    while not plan.over.is_set():
        if not (tab.page and asks(tab.page)):
            waiting = asyncio.ensure_future(tab.until(asks))
            over = asyncio.ensure_future(plan.over.wait())
            await asyncio.wait((waiting, over), return_when=asyncio.FIRST_COMPLETED)
            for f in (waiting, over):
                f.cancel()
            if plan.over.is_set():
                return
        step = tab.page.step
        await asyncio.sleep(rng.uniform(*think))
        page = tab.page
        if page.step != step or not asks(page):
            continue                                     # the class moved on meanwhile
        p = page.predict
        if page.predict_kind == "button_group":
            tab.answer(rng.randrange(len(p.options)))
        else:
            tab.answer(round(rng.uniform(p.min, p.max), 2))
        stats.cast[step] = stats.cast.get(step, 0) + 1
        sent = time.monotonic()
        done.add(step)
        try:            # the answer's own run: the first full run after it (it preempts)
            confirmed = await tab.rerun(lambda q: q.full)
        except TimeoutError:
            stats.problems.append(f"{tab.name}: no run of its page within {WAIT:.0f} s after "
                                  f"its answer to step {step}")
            continue
        if not (confirmed.step == step and (confirmed.said_in or confirmed.revealed)):
            stats.problems.append(f"{tab.name}: after its answer to step {step} the page "
                                  f"showed step {confirmed.step}, alerts {confirmed.alerts}")
            continue
        stats.change.append(confirmed.at - sent)
        stats.answers.append((step, sent, confirmed.at))


async def host_click(host: Tab, key: str, done, stats: Stats, clicks: dict, step: int) -> None:
    """Click a button of the host's page (inside its fragment, as the browser sends it),
    note the time in ``clicks[step]`` at once (students' pages may follow before the host's
    does), and wait until the host's page shows ``done``."""
    if key not in host.buttons:              # its fragment draws it again within 2 s
        stats.notes.append(f"host: no {key} button on its page; its last runs: "
                           f"{host.trace[-4:]}")
        await host.until(lambda p: key in host.buttons)
    wid, fragment = host.buttons[key]
    future = host.until(done)
    clicks[step] = clicked = time.monotonic()
    await host.send(fragment=fragment, trigger=wid)
    page = await future
    stats.host_clicks.setdefault(key, []).append(page.at - clicked)


async def wait_for(condition, what: str, timeout: float, stats: Stats) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            stats.problems.append(f"host: gave up waiting for {what} after {timeout:.0f} s")
            return False
        await asyncio.sleep(0.1)
    return True


async def run_class(base: str, a, pids: dict[str, int], open_store) -> Stats:
    stats, plan = Stats(), Plan(a.students)

    def cpu() -> float:
        return sum(cpu_seconds(pid) for pid in pids.values())

    tabs: list[Tab] = []

    @contextlib.contextmanager
    def phase(name: str):
        say(f"{name} ...")
        cpu0, t0, polls0 = cpu(), time.monotonic(), sum(t.polls for t in tabs)
        pressure0, client0, bytes0 = cpu_pressure_seconds(), time.process_time(), stats.bytes
        yield
        stats.received[name] = stats.bytes - bytes0
        stats.cpu[name] = cpu() - cpu0
        stats.seconds[name] = time.monotonic() - t0
        stats.polls[name] = sum(t.polls for t in tabs) - polls0
        stats.client[name] = time.process_time() - client0
        if pressure0 is not None:
            stats.pressure[name] = cpu_pressure_seconds() - pressure0

    with phase("nobody connected"):
        await asyncio.sleep(a.baseline)
    host = Tab("host", base, "class=new", stats)
    # a count belongs to the step the host's page shows (its last full run; a fragment run
    # finishes in order with the full runs), not to plan.step: a poll of the old step that
    # finishes after the Next click would pass for a count of the new step (N of N at once)
    host.listeners.append(lambda tab, p: p.count and stats.counts.append(
        (tab.page.step if tab.page else 0, p.asked_at, p.at, p.count[0])))
    with phase("the host starts the class"):
        await host.open()
    q = dict(parse_qsl(host.query))
    code, key = q["room"], q["host"]
    plan.step, plan.moved[1] = 1, time.monotonic()
    students = [Tab(f"student {i}", base, f"room={code}", stats) for i in range(a.students)]
    tabs.extend([host, *students])
    with phase("students join"):
        jobs = [asyncio.create_task(student(t, plan, stats, random.Random(a.seed * 1000 + i),
                                            a.ramp * i / max(1, a.students - 1), a.think))
                for i, t in enumerate(students)]
        await wait_for(lambda: len(stats.loads) == a.students, "every student's page", WAIT,
                       stats)
    await asyncio.sleep(4.0)                 # the last pages' first polls
    with phase("polling only"):
        await asyncio.sleep(a.idle)
    monitor = asyncio.create_task(watch(host, students))
    waker = asyncio.create_task(wake_frozen([host, *students], stats))
    with phase("the class"):
        plan.answering.set()
        try:
            for step in range(1, a.steps + 1):
                await class_step(step, host, students, plan, stats, a)
        except Exception as err:  # noqa: BLE001 - reported with the numbers so far
            stats.problems.append(f"host: the class stopped at step {plan.step}: {err!r}")
    plan.over.set()
    monitor.cancel()
    waker.cancel()
    results = await asyncio.gather(*jobs, return_exceptions=True)
    stats.problems.extend(f"student: {r!r}" for r in results if isinstance(r, BaseException))
    store = open_store()
    for tally in store.results(code, key):
        if tally.round == 1:
            stats.counted[tally.step] = sum(tally.counts.values())
    store.close()
    host_latencies(stats)
    stats.host_runs = (host.polls, host.early)
    stats.student_early = sum(t.early for t in students)
    stats.dumps += [f"{t.name}: a run's end never came: {lost}" for t in tabs for lost in t.lost]
    for t in tabs:
        await t.close()
    return stats


async def watch(host: Tab, students: list[Tab], every: float = 20.0) -> None:
    """Every ``every`` seconds, on stderr: how long since each page's last run, and its
    fragment timers (a page whose timers are gone no longer follows the class)."""
    while True:
        await asyncio.sleep(every)
        now = time.monotonic()
        ages = sorted(now - (t.trace[-1][0] if t.trace else now) for t in students)
        silent = sorted((t for t in students if not t.timers),     # the longest silent first
                        key=lambda t: t.trace[-1][0] if t.trace else now)
        say(f"host: {len(host.timers)} timers, last run {now - host.trace[-1][0]:.0f} s ago, "
            f"buttons {sorted(host.buttons)}, last count {host.trace[-1][4]}; students: last "
            f"run {ages[len(ages) // 2]:.0f} s ago (median), {ages[-1]:.0f} s (max); "
            f"{len(silent)} without timers" + (f", e.g. {silent[0].name}: {silent[0].trace[-3:]}"
                                               f"; its last messages {list(silent[0].events)}"
                                               if silent else ""))


async def wake_frozen(tabs: list[Tab], stats: Stats, after: float = 10.0) -> None:
    """A page its person would touch: one that is *frozen* (no fragment timer, no run under
    way, nothing heard for ``after`` seconds: in a browser it stays so until touched), or
    *half drawn* (the end of its last full run never came, ``after`` seconds ago, and no full
    run finished since: the rest of the page stays stale). The person taps it: a full rerun
    with the page's widget states, as the browser sends after any change. Counted in
    ``Stats.woken``: each is a failure of the page, not of its person."""
    while True:
        await asyncio.sleep(1.0)
        now = time.monotonic()
        for t in tabs:
            if t.ws is None or t.running:
                continue
            frozen = not t.timers and now - t.heard > after
            broken = t.broken_at and now - t.broken_at > after
            if frozen or broken:
                t.woken += 1
                t.heard = now
                t.broken_at = now if broken else t.broken_at
                stats.woken.append(f"{t.name}: {'frozen' if frozen else 'half drawn'} at step "
                                   f"{t.page.step if t.page else 0} ({len(t.lost)} runs lost, "
                                   f"the last: {t.lost[-1][:2] if t.lost else None})")
                with contextlib.suppress(Exception):
                    await t.send()


async def class_step(step: int, host: Tab, students: list[Tab], plan: Plan, stats: Stats,
                     a) -> None:
    """The host moves the class to ``step``, waits for every answer, reveals, and waits until
    every student's page drew the weights."""
    say(f"step {step}")
    if step > 1:
        plan.step = step
        await host_click(host, "class_next", lambda p: p.full and p.step == step, stats,
                         plan.moved, step)
    await wait_for(lambda: all(step in t.steps for t in students),
                   f"every student's page at step {step}", WAIT, stats)
    if any(t.page.step == step and t.page.predict is not None for t in students):
        await wait_for(lambda: all(step in t.done for t in students)
                       and any(c[0] == step and c[3] >= stats.cast.get(step, 0)
                               for c in stats.counts),
                       f"the host's count of every answer at step {step}", a.answer_wait,
                       stats)
    stats.host_count[step] = max((c[3] for c in stats.counts if c[0] == step), default=0)
    await host_click(host, "reveal", lambda p: "ask_again" in host.buttons, stats,
                     plan.revealed, step)
    if not await wait_for(lambda: all(step in t.reveals for t in students),
                          f"every student's weights at step {step}", a.answer_wait, stats):
        late = [t for t in students if step not in t.reveals]
        stats.dumps += [f"{t.name}: never drew the weights of step {step}; timers "
                        f"{ {f[-6:]: e for f, (e, _) in t.timers.items()} }\n  runs {t.trace}\n"
                        f"  messages {list(t.events)}" for t in late]
        stats.problems.append(f"{len(late)} students never drew the weights of step {step}; "
                              f"the first one's last runs (time, status, full, step, hidden, "
                              f"charts, alerts), now {time.monotonic():.2f}, timers "
                              f"{len(late[0].timers)}: {late[0].trace}; its last messages "
                              f"{list(late[0].events)}")
    await asyncio.sleep(a.pause)             # the class looks at the answer


def host_latencies(stats: Stats) -> None:
    """Answer -> the host's count: the first count asked for after the student's page
    confirmed the answer (so it includes it), and the first count at least as high as the
    answer's place among the step's answers in sending order."""
    for step in sorted({s for s, _, _ in stats.answers}):
        counts = sorted((c for c in stats.counts if c[0] == step), key=lambda c: c[2])
        sent = sorted((x for x in stats.answers if x[0] == step), key=lambda x: x[1])
        for place, (_, at, confirmed) in enumerate(sent, 1):
            sure = next((c[2] for c in counts if c[1] > confirmed), None)
            ranked = next((c[2] for c in counts if c[2] > at and c[3] >= place), None)
            if sure is not None:
                stats.to_host.append(sure - at)
            if ranked is not None:
                stats.to_host_rank.append(ranked - at)


# --- the servers ------------------------------------------------------------------------------

@contextlib.contextmanager
def redis_server(directory: Path):
    """Debian's redis-server on a unix socket in ``directory`` (no TCP port, no persistence);
    yields its URL."""
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    sock = directory / "redis.sock"
    proc = subprocess.Popen([binary, "--port", "0", "--unixsocket", str(sock),
                             "--unixsocketperm", "700", "--save", "", "--appendonly", "no",
                             "--dir", str(directory)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.STDOUT)
    try:
        import redis
        client = redis.Redis(unix_socket_path=str(sock))
        deadline = time.monotonic() + 60
        while True:
            with contextlib.suppress(redis.ConnectionError):
                if client.ping():
                    break
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("redis-server did not answer PING")
            time.sleep(0.1)
        client.close()
        yield f"unix://{sock}", proc.pid
    finally:
        proc.terminate()
        proc.wait(30)


@contextlib.contextmanager
def backend(kind: str, directory: Path):
    """The environment of both Streamlit processes, a way to open the same store here, and
    the pid of redis-server (0 for SQLite)."""
    path = directory / "classes.sqlite3"
    if kind == "sqlite":
        from xattn.classroom.sqlite_store import SQLiteStore
        yield {"XATTN_CLASS_STORE": str(path), "XATTN_REDIS_URL": ""}, \
            lambda: SQLiteStore(path), 0
        return
    from xattn.classroom.redis_store import RedisStore
    with redis_server(directory) as (url, pid):
        yield {"XATTN_CLASS_STORE": str(path), "XATTN_REDIS_URL": url}, \
            lambda: RedisStore(url), pid


def measure(kind: str, a) -> tuple[Stats, dict]:
    with tempfile.TemporaryDirectory(prefix=f"xattn-room-{kind}-") as tmp, \
            backend(kind, Path(tmp)) as (env, open_store, redis_pid):
        print(f"\n{kind}: starting deploy/serve.sh 2 on port {a.port} ...", flush=True)
        with LectureHall(processes=2, env=env, port=a.port,
                         run_dir=ROOT / "test-artifacts" / f"bench-room-{kind}") as hall:
            pids = {name: pid for name, (pid, _) in hall.backends.items()}
            load0 = os.getloadavg()[0]
            redis0 = cpu_seconds(redis_pid) if redis_pid else 0.0
            stats = asyncio.run(run_class(hall.url, a, pids, open_store))
            if stats.dumps:            # beside the servers' logs, for whoever looks into it
                (hall.run_dir / "pages.txt").write_text("\n".join(stats.dumps) + "\n")
            info = {"load": (load0, os.getloadavg()[0]),
                    "redis cpu": cpu_seconds(redis_pid) - redis0 if redis_pid else None,
                    "rss": {name: rss_mb(pid) for name, pid in pids.items()},
                    "restarts": [line for line in hall.lines if "restarting" in line]}
    return stats, info


# --- the report -------------------------------------------------------------------------------

def fmt(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"{pct(values, 50):.2f} / {pct(values, 95):.2f} / {max(values):.2f} s"


def rows(stats: Stats, info: dict, a) -> list[tuple[str, str, str]]:
    cast, counted = sum(stats.cast.values()), sum(stats.counted.values())
    exact = all(stats.counted.get(s, 0) == n == stats.host_count.get(s, -1)
                for s, n in stats.cast.items())
    cls, idle, none = "the class", "polling only", "nobody connected"
    minutes = stats.seconds[cls] / 60
    idle_rate = stats.cpu[none] / stats.seconds[none]            # CPU s per s, nobody there
    per_poll = ((stats.cpu[idle] - idle_rate * stats.seconds[idle])
                / max(1, stats.polls[idle]))
    polls_per_s = stats.polls[idle] / stats.seconds[idle]
    polling = stats.cpu[idle] / stats.seconds[idle] - idle_rate     # CPU s per s, polls only
    p95_host, p95_change = pct(stats.to_host, 95), pct(stats.change, 95)

    def share(name: str) -> str:
        return f"{100 * stats.cpu[name] / stats.seconds[name] / 2:.0f} % of 2 cores"
    return [
        ("students (processes: students)", f"{a.students} "
         f"({', '.join(f'{k}: {v}' for k, v in sorted(stats.servers.items()))})", ""),
        ("steps, class length", f"{a.steps}, {stats.seconds[cls]:.0f} s "
         f"(think {a.think[0]:g}–{a.think[1]:g} s, pause {a.pause:g} s)", ""),
        ("answers cast / counted (store) / host's last count",
         f"{cast} / {counted} / {sum(stats.host_count.values())}",
         "✅" if exact and cast == a.students * len(stats.cast) else "❌"),
        ("answer → host's count (sure), p50 / p95 / max", fmt(stats.to_host),
         "✅" if p95_host < 3 else "❌ p95 ≥ 3 s"),
        ("answer → host's count (by place), p50 / p95 / max", fmt(stats.to_host_rank), ""),
        ("answer → own page updated, p50 / p95 / max", fmt(stats.change),
         "✅" if p95_change < 0.5 else "❌ p95 ≥ 0.5 s"),
        ("Next step → student's page at the step", fmt(sum(stats.follow.values(), [])), ""),
        ("Reveal → student's weights drawn", fmt(sum(stats.reveal.values(), [])), ""),
        ("host's click → host's page (Next / Reveal)",
         f"{fmt(stats.host_clicks.get('class_next', []))}; "
         f"{fmt(stats.host_clicks.get('reveal', []))}", ""),
        ("student's first page load", fmt(stats.loads), ""),
        ("host's page: fragment runs / runs ended early (a rerun was queued) / of them full",
         f"{stats.host_runs[0]} / {stats.host_runs[1]} / {stats.host_full_early}", ""),
        ("students' runs ended early (a rerun was queued)", str(stats.student_early), ""),
        ("runs whose end the server never sent (run lost → next run)",
         ", ".join(f"{was} → {then}: {n}" for (was, then), n in sorted(stats.lost.items()))
         or "0",
         "❌" if stats.lost.get(("full", "fragment")) else ""),
        ("pages frozen or half drawn ≥ 10 s (a full run's end lost), woken by a tap",
         str(len(stats.woken)), "❌" if stats.woken else "✅"),
        ("server CPU, nobody connected", f"{idle_rate * 1000:.0f} ms/s", ""),
        ("server CPU, polling only", f"{stats.cpu[idle]:.1f} s in {stats.seconds[idle]:.0f} s "
         f"({share(idle)}); {polls_per_s:.0f} polls/s", ""),
        ("one poll (a `follow` fragment rerun)", f"{1000 * per_poll:.1f} ms of server CPU, "
         f"{stats.received[idle] / max(1, stats.polls[idle]) / 1000:.1f} kB sent", ""),
        ("polling: CPU per student per minute", f"{polling * 60 / a.students:.2f} s", ""),
        ("the class: server CPU", f"{stats.cpu[cls]:.0f} s ({share(cls)})", ""),
        ("the class: CPU per student per minute",
         f"{stats.cpu[cls] / a.students / minutes:.2f} s", ""),
        ("redis-server CPU", "–" if info["redis cpu"] is None
         else f"{info['redis cpu']:.1f} s", ""),
        ("load generator CPU (the class)",
         f"{stats.client[cls]:.0f} s ({100 * stats.client[cls] / stats.seconds[cls]:.0f} % "
         "of a core)", ""),
        ("machine: load average before / after; PSI during the class",
         f"{info['load'][0]:.1f} / {info['load'][1]:.1f}; "
         f"{100 * stats.pressure.get(cls, float('nan')) / stats.seconds[cls]:.0f} %", ""),
        ("RSS per process at the end", ", ".join(f"{k}: {v:.0f} MB"
                                                 for k, v in info["rss"].items()), ""),
        ("problems", str(len(stats.problems)), "✅" if not stats.problems else "❌"),
    ]


def step_table(stats: Stats, a) -> list[str]:
    out = ["| step | answers cast / counted / host | Next → page, p50 / p95 / max | "
           "Reveal → weights, p50 / p95 / max |", "|---|---|---|---|"]
    for s in range(1, a.steps + 1):
        follow, reveal = stats.follow.get(s, []), stats.reveal.get(s, [])
        out.append(f"| {s} | {stats.cast.get(s, 0)} / {stats.counted.get(s, 0)} / "
                   f"{stats.host_count.get(s, 0)} | {fmt(follow)} ({len(follow)} pages) | "
                   f"{fmt(reveal)} ({len(reveal)} pages) |")
    return out


def report(results: dict[str, tuple[Stats, dict]], a) -> str:
    lines = [f"Machine: {machine_line()}", ""]
    kinds = list(results)
    table = {k: rows(*results[k], a) for k in kinds}
    lines.append("| measure | " + " | ".join(kinds) + " |")
    lines.append("|---|" + "---|" * len(kinds))
    for i, (name, _, _) in enumerate(table[kinds[0]]):
        lines.append(f"| {name} | " + " | ".join(
            f"{table[k][i][1]} {table[k][i][2]}".strip() for k in kinds) + " |")
    for k in kinds:
        stats, info = results[k]
        lines += ["", f"Per step, {k}:", "", *step_table(stats, a)]
        if info["restarts"]:
            lines.append(f"\nRestarts: {info['restarts']}")
        for p in stats.problems[:15]:
            lines.append(f"- PROBLEM ({k}): {p}")
        for n in stats.notes[:5]:
            lines.append(f"- note ({k}): {n}")
        for w in stats.woken[:10]:
            lines.append(f"- frozen page ({k}): {w}")
        if len(stats.woken) > 10:
            lines.append(f"- ... and {len(stats.woken) - 10} more frozen pages")
        if len(stats.problems) > 15:
            lines.append(f"- ... and {len(stats.problems) - 15} more")
    return "\n".join(lines)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--steps", type=int, default=len(STEPS),
                    help="lesson steps to go through (default: all)")
    ap.add_argument("--backends", nargs="+", default=["sqlite", "redis"],
                    choices=["sqlite", "redis"])
    ap.add_argument("--port", type=int, default=8910,
                    help="HAProxy's port; the Streamlit processes take the next two")
    ap.add_argument("--ramp", type=float, default=30.0, help="seconds over which students join")
    ap.add_argument("--idle", type=float, default=30.0,
                    help="seconds of polling alone before the first answer")
    ap.add_argument("--baseline", type=float, default=10.0,
                    help="seconds of the processes' CPU with nobody connected")
    ap.add_argument("--think", type=float, nargs=2, default=(2.0, 10.0),
                    help="a student answers this many seconds after the question shows")
    ap.add_argument("--pause", type=float, default=5.0,
                    help="seconds the host waits after every student saw the reveal")
    ap.add_argument("--answer-wait", type=float, default=240.0,
                    help="seconds the host waits for every answer to be counted")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="write the results here (Markdown)")
    a = ap.parse_args()
    if haproxy_missing():
        ap.error(f"needs HAProxy: {haproxy_missing()}")
    if "redis" in a.backends and not (shutil.which("redis-server")
                                      or os.access("/usr/bin/redis-server", os.X_OK)):
        ap.error("--backends redis needs redis-server (apt-get install redis-server)")
    return a


def main() -> int:
    a = parse_args()
    # a plain `kill` stops the servers too (the context managers' exits run), not just this
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    results = {}
    for kind in a.backends:
        results[kind] = measure(kind, a)
        print(report({kind: results[kind]}, a), flush=True)
    text = report(results, a)
    if a.out:
        a.out.write_text(f"# A class in one room: {a.students} students on deploy/serve.sh 2\n\n"
                         "    python -m benchmarks.bench_room " + " ".join(sys.argv[1:])
                         + "\n\n" + text + "\n")
    ok = all(not s.problems and not s.woken and pct(s.to_host, 95) < 3
             for s, _ in results.values())
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
