"""The canary of the one door to Streamlit's private names (``xattn/ui/internals/``).

Everything xattn still takes from Streamlit that is not public API sits behind that door, and
this file is the one place that checks it on stock Streamlit (``requirements.txt`` pins the
minor version, 1.67, and names this file). Before moving the pin, run it:

    python -m pytest tests/test_streamlit_internals.py

First the door itself: the Streamlit installed is the pinned minor version, the pin's comment
names the door and this file, and no module outside the door imports a private Streamlit
module or reads a private ``st._name``. Then two kinds of test, per module of the door:

- **canaries** (``test_canary_*``, and the reconnect's two ``test_stock_streamlit_*``, the
  names ``reconnect.py`` refers to): stock Streamlit, nothing of xattn's installed. Each
  fails, saying what to fix or what can go, when an upgrade moves a private name the door uses
  or changes the behaviour a workaround exists for;
- **behaviour**: what each workaround achieves, on real Streamlit objects (a ``Runtime``
  started in this process, a ``MediaFileManager``, ``AppTest`` of the page), and twice on a
  real server (``server``: one ``streamlit run app.py`` for the module).

The browser side of the reconnect (a lecture hall, a backend killed under a page) is in
``tests/test_reconnect_page.py``.
"""

from __future__ import annotations

import ast
import asyncio
import gc
import threading
import time
import urllib.error
import urllib.request
import weakref
from importlib.metadata import version
from pathlib import Path
from unittest import mock

import pytest
import streamlit.runtime
from packaging.requirements import Requirement
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.runtime import Runtime, RuntimeConfig, media_file_manager
from streamlit.runtime.app_session import AppSessionState
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager
from streamlit.testing.v1 import AppTest

from benchmarks.download_race import BIG, race
from devtools.browser import ARTIFACTS, StreamlitServer
from devtools.protocol import Client, run_async
from xattn.ui import internals
from xattn.ui.internals import deferred_downloads, reaper
from xattn.ui.internals.reconnect import RERUN_EVERY_S, _as_link
from xattn.ui.serving import SCRIPT
from xattn.ui.state import LINK_READ

ROOT = Path(__file__).resolve().parent.parent
DOOR = "xattn/ui/internals"


# --- a Streamlit server's runtime in this process ----------------------------------------------

class Tab:
    """A browser's side of one session: every message the runtime writes to it."""

    def __init__(self) -> None:
        self.sent: list[ForwardMsg] = []
        self._ended: asyncio.Future | None = None
        self.id = ""

    def write_forward_msg(self, msg: ForwardMsg) -> None:   # Streamlit's SessionClient
        self.sent.append(msg)
        if msg.WhichOneof("type") == "script_finished" and self._ended is not None \
                and not self._ended.done():
            self._ended.set_result(msg.script_finished)


class InProcess:
    """The ``Runtime`` that ``streamlit run`` starts (its session manager, event loop and media
    files), started on the running event loop, without HTTP: a session connects as the
    websocket handler connects one, and a run is asked for as the browser asks."""

    def __init__(self, script: Path | str, **config) -> None:
        self.script, self.config = str(script), config
        self.runtime: Runtime | None = None

    async def __aenter__(self) -> InProcess:
        self.runtime = Runtime(RuntimeConfig(
            script_path=self.script, media_file_storage=MemoryMediaFileStorage("/media"),
            uploaded_file_manager=MemoryUploadedFileManager("/_stcore/upload_file"),
            **self.config))
        await self.runtime.start()
        return self

    async def __aexit__(self, *exc) -> None:
        self.runtime.stop()
        await self.runtime.stopped

    def connect(self) -> Tab:
        tab = Tab()
        tab.id = self.runtime.connect_session(tab, {})
        return tab

    async def run(self, tab: Tab, timeout: float = 60.0, **rerun) -> list[ForwardMsg]:
        """Ask for a run as the browser does (``rerun``: ``ClientState`` fields; ``widgets``:
        widget states) and return what the session sent until the run finished."""
        back = BackMsg()
        back.rerun_script.widget_states.widgets.extend(rerun.pop("widgets", ()))
        for name, value in rerun.items():
            setattr(back.rerun_script, name, value)
        tab.sent, tab._ended = [], asyncio.get_running_loop().create_future()
        self.runtime.handle_backmsg(tab.id, back)
        status = await asyncio.wait_for(tab._ended, timeout)
        assert status in (ForwardMsg.FINISHED_SUCCESSFULLY,
                          ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY), (
            ForwardMsg.ScriptFinishedStatus.Name(status))
        return list(tab.sent)


