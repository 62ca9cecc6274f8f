"""The one door to Streamlit's private names: everything of Streamlit's that is not public API
and that xattn still uses lives in this package, and only here.

Written for Streamlit 1.67 (``requirements.txt`` pins the minor version and names the canary);
``tests/test_streamlit_internals.py`` is the canary: it runs stock Streamlit and fails loudly
when an upgrade moves any of these names. No private name pushes or reruns a page: a class
moves its phones through xattn's own routes (``xattn/server``) and the lecturer's pages
rerun themselves through a public component (``xattn/ui/room/follow.py``).

What is left, and why (each module's docstring has the whole story):

- `reaper` (``Runtime.instance()._session_mgr``, its ``_session_storage._cache.expire()`` and
  ``_storage_lock``, ``Runtime._get_async_objs().eventloop``): closed sessions go within a
  minute and their memory goes back to the system (Streamlit reaps them only on writes);
- `deferred_downloads` (``MediaFileManager._lock``, ``_deferred_callables``, ``_file_metadata``,
  ``_files_by_session_and_coord``): a download made on click survives other sessions' runs;
- `reconnect` (``get_script_run_ctx`` and ``ctx.session_state._state._new_widget_state``): a
  page that outlives its server process takes the browser's widget values over its link;
- `script_run` (``get_script_run_ctx``, its ``is_history_navigation`` and
  ``fragment_ids_this_run``): whether this run is the browser's back button, or a fragment's
  own run; `in_page` (``get_script_run_ctx(suppress_warning=True)``): whether code runs in a
  page's script run at all (the lecturer's page's words, `xattn.ui.i18n`, are English outside
  one: a bare import, a test).
"""

from __future__ import annotations

from xattn.ui.internals import deferred_downloads, reaper
from xattn.ui.internals.reconnect import browser_values, rerun_on_reconnect

__all__ = ["install", "browser_values", "rerun_on_reconnect", "history_navigation",
           "fragment_run", "in_page", "reaper", "deferred_downloads"]


def install() -> None:
    """What this process's Streamlit needs changed, once (a cheap check after the first):
    the reaper (it starts once a server exists) and the deferred downloads' owner."""
    reaper.install()
    deferred_downloads.install()


def _ctx():
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return get_script_run_ctx()


def history_navigation() -> bool:
    """Whether this run was started by the browser's back or forward button."""
    return bool(getattr(_ctx(), "is_history_navigation", False))


def fragment_run() -> bool:
    """Whether this run is a fragment's own run (not the page's full run)."""
    ctx = _ctx()
    return ctx is not None and bool(ctx.fragment_ids_this_run)


def in_page() -> bool:
    """Whether this code runs in a page's script run (not a bare import or a test outside a
    page), without Streamlit's warning about a missing context."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    return get_script_run_ctx(suppress_warning=True) is not None
