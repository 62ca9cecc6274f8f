"""A websocket flood from several addresses, one of them the hall's: is the hall starved?

    python -m benchmarks.hall_flood                       # 6 addresses x 200, as issue 42
    python -m benchmarks.hall_flood --addresses 3 --per-address 100 --phones 10

Starts one ``streamlit run app.py`` (``devtools.browser.StreamlitServer``, a SQLite class
store of its own) and a class (``devtools.lecturer.Host``). Client addresses are told by
``X-Forwarded-For`` (trusted from this machine, as from ``deploy/serve.sh``'s HAProxy;
HAProxy's own per-address rules are checked by tests/test_hall_bounds.py). Then:

1. ``--addresses`` addresses open ``--per-address`` bare websockets each (the handshake, no
   cookie, nothing sent: a script), the first of them the hall's address;
2. while they stay open, at the hall's address: ``--phones`` fresh phones join the class (the
   page, the join's work, the stream's first frame), the lecturer's page reloads
   ``--reloads`` times (its host cookie, a websocket and a run), and ``--phones`` joined
   students open the full page (their student cookie); from a new address a fresh page
   (no cookie) opens;
3. the flood closes; how long until a fresh page from a new address opens.

It prints a table beside the targets (issue 42, item 6: before, phones at the attacker's
address got 0 of 20, the lecturer's reloads were refused 11 of 12 times, and every new page
was refused for 75 s).
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from devtools.browser import StreamlitServer
from devtools.lecturer import Host
from devtools.protocol import Client
from xattn.classroom.codes import solve_work

HALL = "198.51.100.1"          # the hall's address, and the first of the flood's


def _request(url, method: str, path: str, address: str, cookies: dict, body=None):
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    headers = {"X-Forwarded-For": address,
               "Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())}
    if body is not None:
        headers["Content-Type"] = "application/json"
    c.request(method, path, body=body, headers=headers)
    r = c.getresponse()
    data = r.read().decode()
    for name, value in r.getheaders():
        if name.lower() == "set-cookie":
            key, _, rest = value.split(";")[0].partition("=")
            cookies[key] = rest
    c.close()
    return r.status, data


def phone_joins(base: str, code: str, address: str) -> dict | None:
    """A fresh phone at ``address``: its page, its join's work and join, its stream's first
    frame. Its cookies, or None if any of it was refused."""
    url, cookies = urlsplit(base), {}
    status, page = _request(url, "GET", f"/?room={code}", address, cookies)
    if status != 200:
        return None
    data = json.loads(page.split("const JOIN = ", 1)[1].split(";\n", 1)[0])
    if "challenge" in data:
        nonce = solve_work(data["challenge"], data["bits"], data["pieces"])
        status, _ = _request(url, "POST", f"/live/{code}/join", address, cookies,
                             json.dumps({"challenge": data["challenge"], "nonce": nonce}))
        if status != 200:
            return None
    c = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    c.request("GET", f"/live/{code}/events", headers={
        "X-Forwarded-For": address,
        "Cookie": "; ".join(f"{k}={v}" for k, v in cookies.items())})
    r = c.getresponse()
    seen = b""
    while r.status == 200 and b'"room":' not in seen and len(seen) < 1_000_000:
        chunk = r.read1(65536)
        if not chunk:
            break
        seen += chunk
    ok = b'"room":' in seen                 # the room's first frame
    c.close()
    return cookies if ok else None


async def page_opens(base: str, address: str, cookies: dict, query: str = "") -> bool:
    """A Streamlit page (its websocket and a run) at ``address`` with ``cookies``."""
    try:
        async with Client(base, cookies=dict(cookies), headers={"X-Forwarded-For": address},
                          open_timeout=30) as tab:
            return (await tab.run(query, timeout=60)).ok
    except (InvalidStatus, ConnectionError, OSError, TimeoutError):
        return False


async def flood(base: str, addresses: list[str], per_address: int) -> list:
    stream = "ws" + base.removeprefix("http") + "_stcore/stream"
    gate = asyncio.Semaphore(50)

    async def one(address: str):
        async with gate:
            try:
                return await connect(stream, subprotocols=["streamlit"], open_timeout=30,
                                     additional_headers={"X-Forwarded-For": address},
                                     ping_interval=None)
            except (InvalidStatus, OSError, TimeoutError):
                return None
    return await asyncio.gather(*(one(a) for a in addresses for _ in range(per_address)))


async def run(base: str, args) -> list[tuple[str, str, str]]:
    host = Host(base, timeout=120)
    await host.open()
    await host.close()
    lecturer = {f"xattn_host_{host.code}": host.key}
    joined = [await asyncio.to_thread(phone_joins, base, host.code, f"203.0.113.{i}")
              for i in range(args.phones)]        # students who joined before the flood
    addresses = [HALL] + [f"198.51.100.{i + 2}" for i in range(args.addresses - 1)]
    sockets = await flood(base, addresses, args.per_address)
    held = [ws for ws in sockets if ws is not None]
    try:
        phones = [await asyncio.to_thread(phone_joins, base, host.code, HALL)
                  for _ in range(args.phones)]
        reloads = [await page_opens(base, HALL, lecturer, f"room={host.code}")
                   for _ in range(args.reloads)]
        full = [await page_opens(base, f"203.0.113.{i}", c, f"room={host.code}&explore=1")
                for i, c in enumerate(joined) if c]
        stranger = await page_opens(base, "192.0.2.77", {})
    finally:
        for ws in held:
            await ws.close()
    started, back = time.monotonic(), None
    while time.monotonic() - started < 120:
        if await page_opens(base, "192.0.2.78", {}):
            back = time.monotonic() - started
            break
        await asyncio.sleep(1)
    n = args.phones
    return [
        ("flood: websockets let in", f"{len(held)} of {len(sockets)}",
         "at most 3/4 of XATTN_MAX_SESSIONS (450)"),
        ("fresh phones at the hall's address join", f"{sum(p is not None for p in phones)} of {n}",
         f"{n} of {n} (before: 0 of 20)"),
        ("the lecturer's reloads at the hall's address", f"{sum(reloads)} of {len(reloads)}",
         f"{len(reloads)} of {len(reloads)} (before: 1 of 12)"),
        ("joined students open the full page", f"{sum(full)} of {len(full)}",
         f"{len(full)} of {len(full)}"),
        ("a fresh page from a new address, flood open", "opens" if stranger else "refused",
         "refused once anonymous pages hold 3/4 of the sessions (a limit)"),
        ("a fresh page after the flood closed", "never in 120 s" if back is None
         else f"{back:.1f} s", "under 10 s (before: 75 s)"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--addresses", type=int, default=6)
    parser.add_argument("--per-address", type=int, default=200)
    parser.add_argument("--phones", type=int, default=20)
    parser.add_argument("--reloads", type=int, default=12)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {"XATTN_CLASS_STORE": str(Path(tmp) / "classes.sqlite3"), "XATTN_REDIS_URL": "",
               "XATTN_LIMITS": "join_work_bits=10"}
        with StreamlitServer(env=env, log=Path(tmp) / "server.log") as server:
            rows = asyncio.run(run(server.url, args))
    width = max(len(r[0]) for r in rows)
    print(f"\n{args.addresses} addresses x {args.per_address} websockets on one "
          "`streamlit run app.py`\n")
    print(f"| {'measure':<{width}} | measured | target |")
    print(f"|{'-' * (width + 2)}|---|---|")
    for what, got, target in rows:
        print(f"| {what:<{width}} | {got} | {target} |")


if __name__ == "__main__":
    main()
