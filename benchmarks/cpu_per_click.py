"""Server CPU milliseconds per click: process CPU time / clicks, one click at a time.

    python -m benchmarks.cpu_per_click [--clicks 40] [--option NAME=VALUE] [--cache-messages]
    python -m benchmarks.cpu_per_click --compare 53c1af1 f4c9926 [--rounds 4]

Starts `streamlit run app.py` on a free 127.0.0.1 port and drives one protocol session
(benchmarks.students.Session: the page, then reruns over the websocket, as the browser does),
for two cases: the default example (4 heads, 8 x 7 tokens) and 16 heads of 64 x 64 tokens
(``d_model=64&heads=16`` and two 64-token sentences as ``src`` and ``tgt``). Each click changes
the seed, waits for the run to finish and the figure to arrive, then the next one follows:
nothing overlaps, so the server's CPU time (utime + stime from /proc) divided by the clicks is
the cost of one click. Two kinds of clicks: seeds alternating between two values already
computed (the cache holds them: a student opening a setting someone opened before) and seeds
never asked before (cache miss: the attention is computed and the figures built). Prints a
Markdown table with the median latency and the bytes the server sent per click.

``--compare REF...`` measures other commits side by side in the same run: each REF is checked
out in a temporary git worktree and served by its own process, all servers run at once, and
the clicks alternate between them in rounds (``--rounds``, the order rotating each round), so
the machine's other load falls on every version alike. Single numbers on a shared 2-core
machine are noisy: the load average comes with the table.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import statistics
import sys

from benchmarks.checkouts import checkouts
from benchmarks.machine import machine_line
from benchmarks.process_stats import cpu_seconds
from benchmarks.students import Session, Stats
from devtools.browser import ARTIFACTS, StreamlitServer

BIG_SRC = " ".join(f"s{i}" for i in range(64))
BIG_TGT = " ".join(f"t{i}" for i in range(64))
CASES = {
    "default example (4 heads, 8 × 7 tokens)": ({}, 4),
    "16 heads, 64 × 64 tokens, d_model 64": ({"src": BIG_SRC, "tgt": BIG_TGT, "d_model": "64"},
                                             16),
}
KINDS = ("cache hit (seeds 1, 2, 1, …)", "cache miss (new seeds)")


class Clicker:
    """One session on one server for one case, clicking in batches."""

    def __init__(self, server: StreamlitServer, query: dict, heads: int, cache: bool):
        self.server, self.heads = server, heads
        self.stats = Stats()
        self.session = Session(0, server.url, self.stats, random.Random(0), cache=cache,
                               download=False, query=query)
        self.session.values["heads"] = heads
        self.ws = None
        self.fresh = 1000
        self.totals = {kind: [0.0, 0, [], 0] for kind in KINDS}   # cpu s, clicks, times, bytes

    async def open(self, stack: contextlib.AsyncExitStack) -> None:
        self.ws = await stack.enter_async_context(self.session.connected())
        for seed in (1, 2, 1, 2):                       # load, then both seeds computed
            self.session.values["seed"] = seed
            await self.session.rerun(self.ws)

    async def batch(self, kind: str, n: int) -> None:
        if kind == KINDS[0]:
            seeds = [1 + i % 2 for i in range(n)]
        else:
            seeds, self.fresh = list(range(self.fresh, self.fresh + n)), self.fresh + n
        cpu0, bytes0 = cpu_seconds(self.server.pid), self.stats.bytes_received
        total = self.totals[kind]
        for seed in seeds:
            self.session.values["seed"] = seed
            took = await self.session.rerun(self.ws)
            if took is not None:
                total[2].append(took)
        total[0] += cpu_seconds(self.server.pid) - cpu0
        total[1] += n
        total[3] += self.stats.bytes_received - bytes0
        if self.stats.errors:
            raise RuntimeError("; ".join(self.stats.errors[:5]))

    def row(self, kind: str) -> tuple[float, float, float]:
        cpu, n, times, sent = self.totals[kind]
        return 1e3 * cpu / n, statistics.median(times) * 1e3, sent / n / 1e3


async def measure(servers: dict[str, StreamlitServer], clicks: int, rounds: int,
                  cache: bool) -> dict:
    clickers = {(label, case): Clicker(server, query, heads, cache)
                for label, server in servers.items() for case, (query, heads) in CASES.items()}
    per_batch = max(1, clicks // rounds)
    async with contextlib.AsyncExitStack() as stack:
        for c in clickers.values():
            await c.open(stack)
        labels = list(servers)
        for r in range(rounds):
            order = labels[r % len(labels):] + labels[:r % len(labels)]
            for case in CASES:
                for kind in KINDS:
                    for label in order:
                        await clickers[label, case].batch(kind, per_batch)
    return clickers


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clicks", type=int, default=40, help="clicks per kind, case and version")
    ap.add_argument("--rounds", type=int, default=4,
                    help="the clicks come in this many alternating batches")
    ap.add_argument("--compare", nargs="*", default=[], metavar="REF",
                    help="also measure these commits, side by side in the same run")
    ap.add_argument("--option", action="append", default=[], metavar="NAME=VALUE",
                    help="a Streamlit config option for the server (repeatable)")
    ap.add_argument("--cache-messages", action="store_true",
                    help="the client advertises the hashes of messages it holds, like the "
                         "browser (see benchmarks.load_test)")
    a = ap.parse_args()
    extra = tuple(arg for opt in a.option for arg in (f"--{opt.partition('=')[0]}",
                                                      opt.partition("=")[2]))
    print(machine_line())
    load0 = os.getloadavg()[0]
    with checkouts(a.compare) as roots, contextlib.ExitStack() as stack:
        servers = {label: stack.enter_context(StreamlitServer(
            log=ARTIFACTS / f"cpu-per-click-{n}.log", extra_args=extra, root=root))
            for n, (label, root) in enumerate(roots.items())}
        clickers = asyncio.run(measure(servers, a.clicks, a.rounds, a.cache_messages))
    print(f"\nserver options: {' '.join(a.option) or 'defaults (.streamlit/config.toml)'}; "
          f"client message cache: {'on' if a.cache_messages else 'off'}; {a.clicks} clicks per "
          f"row, one at a time, in {a.rounds} alternating rounds; load average {load0:.2f} "
          f"before, {os.getloadavg()[0]:.2f} after")
    print("\n| case | click | version | server CPU per click | latency (median) | "
          "sent per click |")
    print("|---|---|---|---:|---:|---:|")
    for case in CASES:
        for kind in KINDS:
            for label in roots:
                cpu, latency, kb = clickers[label, case].row(kind)
                print(f"| {case} | {kind} | {label} | {cpu:.1f} ms | {latency:.0f} ms | "
                      f"{kb:.0f} kB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
