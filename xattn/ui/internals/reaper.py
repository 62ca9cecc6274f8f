"""Closed sessions leave within a minute, and their memory goes back to the system.

Streamlit keeps a closed session (its state, its download files) for
``server.disconnectedSessionTTL`` seconds (30 here, ``.streamlit/config.toml``) in case its
browser reconnects, at most 128 of them. But Streamlit 1.67 drops an expired session only when
it stores another (its session store, a ``TTLCache``, reaps on writes): once a class has left,
up to 128 sessions stay until some later student leaves, and with them their download files.
And what Python frees, glibc keeps for reuse: measured with 700 sessions of distinct settings,
a process stayed at its peak (509 MB) long after they closed, and glibc's ``malloc_trim(0)``
then gave back 153 MB (``benchmarks/bench_sessions.py``, ``docs/deploy.md``).

`install` starts one task on the server's event loop, once per process. Every ``EVERY`` seconds
it drops the closed sessions whose time is up and shuts each down, as Streamlit's own
``close_session`` does (their downloads and uploads go). When sessions went (dropped here, or
evicted by Streamlit beyond its 128), it asks the media file manager to remove orphaned files
(Streamlit marks an unreferenced download on one pass and deletes it on the next, so a second
pass follows one look later), then, once a look finds no more departures, collects garbage
and calls ``malloc_trim(0)`` in a worker thread (glibc only; elsewhere the collection alone).

Private Streamlit names, pinned with its minor version in requirements.txt and checked by the
canary tests in ``tests/test_streamlit_internals.py`` on a real session manager:

- ``Runtime.instance()._session_mgr``: the ``WebsocketSessionManager``, with its
  ``_session_storage`` (a ``MemorySessionStorage`` whose ``_cache`` has ``expire()``, returning
  the removed ``(id, SessionInfo)`` pairs) and ``_storage_lock`` (held while sessions move in
  and out of storage);
- ``Runtime.instance()._get_async_objs().eventloop``: the server's event loop, where
  Streamlit's own writes to the store happen.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import logging
import threading

__all__ = ["install", "reap", "release_memory", "EVERY"]

_LOGGER = logging.getLogger(__name__)
EVERY = 5.0          # seconds between looks: a closed session goes by TTL + EVERY
_started = threading.Event()
_starting = threading.Lock()
_watching = []       # the watch's future: held, so nothing but the process's end stops it


def _server():
    """This process's session manager and event loop; (None, None) without a server of the
    shape this module was written against (AppTest, a bare script, another Streamlit)."""
    try:
        from streamlit.runtime import Runtime
    except ImportError:                                    # pragma: no cover - other Streamlit
        return None, None
    if not Runtime.exists():
        return None, None
    runtime = Runtime.instance()
    manager = getattr(runtime, "_session_mgr", None)      # AppTest's runtime has none
    storage = getattr(manager, "_session_storage", None)
    shaped = (hasattr(getattr(storage, "_cache", None), "expire")
              and hasattr(manager, "_storage_lock") and hasattr(runtime, "_get_async_objs"))
    if not shaped:
        return None, None
    try:
        loop = runtime._get_async_objs().eventloop
    except RuntimeError:                                  # not started yet
        return None, None
    return manager, loop


def reap(manager) -> int:
    """Drop the closed sessions whose time is up and shut each down; how many. Call it on the
    server's event loop, as Streamlit's own writes to the store are made."""
    with manager._storage_lock:
        gone = manager._session_storage._cache.expire()
    for _, info in gone:
        info.session.shutdown()
    return len(gone)


def _malloc_trim():
    """glibc's ``malloc_trim``, or None where the C library has none (macOS, musl)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return getattr(libc, "malloc_trim", None)


def release_memory() -> bool:
    """Collect garbage, then hand the C heap's free pages back to the system; True if the
    heap could be trimmed (glibc)."""
    gc.collect()
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


async def _watch(manager, media) -> None:
    seen, marked = None, False
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(EVERY)
        try:
            gone = reap(manager)
            now = len(manager.list_sessions())
            left = gone > 0 or (seen is not None and now < seen)
            seen = now
            if left or marked:
                media.remove_orphaned_files()     # marks unreferenced downloads, or deletes them
            if marked and not left:
                await loop.run_in_executor(None, release_memory)
            marked = left
        except Exception:                         # one bad look must not end the watch
            _LOGGER.exception("xattn: the session reaper's look failed")


def install() -> bool:
    """Start the reaper once per process; False where there is no server to watch (then
    nothing is started)."""
    with _starting:
        if _started.is_set():
            return True
        manager, loop = _server()
        if manager is None:
            return False
        from streamlit.runtime import Runtime

        media = Runtime.instance().media_file_mgr
        _watching.append(asyncio.run_coroutine_threadsafe(_watch(manager, media), loop))
        _started.set()
        return True
