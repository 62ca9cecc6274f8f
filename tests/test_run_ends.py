"""A page's poll that arrives as a full run ends must not cost the page that run's end.

The race (``xattn/ui/run_ends.py``) is made deterministic on a real ``AppSession``: the test
holds the server's event loop while the script runner finishes a full run, so the runner's last
events wait in the loop's queue, and then asks for a fragment rerun, as the page's ``follow``
poll does under load. What reaches the browser is read from the session's queue.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
import types
from unittest import mock

import pytest
import streamlit.runtime
from streamlit.proto.ClientState_pb2 import ClientState
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.scriptrunner_utils.script_requests import ScriptRequestType

from devtools.protocol import run_async
from xattn.ui import run_ends

SCRIPT = '''
import sys
import streamlit as st

hooks = sys.modules["_xattn_run_ends_hooks"]


@st.fragment(run_every=3600)
def poll():
    hooks.polls.append(1)
    st.write("poll")


poll()
st.write("the end of the full run")
if not hooks.ended.is_set():          # the first full run waits here for the test
    hooks.ended.set()
    hooks.release.wait(30)
'''


def wait(condition, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def run_ends_of(script, hooks) -> list[ForwardMsg]:
    """Every message the browser gets: a full run, and a fragment rerun asked for after the
    runner finished but before the event loop handled the end of its run."""

    async def session_messages() -> list[ForwardMsg]:
        session = AppSession(ScriptData(str(script)), MemoryUploadedFileManager("/upload"),
                             ScriptCache(), None, {})
        sent: list[ForwardMsg] = []
        session.request_rerun(None)
        while not hooks.ended.is_set():
            await asyncio.sleep(0.01)
            sent += session.flush_browser_queue()
        runner = session._scriptrunner
        hooks.release.set()            # the event loop is held from here until the next await
        wait(lambda: runner._requests._state == ScriptRequestType.STOP)
        (fragment,) = session._fragment_storage._fragments
        session.request_rerun(ClientState(fragment_id=fragment))
        wait_until = time.monotonic() + 30
        while len(hooks.polls) < 2 or not _ended(sent, "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"):
            assert time.monotonic() < wait_until, f"the poll never ran: {_ends(sent)}"
            await asyncio.sleep(0.01)
            sent += session.flush_browser_queue()
        session.shutdown()
        return sent

    return run_async(session_messages())


def _ends(sent) -> list[str]:
    return [ForwardMsg.ScriptFinishedStatus.Name(m.script_finished) for m in sent
            if m.WhichOneof("type") == "script_finished"]


def _ended(sent, status: str) -> bool:
    return status in _ends(sent)


@pytest.fixture
def hooks(monkeypatch):
    made = types.SimpleNamespace(ended=threading.Event(), release=threading.Event(), polls=[])
    monkeypatch.setitem(sys.modules, "_xattn_run_ends_hooks", made)
    # No server Runtime in this process: the runner asks it only for its media file manager.
    monkeypatch.setattr(streamlit.runtime, "get_instance", lambda: mock.MagicMock())
    # install() patches the class; the original comes back after the test.
    monkeypatch.setattr(AppSession, "_create_scriptrunner", AppSession._create_scriptrunner)
    return made


def test_a_poll_as_a_full_run_ends_delivers_that_runs_end_then_runs(hooks, tmp_path):
    script = tmp_path / "app.py"
    script.write_text(SCRIPT)
    assert run_ends.install() and run_ends.install()           # once, however often asked
    sent = run_ends_of(script, hooks)
    assert _ends(sent) == ["FINISHED_SUCCESSFULLY", "FINISHED_FRAGMENT_RUN_SUCCESSFULLY"]
    texts = [m.delta.new_element.markdown.body for m in sent if m.WhichOneof("type") == "delta"]
    assert "the end of the full run" in texts
    assert any(m.WhichOneof("type") == "auto_rerun" for m in sent)   # the page keeps polling


def test_without_it_streamlit_drops_the_end_of_the_run(hooks, tmp_path):
    """The reproduction is real: stock Streamlit 1.67 loses the full run's end here. If a later
    Streamlit delivers it, this test says so, and run_ends.py can go."""
    script = tmp_path / "app.py"
    script.write_text(SCRIPT)
    # stock Streamlit, even where an earlier test's page installed the patch in this process
    # (functools.wraps keeps the original as __wrapped__); the fixture puts it back after
    patched = AppSession._create_scriptrunner
    AppSession._create_scriptrunner = getattr(patched, "__wrapped__", patched)
    sent = run_ends_of(script, hooks)
    assert "FINISHED_SUCCESSFULLY" not in _ends(sent), (
        "Streamlit now keeps the end of a run a poll raced: xattn/ui/run_ends.py is no longer "
        "needed")


def test_the_streamlit_running_is_the_minor_version_the_patches_were_written_for():
    """run_ends.py and reconnect.py patch Streamlit 1.67's internals; requirements.txt pins
    that minor version. A test run on another Streamlit says so here first."""
    from importlib.metadata import version
    from pathlib import Path

    from packaging.requirements import Requirement

    lines = (Path(__file__).resolve().parent.parent / "requirements.txt").read_text().splitlines()
    (pin,) = [Requirement(line) for line in lines if line.startswith("streamlit")]
    assert pin.specifier.contains(version("streamlit")), (
        f"Streamlit {version('streamlit')} is installed, requirements.txt pins {pin}: run the "
        "canaries in tests/test_run_ends.py and tests/test_reconnect.py before moving the pin")
