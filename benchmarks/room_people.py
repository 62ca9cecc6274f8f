"""The people of a class, over Streamlit's protocol: a host who drives the room and students who
follow it and answer (``benchmarks/bench_room.py`` runs a class of them, ``bench_flood`` a
flood).

Each is a `devtools.protocol.Client` whose every run is looked at as it ends, the runs the
server starts by itself included: no page polls; the process's relay asks a page to redraw
(``xattn/ui/push.py``), and what the page shows is what its runs drew. A student is a browser
that plays along: its first visit gets the join screen, whose script sets the signed
``xattn_student`` cookie and reloads; the student then opens a new websocket with that cookie.
A tap on the prediction is a fragment run (the fragment's id, every widget's state), as the
browser sends it, and its receipt ("Saved: ...") comes in the same fragment's runs. When its
websocket ends (a backend killed), a student reconnects as a browser does: a new websocket with
the same cookies (HAProxy sends it to a live process) whose first run carries the widget
states, the pick included; a tap waits until the page is back (the browser greys the controls
meanwhile).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import re
import time
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from streamlit.proto.WidgetStates_pb2 import WidgetState

from devtools.protocol import Client, Run
from xattn.ui.identity import STUDENT_COOKIE

__all__ = ["Host", "Student", "Pick", "random_answer"]

STUDENT_STEP = re.compile(r"^#### (\d+)\. ")          # a student's page: "#### 3. Masking: ..."
HOST_STEP = re.compile(r"^## Step (\d+) of (\d+)")
COUNT = re.compile(r"^(\d+) of (\d+) answered$")
PREDICT = re.compile(r"-predict-(\w+)-(\d+)-(\d+)-(open|shut)$")
COOKIE = re.compile(r"const v = '([^']+)'")
HOST_BUTTONS = ("reveal", "class_next", "ask_again")


def _id(element) -> str:
    return getattr(getattr(element, element.WhichOneof("type")), "id", "")


@dataclass
class Pick:
    """A student's answer to one round: what was sent, how the receipt shows it, when."""

    step: int
    round: int
    option: int | float        # an option's position (pills) or the number typed
    shown: str                 # as the receipt shows it: "`cat`", "`0.25`"
    sent: float                # time.monotonic() of the tap
    saved: float = float("nan")   # ... of the first run showing "Saved: shown"


class Host:
    """The lecturer's page: ``?class=new``, then the room's host link; its buttons, its count."""

    def __init__(self, base: str, timeout: float):
        self.tab = Client(base, open_timeout=timeout, on_run=self._seen)
        self.timeout = timeout
        self.code = self.key = ""
        self.step = 0                 # the step its last full run drew
        self.buttons: dict[str, tuple[str, str]] = {}    # key -> (widget id, fragment id)
        self.counts: list[tuple[float, float, int, int]] = []   # (started, ended, step, n)
        self.runs = self.full_runs = 0
        self.problems: list[str] = []
        self.trace = collections.deque(maxlen=12)    # its last runs, to explain a problem

    async def open(self) -> None:
        await self.tab.__aenter__()
        run = await self.tab.run("class=new", timeout=self.timeout)   # makes the room
        query = dict(parse_qsl(self.tab.query_string))
        if not (run.ok and "room" in query and "host" in query):
            raise RuntimeError(f"class=new made no room: {run.problems()}, link "
                               f"{self.tab.query_string!r}")
        self.code, self.key = query["room"], query["host"]

    async def close(self) -> None:
        await self.tab.__aexit__(None, None, None)

    def _seen(self, run: Run) -> None:
        self.runs += 1
        self.full_runs += run.full
        self.problems += [f"host: {p}" for p in run.problems() if "EARLY" not in p]
        drawn = {}
        for e, fragment in zip(run.elements, run.fragments, strict=True):
            kind = e.WhichOneof("type")
            if kind == "markdown" and (m := HOST_STEP.match(e.markdown.body)):
                self.step = int(m[1])
            elif kind == "metric" and (m := COUNT.match(e.metric.body)):
                self.counts.append((run.started, run.ended, self.step, int(m[1])))
            elif kind == "button" and (key := _id(e).rsplit("-", 1)[-1]) in HOST_BUTTONS:
                drawn[key] = (e.button.id, fragment)
        if drawn or run.full:          # the class panel was drawn: these are its buttons now
            self.buttons = drawn
        self.trace.append((round(run.ended, 2), "full" if run.full else "fragment",
                           run.status, self.step, self.counts[-1][3] if self.counts else None))

    async def click(self, key: str, shows) -> tuple[float, float]:
        """Press the class panel's button ``key`` as the browser does (a fragment run with the
        button's trigger); (when it was sent, seconds until a full run for which
        ``shows(self)`` holds ended)."""
        if key not in self.buttons:
            raise RuntimeError(f"the host's page shows no {key!r} button (it shows "
                               f"{sorted(self.buttons)})")
        widget, fragment = self.buttons[key]
        trigger = WidgetState(id=widget, trigger_value=True)
        done = self.tab.until(lambda run: run.full and shows(self), self.timeout)
        sent = time.monotonic()
        await self.tab.send(self.tab.query_string, [trigger], fragment=fragment)
        await done
        return sent, time.monotonic() - sent


