"""Rooms nobody teaches and votes a script mints, re-run on a real server (issue 42, items 2
and 3): prints each number beside its target.

1. **Squatting**: the store filled (``Limits.max_rooms``) with rooms made from
   ``--addresses`` addresses (as many as each may hold, ``Limits.rooms_per_address``), kept
   busy by fake students who join (the page's work done) and answer, and by ``/pulse``
   streams without the room's key; a lecturer opens ``?class=new`` every 2 s: how long
   until a class starts (target: at most 60 s). Ten addresses cannot fill the store at
   all (10 x 5 = 50 of 100 rooms); ``--addresses 20`` fills it, and the untaught window
   (``Limits.untaught_seconds``, 45 s) is what lets the lecturer in.
2. **Votes**: a hall of ``--hall`` protocol phones behind one address joins one room (target:
   1,000 within 30 s), then a script at another address mints voters into another room as
   fast as it can for ``--seconds`` after the burst: its rate (target: about 1 a second).

The rooms of (1) are made through the store with the address they come from (the page's
``?class=new`` passes the same), the lecturer's through the page. The join's work is set to
4 x 2**10 hashes (``join_work_bits=10``): the phones and the script share this machine's two
cores, and what is measured is the server's bound, not the work (a script in C pays 20 ms a
voter at the default 4 x 2**15: the bucket, not the work, is what holds it).

    python -m benchmarks.bench_squat [--addresses 20] [--hall 1000] [--seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import re
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

from devtools.browser import StreamlitServer
from devtools.phones import Phone
from devtools.protocol import Client, run_async
from xattn.classroom import LimitReached, Limits, Question, SQLiteStore
from xattn.classroom.codes import solve_work
from xattn.ui.room.identity import STUDENT_COOKIE

PORT = 18410
LIMITS = "join_work_bits=10"
QUESTIONS = (Question("choice", ("up", "down")),)


def _http(url: str, method: str, path: str, address: str, body: bytes | None = None):
    u = urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    headers = {"X-Forwarded-For": address}
    if body is not None:
        headers["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r, data


def fake_student(url: str, code: str, address: str) -> str | None:
    """One voter minted as a script would: the page, its work, the join, an answer. The
    room's student cookie, or None when the server refused."""
    _, page = _http(url, "GET", f"/?room={code}", address)
    data = json.loads(page.decode().split("const JOIN = ", 1)[1].split(";\n", 1)[0])
    if "challenge" not in data:
        return None
    nonce = solve_work(data["challenge"], data["bits"], data["pieces"])
    r, _ = _http(url, "POST", f"/live/{code}/join", address,
                 json.dumps({"challenge": data["challenge"], "nonce": nonce}).encode())
    cookie = next((v.split(";")[0] for k, v in r.getheaders() if k.lower() == "set-cookie"
                   and v.startswith(STUDENT_COOKIE)), None)
    if cookie:
        u = urlsplit(url)
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        c.request("POST", f"/live/{code}/answer", json.dumps({"step": 1, "round": 1,
                                                              "value": "up"}),
                  {"Content-Type": "application/json", "Cookie": cookie})
        c.getresponse().read()
        c.close()
    return cookie


def keyless_stream(url: str, code: str, stop: threading.Event) -> None:
    u = urlsplit(url)
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=300)
    try:
        c.request("GET", f"/live/{code}/pulse", headers={"Cookie": "xattn_host_" + code + "=x"})
        r = c.getresponse()
        while not stop.is_set() and r.fp is not None and r.fp.readline():
            pass
    except (OSError, ValueError, AttributeError):
        pass
    finally:
        c.close()


def lecturer(url: str, address: str) -> bool:
    async def go():
        async with Client(url, headers={"X-Forwarded-For": address}) as tab:
            run = await tab.run("class=new")
            html = " ".join(m.body for m in run.of("markdown"))
            return "you drive this class" in html and re.search(r"class \*\*[A-Z0-9]{6}", html)
    return bool(run_async(go()))


