"""Closed sessions leave (``xattn/ui/reaper.py``): canaries on a real session manager, and a
real server where a closed session's download goes within seconds of its time being up.

The canaries pin the private Streamlit names the reaper uses and the behaviour it exists for:
Streamlit keeps a closed session whose time is up (and its files) until it stores another.
"""

from __future__ import annotations

import gc
import time
import urllib.error
import urllib.request
import weakref
from unittest import mock

import pytest
from streamlit.runtime.app_session import AppSessionState
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from devtools.browser import ARTIFACTS, StreamlitServer
from devtools.protocol import Client, run_async
from xattn.ui import reaper


def closed_session(tmp_path):
    """A session manager (closed sessions kept for 0 s) holding one closed session, and a weak
    reference to that session."""
    script = tmp_path / "app.py"
    script.write_text("import streamlit as st\nst.write('hello')\n")
    manager = WebsocketSessionManager(MemorySessionStorage(ttl_seconds=0),
                                      MemoryUploadedFileManager("/u"), ScriptCache(), None)
    session_id = manager.connect_session(mock.MagicMock(), ScriptData(str(script)), {})
    session = weakref.ref(manager.get_active_session_info(session_id).session)
    manager.disconnect_session(session_id)
    return manager, session


def test_canary_streamlit_keeps_a_closed_session_whose_time_is_up(tmp_path):
    async def scenario():
        manager, session = closed_session(tmp_path)
        assert manager.list_sessions() == []               # its time is up: not listed ...
        gc.collect()
        assert session() is not None                       # ... but held, and not shut down
        assert session()._state is not AppSessionState.SHUTDOWN_REQUESTED
        session().shutdown()

    run_async(scenario())


def test_reap_drops_and_shuts_down_the_sessions_whose_time_is_up(tmp_path):
    async def scenario():
        manager, session = closed_session(tmp_path)
        held = session()
        assert reaper.reap(manager) == 1
        assert held._state is AppSessionState.SHUTDOWN_REQUESTED
        del held
        gc.collect()
        assert session() is None                           # nothing holds it any more
        assert reaper.reap(manager) == 0

    run_async(scenario())


def test_nothing_to_watch_without_a_server():
    assert reaper.install() is False                       # no Runtime in this process


def test_release_memory_trims_glibcs_heap():
    """glibc on Linux (the lecture hall, Community Cloud): the heap is trimmed."""
    if reaper._malloc_trim() is None:
        pytest.skip("this C library has no malloc_trim (not glibc)")
    assert reaper.release_memory() is True


# --- a real server ---------------------------------------------------------------------------

async def download_url(port: int) -> str:
    """Open the default page over the protocol, read its CSV download's URL, and close."""
    async with Client(f"http://127.0.0.1:{port}/", open_timeout=120) as tab:
        run = await tab.run("seed=11", timeout=120)
    urls = [b.url for b in run.of("download_button") if b.url.endswith(".csv")]
    assert urls, f"the page sent no CSV download: {run.problems()}"
    return urls[0]


def status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as err:
        return err.code


def test_a_closed_sessions_download_goes_soon_after_its_time_is_up():
    """A closed session is kept 1 s here (``server.disconnectedSessionTTL``); with nobody
    else connected, Streamlit alone would keep it, and its file, until another session
    closes. The reaper drops it and the file at its next looks."""
    ttl = ("--server.disconnectedSessionTTL", "1")
    with StreamlitServer(log=ARTIFACTS / "reaper-server.log", extra_args=ttl) as server:
        url = server.url.rstrip("/") + run_async(download_url(server.port))
        # closed at once, the session is still there, and so is its file
        assert status(url) == 200
        closed = time.monotonic()
        while status(url) == 200:           # 1 s, two looks of the reaper, a loaded machine
            waited = time.monotonic() - closed
            assert waited < 1 + 3 * reaper.EVERY + 60, f"{url} still served {waited:.0f} s on"
            time.sleep(0.5)                 # poll interval of a bounded loop
        assert status(url) == 404