@pytest.fixture
def in_process(monkeypatch):
    """`InProcess`, with Streamlit's one Runtime and the reaper's once-per-process state put
    back after the test (a page's run there installs the reaper on that runtime)."""
    monkeypatch.setattr(Runtime, "_instance", None)
    monkeypatch.setattr(reaper, "_started", threading.Event())
    monkeypatch.setattr(reaper, "_watching", [])
    return InProcess


def elements(sent: list[ForwardMsg]) -> list:
    """The elements of a run's messages, as their protos."""
    return [m.delta.new_element for m in sent
            if m.WhichOneof("type") == "delta" and m.delta.WhichOneof("type") == "new_element"]


def markdown(sent: list[ForwardMsg]) -> list[str]:
    return [e.markdown.body for e in elements(sent) if e.WhichOneof("type") == "markdown"]


def exceptions(sent: list[ForwardMsg]) -> list[str]:
    return [f"{e.exception.type}: {e.exception.message}" for e in elements(sent)
            if e.WhichOneof("type") == "exception"]


# --- the door: the pin, and nothing private outside it -------------------------------------

def _pin() -> tuple[Requirement, list[str]]:
    """requirements.txt's Streamlit requirement and the comment lines just above it."""
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    (at,) = [i for i, line in enumerate(lines) if line.startswith("streamlit")]
    comment = []
    for line in reversed(lines[:at]):
        if not line.startswith("#"):
            break
        comment.insert(0, line)
    return Requirement(lines[at]), comment


def test_the_streamlit_running_is_the_minor_version_the_door_was_written_for():
    """The door is written for Streamlit 1.67's internals; requirements.txt pins that minor
    version. A test run on another Streamlit says so here first."""
    pin, _ = _pin()
    assert pin.specifier.contains(version("streamlit")), (
        f"Streamlit {version('streamlit')} is installed, requirements.txt pins {pin}: run "
        "tests/test_streamlit_internals.py before moving the pin")


def test_the_pins_comment_names_the_door_and_this_canary():
    _, comment = _pin()
    text = " ".join(line.lstrip("# ") for line in comment)
    assert f"{DOOR}/" in text and "tests/test_streamlit_internals.py" in text, comment


PUBLIC = ("streamlit", "streamlit.components.v1", "streamlit.components.v2",
          "streamlit.testing.v1")     # Streamlit's public modules (its API reference)


