"""The class store's cost: latency of an answer and of a room poll, per backend, alone and
under concurrency, and the store's CPU per student per poll.

    python -m benchmarks.bench_classroom_store [--students 200] [--processes 2] [--threads 8]
        [--seconds 10] [--paced-seconds 30] [--redis-port 6392]
        [--out benchmarks/results/classroom_store.md]

Backends: SQLite (a fresh file in a temporary folder), and Redis through a unix socket and
through TCP on 127.0.0.1 (a redis-server this script starts with ``--save ''``, and stops).

1. *Alone*: one thread, one call at a time: median and p95 wall time of each operation, and
   its CPU (this process's CPU time per call; for Redis also redis-server's own time per script
   from ``INFO commandstats``).
2. *Flat out*: ``--processes`` OS processes x ``--threads`` threads share the ``--students``
   students of one room and call with no pause (far more than a class sends: the capacity):
   each call polls the room as a student (``room_view(code, id)``), and a quarter of them also
   answer (mostly a changed answer: last answer wins). Wall-time percentiles per call, calls
   per second, the CPU per call, and whether every student who answered is counted.
3. *A class's pace*: the same students, each polling every 2.5 s (the page's fragment).
4. *Per student per poll*: the CPU of one student's poll (from 1) times the polls a class
   makes (``--students`` every 2.5 s), as a share of one core. This is the store's part only;
   the page's fragment rerun around it is measured with the app.

Single numbers on a shared 2-core machine are noisy: the load average comes with the table.
"""

from __future__ import annotations

import argparse
import heapq
import multiprocessing
import os
import random
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.machine import machine_line
from xattn.classroom import Question, new_student_id
from xattn.classroom.redis_store import RedisStore
from xattn.classroom.sqlite_store import SQLiteStore

QUESTIONS = [Question("token", tuple(f"w{i}" for i in range(8))),   # tap one of 8 words
             Question("number", low=0, high=1)]
POLL_EVERY = 2.5      # seconds between a student's polls (the page's fragment)


def open_backend(spec: tuple):
    kind, where = spec
    return SQLiteStore(where) if kind == "sqlite" else RedisStore(where, prefix="bench:")


def percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def timed(fn, n: int) -> tuple[list[float], float]:
    """Wall times of ``n`` calls of ``fn(i)`` (s) and the process CPU per call (s)."""
    walls, cpu0 = [], time.process_time()
    for i in range(n):
        t = time.perf_counter()
        fn(i)
        walls.append(time.perf_counter() - t)
    return walls, (time.process_time() - cpu0) / n


def redis_script_usec(url: str) -> tuple[int, int]:
    """(calls, microseconds) of EVALSHA so far, from the server's own accounting."""
    import redis
    stats = redis.Redis.from_url(url).info("commandstats").get("cmdstat_evalsha", {})
    return int(stats.get("calls", 0)), int(stats.get("usec", 0))


def alone(spec: tuple, n_students: int) -> list[tuple]:
    """Rows (operation, p50 us, p95 us, client CPU us, server us) for one caller."""
    store = open_backend(spec)
    code, secret = store.create_room(QUESTIONS)
    ids = [new_student_id() for _ in range(n_students)]
    ops = [("answer (first)", lambda i: store.answer(code, 1, ids[i], i % 8), n_students),
           ("answer (changed)", lambda i: store.answer(code, 1, ids[i], (i + 1) % 8), n_students),
           ("room_view (student)", lambda i: store.room_view(code, ids[i % n_students]),
            5 * n_students),
           ("room_view (host)", lambda i: store.room_view(code), 5 * n_students),
           ("my_answer", lambda i: store.my_answer(code, 1, ids[i % n_students]), n_students),
           ("reveal (host)", lambda i: store.reveal(code, secret, 1), 100)]
    rows = []
    for name, fn, n in ops:
        before = redis_script_usec(spec[1]) if spec[0] != "sqlite" else None
        walls, cpu = timed(fn, n)
        server = ""
        if before is not None:        # every script an operation ran, per operation
            server = f"{(redis_script_usec(spec[1])[1] - before[1]) / n:.0f}"
        rows.append((name, statistics.median(walls) * 1e6, percentile(walls, 0.95) * 1e6,
                     cpu * 1e6, server))
    store.close()
    return rows


def worker(spec: tuple, code: str, ids: list[str], n_threads: int, seconds: float,
           pace: float | None, go, out) -> None:
    """One OS process: threads play students who poll (every ``pace`` seconds, or flat out
    when None) and answer on a quarter of their polls; sends back the latencies and the
    students who answered."""
    store = open_backend(spec)
    views: list[float] = []
    answers: list[float] = []
    answered: set[str] = set()
    lock = threading.Lock()
    go.wait(120)
    stop, cpu0 = time.monotonic() + seconds, time.process_time()

    def loop(mine: list[str], seed: int):
        rng = random.Random(seed)            # a local generator: no global RNG state
        start = time.monotonic()
        due = [(start + (rng.uniform(0, pace) if pace else 0), k) for k in range(len(mine))]
        heapq.heapify(due)                   # (when, student): the next poll first
        v, a, who = [], [], set()
        while due and due[0][0] < stop:
            when, k = heapq.heappop(due)
            time.sleep(max(0.0, when - time.monotonic()))
            t = time.perf_counter()
            store.room_view(code, mine[k])
            v.append(time.perf_counter() - t)
            if rng.random() < 0.25:
                t = time.perf_counter()
                store.answer(code, 1, mine[k], rng.randrange(8))
                a.append(time.perf_counter() - t)
                who.add(mine[k])
            heapq.heappush(due, (when + pace if pace else time.monotonic(), k))
        with lock:
            views.extend(v)
            answers.extend(a)
            answered.update(who)
    threads = [threading.Thread(target=loop, args=(ids[k::n_threads], k))
               for k in range(n_threads) if ids[k::n_threads]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put((views, answers, answered, time.process_time() - cpu0))
    store.close()


def concurrent(spec: tuple, n_students: int, processes: int, threads: int,
               seconds: float, pace: float | None) -> tuple:
    store = open_backend(spec)
    code, _ = store.create_room(QUESTIONS)
    ids = [new_student_id() for _ in range(n_students)]
    ctx = multiprocessing.get_context("spawn")
    go, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=worker,
                         args=(spec, code, ids[p::processes], threads, seconds, pace, go,
                               out))
             for p in range(processes)]
    for p in procs:
        p.start()
    time.sleep(3)                            # let the spawned interpreters import first
    go.set()
    views, answers, answered, cpu = [], [], set(), 0.0
    before = redis_script_usec(spec[1]) if spec[0] != "sqlite" else (0, 0)
    for _ in procs:
        v, a, who, seconds_cpu = out.get(timeout=seconds + 300)
        views += v
        answers += a
        answered |= who
        cpu += seconds_cpu
    server = (redis_script_usec(spec[1])[1] - before[1]) * 1e-6 if spec[0] != "sqlite" else 0
    for p in procs:
        p.join(60)
    counted = store.room_view(code).n_answered
    store.close()
    return views, answers, counted, len(answered), cpu, server


