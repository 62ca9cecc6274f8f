"""A page that outlives its server process: rerun on reconnect, keep what the browser shows.

Behind a load balancer (``deploy/serve.sh``) a student's session lives in one Streamlit
process. When that process dies, the browser shows "CONNECTING", opens a new websocket, and
HAProxy (``option redispatch``) sends it to a live process. Two things in Streamlit 1.67 then
lose the student's first click:

- The new process does not know the session id the browser offers (the third entry of the
  websocket's ``Sec-WebSocket-Protocol``), so ``WebsocketSessionManager.connect_session``
  silently creates a fresh ``AppSession``: empty ``st.session_state``, no script run, nothing
  sent to the browser.
- The browser assumes its session was resumed. ``App.handleConnectionStateChanged`` requests
  a script run after a reconnect only if there was no session before, a run was in progress,
  a fragment was running, or the page has an auto-rerun fragment (``autoRerunIntervals``). An
  idle page is not rerun: it keeps the old process's elements, including a download button
  whose ``/media/...`` file only the dead process held.

The student's next change then starts the new session's *first* run. Its request carries
every widget state the browser holds and the query string the page last wrote; the page read
the link on a session's first run and imposed it on the widgets, so the change snapped back
and the link stayed as it was. Streamlit cannot give a widget's value before the widget is
drawn in this session (``WStates.__getitem__``: no deserializer yet, "which should only
happen if state is gotten from a reconnecting browser").

Two workarounds, each enough for the common case, together covering the races:

- `rerun_on_reconnect` draws a fragment that does nothing but is rerun every hour
  (``run_every``): its presence makes the browser request a full run as soon as it
  reconnects, the same request a running page makes. The new session's first run then
  happens before any click, with the widgets and the link in agreement, and the page (its
  download files included) is rebuilt in the new process.
- `browser_values` reads the raw widget states the browser sent for widgets this session has
  not drawn yet, so the page can take them over the link (``xattn.ui.state.page_state``): a
  click that arrives before or during that first run still takes.

When they can go (written for Streamlit 1.67; ``requirements.txt`` pins the minor version):
both answer streamlit#8901 ("Reconnect to existing sessions instead of creating new upon
unclean websocket close", open; earlier #1386, #4297). Streamlit 1.67 resumes a session only
in the process that holds it (streamlit#15909 for a session still marked active); a fix that
makes the server tell the browser its session was not resumed, so that the browser sends its
widget states with a first run as on a fresh page, makes both workarounds unnecessary.
``tests/test_streamlit_internals.py`` keeps two canaries on stock Streamlit: a session id the
process does not know gets a fresh session that neither runs nor tells the browser, and a widget's
value the browser sent cannot be read before the widget is drawn. Each fails, naming what to
remove, on a version that changes that behaviour.
"""

from __future__ import annotations

import math
import re
from collections.abc import Container, Mapping

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

__all__ = ["RERUN_EVERY_S", "browser_values", "rerun_on_reconnect"]

# The fragment's own period: it is there to be present, not to run. Under 2**31 ms (a browser
# runs a longer setInterval at once, over and over); once an hour per open page costs nothing.
RERUN_EVERY_S = 3600

# Streamlit's id of a widget with a user key: "$$ID-<hash>-<key>" (elements/lib/utils.py).
_KEYED_ID = re.compile(r"\$\$ID-[0-9a-f]+-(.+)", re.S)


# Workaround for streamlit#8901 (see the module docstring): a page with an auto-rerun fragment
# is rerun by the browser after a reconnect (the rule of streamlit#11890), an idle page is not.
@st.fragment(run_every=RERUN_EVERY_S)
def _present_on_reconnect() -> None:
    """Draws nothing; see the module docstring."""


def rerun_on_reconnect() -> None:
    """Make the browser rerun the page as soon as it reconnects (call it on every full run)."""
    _present_on_reconnect()


def browser_values(params: Mapping, drawn: Container[str]) -> dict[str, list[str]]:
    """The controls the browser shows but this session has not drawn, spelled as a link.

    Non-empty only in the first runs of a session the browser brought from another process
    (see the module docstring): a fresh page sends no widget states, and the widgets this
    session drew have their values in ``st.session_state``.

    Parameters
    ----------
    params : mapping of str to Param
        The page's parameters by key (``xattn.live.link.REGISTRY``). A widget whose key is not
        one, or whose shown value its parameter does not read cleanly (an option shown
        through ``format_func``, a chart's selection), is left out: the link says what it
        shows.
    drawn : container of str
        Keys of the controls this session has drawn already: left out.

    Returns
    -------
    dict of str to list of str
        Key: the widget's value as a link's strings (numbers in ASCII digits, booleans as
        ``true``/``false``, a multiselect's options in order).
    """
    ctx = get_script_run_ctx()
    # Streamlit 1.67's raw widget states (streamlit#8901, module docstring): the canary
    # test_stock_streamlit_keeps_an_undrawn_widgets_browser_value_raw fails if they move.
    try:
        widgets = ctx.session_state._state._new_widget_state   # noqa: SLF001 - see docstring
        states, registered = dict(widgets.states), widgets.widget_metadata
    except AttributeError:   # no script run (a bare import), or a Streamlit that differs
        return {}
    found = {}
    for widget_id, state in states.items():
        match = _KEYED_ID.fullmatch(widget_id)
        if (match is None or widget_id in registered or match[1] in drawn
                or match[1] not in params or not hasattr(state.value, "WhichOneof")):
            continue
        texts = _as_link(state.value)
        if texts is not None and params[match[1]].read(texts)[1] is None:
            found[match[1]] = texts
    return found


def _as_link(proto) -> list[str] | None:
    """A ``WidgetState`` proto's value as a link's strings; None for other kinds (JSON, files,
    triggers)."""
    kind = proto.WhichOneof("value")
    if kind in ("string_value", "int_value", "double_value", "bool_value"):
        return [_spell(getattr(proto, kind))]
    if kind in ("string_array_value", "int_array_value", "double_array_value"):
        return [_spell(v) for v in getattr(proto, kind).data]
    return None


def _spell(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return str(int(value))   # a number box's 7.0 is the link's 7
    return str(value)