def _streamlit_imports(path: Path) -> list[str]:
    """The Streamlit modules a file imports, and any ``st._name`` it reads."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] == "streamlit"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "streamlit":
            found += [node.module] + [f"{node.module}.{a.name}" for a in node.names
                                      if node.module == "streamlit" and a.name.startswith("_")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") \
                and isinstance(node.value, ast.Name) and node.value.id == "st":
            found.append(f"st.{node.attr}")
    return found


def test_no_private_streamlit_name_outside_the_door():
    """Only ``xattn/ui/internals/`` imports Streamlit's private modules or reads its private
    names: a new one goes behind the door, with a canary here."""
    outside = {}
    for path in sorted([ROOT / "app.py", *(ROOT / "xattn").rglob("*.py")]):
        if path.is_relative_to(ROOT / DOOR):
            continue
        private = [m for m in _streamlit_imports(path) if m not in PUBLIC]
        if private:
            outside[str(path.relative_to(ROOT))] = private
    assert outside == {}, f"private Streamlit names outside {DOOR}/: {outside}"


# --- reaper: closed sessions go (xattn/ui/internals/reaper.py) ---------------------------------

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
    """What the reaper exists for: Streamlit drops an expired session only when it stores
    another. If this fails, Streamlit now reaps on its own: the reaper's reaping can go (its
    ``release_memory`` may still be worth keeping)."""
    async def scenario():
        manager, session = closed_session(tmp_path)
        assert manager.list_sessions() == []               # its time is up: not listed ...
        gc.collect()
        assert session() is not None, (                    # ... but held, and not shut down
            "Streamlit now drops a closed session whose time is up: see reaper.py")
        assert session()._state is not AppSessionState.SHUTDOWN_REQUESTED
        session().shutdown()

    run_async(scenario())


def test_canary_a_running_server_has_the_session_store_and_loop_the_reaper_uses(
        in_process, tmp_path):
    """``Runtime.instance()._session_mgr``, its ``_session_storage._cache.expire`` and
    ``_storage_lock``, and ``Runtime._get_async_objs().eventloop``, on the Runtime that
    ``streamlit run`` starts. If one moved, ``reaper.install`` silently starts nothing."""
    script = tmp_path / "app.py"
    script.write_text("import streamlit as st\nst.write('hello')\n")

    async def scenario():
        async with in_process(script) as server:
            runtime = server.runtime
            manager = getattr(runtime, "_session_mgr", None)
            assert isinstance(manager, WebsocketSessionManager), "Runtime._session_mgr moved"
            cache = getattr(getattr(manager, "_session_storage", None), "_cache", None)
            assert callable(getattr(cache, "expire", None)), (
                "the session manager's _session_storage._cache.expire() moved")
            assert hasattr(getattr(manager, "_storage_lock", None), "__enter__"), (
                "the session manager's _storage_lock moved")
            loop = runtime._get_async_objs().eventloop
            assert loop is asyncio.get_running_loop(), "Runtime._get_async_objs().eventloop"
            assert reaper._server() == (manager, loop), "reaper._server no longer finds them"

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


def test_the_reaper_started_on_a_running_server_shuts_a_closed_session_down(
        in_process, tmp_path, monkeypatch):
    """`install` on a started Runtime: its watch drops a closed session whose time is up,
    with nobody else arriving or leaving (Streamlit alone would keep it)."""
    monkeypatch.setattr(reaper, "EVERY", 0.05)
    script = tmp_path / "app.py"
    script.write_text("import streamlit as st\nst.write('hello')\n")

    async def scenario():
        async with in_process(script, session_storage=MemorySessionStorage(ttl_seconds=0)) \
                as server:
            tab = server.connect()
            session = server.runtime._session_mgr.get_active_session_info(tab.id).session
            server.runtime.disconnect_session(tab.id)
            assert reaper.install() and reaper.install()     # once, however often asked
            assert len(reaper._watching) == 1
            deadline = time.monotonic() + 30
            while session._state is not AppSessionState.SHUTDOWN_REQUESTED:
                assert time.monotonic() < deadline, "the reaper never shut the session down"
                await asyncio.sleep(0.02)

    run_async(scenario())


def test_nothing_to_watch_without_a_server():
    assert reaper.install() is False                       # no Runtime in this process


def test_release_memory_trims_glibcs_heap():
    """glibc on Linux (the lecture hall, Community Cloud): the heap is trimmed."""
    if reaper._malloc_trim() is None:
        pytest.skip("this C library has no malloc_trim (not glibc)")
    assert reaper.release_memory() is True


# --- deferred downloads: a file made on click stays (xattn/ui/internals/deferred_downloads.py) --

SESSION = "session-a"


@pytest.fixture
def stock():
    """MediaFileManager as Streamlit ships it, for the length of a test."""
    patched = MediaFileManager.execute_deferred
    original = getattr(patched, "__wrapped__", patched)
    with mock.patch.object(MediaFileManager, "execute_deferred", original):
        yield


def drawn(manager: MediaFileManager, data=lambda: "a,b\n1,2\n") -> str:
    """Session A draws a deferred download: its placeholder id."""
    with mock.patch.object(media_file_manager, "_get_session_id", return_value=SESSION):
        return manager.add_deferred(data, "text/csv", "1.2.3", "w.csv")


def clicked(manager: MediaFileManager) -> str:
    """Session A draws a deferred download and clicks it: the made file's id."""
    return deferred_downloads._file_id(manager.execute_deferred(drawn(manager)))


