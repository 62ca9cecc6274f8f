"""The server process's live rooms: one `Hub` per process, started with the server.

``app.py``'s ``st.App`` runs `lifespan` once per process, before the first request, the same
way under ``streamlit run app.py`` (Community Cloud) and under ``deploy/serve.sh``: it raises
the process's limit of open files (each phone holds a connection), adds the server log's
filters, starts the hub's watcher on the server's event loop and a keep-alive for its streams,
and stops them when the server stops. A store that cannot be opened yet (Redis still starting)
does not stop the server: the hub is made on the first request that needs it.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import resource
import signal
import socket
import threading
from contextlib import asynccontextmanager

from xattn.classroom import ClassroomError
from xattn.classroom.hub import KEEPALIVE, Hub
from xattn.live.build import build
from xattn.server import logs as server_logs

__all__ = ["lifespan", "hub", "OPEN_FILES", "nodelay_on_listeners",
           "raise_open_files"]

_LOGGER = logging.getLogger(__name__)
OPEN_FILES = 16_384      # open files a process asks for (a phone is one; HAProxy's side too)
_made: list[Hub] = []
_lock = threading.Lock()
_loop: list[asyncio.AbstractEventLoop] = []


def hub() -> Hub:
    """This process's hub, made and started on first use; `ClassroomError` if the class store
    cannot be opened (tried again on the next call)."""
    with _lock:
        if _made:
            return _made[0]
        from xattn.live.stores import class_store

        made = Hub(class_store(), build)       # StoreUnavailable: nothing is kept
        if _loop:
            made.start(_loop[0])
        _made.append(made)
        return made


def raise_open_files(wanted: int = OPEN_FILES) -> int:
    """Raise this process's soft limit of open files towards ``wanted`` (within the hard
    limit); the limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    return soft


def nodelay_on_listeners() -> int:
    """Set ``TCP_NODELAY`` on this process's listening TCP sockets (Linux: accepted sockets
    inherit it); how many. Streamlit binds its socket with protocol 0, for which asyncio does
    not set it on accepted connections, so a response written in two parts on a reused
    connection waited for the client's delayed ACK: about 40 ms an answer
    (``benchmarks/results/flood.md``). Elsewhere than Linux: nothing (0)."""
    folder = "/proc/self/fd"
    if not os.path.isdir(folder):
        return 0
    done = 0
    for name in os.listdir(folder):
        try:
            s = socket.socket(fileno=int(name))
        except (OSError, ValueError):
            continue
        try:
            if s.family in (socket.AF_INET, socket.AF_INET6) and s.type == socket.SOCK_STREAM \
                    and s.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                done += 1
        except OSError:
            pass
        finally:
            s.detach()                       # the descriptor stays the server's
    return done


def end_streams_on_exit(loop: asyncio.AbstractEventLoop) -> int:
    """On SIGTERM or SIGINT, end every open stream first, then do what the server's own
    handler does (uvicorn's, installed before the lifespan starts: it stops taking requests
    and then waits for every open response, which a stream never ends by itself: seen, a
    server with one phone connected still running 8 s after SIGTERM until serve.sh killed
    it). Only from the main thread, where handlers live; how many were wrapped."""
    if threading.current_thread() is not threading.main_thread():
        return 0
    wrapped = 0
    for sig in (signal.SIGTERM, signal.SIGINT):
        before = signal.getsignal(sig)
        if not callable(before):
            continue

        def ending(signum, frame, before=before):
            if _made and not loop.is_closed():
                loop.call_soon_threadsafe(_made[0].close_streams)
            before(signum, frame)
        signal.signal(sig, ending)
        wrapped += 1
    return wrapped


async def _keepalive() -> None:
    while True:
        await asyncio.sleep(KEEPALIVE)
        if _made:
            _made[0].keepalive()


@asynccontextmanager
async def lifespan(app):
    """Start what a server process needs before its first request, and stop it after its
    last (``st.App``'s lifespan: one start-up path for every way the app is served)."""
    raise_open_files()
    nodelay_on_listeners()
    server_logs.install()
    loop = asyncio.get_running_loop()
    _loop[:] = [loop]
    end_streams_on_exit(loop)
    # The phones' messages build Plotly figures in the hub's threads: pandas and Plotly are
    # imported whole first (Plotly looks pandas up in sys.modules while building a figure; a
    # page's session importing it at the same moment left it half imported: xattn/ui/page.py).
    await asyncio.to_thread(importlib.import_module, "xattn.live.messages")
    try:
        hub()
    except ClassroomError as err:
        _LOGGER.warning("xattn: the class store cannot be opened yet (%s); rooms start on "
                        "the first request that needs one", err)
    beat = loop.create_task(_keepalive())
    try:
        yield
    finally:
        beat.cancel()
        with _lock:
            for made in _made:
                made.stop()
            _made.clear()
