"""Hostile bodies from an unauthenticated client against a real server: its memory, before,
at the peak and after (issue 42, item 1).

    python -m benchmarks.bench_bodies [--compare REF ...] [--no-working-tree] [--gb 1]

For each version, one fresh ``streamlit run app.py``, then each request below from a client
with no cookie, one after the other. Printed per request: the server's reply, the bytes the
client got out before it, and the server's resident memory (VmRSS, sampled every 0.1 s)
before, at its peak and 3 s after, beside the target: no request moves RSS by more than
50 MB, and RSS comes back to its baseline. A server past ``--cap-mb`` is killed and reported
(the rest of that version's requests are then not run). ``--compare REF`` runs the same on
commit REF first (a temporary git worktree, ``benchmarks.checkouts``).

The requests (``devtools.bodies``: plain sockets):

- a body of ``--gb`` GB declared and sent (until the server answers) to ``POST
  /live/CODE/join`` and ``/host``, and the same streamed chunked with no Content-Length;
- deep JSON, ``1e999`` and ``NaN`` to ``/join``;
- a body of ``--gb`` GB declared to Streamlit's upload route;
- a websocket message of 16 MB + 1 byte (``server.maxMessageSize`` is 16 MB);
- a 65 kB lesson file (one dotted key of 32,000 parts) uploaded through the page, as the
  browser does (upload URL over the websocket, HTTP PUT, a rerun naming the file).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.bench_upload_bounds import Peak, _put
from benchmarks.checkouts import checkouts
from benchmarks.machine import machine_line
from devtools import bodies as hostile
from devtools.browser import ROOT, StreamlitServer, free_port
from devtools.protocol import Client, rss_mb

TARGET_MB = 50
CODE = "ABCDEF"
LESSON_BYTES = 65_536


def lesson_file() -> bytes:
    """The lesson file that cost tomllib 3.6 GB: one dotted key as long as a file may be."""
    head, tail = b'title = "x"\n', b"a = 1\n"
    return head + b"a." * ((LESSON_BYTES - len(head) - len(tail)) // 2) + tail


async def _upload_lesson(port: int, data: bytes) -> str:
    async with Client(f"http://127.0.0.1:{port}/") as tab:
        first = await tab.run("", timeout=120)
        uploader = first.widget("lesson_upload")
        if uploader is None:
            return "no lesson uploader on the page"
        urls = await tab.upload_urls("lesson.toml")
        xsrf = tab.cookies.get("_streamlit_xsrf", "")
        status = await asyncio.to_thread(_put, port, urls.upload_url, "lesson.toml", data, xsrf)
        if status != 204:
            return f"upload refused (HTTP {status})"
        chosen = WidgetState(id=uploader.id)
        info = chosen.file_uploader_state_value.uploaded_file_info.add()
        info.file_id, info.name, info.size = urls.file_id, "lesson.toml", len(data)
        info.file_urls.CopyFrom(urls)
        run = await tab.run("", [chosen], timeout=600)
    errors = [a.body for a in run.of("alert") if "lesson file cannot run" in a.body]
    line = " ".join(errors[0].split("\n- ", 1)[-1].split()).strip("` ")[:90] if errors \
        else "no error shown"
    return f"page: {line} ({run.seconds:.1f} s)"


def _websocket(port: int) -> str:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    try:
        with connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=["streamlit"],
                     max_size=None, open_timeout=30) as ws:
            ws.send(b"\0" * 16_000_001)
            ws.recv(timeout=30)
    except ConnectionClosed as err:
        return f"closed {err.rcvd.code} ({err.rcvd.reason[:40]})" if err.rcvd else "reset"
    except TimeoutError:
        return "kept open"
    return "answered"


def _gist(body: str) -> str:
    """A reply's words, from where they say what was expected (the JSON's ``why``)."""
    if body.startswith("{"):
        body = json.loads(body).get("why", body)
    for word in ("expected", "takes", "carries"):
        if word in body:
            body = "…" + body[body.find(word):]
            break
    return repr(body[:80]) if body else "(no body)"


def requests(port: int, size: int) -> dict:
    """Each request by name: a call that sends it and returns (reply, bytes sent)."""
    own = {"Origin": f"http://127.0.0.1:{port}"}
    upload = "/_stcore/upload_file/00000000-0000-0000-0000-000000000000/f"

    def http(call):
        def go():
            r = call()
            return f"{r.status} {_gist(r.body)}", r.sent
        return go

    json_body = b'{"challenge": "c", "nonce": "n", "x": %s}'
    gb = f"{size / (1 << 30):g} GB"
    return {
        f"{gb} declared to /join": http(lambda: hostile.declared(
            port, f"/live/{CODE}/join", size, send=size)),
        f"{gb} declared to /host": http(lambda: hostile.declared(
            port, f"/live/{CODE}/host", size, send=size, headers=own)),
        f"{gb} chunked to /join": http(lambda: hostile.chunked(port, f"/live/{CODE}/join",
                                                               size)),
        f"{gb} chunked to /host": http(lambda: hostile.chunked(port, f"/live/{CODE}/host",
                                                               size, headers=own)),
        "deep JSON (990 levels) to /join": http(lambda: hostile.post(
            port, f"/live/{CODE}/join", json_body % (b"[" * 990 + b"]" * 990))),
        "1e999 to /join": http(lambda: hostile.post(port, f"/live/{CODE}/join",
                                                    json_body % b"1e999")),
        "NaN to /join": http(lambda: hostile.post(port, f"/live/{CODE}/join",
                                                  json_body % b"NaN")),
        f"{gb} declared to the upload route": http(lambda: hostile.declared(
            port, upload, size, method="PUT", send=size)),
        "websocket message of 16 MB + 1": lambda: (_websocket(port), 16_000_001),
        "65 kB lesson file through the page": lambda: (asyncio.run(_upload_lesson(
            port, lesson_file())), LESSON_BYTES),
    }


def measure(root: Path, a) -> list[dict]:
    rows = []
    with StreamlitServer(port=a.port or free_port(), root=root) as server:
        hostile.post(server.port, f"/live/{CODE}/join", b"{}")      # the routes' imports
        time.sleep(2)
        for name, call in requests(server.port, int(a.gb * (1 << 30))).items():
            before = rss_mb(server.pid)
            peak = Peak(server.pid, a.cap_mb)
            peak.start()
            start = time.monotonic()
            try:
                reply, sent = call()
            except OSError as err:
                reply, sent = f"{type(err).__name__}", 0
            seconds = time.monotonic() - start
            time.sleep(3)
            peak.stop()
            if peak.over.is_set():
                server.proc.kill()
                rows.append(dict(name=name, reply=f"killed past {a.cap_mb:.0f} MB", sent=sent,
                                 before=before, peak=peak.peak, after=float("nan"),
                                 seconds=seconds))
                break
            rows.append(dict(name=name, reply=reply, sent=sent, before=before,
                             peak=max(peak.peak, before), after=rss_mb(server.pid),
                             seconds=seconds))
    return rows


def _size(n: int) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 100_000 else f"{n:,} B"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compare", metavar="REF", nargs="+", default=[],
                        help="run these commits first (temporary git worktrees)")
    parser.add_argument("--no-working-tree", action="store_true")
    parser.add_argument("--gb", type=float, default=1.0, help="size of the large bodies")
    parser.add_argument("--cap-mb", type=float, default=6000.0)
    parser.add_argument("--port", type=int, help="serve on this port (default: a free one)")
    a = parser.parse_args()
    print(machine_line())
    print(f"Target: no request moves RSS by more than {TARGET_MB} MB (peak - before), and RSS "
          "comes back to its baseline (after - before).\n")
    print("| version | request | reply | sent | time | RSS before → peak → after | moved | "
          "held after | target |")
    print("|---|---|---|---:|---:|---|---:|---:|---|")
    with checkouts(a.compare) as roots:
        for version, root in roots.items():
            if a.no_working_tree and root == ROOT:
                continue
            for r in measure(root, a):
                moved, held = r["peak"] - r["before"], r["after"] - r["before"]
                ok = "met" if moved <= TARGET_MB and held <= TARGET_MB else "**missed**"
                reply = r["reply"].replace("|", "\\|")
                print(f"| {version} | {r['name']} | {reply} | {_size(r['sent'])} | "
                      f"{r['seconds']:.1f} s | {r['before']:.0f} → {r['peak']:.0f} → "
                      f"{r['after']:.0f} MB | {moved:+.0f} MB | {held:+.0f} MB | {ok} |",
                      flush=True)


if __name__ == "__main__":
    main()