@dataclass
class Student:
    """One phone in the class: joins, follows every step, answers, reconnects."""

    n: int
    base: str
    code: str
    timeout: float
    cookies: dict = field(default_factory=dict)
    tab: Client | None = None
    backends: list = field(default_factory=list)      # the processes it was on, in order
    steps: dict = field(default_factory=dict)         # step -> time its page first showed it
    answers: dict = field(default_factory=dict)       # step -> ... first drew its answer
    picks: dict = field(default_factory=dict)         # (step, round) -> the last Pick
    prediction: tuple | None = None    # (step, round, widget proto, fragment id), open now
    runs: list = field(default_factory=list)          # (ended, full, bytes) of every run
    problems: list = field(default_factory=list)
    lost_ends: int = 0            # runs whose end the server never sent
    reconnects: int = 0
    earlier_bytes: int = 0        # what its closed websockets brought
    _step: int = 0                # the step its last full run drew
    _back: asyncio.Event = field(default_factory=asyncio.Event)   # connected and drawn
    _saved: asyncio.Event = field(default_factory=asyncio.Event)
    _keeper: asyncio.Task | None = None
    _leaving: bool = False

    @property
    def query(self) -> str:
        return f"room={self.code}"

    @property
    def step(self) -> int:
        """The step its page's last full run drew (0 before the first)."""
        return self._step

    @property
    def student_id(self) -> str:
        return self.cookies.get(STUDENT_COOKIE, "").split(".")[0]

    @property
    def bytes(self) -> int:
        return self.earlier_bytes + (self.tab.bytes_received if self.tab else 0)

    # --- joining, and staying connected -------------------------------------------------------
    async def join(self) -> None:
        """The first visit (the join screen sets the cookie), then the page with it."""
        async with Client(self.base, open_timeout=self.timeout) as first:
            run = await first.run(self.query, timeout=self.timeout)
            found = COOKIE.search(" ".join(h.body for h in run.of("html")))
            if found is None:
                raise RuntimeError(f"student {self.n}: no join screen with a cookie: "
                                   f"{[a.body[:100] for a in run.of('alert')]}")
            self.cookies = {**first.cookies, STUDENT_COOKIE: found[1]}
        await self._connect()
        self._keeper = asyncio.create_task(self._keep())

    async def _connect(self) -> None:
        self._back.clear()
        tab = Client(self.base, cookies=self.cookies, open_timeout=self.timeout,
                     on_run=self._seen)
        await tab.__aenter__()
        self.tab = tab
        self.cookies = dict(tab.cookies)     # HAProxy's cookie names the live process now
        self.backends.append(tab.backend)
        run = await tab.run(self.query, self._widgets(), timeout=self.timeout)
        if not run.ok:
            raise RuntimeError(f"student {self.n}: the page did not draw: {run.problems()}")
        self._back.set()

    async def _keep(self) -> None:
        """When the websocket ends, reconnect as the browser does (after a second, then
        every two seconds until a process answers)."""
        while not self._leaving:
            await asyncio.wait({self.tab.reader})
            if self._leaving:
                return
            self._back.clear()
            self.earlier_bytes += self.tab.bytes_received
            with contextlib.suppress(Exception):
                await self.tab.__aexit__(None, None, None)
            self.reconnects += 1
            for attempt in range(30):
                await asyncio.sleep(1.0 if attempt == 0 else 2.0)
                try:
                    await self._connect()
                    break
                except Exception as err:  # noqa: BLE001 - refused, dropped: try again
                    failed = f"{type(err).__name__}: {err}"
            else:
                self.problems.append(f"student {self.n}: never reconnected ({failed})")
                return

    async def leave(self) -> None:
        self._leaving = True
        if self._keeper is not None:
            self._keeper.cancel()
        if self.tab is not None:
            with contextlib.suppress(Exception):
                await self.tab.__aexit__(None, None, None)

    # --- what the page shows ------------------------------------------------------------------
    def _seen(self, run: Run) -> None:
        self.runs.append((run.ended, run.full, run.bytes))
        if run.status is None:
            self.lost_ends += 1
        self.problems += [f"student {self.n}: {p}" for p in run.problems()
                          if "EARLY" not in p and "within the timeout" not in p]
        predicted = None
        for e, fragment in zip(run.elements, run.fragments, strict=True):
            kind, wid = e.WhichOneof("type"), _id(e)
            if kind == "markdown" and (m := STUDENT_STEP.match(e.markdown.body)):
                self._step = int(m[1])
                self.steps.setdefault(self._step, run.ended)
            elif kind == "plotly_chart" and wid.endswith("-answer_chart_0") and self._step:
                self.answers.setdefault(self._step, run.ended)
            elif (m := PREDICT.search(wid)) and m[1] == self.code:
                predicted = (int(m[2]), int(m[3]))
                if m[4] == "open":
                    self.prediction = (*predicted, getattr(e, kind), fragment)
            elif kind == "alert" and e.alert.body.startswith("Saved: ") and predicted:
                pick = self.picks.get(predicted)
                if pick is not None and e.alert.body.startswith(f"Saved: {pick.shown}."):
                    if pick.saved != pick.saved:          # NaN: the first run showing it
                        pick.saved = run.ended
                    self._saved.set()
        if run.full and predicted is None:
            self.prediction = None

    def _widgets(self) -> list[WidgetState]:
        """The states the browser sends: the open prediction's value, if one was picked."""
        if self.prediction is None:
            return []
        step, round_, widget, _ = self.prediction
        pick = self.picks.get((step, round_))
        return [] if pick is None else [_state(widget, pick.option)]

    # --- answering ----------------------------------------------------------------------------
    async def answer(self, choose) -> Pick:
        """Tap an answer (``choose(widget)``: an option's position, or a number) once the page
        shows an open prediction; wait until its receipt says it is saved."""
        return await self.saved(await self.tap(choose))

    async def tap(self, choose) -> Pick:
        """Tap an answer once the page shows an open prediction, and return at once."""
        await asyncio.wait_for(self._back.wait(), self.timeout)
        if self.prediction is None:
            raise RuntimeError(f"student {self.n}: no open prediction on step {self._step}")
        step, round_, widget, fragment = self.prediction
        option = choose(widget)
        pick = Pick(step, round_, option, _shown(widget, option), time.monotonic())
        self.picks[(step, round_)] = pick
        self._saved.clear()
        try:
            await self.tab.send(self.query, self._widgets(), fragment=fragment)
        except Exception:  # noqa: BLE001 - the page went away: its reconnection sends the pick
            pass
        return pick

    async def saved(self, pick: Pick) -> Pick:
        """Wait until the page's receipt says ``pick`` is saved (a problem if it never does)."""
        deadline = time.monotonic() + self.timeout
        while pick.saved != pick.saved and time.monotonic() < deadline:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._saved.wait(), 1.0)
            self._saved.clear()
        if pick.saved != pick.saved:
            self.problems.append(f"student {self.n}: {pick.shown} at step {pick.step} round "
                                 f"{pick.round} never showed as saved")
        return pick


def random_answer(rng):
    """``choose`` for `Student.answer`: a random option of a pill row, or a number in a number
    input's range at its decimals."""
    def choose(widget):
        if hasattr(widget, "options"):
            return rng.randrange(len(widget.options))
        low = widget.min if widget.has_min else 0.0
        high = widget.max if widget.has_max else low + 1.0
        return round(rng.uniform(low, high), _decimals(widget))
    return choose


def _state(widget, option) -> WidgetState:
    state = WidgetState(id=widget.id)
    if hasattr(widget, "options"):          # pills: the option's text as the browser sends it
        state.string_array_value.data.append(widget.options[option].content)
    else:
        state.double_value = option
    return state


def _shown(widget, option) -> str:
    """The receipt's words for ``option``: the pill's text, or the number at the input's
    decimals."""
    if hasattr(widget, "options"):
        return widget.options[option].content
    return f"`{option:.{_decimals(widget)}f}`"


def _decimals(widget) -> int:
    """A number input's decimals, from its format (``%.2f``)."""
    found = re.search(r"\.(\d+)f", widget.format)
    return int(found[1]) if found else 2
