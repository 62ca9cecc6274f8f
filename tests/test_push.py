"""The relay's request to redraw a page (``xattn/ui/push.py``), on a real ``AppSession``.

The canary of the private Streamlit names push.py uses: if an upgrade changes them, these tests
fail here, not in a lecture hall. A request made while the page is idle reruns it (the whole
page, or one fragment) with the widget values the session holds and the link the page last
had; a request made while a run is underway is refused as busy, so it never replaces what the
browser asked for.
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
from streamlit.runtime.app_session import AppSession
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache

from devtools.protocol import run_async
from xattn.ui import push

SCRIPT = '''
import sys
import streamlit as st
from xattn.ui import push

hooks = sys.modules["_xattn_push_hooks"]
hooks.runs.append(("full", st.query_params.get("room"), st.session_state.get("pick")))
st.text_input("pick", key="pick")


@st.fragment
def receipt():
    hooks.runs.append(("fragment", st.session_state.get("pick")))
    hooks.fragment = push.fragment_id()


receipt()
if hooks.hold.is_set():
    hooks.holding.set()
    hooks.release.wait(30)
'''


@pytest.fixture
def hooks(monkeypatch, tmp_path):
    made = types.SimpleNamespace(runs=[], fragment=None, hold=threading.Event(),
                                 holding=threading.Event(), release=threading.Event())
    monkeypatch.setitem(sys.modules, "_xattn_push_hooks", made)
    monkeypatch.setattr(streamlit.runtime, "get_instance", lambda: mock.MagicMock())
    made.script = tmp_path / "app.py"
    made.script.write_text(SCRIPT)
    return made


def _typed(session, text):
    """The browser's widget states with ``text`` typed in the box."""
    ctx_state = ClientState(query_string="room=ABC234")
    (widget_id,) = [k for k in session._session_state._new_widget_state.widget_metadata
                    if k.endswith("-pick")]
    w = ctx_state.widget_states.widgets.add()
    w.id, w.string_value = widget_id, text
    return ctx_state


async def _idle(session, timeout=30.0):
    deadline = time.monotonic() + timeout
    while session._scriptrunner is not None:
        assert time.monotonic() < deadline, "the run never ended"
        await asyncio.sleep(0.01)
        session.flush_browser_queue()


def _asked(session, fragments=None):
    """push's request, made on the session's event loop as the relay thread's would be."""
    outcome = []
    session._call_soon_on_event_loop(lambda: outcome.append(push._ask(session, fragments)))
    return outcome


def test_an_idle_page_reruns_with_its_own_widget_values_and_link(hooks):
    async def scenario():
        session = AppSession(ScriptData(str(hooks.script)), MemoryUploadedFileManager("/u"),
                             ScriptCache(), None, {})
        session.request_rerun(ClientState(query_string="room=ABC234"))
        await _idle(session)
        session.request_rerun(_typed(session, "b"))          # the student picks "b"
        await _idle(session)
        hooks.runs.clear()
        outcome = _asked(session)                                # the relay: the class moved
        await asyncio.sleep(0.05)
        await _idle(session)
        assert outcome == ["asked"]
        assert hooks.runs == [("full", "ABC234", "b"), ("fragment", "b")]
        hooks.runs.clear()
        outcome = _asked(session, (hooks.fragment, "gone-fragment"))                # the receipt alone
        await asyncio.sleep(0.05)
        await _idle(session)
        assert outcome == ["asked"] and hooks.runs == [("fragment", "b")]
        session.shutdown()

    run_async(scenario())


def test_a_busy_page_is_not_asked_so_the_browsers_request_stands(hooks):
    async def scenario():
        session = AppSession(ScriptData(str(hooks.script)), MemoryUploadedFileManager("/u"),
                             ScriptCache(), None, {})
        session.request_rerun(ClientState(query_string="room=ABC234"))
        await _idle(session)
        hooks.hold.set()
        session.request_rerun(_typed(session, "a"))          # a tap: a run underway
        while not hooks.holding.is_set():
            await asyncio.sleep(0.01)
        outcome = _asked(session)
        await asyncio.sleep(0.05)
        assert outcome == ["busy"]
        hooks.hold.clear()
        hooks.release.set()
        await _idle(session)
        hooks.runs.clear()
        outcome = _asked(session)                                # idle again: asked
        await asyncio.sleep(0.05)
        await _idle(session)
        assert outcome == ["asked"]
        assert hooks.runs[0] == ("full", "ABC234", "a")          # the tap stands
        session.shutdown()

    run_async(scenario())


def test_available_only_in_a_real_server():
    assert push.available() is False                            # no Runtime in this process
    assert push.rerun("no-such-session") is False


def _tap_on_unknown_fragment(session, text):
    state = _typed(session, text)
    state.fragment_id = "a-fragment-this-session-has-not-drawn-yet"
    return state


def test_a_tap_naming_a_fragment_the_session_does_not_know_runs_the_page_with_it(hooks,
                                                                                monkeypatch):
    from xattn.ui import late_fragments
    monkeypatch.setattr(AppSession, "request_rerun", AppSession.request_rerun)
    assert late_fragments.install() and late_fragments.install()   # once, however often

    async def scenario():
        session = AppSession(ScriptData(str(hooks.script)), MemoryUploadedFileManager("/u"),
                             ScriptCache(), None, {})
        session.request_rerun(ClientState(query_string="room=ABC234"))
        await _idle(session)
        hooks.runs.clear()
        session.request_rerun(_tap_on_unknown_fragment(session, "b"))  # a reconnected tap
        await asyncio.sleep(0.05)
        await _idle(session)
        assert hooks.runs[0] == ("full", "ABC234", "b")         # the tap counts
        session.shutdown()

    run_async(scenario())


def test_stock_streamlit_drops_that_tap(hooks, monkeypatch):
    """The reproduction is real: stock Streamlit 1.67 drops the request and its widget value.
    If a later Streamlit keeps it, this says so, and late_fragments.py can go."""
    patched = AppSession.request_rerun
    monkeypatch.setattr(AppSession, "request_rerun", getattr(patched, "__wrapped__", patched))

    async def scenario():
        session = AppSession(ScriptData(str(hooks.script)), MemoryUploadedFileManager("/u"),
                             ScriptCache(), None, {})
        session.request_rerun(ClientState(query_string="room=ABC234"))
        await _idle(session)
        hooks.runs.clear()
        session.request_rerun(_tap_on_unknown_fragment(session, "b"))
        await asyncio.sleep(0.3)
        await _idle(session)
        assert hooks.runs == [], ("Streamlit now keeps a tap on an unknown fragment: "
                                  "xattn/ui/late_fragments.py is no longer needed")
        session.shutdown()

    run_async(scenario())