def squat(url: str, store: SQLiteStore, addresses: int) -> dict:
    codes = []
    for i in range(addresses):
        for _ in range(store.limits.rooms_per_address + 1):
            try:
                codes.append(store.create_room(QUESTIONS, by=f"198.51.100.{i + 1}")[0])
            except LimitReached:
                break
    with sqlite3.connect(store.path) as c:
        full = c.execute("SELECT COUNT(*) FROM rooms").fetchone()[0] >= store.limits.max_rooms
    stop = threading.Event()
    for code in codes:
        threading.Thread(target=keyless_stream, args=(url, code, stop), daemon=True).start()
    fakes = [0]

    def students():
        while not stop.is_set():
            for n, code in enumerate(codes):
                if stop.is_set():
                    return
                if fake_student(url, code, f"198.51.100.{n % addresses + 1}"):
                    fakes[0] += 1
    threading.Thread(target=students, daemon=True).start()
    t0 = time.monotonic()
    tries, waited = 0, None
    while time.monotonic() - t0 < 300:
        tries += 1
        if lecturer(url, "192.0.2.77"):
            waited = time.monotonic() - t0
            break
        time.sleep(2)
    stop.set()
    return {"rooms": len(codes), "full": full, "waited": waited, "tries": tries,
            "fakes": fakes[0], "streams": len(codes)}


async def _hall(url: str, code: str, n: int) -> tuple[float, int, int]:
    gate = asyncio.Semaphore(100)
    phones = [Phone(i, url, code) for i in range(n)]

    async def one(p):
        async with gate:
            await p.join()
    t0 = time.monotonic()
    got = await asyncio.gather(*(one(p) for p in phones), return_exceptions=True)
    took = time.monotonic() - t0
    await asyncio.gather(*(p.leave() for p in phones), return_exceptions=True)
    return took, sum(not isinstance(g, BaseException) for g in got), \
        sum(p.join_waits for p in phones)


def script(url: str, store: SQLiteStore, seconds: float) -> dict:
    code, _ = store.create_room(QUESTIONS)
    burst, _ = store.limits.join_bucket
    t0, minted = time.monotonic(), 0
    while minted < burst:                       # the burst, as fast as it goes
        minted += fake_student(url, code, "203.0.113.66") is not None
    spent = time.monotonic() - t0
    t1, after = time.monotonic(), 0
    while time.monotonic() - t1 < seconds:      # then as fast as it can, with 8 threads
        results: list = []

        def mint(into=results):
            into.append(fake_student(url, code, "203.0.113.66"))
        threads = [threading.Thread(target=mint) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        after += sum(r is not None for r in results)
    total = time.monotonic() - t0
    return {"burst": minted, "burst_s": spent, "after": after,
            "rate": after / (time.monotonic() - t1),
            "beyond": after / total, "total_s": total}    # refilled since t0: after


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--addresses", type=int, default=20)
    ap.add_argument("--hall", type=int, default=1000)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--port", type=int, default=PORT)
    ap.add_argument("--parts", default="squat,votes", help="squat, votes or both")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-squat-"))
    path = folder / "classes.sqlite3"
    with StreamlitServer(args.port, log=folder / "server.log",
                         env={"XATTN_CLASS_STORE": str(path), "XATTN_REDIS_URL": "",
                              "XATTN_LIMITS": LIMITS}) as server:
        store = SQLiteStore(path, Limits())
        lecturer(server.url, "192.0.2.1")                # the first run's imports (a room)
        parts = set(args.parts.split(","))
        s = squat(server.url, store, args.addresses) if "squat" in parts else None
        if "votes" in parts:
            hall_code, _ = store.create_room(QUESTIONS)
            took, joined, waits = run_async(_hall(server.url, hall_code, args.hall))
            v = script(server.url, store, args.seconds)
    rows = []
    if s is not None:
        waited = "kept out (300 s)" if s["waited"] is None else f"{s['waited']:.0f} s"
        rows += [("squatting: rooms made from the addresses / store full",
                  f"{s['rooms']} / {'yes' if s['full'] else 'no'}", ""),
                 ("squatting: fake students joined meanwhile, keyless streams",
                  f"{s['fakes']}, {s['streams']}", ""),
                 ("squatting: a new lecturer's class starts after", waited, "<= 60 s")]
    if "votes" in parts:
        rows += [(f"a hall of {args.hall} behind one address: all joined in",
                  f"{took:.1f} s ({joined} of {args.hall}, {waits} told to wait)", "<= 30 s"),
                 ("a script behind one address: the burst",
                  f"{v['burst']} voters in {v['burst_s']:.1f} s", "a hall's size"),
                 (f"... then {args.seconds:g} s as fast as it can (8 threads)",
                  f"{v['after']} voters, {v['rate']:.2f} a second", ""),
                 ("... voters beyond the burst over the whole run",
                  f"{v['beyond']:.2f} a second ({v['after']} in {v['total_s']:.0f} s)",
                  "~1 a second")]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure'.ljust(width)} | measured | target")
    for name, got, target in rows:
        print(f"{name.ljust(width)} | {got} | {target}")


if __name__ == "__main__":
    main()
