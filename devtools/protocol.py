"""Open a page of a running app the way a browser does, over Streamlit's websocket protocol.

For benchmarks that need many sessions without many browsers: connect to ``/_stcore/stream``,
send the ``rerun_script`` a browser sends for a link (its query string), and read every
``ForwardMsg`` until the script finished. The ``websockets`` package is a dependency of
Streamlit itself.
"""

from __future__ import annotations

import asyncio
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

__all__ = ["PageLoad", "load_page", "rss_mb", "run_async"]


@dataclass
class PageLoad:
    """What one page load brought: seconds until the script finished, what it sent."""

    seconds: float = float("nan")
    elements: int = 0
    bytes: int = 0
    problems: list[str] = field(default_factory=list)


async def load_page(port: int, query: str = "", *, timeout: float = 120.0,
                    host: str = "127.0.0.1") -> PageLoad:
    """Open ``?query`` in a new session and wait for its first run to finish."""
    out = PageLoad()
    start = time.perf_counter()
    try:
        async with connect(f"ws://{host}:{port}/_stcore/stream", subprotocols=["streamlit"],
                           max_size=None, open_timeout=timeout) as ws:
            msg = BackMsg()
            msg.rerun_script.query_string = query
            await ws.send(msg.SerializeToString())
            async with asyncio.timeout(timeout):
                async for raw in ws:
                    out.bytes += len(raw)
                    fwd = ForwardMsg()
                    fwd.ParseFromString(raw)
                    kind = fwd.WhichOneof("type")
                    if kind == "delta" and fwd.delta.WhichOneof("type") == "new_element":
                        out.elements += 1
                        if fwd.delta.new_element.WhichOneof("type") == "exception":
                            out.problems.append(fwd.delta.new_element.exception.message[:200])
                    elif kind == "script_finished":
                        if fwd.script_finished == ForwardMsg.FINISHED_SUCCESSFULLY:
                            break
                        if fwd.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                            out.problems.append(f"script finished: {fwd.script_finished}")
                            break
    except Exception as err:  # noqa: BLE001 - a refused, dropped or slow connection is a result
        out.problems.append(f"{type(err).__name__}: {err}")
    out.seconds = time.perf_counter() - start
    return out


def rss_mb(pid: int) -> float:
    """Resident memory of a process, from /proc (Linux)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid} (is /proc mounted? {os.name})")


def run_async(coroutine):
    """``asyncio.run(coroutine)`` in a thread of its own, for tests: once a browser test's
    Playwright (its sync API) has started, the main thread has an event loop marked running
    for the rest of the pytest process, and ``asyncio.run`` refuses to start there."""
    with ThreadPoolExecutor(1, thread_name_prefix="run-async") as pool:
        return pool.submit(asyncio.run, coroutine).result()