def other_runs_end(manager: MediaFileManager, n: int = 2) -> None:
    for _ in range(n):           # each script run of any session ends with this
        manager.remove_orphaned_files()


def test_canary_the_media_file_manager_has_the_names_the_patch_uses(stock):
    """``MediaFileManager._lock``, ``_deferred_callables`` (each entry's ``session_id`` and
    ``coordinates``), ``_file_metadata``, ``_files_by_session_and_coord``, and the made file's
    id as the last part of its URL. If one moved, every download made on click fails in the
    patch (fix ``deferred_downloads.install``)."""
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    with mock.patch.object(media_file_manager, "_get_session_id", return_value=SESSION):
        manager.add(b"x", "text/csv", "1.2.2", "sent-with-the-page.csv")
    placeholder = drawn(manager)
    assert hasattr(manager._lock, "__enter__"), "MediaFileManager._lock moved"
    entry = manager._deferred_callables.get(placeholder)
    assert entry is not None, "MediaFileManager._deferred_callables moved"
    assert (entry["session_id"], entry["coordinates"]) == (SESSION, "1.2.3"), entry
    refs = manager._files_by_session_and_coord.get(SESSION)
    assert isinstance(refs, dict) and "1.2.2" in refs, "_files_by_session_and_coord moved"
    made = deferred_downloads._file_id(manager.execute_deferred(placeholder))
    assert made in manager._file_metadata, (
        "the made file's id is no longer its URL's last part, or _file_metadata moved")
    assert manager.read_file(made) is not None


def test_canary_stock_streamlit_loses_a_file_made_on_click(stock):
    """What the patch exists for. If this fails, Streamlit now keeps a made file for its
    session: deferred_downloads.py can go."""
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    made = clicked(manager)
    assert manager.read_file(made) is not None
    other_runs_end(manager)
    assert manager.read_file(made) is None, (      # the browser's fetch would be a 404
        "Streamlit now keeps a file made on click: deferred_downloads.py can go")


def test_a_file_made_on_click_outlives_other_runs_until_its_sessions_next():
    assert deferred_downloads.install() and deferred_downloads.install()   # once, however called
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    made = clicked(manager)
    other_runs_end(manager, 5)
    assert manager.read_file(made) is not None
    manager.clear_session_refs(SESSION)             # A's next full run (or its end)
    other_runs_end(manager)
    assert manager.read_file(made) is None          # then it goes, as a page's file does


def test_a_session_that_ended_before_its_file_was_made_keeps_nothing():
    deferred_downloads.install()
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    placeholder = drawn(manager, lambda: b"x" * 10)
    manager.clear_session_refs(SESSION)              # the session ended meanwhile
    made = deferred_downloads._file_id(manager.execute_deferred(placeholder))
    other_runs_end(manager)
    assert manager.read_file(made) is None
    assert SESSION not in manager._files_by_session_and_coord


# --- reconnect: a page that outlives its process (xattn/ui/internals/reconnect.py) ------------

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


def _undrawn_widget_script():
    import streamlit as st
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    raw = get_script_run_ctx().session_state._state._new_widget_state  # noqa: SLF001
    st.session_state["raw"] = {k: s.value.WhichOneof("value") for k, s in raw.states.items()}
    st.session_state["registered"] = list(raw.widget_metadata)
    st.session_state["readable"] = "seed" in st.session_state


