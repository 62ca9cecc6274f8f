"""Hostile and large attention files on a real server: its memory and the time of a click.

    python -m benchmarks.bench_upload_bounds [--compare REF ...] [--clicks 5] [--cap-mb 3000]

For each file below, a fresh ``streamlit run app.py`` (one per file, so each peak is that
file's), one session that opens ``?weights=file``, uploads the file the way the browser does
and then reruns the page ``--clicks`` times (any click reruns the whole script). Printed per
file: what the page showed, the time of the upload's run and the median click, and the
server's resident memory (VmRSS, sampled every 0.1 s) before and at its peak. A server past
``--cap-mb`` or a run past ``--timeout`` seconds is killed and reported as such (the issue's
1000 x 1000 file took a server past 3 GB). ``--compare REF`` runs the same on commit REF
first (a temporary git worktree, ``benchmarks.checkouts``; several may be given, and
``--no-working-tree`` leaves this working tree out).

The upload, as Streamlit's frontend does it (``devtools.protocol.Client``): ``GET /`` and ``GET
/_stcore/health`` (it sets the XSRF cookie), the websocket, a ``file_urls_request`` over it for
an upload URL, an HTTP ``PUT`` of the file as multipart/form-data with the ``X-Xsrftoken``
header, then a rerun whose widget state names the file (``file_uploader_state_value``). """

from __future__ import annotations

import argparse
import asyncio
import http.client
import io
import statistics
import threading
import time
import uuid
from pathlib import Path

import numpy as np
from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks.checkouts import checkouts
from benchmarks.machine import machine_line
from devtools.browser import ROOT, StreamlitServer, free_port
from devtools.protocol import Client, Run, rss_mb


def _npz(**arrays) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **arrays)
    return buffer.getvalue()


def _words(n: int) -> np.ndarray:
    return np.array([f"w{i}" for i in range(n)])


def _softmax(shape, dtype) -> np.ndarray:
    x = np.random.default_rng(0).standard_normal(shape)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).astype(dtype)


def cases() -> dict[str, bytes]:
    """The issue's files, a real file of about 48 MB, and the largest file the page shows."""
    return {
        "1000 x 1000 heads, 1 token a side (int8)": _npz(
            cross_attention=np.ones((1000, 1000, 1, 1), np.int8), src_tokens=_words(1),
            tgt_tokens=_words(1)),
        "100 x 100 heads, 1 token a side (int8)": _npz(
            cross_attention=np.ones((100, 100, 1, 1), np.int8), src_tokens=_words(1),
            tgt_tokens=_words(1)),
        "int8 zeros, 5000 x 10000 tokens": _npz(
            cross_attention=np.zeros((1, 1, 5000, 10000), np.int8), src_tokens=_words(10000),
            tgt_tokens=_words(5000)),
        "real weights, 6 x 8 heads of 500 x 500 (float32)": _npz(
            cross_attention=_softmax((6, 8, 500, 500), np.float32), src_tokens=_words(500),
            tgt_tokens=_words(500)),
        "largest shown: 24 x 16 heads of 64 x 64 (float64)": _npz(
            cross_attention=_softmax((24, 16, 64, 64), np.float64), src_tokens=_words(64),
            tgt_tokens=_words(64)),
    }


class Peak(threading.Thread):
    """The process's peak RSS, sampled every 0.1 s; ``over`` is set past ``cap`` MB."""

    def __init__(self, pid: int, cap: float):
        super().__init__(daemon=True)
        self.pid, self.cap, self.peak = pid, cap, 0.0
        self.over, self._halt = threading.Event(), threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            try:
                self.peak = max(self.peak, rss_mb(self.pid))
            except (OSError, RuntimeError):
                return                                   # the process is gone
            if self.peak > self.cap:
                self.over.set()
            self._halt.wait(0.1)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def _put(port: int, path: str, name: str, data: bytes, xsrf: str) -> int:
    """PUT the file as multipart/form-data, as the frontend does; the HTTP status."""
    boundary = uuid.uuid4().hex
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{name}\""
            f"\r\nContent-Type: application/octet-stream\r\n\r\n").encode() + data + \
        f"\r\n--{boundary}--\r\n".encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("PUT", path, body, {
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "X-Xsrftoken": xsrf, "Cookie": f"_streamlit_xsrf={xsrf}"})
        return conn.getresponse().status
    finally:
        conn.close()


