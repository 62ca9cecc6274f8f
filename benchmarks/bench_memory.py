"""Server memory at the worst case: many large settings opened from links, measured as RSS.

    python -m benchmarks.bench_memory [--settings 600] [--concurrent 6]

Starts ``streamlit run app.py`` on a free 127.0.0.1 port, then opens ``--settings`` links in
new sessions (``--concurrent`` at a time, each closed once its page finished), and prints the
server's resident memory (VmRSS) as it goes. Two phases replay the case that once took a
server past 1 GB:

1. *many seeds*: two 64-token sentences, d_model 512, 16 heads, a new seed every time (every
   link a computation the caches have not seen);
2. *new words*: the same with new words in every link (new token vectors too).

Budget (docs/performance.md): the whole server under about 600 MB in both phases, on a 1 GB
Streamlit Community Cloud container. What bounds it: the computation caches
(``xattn.live.compute.CACHE_BYTES``) and the token vector cache (``xattn.embedder``) are bounded
by bytes; Streamlit keeps each closed session and its sent messages for a while.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from urllib.parse import urlencode

from benchmarks.machine import machine_line
from devtools.browser import StreamlitServer
from devtools.protocol import load_page, rss_mb

WORDS = [f"w{i}" for i in range(64)]


def link(phase: str, k: int) -> str:
    words = WORDS if phase == "many seeds" else [f"n{k}x{i}" for i in range(64)]
    return urlencode({"src": " ".join(words), "tgt": " ".join(reversed(words)),
                      "d_model": 512, "heads": 16, "seed": k})


async def replay(port: int, pid: int, phase: str, n: int, concurrent: int,
                 report_every: int) -> list[tuple[int, float, float, int]]:
    """Open ``n`` links of ``phase``; rows of (links so far, RSS MB, median s, errors)."""
    rows, times, errors, done = [], [], 0, 0
    for start in range(0, n, concurrent):
        batch = range(start, min(n, start + concurrent))
        loads = await asyncio.gather(*(load_page(port, link(phase, k)) for k in batch))
        for load in loads:
            times.append(load.seconds)
            errors += bool(load.problems)
        done += len(batch)
        if done % report_every == 0 or done == n:
            times.sort()
            rows.append((done, rss_mb(pid), times[len(times) // 2], errors))
            times = []
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--settings", type=int, default=600, help="links per phase")
    parser.add_argument("--concurrent", type=int, default=6, help="sessions open at a time")
    parser.add_argument("--every", type=int, default=100, help="report every N links")
    args = parser.parse_args()
    print(machine_line())
    with StreamlitServer() as server:
        time.sleep(1.0)
        asyncio.run(load_page(server.port))          # imports and first figure
        print(f"\nserver memory after the first page: {rss_mb(server.pid):.0f} MB\n")
        print("| phase | links opened | server RSS | median page load | errors |")
        print("|---|---:|---:|---:|---:|")
        peak = 0.0
        for phase in ("many seeds", "new words"):
            for done, rss, median, errors in asyncio.run(replay(
                    server.port, server.pid, phase, args.settings, args.concurrent,
                    args.every)):
                peak = max(peak, rss)
                print(f"| {phase} | {done} | {rss:.0f} MB | {median:.2f} s | {errors} |",
                      flush=True)
        print(f"\npeak RSS {peak:.0f} MB (budget: about 600 MB)")


if __name__ == "__main__":
    main()
