"""Server CPU milliseconds per click: process CPU time / clicks, one click at a time.

    python -m benchmarks.cpu_per_click [--clicks 40] [--option NAME=VALUE] [--cache-messages]

Starts `streamlit run app.py` on a free 127.0.0.1 port and drives one protocol session
(benchmarks.load_test.Session: the page, then reruns over the websocket, as the browser does),
for two cases: the default example (4 heads, 8 x 7 tokens) and 16 heads of 64 x 64 tokens
(``d_model=64&heads=16`` and two 64-token sentences as ``src`` and ``tgt``). Each click changes
the seed, waits for the run to finish and the figure to arrive, then the next one follows:
nothing overlaps, so the server's CPU time (utime + stime from /proc) divided by the clicks is
the cost of one click. Two kinds of clicks: seeds alternating between two values already
computed (st.cache_data hit: a student opening a setting someone opened before) and seeds never
asked before (cache miss: the attention is computed too). Prints a Markdown table with the
median latency and the bytes the server sent per click. Single numbers on a shared 2-core
machine are noisy: the load average comes with the table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys

from benchmarks.load_test import Session, Stats, cpu_seconds
from benchmarks.machine import machine_line
from devtools.browser import ARTIFACTS, StreamlitServer

BIG_SRC = " ".join(f"s{i}" for i in range(64))
BIG_TGT = " ".join(f"t{i}" for i in range(64))
CASES = {
    "default example (4 heads, 8 × 7 tokens)": ({}, 4),
    "16 heads, 64 × 64 tokens, d_model 64": ({"src": BIG_SRC, "tgt": BIG_TGT, "d_model": "64"},
                                             16),
}


async def clicks(url: str, pid: int, query: dict, heads: int, n: int, cache: bool) -> dict:
    stats = Stats()
    session = Session(0, url, stats, random.Random(0), cache=cache, download=False, query=query)
    session.values["heads"] = heads
    out = {}
    async with session.connected() as ws:
        for seed in (1, 2, 1, 2):                       # load, then both seeds computed
            session.values["seed"] = seed
            await session.rerun(ws)
        plans = {"cache hit (seeds 1, 2, 1, …)": [1 + i % 2 for i in range(n)],
                 "cache miss (new seeds)": [1000 + i for i in range(n)]}
        for label, seeds in plans.items():
            cpu0, bytes0, times = cpu_seconds(pid), stats.bytes_received, []
            for seed in seeds:
                session.values["seed"] = seed
                took = await session.rerun(ws)
                if took is not None:
                    times.append(took)
            out[label] = (1e3 * (cpu_seconds(pid) - cpu0) / n, statistics.median(times) * 1e3,
                          (stats.bytes_received - bytes0) / n / 1e3)
    if stats.errors:
        raise RuntimeError("; ".join(stats.errors[:5]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clicks", type=int, default=40, help="clicks per kind and case")
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
    rows = []
    with StreamlitServer(log=ARTIFACTS / "cpu-per-click.log", extra_args=extra) as server:
        for name, (query, heads) in CASES.items():
            result = asyncio.run(clicks(server.url, server.pid, query, heads, a.clicks,
                                        a.cache_messages))
            rows += [(name, kind, *values) for kind, values in result.items()]
    print(f"\nserver options: {' '.join(a.option) or 'defaults (.streamlit/config.toml)'}; "
          f"client message cache: {'on' if a.cache_messages else 'off'}; {a.clicks} clicks per "
          f"row, one at a time; load average {load0:.2f} before, {os.getloadavg()[0]:.2f} after")
    print("\n| case | click | server CPU per click | latency (median) | sent per click |")
    print("|---|---|---:|---:|---:|")
    for name, kind, cpu, latency, kb in rows:
        print(f"| {name} | {kind} | {cpu:.0f} ms | {latency:.0f} ms | {kb:.0f} kB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
