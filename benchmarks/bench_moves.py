"""A room's moves in one process, without the network: the hub's CPU per phone per move.

    python -m benchmarks.bench_moves [--phones 1000] [--here 500]
        [--languages en fr de es zh ar] [--steps 14] [--confidence | --no-confidence]
        [--seed 0] [--out FILE]

The phones-only server process of ``bench_room`` without its sockets: one `Hub` on a fresh
SQLite class store and the default lesson's room, ``--here`` of its ``--phones`` phones
following it here (their browser languages ``--languages`` in turn; one asyncio task each
takes its frames, as a stream's task does), the others answering only (the phones of the
other process). At each step the host moves (*Next*; then every phone answers from the
step's ``ask``, as ``devtools/phones.py`` does, and says how sure: those here through the
hub, as their ``POST`` does, the others straight into the store); then *Reveal*. What is
measured is this process's CPU time (every thread: the hub's watcher and builders, the
event loop) from the move until every phone here has drawn it, over the phones here: the
``bench_room`` figure less what uvicorn spends writing each frame to its socket. The builds
made in the window are counted too (``room_message`` calls; phones' own parts made).

CPU time, not wall time, so that the figure holds on a shared machine; each step's figure is
one move, the last line the p50 / p95 / max over the moves beside issue 43's target.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.machine import machine_line
from devtools.phones import random_level, random_value
from devtools.protocol import run_async

TARGET_MS = 0.15          # issue 43 item 6: server CPU per phone per move, p95
LANGUAGES = ("en", "fr", "de", "es", "zh", "ar")


class Counts:
    """What the moves built: room messages (one per language) and phones' own parts."""

    def __init__(self):
        self.messages = self.personal = 0

    def count(self, module, name: str, field: str) -> None:
        """Count the calls of ``module.name`` in ``field``."""
        real = getattr(module, name)

        def counted(*args, **kwargs):
            setattr(self, field, getattr(self, field) + 1)
            return real(*args, **kwargs)
        setattr(module, name, counted)


class Watch:
    """The move the phones wait for, and how many have not drawn it yet."""

    def __init__(self):
        self.key: tuple | None = None          # (phase, step)
        self.left = 0
        self.done = asyncio.Event()
        self.seen: dict[int, tuple] = {}

    def expect(self, key: tuple, n: int) -> None:
        self.key, self.left, self.done = key, n, asyncio.Event()


async def _follow(f, watch: Watch) -> None:
    """A stream's task: take the frames as they come; count the phone once it drew the
    watched move."""
    while not f.closed:
        await f.wake.wait()
        f.take()
        if f.drawn is not None and f.drawn[2:4] == watch.key \
                and watch.seen.get(id(f)) != watch.key:
            watch.seen[id(f)] = watch.key
            watch.left -= 1
            if watch.left == 0:
                watch.done.set()


async def _move(act, key: tuple, phones: list, watch: Watch) -> float:
    """``act()`` (the host's move), then wait until every phone drew ``key``: this process's
    CPU seconds from the move to the last phone."""
    watch.expect(key, len(phones))
    t0 = time.process_time()
    act()
    await asyncio.wait_for(watch.done.wait(), 120)
    return time.process_time() - t0


def _act(store, code: str, key: str, phase: str, step: int) -> None:
    """The host's move to ``phase`` of ``step`` (step 1 asks as the room starts)."""
    if phase == "revealed":
        store.reveal(code, key, step)
    elif step > 1:
        store.set_step(code, key, step)


async def _answer(hub, code: str, step: int, students: list, here: int, ask: dict | None,
                  rng) -> None:
    """Every phone answers ``ask``: those here through the hub (``POST /live/CODE/answer``
    calls `Hub.answer`), the others' straight into the store (their process's)."""
    if ask is None:
        return
    picks = [(s, random_value(ask, rng), random_level(ask, rng)) for s in students]
    for s, value, level in picks[here:]:
        hub.store.answer(code, step, s, value, level)
    for k in range(0, here, 50):
        await asyncio.gather(*(hub.answer(code, s, step, 1, value, level)
                               for s, value, level in picks[k:min(k + 50, here)]))


