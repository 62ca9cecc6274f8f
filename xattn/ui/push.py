"""Ask an open page to redraw from outside its script run: the class's relay thread.

A class moves with its lecturer: when the host reveals a step, every student's page must
redraw within about a second, without 200 phones polling. Streamlit 1.67 has no public way for
the server to rerun a session (streamlit#2838 and #2927 ask for one; `streamlit-server-state`
works around it the same way); its ``runOnSave`` does it with ``AppSession.request_rerun``.
This module does the same through three private names, pinned with Streamlit's minor version
in requirements.txt and checked by a canary test on a real ``AppSession``
(``tests/test_push.py``), which fails loudly when an upgrade changes them:

- ``Runtime.instance()._session_mgr.get_active_session_info(id).session``: the session;
- ``AppSession._scriptrunner`` (None between runs) and ``_client_state`` (the last run's
  query string and page);
- ``AppSession._create_scriptrunner(RerunData)``: start a run, as ``request_rerun`` does;
- ``ThreadState.get().fragment_id``: the id of the fragment running now.

A page is asked only while it is idle (no run underway or queued): a run that is coming draws
the room as it then is, and a request made then could replace the browser's own (its query
string) or race its widget values. The request carries no widget values (``widget_states=None``:
the session keeps its own), so it can never undo a tap. A busy page is asked again on the
relay's next look. Everything runs on the session's event loop, as Streamlit's own requests do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

__all__ = ["rerun", "available", "alive", "session_id", "fragment_id"]

_LOGGER = logging.getLogger(__name__)
ASKED, BUSY, GONE = "asked", "busy", "gone"


def _session(session: str):
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    manager = getattr(Runtime.instance(), "_session_mgr", None)  # AppTest's runtime has none
    info = None if manager is None else manager.get_active_session_info(session)
    return None if info is None else info.session


def alive(session: str) -> bool | None:
    """Whether ``session`` is open in this process (connected to a browser); None where this
    process cannot tell (no server: AppTest)."""
    if not available():
        return None
    return _session(session) is not None


def available() -> bool:
    """True in a real server (not AppTest, not a bare script) whose Streamlit has the shape
    this module was written against."""
    try:
        from streamlit.runtime import Runtime
        from streamlit.runtime.app_session import AppSession
        from streamlit.runtime.scriptrunner_utils.script_requests import RerunData  # noqa: F401
    except ImportError:                              # pragma: no cover - another Streamlit
        return False
    shaped = all(hasattr(AppSession, name) for name in
                 ("_create_scriptrunner", "_call_soon_on_event_loop"))
    return shaped and Runtime.exists() and hasattr(Runtime.instance(), "_session_mgr")


def session_id() -> str | None:
    """The running script's session id (None outside a script run)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return None if ctx is None else ctx.session_id


def fragment_id() -> str | None:
    """The id of the fragment running now (None in a full run)."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import ThreadState

    return ThreadState.get().fragment_id


def rerun(session: str, fragments: tuple[str, ...] | None = None,
          busy: Callable[[], None] | None = None) -> bool:
    """Ask ``session`` to rerun: the fragments named (those of them that still exist), or the
    whole page (``None``, or none exists); False when this process has no such session.

    Safe to call from any thread, and it does not wait: the request is made on the session's
    event loop, where a page found busy (a run underway or queued) is not asked, and
    ``busy()`` is called instead, to ask again later."""
    app = _session(session)
    if app is None:
        return False

    def on_loop() -> None:
        try:
            outcome = _ask(app, fragments)
        except Exception:  # noqa: BLE001 - a request that fails is asked again later
            _LOGGER.exception("xattn: a page could not be asked to redraw")
            outcome = BUSY
        if outcome == BUSY and busy is not None:
            busy()

    try:
        app._call_soon_on_event_loop(on_loop)  # noqa: SLF001
    except RuntimeError:                             # its event loop is closed: it is gone
        return False
    return True


def _ask(app, fragments: tuple[str, ...] | None) -> str:
    from streamlit.runtime.app_session import AppSessionState
    from streamlit.runtime.scriptrunner_utils.script_requests import RerunData

    if app._state == AppSessionState.SHUTDOWN_REQUESTED:  # noqa: SLF001
        return GONE
    if app._scriptrunner is not None:  # noqa: SLF001 - a run underway or queued draws it
        return BUSY
    alive = [f for f in fragments or () if app.has_fragment(f)]   # gone with a full run
    last = app._client_state  # noqa: SLF001
    data = RerunData(query_string=last.query_string, widget_states=None,
                     page_script_hash=last.page_script_hash, page_name=last.page_name,
                     fragment_id_queue=alive, is_auto_rerun=bool(alive),
                     context_info=last.context_info if last.HasField("context_info") else None)
    app._create_scriptrunner(data)  # noqa: SLF001
    return ASKED
