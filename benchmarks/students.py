"""Students without browsers: each a tab of ``devtools.protocol.Client`` that changes the
number of heads, the seed or the mask every few seconds, checks the figure of every run and
downloads its CSV once. ``benchmarks.load_test`` runs a class of them; ``cpu_per_click``,
``download_race`` and ``tests/test_downloads.py`` use one or two.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import re
import time
from dataclasses import dataclass, field
from urllib.parse import urlencode

from streamlit.proto.Alert_pb2 import Alert
from streamlit.proto.WidgetStates_pb2 import WidgetState

from devtools.protocol import Client, Run, http_get

__all__ = ["CSV_HEADER", "DEFAULTS", "SEEDS", "Session", "Stats", "run_sessions"]

HEADS = (1, 2, 4, 8, 16)          # the divisors of the default d_model 32, up to 16
MASKS = ("none", "wait-k", "window")
SEEDS = 40                        # seeds 0..39: many distinct settings, some repeated (--seeds)
DEFAULTS = {"heads": 4, "seed": 0, "mask": "none"}
KEYS = ("heads", "seed", "mask")
RUN_TIMEOUT = 60.0
CSV_HEADER = b"head,tgt_pos,tgt_token,src_pos,src_token,weight"
# The Heads view: one chart per head (head_1, head_2, …); before #12 one chart, per_head.
HEAD_CHART = re.compile(r"-(head_\d+|per_head)$")


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)       # control change -> figure
    fresh: list[float] = field(default_factory=list)           # settings nobody asked before
    repeat: list[float] = field(default_factory=list)          # settings seen before (cached)
    loads: list[float] = field(default_factory=list)           # first run of a session
    downloads: list[float] = field(default_factory=list)       # click -> CSV received
    errors: list[str] = field(default_factory=list)
    failed_downloads: list[str] = field(default_factory=list)
    backends: dict[str, int] = field(default_factory=dict)     # process -> sessions it held
    ref_hashes: int = 0                                        # cached messages referenced
    bytes_received: int = 0
    seen: set = field(default_factory=set)

    def merge(self, other: Stats) -> None:
        for name in ("latencies", "fresh", "repeat", "loads", "downloads", "errors",
                     "failed_downloads"):
            getattr(self, name).extend(getattr(other, name))
        for name, n in other.backends.items():
            self.backends[name] = self.backends.get(name, 0) + n
        self.ref_hashes += other.ref_hashes
        self.bytes_received += other.bytes_received
        self.seen |= other.seen


class Session:
    """One student: a browser tab (``devtools.protocol.Client``) whose controls change, with
    each run's figure checked, and one CSV download."""

    def __init__(self, n: int, base: str, stats: Stats, rng: random.Random, seeds: int = SEEDS,
                 *, cache: bool = False, download: bool = True,
                 query: dict[str, str] | None = None):
        self.n, self.base, self.stats, self.rng, self.seeds = n, base, stats, rng, seeds
        self.cache, self.download = cache, download
        self.query = query or {}     # URL parameters of every run, e.g. src, tgt, d_model
        self.values = dict(DEFAULTS)
        self.ids: dict[str, str] = {}
        self.csv_url = ""            # a CSV sent with the page, or
        self.csv_file_id = ""        # one made on click (deferred)
        self.tab: Client | None = None

    @property
    def cookies(self) -> dict[str, str]:
        return self.tab.cookies if self.tab else {}

    def _widgets(self) -> list[WidgetState]:
        """Like the frontend: every widget the client has a value for."""
        out = []
        for key in KEYS:
            if key not in self.ids:
                continue
            w = WidgetState(id=self.ids[key])
            value = self.values[key]
            if key == "heads":
                w.string_array_value.data.append(str(value))
            elif key == "seed":
                w.int_value = value
            else:
                w.string_value = value
            out.append(w)
        return out

    async def rerun(self, tab: Client) -> float | None:
        """Send a rerun with the current values; the time to script_finished, or None after an
        error (recorded in stats)."""
        got, refs = tab.bytes_received, tab.ref_hashes
        query = urlencode({**self.query, **{k: v for k, v in self.values.items()
                                            if v != DEFAULTS[k]}})
        run = await tab.run(query, self._widgets(), timeout=RUN_TIMEOUT)
        self.stats.bytes_received += tab.bytes_received - got
        self.stats.ref_hashes += tab.ref_hashes - refs
        problems = run.problems() + self._check(run)
        for p in problems:
            self.stats.errors.append(f"session {self.n} ({self.values}): {p}")
        return None if problems else run.seconds

    def _check(self, run: Run) -> list[str]:
        """Read the widget ids and the CSV button; check the Heads view's charts."""
        heatmaps, crosses, config, paged = 0, False, "", False
        for el in run.elements:
            kind = el.WhichOneof("type")
            proto = getattr(el, kind)
            wid = getattr(proto, "id", "")
            self.ids.update({key: wid for key in KEYS if wid.endswith(f"-{key}")})
            paged = paged or wid.endswith("-hpage")
            if kind == "plotly_chart" and HEAD_CHART.search(wid):
                traces = json.loads(proto.spec)["data"]
                heatmaps += sum(t.get("type") == "heatmap" for t in traces)
                crosses = crosses or any(t.get("type") == "scatter" for t in traces)
                config = config or proto.config
            elif kind == "download_button" and wid.endswith("-dl_csv"):
                self.csv_file_id, self.csv_url = proto.deferred_file_id, proto.url
        problems = [f"alert: {a.body[:120]}" for a in run.of("alert")
                    if a.format in (Alert.ERROR, Alert.WARNING)]
        want = self.values["heads"]
        if not (heatmaps == want or paged and 0 < heatmaps < want):
            problems.append(f"Heads view: {heatmaps} heatmaps, expected {want}"
                            f"{' (or a page of them)' if paged else ''}")
        elif crosses != (self.values["mask"] != "none"):
            problems.append(f"Heads view: mask crosses {crosses}")
        elif "-seed" in config and f"-seed{self.values['seed']}-" not in config:
            problems.append("Heads view: not drawn with the seed asked for")
        return problems

    def _change(self) -> None:
        key = self.rng.choice(KEYS)
        current = self.values[key]
        choices = {"heads": HEADS, "seed": range(self.seeds), "mask": MASKS}[key]
        self.values[key] = self.rng.choice([c for c in choices if c != current])

    async def csv_location(self, tab: Client) -> str:
        """The CSV's URL as the browser gets it: sent with the page, or asked of the session's
        process on click (a deferred download)."""
        if self.csv_url:
            return self.base.rstrip("/") + self.csv_url
        if self.csv_file_id:
            return await tab.deferred_file_url(self.csv_file_id, timeout=RUN_TIMEOUT)
        raise LookupError("no dl_csv button (with a URL or a deferred_file_id) in the page")

    async def _download_csv(self, tab: Client) -> None:
        """"Download the weights as CSV" as the frontend does it: GET the button's /media URL
        with this session's cookies."""
        def failed(why: str) -> None:
            self.stats.failed_downloads.append(f"session {self.n} (on {tab.backend}): {why}")

        start = time.perf_counter()
        try:
            url = await self.csv_location(tab)
            status, headers, _, body = await http_get(url, self.cookies)
        except (OSError, TimeoutError, ValueError, IndexError, LookupError, RuntimeError) as err:
            return failed(f"{type(err).__name__}: {err}")
        served = headers.get("x-xattn-server", tab.backend)
        if status != 200 or not body.startswith(CSV_HEADER):
            where = ("its own process: the file was already gone" if served == tab.backend
                     else "ANOTHER process")
            return failed(f"GET /media/...csv: HTTP {status} from {served}, {where}")
        self.stats.downloads.append(time.perf_counter() - start)

    @contextlib.asynccontextmanager
    async def connected(self):
        """The tab open (GET / for the cookies, then the websocket), counted by process."""
        self.tab = tab = Client(self.base, cache=self.cache, open_timeout=30)
        try:
            async with tab:
                self.stats.backends[tab.backend] = self.stats.backends.get(tab.backend, 0) + 1
                yield tab
        finally:          # what the tab's reader met (a dropped connection), once it is closed
            self.stats.errors += [f"session {self.n}: {p}" for p in tab.problems]

    async def run(self, start_at: float, stop_at: float, pause=(2.0, 4.0)) -> None:
        await asyncio.sleep(max(0.0, start_at - time.monotonic()))
        try:
            async with self.connected() as tab:
                load = await self.rerun(tab)
                if load is not None:
                    self.stats.loads.append(load)
                changes = 0
                while True:
                    await asyncio.sleep(self.rng.uniform(*pause))
                    if time.monotonic() >= stop_at or tab.closed:
                        break
                    self._change()
                    settings = tuple(self.values.items())
                    fresh = settings not in self.stats.seen
                    self.stats.seen.add(settings)
                    took = await self.rerun(tab)
                    if took is not None:
                        self.stats.latencies.append(took)
                        (self.stats.fresh if fresh else self.stats.repeat).append(took)
                    changes += 1
                    if changes == 1 and self.download:
                        # this student's own numbers, not the default page's (a file other
                        # sessions, or the warm-up, may already have put in every process)
                        await self._download_csv(tab)
        except Exception as err:  # a refused or dropped connection is an error to report
            self.stats.errors.append(f"session {self.n}: {type(err).__name__}: {err}")


async def run_sessions(base: str, n: int, duration: float, ramp: float, seed: int,
                       seen: set | None = None, seeds: int = SEEDS, *, cache: bool = False,
                       download: bool = True) -> Stats:
    stats = Stats(seen=seen if seen is not None else set())
    t0 = time.monotonic()
    sessions = [Session(i, base, stats, random.Random(seed * 1000 + i), seeds, cache=cache,
                        download=download) for i in range(n)]
    await asyncio.gather(*(s.run(t0 + ramp * i / max(1, n - 1), t0 + duration)
                           for i, s in enumerate(sessions)))
    return stats