def measure(a) -> list[dict]:
    """One class through ``a.steps`` steps: per step, each move's (CPU ms per phone here,
    messages built, own parts made)."""
    os.environ["XATTN_CLASS_STORE"] = str(Path(tempfile.mkdtemp()) / "class.db")
    import xattn.classroom.publishing as publishing_module
    import xattn.classroom.recovery as recovery_module
    from xattn.classroom import new_student_id
    from xattn.classroom.hub import Hub
    from xattn.live import build as build_module
    from xattn.live import messages as messages_module
    from xattn.live.catalog import default_lesson
    from xattn.live.prepared import lesson_questions
    from xattn.live.stores import class_store

    counts = Counts()
    counts.count(messages_module, "room_message", "messages")
    for module in (recovery_module, publishing_module):
        counts.count(module, "personal_json", "personal")
    store, lesson = class_store(), default_lesson()
    questions, problems = lesson_questions(lesson)
    if problems:
        raise SystemExit("the default lesson cannot run here: " + "; ".join(problems))
    code, key = store.create_room(questions[:a.steps], "")
    if a.confidence:
        store.set_options(code, key, confidence=True)
    rng = random.Random(a.seed)
    students = [new_student_id() for _ in range(a.phones)]
    warming = build_module.warm_ahead(messages_module, lesson, tuple(a.languages))
    if warming is not None:      # as a server does in the background while phones join
        warming.join()
    rows = []

    async def main():
        hub, watch = Hub(store, build_module.build), Watch()
        hub.start()
        phones = [hub.subscribe(code, s, lang=a.languages[k % len(a.languages)])
                  for k, s in enumerate(students[:a.here])]
        tasks = [asyncio.ensure_future(_follow(f, watch)) for f in phones]
        try:
            for step in range(1, a.steps + 1):
                row = {"step": step}
                for phase in ("asking", "revealed"):
                    before = (counts.messages, counts.personal)
                    cpu = await _move(lambda s=step, p=phase: _act(store, code, key, p, s),
                                      (phase, step), phones, watch)
                    row[phase] = (1000 * cpu / len(phones), counts.messages - before[0],
                                  counts.personal - before[1])
                    if phase == "asking":
                        room = hub._rooms[code]
                        ask = json.loads(room.messages.get("en", room.message).room)["ask"]
                        await _answer(hub, code, step, students, a.here, ask, rng)
                        await asyncio.sleep(1.0)        # receipts and what follows settle
                rows.append(row)
                print(_line(row), flush=True)
        finally:
            for t in tasks:
                t.cancel()
            hub.stop()
    run_async(main())     # a thread of its own: a pytest process may hold a running loop
    return rows


def _line(row: dict) -> str:
    cells = [str(row["step"])]
    for phase in ("asking", "revealed"):
        ms, built, own = row[phase]
        cells.append(f"{ms:.3f} ms ({built} messages, {own} own parts)")
    return "| " + " | ".join(cells) + " |"


def report(rows: list[dict], a) -> str:
    moves = [row[p][0] for row in rows for p in ("asking", "revealed") if row["step"] > 1
             or p == "revealed"]
    reveals = [row["revealed"][0] for row in rows]
    qs = statistics.quantiles(moves, n=20, method="inclusive") if len(moves) > 1 else moves * 19

    def three(xs, q95):
        return f"{statistics.median(xs):.3f} / {q95:.3f} / {max(xs):.3f} ms"
    r95 = statistics.quantiles(reveals, n=20, method="inclusive")[18] if len(reveals) > 1 \
        else reveals[0]
    lines = [f"Machine: {machine_line()}", "",
             f"{a.here} of {a.phones} phones here, languages {' '.join(a.languages)}, "
             f"{a.steps} steps, confidence {'on' if a.confidence else 'off'}", "",
             "| step | *Next*: CPU ms a phone (builds) | *Reveal*: CPU ms a phone (builds) |",
             "|---|---|---|", *(_line(r) for r in rows), "",
             "| measure | target | value |", "|---|---|---|",
             f"| CPU per phone per move, p50 / p95 / max (every move) | p95 ≤ {TARGET_MS} ms "
             f"| {three(moves, qs[18])} {'✅' if qs[18] <= TARGET_MS else '❌'} |",
             f"| … the Reveals alone |  | {three(reveals, r95)} |"]
    return "\n".join(lines)


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phones", type=int, default=1000, help="phones in the class")
    ap.add_argument("--here", type=int, default=500,
                    help="of which this many follow the room here (the rest only answer)")
    ap.add_argument("--languages", nargs="+", default=list(LANGUAGES), metavar="LANG")
    ap.add_argument("--steps", type=int, default=14, help="steps of the default lesson")
    ap.add_argument("--confidence", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, help="write the table here (Markdown)")
    a = ap.parse_args(argv)
    if not 1 <= a.here <= a.phones:
        ap.error(f"--here is 1 to --phones ({a.phones}); received {a.here}")
    return a


def main() -> int:
    a = parse_args()
    rows = measure(a)
    text = report(rows, a)
    print("\n" + text)
    if a.out:
        a.out.write_text("    python -m benchmarks.bench_moves " + " ".join(sys.argv[1:])
                         + "\n\n" + text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
