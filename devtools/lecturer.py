"""The lecturer of a class, over Streamlit's protocol: the host page that drives the room
(``benchmarks/bench_room.py`` and ``devtools/ready.py`` run a class with it, the tests of
lecture halls too; the students are ``devtools.phones.Phone``s).

The host's page is a Streamlit page (``?class=new``, then ``?room=CODE``: the host key is in
its session and handed to it by a component, never in the link), opened as a
`devtools.protocol.Client` whose every run is looked at as it ends. It follows its room as
the browser does: the page's follow component (``xattn/ui/room/follow.py``, JavaScript in
the browser) keeps an ``EventSource`` on ``/live/CODE/pulse`` and compares each pulse with
what the page drew (the component's data: the room's version and tally). Here `Host` does the
same with a `devtools.phones.EventStream`: when the version moved it sets the component's
``moved`` trigger (the whole page reruns), when only the tally moved its ``tally`` trigger
(whose callback reruns the count's fragments), each sent as the browser sends a component's
trigger (a ``json_trigger_value`` on the component's ``…__events`` widget), and not again
for the same value within 3 s. `Host.end` ends the class as the page's own requests would.
"""

from __future__ import annotations

import asyncio
import collections
import json
import re
import time
from urllib.parse import parse_qsl, urlsplit

from streamlit.proto.WidgetStates_pb2 import WidgetState

from devtools.phones import EventStream, post, where
from devtools.protocol import Client, Run

__all__ = ["Host"]

HOST_STEP = re.compile(r"^## Step (\d+) of (\d+)")
STUDENT_LINK = re.compile(r"^or open `+ ?(\S+?) ?`+$")
COUNT = re.compile(r"^(\d+) of (\d+) answered$")
HOST_BUTTONS = ("reveal", "class_next", "ask_again", "follow_up")
FOLLOW = "-xattn_follow"                  # the follow component's key (its element id's end)
CLAIM = "-xattn_claim"                    # the component that hands the page its host key
TRIGGERS = "$$STREAMLIT_INTERNAL_KEY_{}__events"   # a components-v2 element's trigger widget
ASK_AGAIN_AFTER = 3.0                     # follow.py: the same trigger only after 3 s


def _id(element) -> str:
    return getattr(getattr(element, element.WhichOneof("type")), "id", "")