def test_stock_streamlit_keeps_an_undrawn_widgets_browser_value_raw():
    """The value a reconnecting browser sends for a widget not drawn yet is only in Streamlit's
    raw widget states (``get_script_run_ctx().session_state._state._new_widget_state``: its
    ``states`` and ``widget_metadata``), where ``browser_values`` reads it. If this fails,
    Streamlit moved them (fix ``browser_values``) or now gives the value through
    ``st.session_state`` (read it there and drop the raw read)."""
    at = AppTest.from_function(_undrawn_widget_script)
    sent = WidgetStates(widgets=[WidgetState(id="$$ID-0123abcd-seed", double_value=9)])
    at = at._run(widget_state=sent)   # noqa: SLF001 - a browser's first request
    assert not at.exception, at.exception
    assert at.session_state["raw"] == {"$$ID-0123abcd-seed": "double_value"}, (
        f"Streamlit's raw widget states changed: {DOOR}/reconnect.py browser_values reads them")
    assert at.session_state["registered"] == [], "undrawn widgets are now registered"
    assert at.session_state["readable"] is False, (
        "Streamlit now gives an undrawn widget's browser value: browser_values can go")


def test_stock_streamlit_opens_a_silent_fresh_session_for_an_id_it_does_not_know():
    """A browser reconnecting to another process offers its old session id: Streamlit 1.67
    makes a fresh session that neither runs the page nor tells the browser, which is why the
    page carries ``rerun_on_reconnect``. If this fails, Streamlit now resumes or announces
    such a session: check whether xattn/ui/internals/reconnect.py is still needed."""

    async def connect() -> tuple:
        manager = WebsocketSessionManager(MemorySessionStorage(), MemoryUploadedFileManager("/u"),
                                          ScriptCache(), None)
        new_id = manager.connect_session(mock.MagicMock(), ScriptData(SCRIPT), {},
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


def first_page(query: dict) -> AppTest:
    at = AppTest.from_file(SCRIPT, default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def new_session(query: dict, browser: AppTest, *, first_run_cut_short: bool = False) -> AppTest:
    """A session new in this process (as after a reconnect to another process) whose first
    run carries the widget states ``browser`` holds and the link ``query``."""
    at = AppTest.from_file(SCRIPT, default_timeout=120)
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


# --- this run: the back button, a fragment's own run (xattn/ui/internals/__init__.py) ---------

RUN_SCRIPT = '''
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from xattn.ui import internals


def seen(where):
    ctx = get_script_run_ctx()
    st.write(f"{where}: history={getattr(ctx, 'is_history_navigation', 'MISSING')} "
             f"fragments={getattr(ctx, 'fragment_ids_this_run', 'MISSING')} "
             f"door={internals.history_navigation()},{internals.fragment_run()}")


seen("page")


@st.fragment
def part():
    seen("fragment")


part()
'''


def test_canary_a_runs_context_says_back_button_and_fragment_run(in_process, tmp_path):
    """``get_script_run_ctx().is_history_navigation`` (the browser's back or forward button,
    from ``ClientState.is_history_navigation``) and ``.fragment_ids_this_run`` (the fragments
    a run reruns; None on a full run), on a real session: what ``history_navigation()`` and
    ``fragment_run()`` read. If one moved, the door's function silently says False: the back
    button no longer reads the link, Decode's *Play* no longer steps."""
    script = tmp_path / "app.py"
    script.write_text(RUN_SCRIPT)

    async def scenario():
        async with in_process(script) as server:
            tab = server.connect()
            first = await server.run(tab, query_string="seed=7")
            back = await server.run(tab, query_string="seed=7", is_history_navigation=True)
            (fragment,) = {m.delta.fragment_id for m in first if m.WhichOneof("type") == "delta"
                           and m.delta.new_element.markdown.body.startswith("fragment:")}
            own = await server.run(tab, query_string="seed=7", fragment_id=fragment)
            return first, back, own, fragment

    first, back, own, fragment = run_async(scenario())
    assert markdown(first) == ["page: history=False fragments=None door=False,False",
                               "fragment: history=False fragments=None door=False,False"], (
        exceptions(first) or markdown(first))
    assert markdown(back) == ["page: history=True fragments=None door=True,False",
                              "fragment: history=True fragments=None door=True,False"], (
        "ScriptRunContext.is_history_navigation moved: internals.history_navigation()")
    assert markdown(own) == [f"fragment: history=False fragments=['{fragment}'] "
                             "door=False,True"], (
        "ScriptRunContext.fragment_ids_this_run moved: internals.fragment_run()")


def test_outside_a_run_neither_back_button_nor_fragment():
    assert internals.history_navigation() is False
    assert internals.fragment_run() is False


def _seed_set_by_the_server(sent: list[ForwardMsg]) -> float | None:
    """The value the page set on its seed box in this run (None: it left the browser's)."""
    (box,) = [e.number_input for e in elements(sent) if e.WhichOneof("type") == "number_input"
              and e.number_input.id.endswith("-seed")]
    return box.value if box.HasField("value") else None


def test_the_back_button_reads_the_link_again(in_process):
    """The page reads its link on a session's first run and after the back button, never
    otherwise (the address bar only echoes what the page wrote)."""
    async def scenario():
        async with in_process(SCRIPT) as server:
            tab = server.connect()
            first = await server.run(tab, query_string="seed=7")
            (seed_id,) = [e.number_input.id for e in elements(first)
                          if e.WhichOneof("type") == "number_input"
                          and e.number_input.id.endswith("-seed")]
            typed = [WidgetState(id=seed_id, double_value=9)]   # the student types 9
            runs = [first]
            runs.append(await server.run(tab, query_string="seed=9", widgets=typed))
            runs.append(await server.run(tab, query_string="seed=7", widgets=typed,
                                         is_history_navigation=True))   # back to seed=7
            runs.append(await server.run(tab, query_string="seed=3", widgets=typed))
            return runs

    runs = run_async(scenario())
    assert [exceptions(r) for r in runs] == [[]] * 4
    # the link's 7; the student's 9 put in again after the first run (a value chosen
    # while that run imposed the link: test_app); the link's 7 again; nothing
    assert [_seed_set_by_the_server(r) for r in runs] == [7, 9, 7, None]


# --- a real server: what the reaper and the deferred downloads achieve ------------------------

@pytest.fixture(scope="module")
def server():
    """``streamlit run app.py`` for this module; a closed session is kept 1 s."""
    ttl = ("--server.disconnectedSessionTTL", "1")
    with StreamlitServer(log=ARTIFACTS / "streamlit-internals-server.log",
                         extra_args=ttl) as running:
        yield running


def test_a_large_csv_made_on_click_survives_other_students_clicks(server):
    """A setting above SMALL_DOWNLOAD gets its CSV made on click, and the browser's fetch
    after two runs of another session still finds it (``benchmarks/download_race.py``)."""
    results = dict(run_async(race(server.url, BIG)))
    assert results == {"made on click (deferred): fetched at once": 200,
                       "made on click (deferred): fetched after two runs of another session": 200}


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


def test_a_closed_sessions_download_goes_soon_after_its_time_is_up(server):
    """A closed session is kept 1 s here (``server.disconnectedSessionTTL``); with nobody
    else connected, Streamlit alone would keep it, and its file, until another session
    closes. The reaper drops it and the file at its next looks."""
    url = server.url.rstrip("/") + run_async(download_url(server.port))
    # closed at once, the session is still there, and so is its file
    assert status(url) == 200
    closed = time.monotonic()
    while status(url) == 200:           # 1 s, two looks of the reaper, a loaded machine
        waited = time.monotonic() - closed
        assert waited < 1 + 3 * reaper.EVERY + 60, f"{url} still served {waited:.0f} s on"
        time.sleep(0.5)                 # poll interval of a bounded loop
    assert status(url) == 404