def shown_of(run: Run) -> dict[str, int]:
    """What a run drew, counted by kind; an exception by its type and first line, an error."""
    shown: dict[str, int] = {}
    for el in run.elements:
        what = el.WhichOneof("type")
        if what == "exception":
            first = el.exception.message.strip("* ").split("\n")[0].rstrip("* ")
            what = f"exception {el.exception.type.split('.')[-1]}: {first[:90]}"
        elif what == "alert" and el.alert.format == 1:
            what = "error"
        shown[what] = shown.get(what, 0) + 1
    return shown


async def one_file(port: int, name: str, data: bytes, clicks: int, timeout: float) -> dict:
    async with Client(f"http://127.0.0.1:{port}/") as tab:
        first = await tab.run("weights=file", timeout=timeout)
        (uploader,) = [u.id for u in first.of("file_uploader")]
        urls = await tab.upload_urls(name)
        xsrf = tab.cookies.get("_streamlit_xsrf", "")
        status = await asyncio.to_thread(_put, port, urls.upload_url, name, data, xsrf)
        if status != 204:                   # the server refused the upload (e.g. too big)
            return {"put": status}
        chosen = WidgetState(id=uploader)
        info = chosen.file_uploader_state_value.uploaded_file_info.add()
        info.file_id, info.name, info.size = urls.file_id, name, len(data)
        info.file_urls.CopyFrom(urls)
        upload = await tab.run("weights=file", [chosen], timeout=timeout)
        times = [(await tab.run("weights=file", [chosen], timeout=timeout)).seconds
                 for _ in range(clicks)]
    return {"put": status, "upload": upload.seconds, "click": statistics.median(times) if times
            else float("nan"), "shown": shown_of(upload)}


def filename(case: str) -> str:
    """The case as a file name, e.g. ``100-x-100-heads-1-token-a-side-int8.npz``."""
    return "-".join("".join(c if c.isalnum() else " " for c in case).split()) + ".npz"


def measure(root: Path, name: str, data: bytes, a) -> dict:
    with StreamlitServer(port=a.port or free_port(), root=root) as server:
        base = rss_mb(server.pid)
        peak = Peak(server.pid, a.cap_mb)
        peak.start()

        async def bounded():
            task = asyncio.create_task(one_file(server.port, filename(name), data,
                                                a.clicks, a.timeout))
            start = time.monotonic()
            while not task.done():
                if peak.over.is_set() or time.monotonic() > start + a.timeout:
                    server.proc.kill()          # first, so that nothing waits on it
                    task.cancel()
                    why = (f"killed past {a.cap_mb:.0f} MB" if peak.over.is_set() else
                           "killed") + f" after {time.monotonic() - start:.0f} s"
                    return {"killed": why}
                await asyncio.sleep(0.1)
            return task.result()

        try:
            row = asyncio.run(bounded())
        finally:
            peak.stop()
    return dict(row, base=base, peak=peak.peak)


def shown_text(shown: dict) -> str:
    charts = shown.get("plotly_chart", 0)
    parts = [f"{k} x{v}" for k, v in shown.items() if k.startswith("exception")]
    parts += ["error"] * bool(shown.get("error")) + [f"{charts} charts"] * bool(charts)
    return ", ".join(parts) or "nothing drawn"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compare", metavar="REF", nargs="+", default=[],
                        help="run these commits first (temporary git worktrees)")
    parser.add_argument("--no-working-tree", action="store_true",
                        help="only the commits of --compare, not this working tree")
    parser.add_argument("--clicks", type=int, default=5)
    parser.add_argument("--cap-mb", type=float, default=3000.0)
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument("--port", type=int, help="serve on this port (default: a free one)")
    a = parser.parse_args()
    files = cases()
    print(machine_line())
    print("| version | file | size | page shows | upload run | click (median) | RSS before → "
          "peak |")
    print("|---|---|---:|---|---:|---:|---|")
    with checkouts(a.compare) as roots:
        for version, root in roots.items():
            if a.no_working_tree and root == ROOT:
                continue
            for name, data in files.items():
                r = measure(root, name, data, a)
                size = f"{len(data) / 1e3:.1f} kB" if len(data) < 10**6 else \
                    f"{len(data) / 1e6:.1f} MB"
                if "killed" in r:
                    cells = f"{r['killed']} | | "
                elif r["put"] != 204:
                    cells = f"upload refused by the server (HTTP {r['put']}) | | "
                else:
                    cells = (f"{shown_text(r['shown'])} | {r['upload']:.2f} s | "
                             f"{r['click']:.2f} s")
                print(f"| {version} | {name} | {size} | {cells} | {r['base']:.0f} → "
                      f"{r['peak']:.0f} MB |", flush=True)


if __name__ == "__main__":
    main()