class Host:
    """The lecturer's page: ``?class=new``, then the room's host link; its buttons, its count,
    and its follow component (the pulse)."""

    def __init__(self, base: str, timeout: float):
        self.base = base
        self.tab = Client(base, open_timeout=timeout, on_run=self._seen)
        self.timeout = timeout
        self.code = self.key = ""
        self.link = ""                # the student link the room card shows
        self.step = 0                 # the step its last full run drew
        self.buttons: dict[str, tuple[str, str]] = {}    # key -> (widget id, fragment id)
        self.counts: list[tuple[float, float, int, int]] = []   # (started, ended, step, n)
        self.runs = self.full_runs = 0
        self.lost_ends = 0            # runs whose end never came (a newer run began first)
        self.triggers: collections.Counter = collections.Counter()   # moved / tally sent
        self.moved_mid_run = 0        # "moved" sent while a run of its own was under way
        self.problems: list[str] = []
        self.trace = collections.deque(maxlen=12)    # its last runs, to explain a problem
        self.pulse: dict | None = None
        self.pulses = 0
        self.gone: str | None = None  # what the pulse said when the room went (`end`, expiry)
        self._ending = False
        self.drawn: dict | None = None    # the follow component's data, as last drawn
        self.follow_id = self.follow_fragment = ""
        self.stream: EventStream | None = None
        self._asked = ("", 0.0)
        self._running = False         # a click or a trigger of ours, its run not ended yet
        self._sending: set[asyncio.Task] = set()

    async def open(self) -> None:
        await self.tab.__aenter__()
        run = await self.tab.run("class=new", timeout=self.timeout)   # makes the room
        query = dict(parse_qsl(self.tab.query_string))
        if not (run.ok and "room" in query and self.key) or "host" in query:
            said = [text for kind in ("alert", "markdown") for e in run.of(kind)
                    if "No class could be started" in (text := getattr(e, "body", ""))]
            raise RuntimeError(f"class=new made no room (or showed its key): "
                               f"{said[:1] + run.problems()}, link {self.tab.query_string!r}")
        self.code = query["room"]
        host, port, tls = where(self.base)
        prefix = urlsplit(self.base).path.rstrip("/")      # an app served below a path
        self.stream = EventStream(host, port, f"{prefix}/live/{self.code}/pulse", self.tab.cookies,
                                  on_event=self._pulse, timeout=self.timeout, tls=tls)
        self.stream.start()
        await asyncio.wait_for(self.stream.opened.wait(), self.timeout)

    async def end(self) -> int:
        """End the class as a page that drives it does: its key handed to the host cookie
        (``POST /live/CODE/host``, as the page's claim component does), then ``POST
        /live/CODE/end`` with that cookie. The end's HTTP status (204: ended)."""
        self._ending = True
        body = json.dumps({"key": self.key}).encode()
        status, _, cookies, data = await post(self.base, f"/live/{self.code}/host", body,
                                              self.tab.cookies, self.timeout)
        if status != 204:
            raise RuntimeError(f"the host key was refused (HTTP {status}): {data[:160]!r}")
        status, _, _, _ = await post(self.base, f"/live/{self.code}/end", b"",
                                     {**self.tab.cookies, **cookies}, self.timeout)
        return status

    async def close(self) -> None:
        if self.stream is not None:
            await self.stream.close()
            if self.stream.failed:
                self.problems.append(f"host: its pulse stream failed: {self.stream.failed}")
        await self.tab.__aexit__(None, None, None)

    # --- what the page drew -------------------------------------------------------------------
    def _seen(self, run: Run) -> None:
        self.runs += 1
        self.full_runs += run.full
        if run.ok:
            self._running = False
        if run.status is None:
            self.lost_ends += 1
        self.problems += [f"host: {p}" for p in run.problems()
                          if "EARLY" not in p and "within the timeout" not in p]
        drawn = {}
        for e, fragment in zip(run.elements, run.fragments, strict=True):
            kind = e.WhichOneof("type")
            if kind == "markdown" and (m := HOST_STEP.match(e.markdown.body)):
                self.step = int(m[1])
            elif kind == "markdown" and (m := STUDENT_LINK.match(e.markdown.body)):
                self.link = m[1]              # the room card's link (its QR code's)
            elif kind == "metric" and (m := COUNT.match(e.metric.body)):
                self.counts.append((run.started, run.ended, self.step, int(m[1])))
            elif kind == "button" and (key := _id(e).rsplit("-", 1)[-1]) in HOST_BUTTONS:
                drawn[key] = (e.button.id, fragment)
            elif kind == "bidi_component" and e.bidi_component.id.endswith(CLAIM):
                self.key = json.loads(e.bidi_component.json)["key"]   # never in the link
            elif kind == "bidi_component" and e.bidi_component.id.endswith(FOLLOW):
                self.follow_id, self.follow_fragment = e.bidi_component.id, fragment
                try:
                    self.drawn = json.loads(e.bidi_component.json)
                except ValueError:
                    self.problems.append("host: the follow component's data is not JSON")
        if drawn or (run.full and run.ok):   # the class panel as drawn: its buttons now
            self.buttons = drawn
        self.trace.append((round(run.ended, 2), "full" if run.full else "fragment",
                           run.status, self.step, self.counts[-1][3] if self.counts else None))
        if run.full and run.ok:
            self._check()             # the component mounts with the run's data

    # --- the follow component -------------------------------------------------------------------
    def _pulse(self, event: str, data, t: float) -> None:
        if event == "pulse":
            self.pulse = json.loads(data)
            self.pulses += 1
            self._check()
        elif event == "gone":
            self.gone = json.loads(data).get("gone") or "gone"
            if not self._ending:
                self.problems.append(f"host: the room is gone: {data!r}")

    def _check(self) -> None:
        """follow.py's ``f.check``: the room moved, or only its tally."""
        p, d = self.pulse, self.drawn
        if not p or not d:
            return
        if p["version"] != d["version"]:
            self._ask("moved", p["version"])
        elif p["tally"] != d["tally"]:
            d["tally"] = p["tally"]              # the count's fragments draw it
            self._ask("tally", p["tally"])

    def _ask(self, name: str, value) -> None:
        said = f"{name}:{value}"
        if self._asked[0] == said and time.monotonic() - self._asked[1] < ASK_AGAIN_AFTER:
            return
        self._asked = (said, time.monotonic())
        if not self.follow_id:
            return
        self.triggers[name] += 1
        if name == "moved" and self._running:
            self.moved_mid_run += 1
        self._running = True
        state = WidgetState(id=TRIGGERS.format(self.follow_id),
                            json_trigger_value=json.dumps([{"event": name, "value": value}]))
        task = asyncio.get_running_loop().create_task(     # from the component's fragment
            self.tab.send(self.tab.query_string, [state], fragment=self.follow_fragment))
        self._sending.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Task) -> None:
        self._sending.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.problems.append(f"host: a trigger could not be sent: {task.exception()!r}")

    # --- the class panel ----------------------------------------------------------------------
    async def click(self, key: str, shows) -> tuple[float, float]:
        """Press the class panel's button ``key`` as the browser does (a fragment run with the
        button's trigger); (when it was sent, seconds until a full run for which
        ``shows(self)`` holds ended)."""
        deadline = time.monotonic() + 10.0    # a run under way may be about to draw it
        while key not in self.buttons and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if key not in self.buttons:
            raise RuntimeError(f"the host's page shows no {key!r} button (it shows "
                               f"{sorted(self.buttons)}; its last runs (ended, kind, status, "
                               f"step, count): {list(self.trace)}; problems: "
                               f"{self.problems[-3:]})")
        widget, fragment = self.buttons[key]
        trigger = WidgetState(id=widget, trigger_value=True)
        done = self.tab.until(lambda run: run.full and shows(self), self.timeout)
        sent = time.monotonic()
        self._running = True
        await self.tab.send(self.tab.query_string, [trigger], fragment=fragment)
        try:
            await done
        except TimeoutError:
            raise RuntimeError(f"{key}: no full run of the host's page showed it within "
                               f"{self.timeout:g} s; its last runs (ended, kind, status, step, "
                               f"count): {list(self.trace)}; problems: {self.problems[-3:]}"
                               ) from None
        return sent, time.monotonic() - sent
