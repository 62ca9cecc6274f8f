"""Where a server's CPU goes: py-spy's collapsed stacks, summed per function (``load_test
--profile``)."""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["PROFILE_RATE", "print_profile"]

PROFILE_RATE = 50     # py-spy samples per second


def print_profile(path: Path, top: int = 25, instants: int = 0) -> None:
    """Inclusive share of the server's CPU samples per function, from py-spy's collapsed
    stacks ("frame;frame;... count"), for the frames of the app, Streamlit and Plotly.

    Stacks recorded with --threads start with "thread (tid): name": then the share of the
    ``instants`` (rate × seconds) at which each kind of thread was sampled comes first; with
    --gil that is how often that kind of thread held the GIL.
    """
    inclusive: dict[str, int] = {}
    leaf: dict[str, int] = {}
    threads: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        total += n
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";")]
        if frames[0].startswith("thread ("):
            kind = re.sub(r"_\d+$", "_N", frames.pop(0).partition(": ")[2])
            threads[kind] = threads.get(kind, 0) + n
        if not frames:          # a thread sampled with no Python frame of its own
            continue
        for f in set(frames):
            inclusive[f] = inclusive.get(f, 0) + n
        leaf[frames[-1]] = leaf.get(frames[-1], 0) + n
    if not total:
        print("profile: no samples")
        return
    interesting = ("xattn", "app.py", "streamlit/elements", "streamlit/runtime", "plotly",
                   "numpy", "json", "protobuf", "websockets", "uvicorn", "starlette")
    if threads and instants:
        print(f"\nSampled threads ({total} samples at {instants} sampling instants; with "
              f"--profile-gil: who held the GIL): {100 * total / instants:.0f} % of instants")
        for kind, n in sorted(threads.items(), key=lambda kv: -kv[1])[:8]:
            print(f"  {100 * n / instants:5.1f} %  {kind}")
    print(f"\nServer CPU profile ({total} samples, py-spy): inclusive share per function")
    print("\n| share | function |\n|---|---|")
    ranked = sorted(inclusive.items(), key=lambda kv: -kv[1])
    shown = [(f, n) for f, n in ranked if any(k in f for k in interesting)][:top]
    for f, n in shown:
        print(f"| {100 * n / total:.0f} % | `{f[:110]}` |")
    print("\nTop self time:")
    for f, n in sorted(leaf.items(), key=lambda kv: -kv[1])[:10]:
        print(f"  {100 * n / total:4.1f} %  {f[:120]}")
