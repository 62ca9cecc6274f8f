"""The websocket protocol client (``devtools/protocol.py``) on a real Streamlit server: what the
benchmarks of a live room read from it.

A small page with a text box, a fragment and a button that makes the server rerun the page a
second later by itself: the button's run changes the page's script, and the server, started with
``server.runOnSave`` (a public option), reruns the session with the widget values it holds, as
it does for a developer who saves the file. The client must see the elements of each run with
the fragment that drew them, send a tap as a fragment run, record a run it did not ask for, and
tell whoever waits for a run that the connection ended.
"""

from __future__ import annotations

import asyncio

import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState

from devtools.browser import ARTIFACTS, StreamlitServer
from devtools.protocol import Client, run_async

pytestmark = pytest.mark.server

SCRIPT = '''
import sys
import threading
from pathlib import Path

import streamlit as st

st.text_input("pick", key="pick")


@st.fragment
def receipt():
    st.markdown(f"fragment sees {st.session_state.get('pick')!r}")


receipt()
st.markdown(f"page sees {st.session_state.get('pick')!r}")
if st.button("push", key="push") and not hasattr(sys, "_pushed"):   # once per process
    sys._pushed = True                 # the server reruns this page a second later, by itself:
    script = Path(__file__)            # its script changes (server.runOnSave)
    threading.Timer(1.0, lambda: script.write_text(script.read_text() + "# saved\\n")).start()
'''
# A changed script reruns its sessions by itself (the file is polled: no watchdog needed).
RUN_ON_SAVE = ("--server.fileWatcherType", "poll", "--server.runOnSave", "true")


def texts(run) -> list[str]:
    return [m.body for m in run.of("markdown")]


def fragment_of(run, body: str) -> str:
    """The fragment id the markdown ``body`` was drawn in ("" outside any fragment)."""
    (where,) = [i for i, e in enumerate(run.elements) if e.markdown.body == body]
    return run.fragments[where]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("protocol")
    (root / "page.py").write_text(SCRIPT)
    with StreamlitServer(script="page.py", root=root, extra_args=RUN_ON_SAVE,
                         log=ARTIFACTS / "protocol-server.log") as running:
        yield running


def test_runs_their_fragments_a_fragment_tap_and_a_run_the_server_starts(server):
    async def scenario():
        seen = []
        async with Client(server.url, on_run=seen.append) as tab:
            page = await tab.run()
            assert page.ok and page.full
            fragment = fragment_of(page, "fragment sees ''")
            assert fragment and fragment_of(page, "page sees ''") == ""
            tap = await tab.run("", [WidgetState(id=page.widget("pick").id, string_value="b")],
                                fragment=fragment)
            assert tap.ok and not tap.full and tap.fragment_ids == (fragment,)
            assert texts(tap) == ["fragment sees 'b'"]
            await tab.run("", [WidgetState(id=page.widget("push").id, trigger_value=True)])
            pushed = await tab.until(lambda run: run.full, 30)    # nobody asked for it
            assert "page sees 'b'" in texts(pushed)                 # the session's own value
            assert [r.full for r in seen] == [True, False, True, True]
            assert seen[-1] is pushed and all(r.ended >= r.started and r.bytes for r in seen)
    run_async(scenario())


def test_a_wait_for_a_run_ends_when_the_connection_does(tmp_path):
    (tmp_path / "page.py").write_text(SCRIPT)
    with StreamlitServer(script="page.py", root=tmp_path) as alone:
        async def scenario():
            async with Client(alone.url) as tab:
                await tab.run()
                waiting = tab.until(lambda run: False, 60)
                await asyncio.to_thread(alone.stop)
                with pytest.raises(ConnectionError):
                    await waiting
                assert tab.closed
        run_async(scenario())
