"""A student's page after its server process died (xattn/ui/reconnect.py, issue 16 item 5).

Behind ``deploy/serve.sh`` the browser reconnects to another process, which starts a new
session. Streamlit 1.67 does not rerun an idle page then, and the new session's first run
carried the student's next change, which the page overrode with its link: the change snapped
back and the download button pointed at a file of the dead process.

AppTest can start that new session directly: a fresh ``AppTest`` whose first run carries the
widget states of another one, as the browser's first request to the new process does. The
browser tests do it for real through HAProxy in Chromium: kill the process that holds the
session, let the page reconnect, then check that it reran by itself and its download works,
and that one change made at once takes (link and figure) and its download works too. Nothing
here asserts on time; every wait polls a condition with a generous deadline.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
import urllib.parse
from pathlib import Path
from unittest import mock

import pytest
import streamlit.runtime
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager
from streamlit.testing.v1 import AppTest

from devtools.browser import ARTIFACTS, RUN_COUNTER_JS, runs, wait_for_app
from devtools.lecture_hall import LectureHall, haproxy_missing
from devtools.protocol import run_async
from tests.test_deploy import CSV_HEADER, FOUR_HEADS_DRAWN, download_csv, fetch, no_haproxy
from xattn.ui.reconnect import RERUN_EVERY_S, _as_link
from xattn.ui.state import LINK_READ

APP = str(Path(__file__).resolve().parent.parent / "app.py")


# --- the browser's widget states, read as a link ---------------------------------------------

def widget(**value) -> WidgetState:
    state = WidgetState(id="$$ID-0123abcd-key")
    for field, v in value.items():
        target = getattr(state, field)
        if hasattr(target, "data"):
            target.data.extend(v)
        else:
            setattr(state, field, v)
    return state


@pytest.mark.parametrize(("value", "texts"), [
    ({"string_value": "le chat"}, ["le chat"]),
    ({"double_value": 7.0}, ["7"]),                 # a number box's whole number
    ({"double_value": 0.25}, ["0.25"]),
    ({"int_value": 12}, ["12"]),
    ({"bool_value": True}, ["true"]),
    ({"bool_value": False}, ["false"]),
    ({"string_array_value": ["8"]}, ["8"]),         # a select_slider's option
    ({"string_array_value": ["0: the", "6: mat"]}, ["0: the", "6: mat"]),
    ({"double_array_value": [3.0]}, ["3"]),
    ({"json_value": '{"selection": {}}'}, None),    # a chart's selection: not a link's value
    ({"trigger_value": True}, None),                # a button
])
def test_a_widget_state_reads_as_the_link_spells_it(value, texts):
    assert _as_link(widget(**value)) == texts


def test_the_reconnect_fragment_runs_rarely_and_within_what_a_browser_times():
    # setInterval runs a delay of 2**31 ms or more at once, and again, and again
    assert 60 <= RERUN_EVERY_S and RERUN_EVERY_S * 1000 < 2**31


# --- a new session whose first run carries the browser's widgets (AppTest) --------------------

def first_page(query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def new_session(query: dict, browser: AppTest, *, first_run_cut_short: bool = False) -> AppTest:
    """A session new in this process (as after a reconnect to another process) whose first
    run carries the widget states ``browser`` holds and the link ``query``."""
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    if first_run_cut_short:   # an earlier run read the link, then a click stopped it
        at.session_state[LINK_READ] = True
    return at._run(widget_state=browser._tree.get_widget_states())   # noqa: SLF001


def link_of(at: AppTest) -> dict:
    return {k: at.query_params[k] for k in at.query_params}


@pytest.mark.parametrize("first_run_cut_short", [False, True], ids=["first-run", "cut-short"])
def test_a_change_sent_with_a_new_sessions_first_run_takes(first_run_cut_short):
    before = first_page({"seed": "7"})
    assert not before.exception
    assert before.number_input(key="seed").value == 7
    # the student's one change, sent to the new process with every other widget's state
    before.number_input(key="seed").set_value(9)
    before.select_slider(key="heads").set_value(8)

    at = new_session({"seed": "7"}, before, first_run_cut_short=first_run_cut_short)
    assert not at.exception
    assert at.number_input(key="seed").value == 9       # not snapped back to the link's 7
    assert at.select_slider(key="heads").value == 8
    assert link_of(at) == {"seed": "9", "heads": "8"}  # the link follows
    assert not at.warning, [w.value for w in at.warning]


def test_a_widget_shown_through_a_label_leaves_its_value_to_the_link():
    """A radio shows "0 to the maximum" for scale=max: that is no value of the link, so the
    link decides, silently (no notice quoting the label as a bad link value)."""
    before = first_page({"scale": "max", "seed": "3"})
    at = new_session({"scale": "max", "seed": "3"}, before)
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    assert link_of(at) == {"scale": "max", "seed": "3"}


def test_a_fresh_page_reads_only_its_link():
    at = first_page({"seed": "5", "heads": "2"})
    assert not at.exception and not at.warning
    assert at.number_input(key="seed").value == 5 and at.select_slider(key="heads").value == 2


# --- canaries: the stock Streamlit behaviour these workarounds answer (streamlit#8901) ---------

def _undrawn_widget_script():
    import streamlit as st
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    raw = get_script_run_ctx().session_state._state._new_widget_state  # noqa: SLF001
    st.session_state["raw"] = {k: s.value.WhichOneof("value") for k, s in raw.states.items()}
    st.session_state["readable"] = "seed" in st.session_state


def test_stock_streamlit_keeps_an_undrawn_widgets_browser_value_raw():
    """The value a reconnecting browser sends for a widget not drawn yet is only in Streamlit's
    raw widget states, where ``browser_values`` reads it. If this fails, Streamlit moved them
    (fix ``browser_values``) or now gives the value through ``st.session_state`` (read it
    there and drop the raw read)."""
    at = AppTest.from_function(_undrawn_widget_script)
    sent = WidgetStates(widgets=[WidgetState(id="$$ID-0123abcd-seed", double_value=9)])
    at = at._run(widget_state=sent)   # noqa: SLF001 - a browser's first request
    assert not at.exception
    assert at.session_state["raw"] == {"$$ID-0123abcd-seed": "double_value"}, (
        "Streamlit's raw widget states changed: xattn/ui/reconnect.py browser_values reads them")
    assert at.session_state["readable"] is False, (
        "Streamlit now gives an undrawn widget's browser value: browser_values can go")


def test_stock_streamlit_opens_a_silent_fresh_session_for_an_id_it_does_not_know():
    """A browser reconnecting to another process offers its old session id: Streamlit 1.67
    makes a fresh session that neither runs the page nor tells the browser, which is why the
    page carries ``rerun_on_reconnect``. If this fails, Streamlit now resumes or announces
    such a session: check whether xattn/ui/reconnect.py is still needed."""

    async def connect() -> tuple:
        manager = WebsocketSessionManager(MemorySessionStorage(), MemoryUploadedFileManager("/u"),
                                          ScriptCache(), None)
        new_id = manager.connect_session(mock.MagicMock(), ScriptData(APP), {},
                                         existing_session_id="of-a-dead-process")
        session = manager.get_active_session_info(new_id).session
        await asyncio.sleep(0.2)        # whatever the session would do, give it a turn
        seen = (new_id, session._scriptrunner, session.flush_browser_queue())  # noqa: SLF001
        session.shutdown()
        return seen

    with mock.patch.object(streamlit.runtime, "get_instance", lambda: mock.MagicMock()):
        new_id, runner, sent = run_async(connect())
    assert new_id != "of-a-dead-process"
    assert runner is None and sent == [], (
        "Streamlit now runs or announces a session it could not resume: see reconnect.py")


# --- through HAProxy in Chromium: kill the process that holds the session ----------------------

# Counts the page's websockets that opened (the second one is the reconnect), before any of
# the page's own scripts runs.
SOCKETS_JS = """
window.__xattnSockets = 0;
window.WebSocket = class extends window.WebSocket {
  constructor(...args) {
    super(...args);
    if (String(args[0]).includes('_stcore/stream')) {
      this.addEventListener('open', () => { window.__xattnSockets += 1; });
    }
  }
};
"""
RECONNECTED = ("window.__xattnSockets >= 2 && "
               "!document.querySelector('[data-testid=\"stConnectionStatus\"]')")
DEADLINE = 180.0   # seconds: a restart on a loaded 2-core machine


@pytest.fixture(scope="module")
def hall():
    if haproxy_missing():
        no_haproxy(haproxy_missing())
    with LectureHall(processes=2, run_dir=ARTIFACTS / "reconnect-hall") as running:
        yield running


def poll(condition, what: str, hall: LectureHall) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"{what}, not within {DEADLINE} s:\n{hall.output()}"
        time.sleep(0.25)   # poll interval of a bounded loop


def all_up(hall: LectureHall) -> None:
    """Wait until HAProxy sends each affinity cookie to its own process (each one is up)."""
    poll(lambda: all(fetch(f"{hall.url}_stcore/health", name) == (200, name)
                     for name in hall.backends), "every process up behind the proxy", hall)


def student(chromium, hall: LectureHall, query: str):
    """A new browser (own cookies) on the page; the name of the process holding it."""
    all_up(hall)
    context = chromium.new_context(viewport={"width": 1400, "height": 1100},
                                   accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(DEADLINE * 1000)
    page.add_init_script(RUN_COUNTER_JS)
    page.add_init_script(SOCKETS_JS)
    page.goto(f"{hall.url}?{query}")
    wait_for_app(page, FOUR_HEADS_DRAWN, timeout=DEADLINE * 1000)
    return context, page, server_of(context)


def server_of(context) -> str:
    return {c["name"]: c["value"] for c in context.cookies()}["XATTN_SERVER"]


def kill_holder(hall: LectureHall, server: str) -> None:
    os.kill(hall.backends[server][0], signal.SIGKILL)


def query_of(page) -> dict:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)


def test_after_a_restart_the_page_reruns_by_itself_and_its_download_works(hall, chromium):
    context, page, server = student(chromium, hall, "seed=7")
    _, before = download_csv(page)
    wait_for_app(page, FOUR_HEADS_DRAWN, timeout=DEADLINE * 1000)
    done = runs(page)

    kill_holder(hall, server)
    # nothing is clicked: the page reconnects and reruns in the new process by itself
    page.wait_for_function(RECONNECTED, timeout=DEADLINE * 1000, polling=100)
    wait_for_app(page, FOUR_HEADS_DRAWN, after_runs=done, timeout=DEADLINE * 1000)
    assert query_of(page) == {"seed": ["7"]}

    url, after = download_csv(page)   # the old page's file died with its process
    assert after == before and after.splitlines()[0] == CSV_HEADER   # the same numbers
    now = server_of(context)
    assert fetch(url, now) == (200, now)
    assert page.locator('[data-testid="stException"]').count() == 0
    context.close()


def test_after_a_restart_the_first_change_takes(hall, chromium):
    context, page, server = student(chromium, hall, "seed=7")
    kill_holder(hall, server)
    page.wait_for_function(RECONNECTED, timeout=DEADLINE * 1000, polling=100)

    # one change, at once: whether or not the page's own rerun has finished
    page.locator(".st-key-heads input[type=range]").press("ArrowRight")   # 4 -> 8 heads
    wait_for_app(page, "traces && traces.filter((t) => t.type === 'heatmap').length === 8 && "
                       "new URL(location.href).searchParams.get('heads') === '8'",
                 timeout=DEADLINE * 1000)
    assert query_of(page) == {"heads": ["8"], "seed": ["7"]}
    assert page.locator('.st-key-heads [data-testid="stSliderThumbValue"]').inner_text() == "8"

    url, csv = download_csv(page)
    assert csv.splitlines()[0] == CSV_HEADER
    assert len(csv.splitlines()) == 1 + 8 * 8 * 7   # the new heads: heads x target x source
    now = server_of(context)
    assert fetch(url, now) == (200, now)
    assert page.locator('[data-testid="stException"]').count() == 0
    context.close()