def under_load(backends: dict, args, pace: float | None, title: str) -> list[str]:
    seconds = args.paced_seconds if pace else args.seconds
    lines = ["", title, "",
             "| backend | call | calls | calls/s | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for name, spec in backends.items():
        views, answers, counted, expected, cpu, server = concurrent(
            spec, args.students, args.processes, args.threads, seconds, pace)
        for call, xs in (("room_view (student)", views), ("answer", answers)):
            lines.append(f"| {name} | {call} | {len(xs)} | {len(xs) / seconds:.0f} | "
                         f"{percentile(xs, .5) * 1e3:.2f} | {percentile(xs, .95) * 1e3:.2f} | "
                         f"{percentile(xs, .99) * 1e3:.2f} | {max(xs) * 1e3:.1f} |")
        calls = len(views) + len(answers)
        in_redis = f" + {server / calls * 1e6:.0f} us in redis-server" if server else ""
        lines.append(f"| {name} | students with an answer, counted / expected: "
                     f"**{counted} / {expected}**; CPU per call (with the harness): "
                     f"{cpu / calls * 1e6:.0f} us in the app{in_redis} | | | | | | |")
        print("\n".join(lines[-3:]), flush=True)
    return lines


def start_redis(folder: Path, port: int) -> subprocess.Popen:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1",
                             "--unixsocket", str(folder / "redis.sock"), "--save", "",
                             "--appendonly", "no", "--logfile", str(folder / "redis.log")])
    import redis
    deadline = time.monotonic() + 30
    while True:
        try:
            redis.Redis(unix_socket_path=str(folder / "redis.sock")).ping()
            return proc
        except redis.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"redis-server did not start (port {port} busy?): "
                                 f"{(folder / 'redis.log').read_text()}") from None
            time.sleep(0.1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=200)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10.0, help="flat out")
    ap.add_argument("--paced-seconds", type=float, default=30.0, help="at a class's pace")
    ap.add_argument("--redis-port", type=int, default=6392)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-classroom-"))
    redis_proc = start_redis(folder, args.redis_port)
    backends = {"SQLite (WAL, one file)": ("sqlite", str(folder / "classes.sqlite3")),
                "Redis, unix socket": ("redis", f"unix://{folder / 'redis.sock'}"),
                "Redis, TCP 127.0.0.1": ("redis", f"redis://127.0.0.1:{args.redis_port}/0")}
    lines = [f"Machine: {machine_line()}", f"Started: {time.strftime('%Y-%m-%d %H:%M:%S %Z')}",
             ""]
    try:
        lines += ["## 1. Alone: one caller, one call at a time (microseconds)", "",
                  "| backend | operation | p50 | p95 | CPU in the app | CPU in redis-server |",
                  "|---|---|---:|---:|---:|---:|"]
        poll_cpu = {}
        for name, spec in backends.items():
            for op, p50, p95, cpu, server in alone(spec, args.students):
                lines.append(f"| {name} | {op} | {p50:.0f} | {p95:.0f} | {cpu:.0f} | "
                             f"{server or '–'} |")
                if op == "room_view (student)":
                    poll_cpu[name] = cpu + (float(server) if server else 0.0)
            print("\n".join(lines[-6:]), flush=True)
        head = f"{args.processes} processes x {args.threads} threads, {args.students} students"
        lines += under_load(backends, args, None, f"## 2. Flat out: {head}, every call as "
                            f"soon as the last returned, {args.seconds:g} s")
        lines += under_load(backends, args, POLL_EVERY, f"## 3. A class's pace: {head}, each "
                            f"polling every {POLL_EVERY:g} s, {args.paced_seconds:g} s")
        rate = args.students / POLL_EVERY
        lines += ["", f"## 4. The store's CPU per student per poll, alone ({args.students} "
                  f"students, a poll every {POLL_EVERY:g} s = {rate:.0f} polls/s)", "",
                  "| backend | CPU per poll (us) | share of one core for the class |",
                  "|---|---:|---:|"]
        for name, cpu in poll_cpu.items():
            lines.append(f"| {name} | {cpu:.0f} | {cpu * 1e-6 * rate * 100:.2f} % |")
        lines += ["", f"Load average after: {os.getloadavg()[0]:.2f}"]
    finally:
        redis_proc.terminate()
        redis_proc.wait(30)
        shutil.rmtree(folder, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)


if __name__ == "__main__":
    main()
