"""A lecturer's page (or a student exploring the full page) follows its room: a public
Streamlit component that listens to the room's pulse and asks for its own rerun.

The component (``st.components.v2``, JavaScript in the page, no iframe) keeps one
``EventSource`` on ``/live/CODE/pulse`` (``xattn/server/phone.py``; opened again once the
page's claim has put the host key in its cookie, so that the stream keeps the room taught)
and compares what
arrives with what the page drew (its ``data``: the room's version and tally, and when the
round's timer ends). When the room moved (a step, a reveal, another host device's click, a
timer's end) it sets the trigger ``moved``: the whole page reruns. When only the tally moved
(an answer, a student who joined) it sets ``tally``, whose callback reruns only the
fragments that show the count and the class's answers (``st.rerun`` with their keys, a public
API), never the page. Nothing here touches Streamlit's internals, and no server thread reruns
a session: each page asks for its own run, as a click does.

Where there is no browser (AppTest), nothing runs: such a page is drawn once per run.
"""

from __future__ import annotations

import streamlit as st

from xattn.ui.page_assets import page_asset

__all__ = ["follow_room", "new_run", "LIVE_FRAGMENTS"]

LIVE_FRAGMENTS = "_xattn_live_fragments"   # session: the count fragments drawn in the last run
_DRAWN = "_xattn_follow_drawn"              # session: the room's version the last full run drew


_component = st.components.v2.component("xattn_follow", js=page_asset("follow.js"))


def _moved() -> None:
    """The class moved: the whole page runs, unless the run that ended meanwhile already
    drew that version (the pulse came while it ran): then only this fragment does, which
    tells the component what the page drew."""
    said = (st.session_state.get("xattn_follow") or {}).get("moved")
    drawn = st.session_state.get(_DRAWN)
    if isinstance(said, int) and isinstance(drawn, int) and said <= drawn:
        return
    st.rerun(scope="app")


def _tally_moved() -> None:
    """Only the count and the class's answers redraw: the fragments the last full run drew
    (`new_run` notes them afresh each full run; none drawn, as in a run cut short: only
    this component's own fragment runs, which draws nothing)."""
    keys = st.session_state.get(LIVE_FRAGMENTS) or []
    if keys:
        st.rerun(list(keys))


def new_run() -> None:
    """A full run starts: the count's fragments it draws are noted afresh (`_read` in
    ``xattn.ui.room.panels``), so a later tally never names a fragment it did not draw."""
    st.session_state[LIVE_FRAGMENTS] = []


def follow_room(code: str, version: int, tally: int, ends_at: float | None,
                closed: bool, now: float) -> None:
    """Keep this page in step with room ``code`` as drawn (its ``version`` and ``tally``, and
    the round's timer: ``ends_at``, already ``closed``, on the store's clock ``now``)."""
    st.session_state[_DRAWN] = version
    _follow(code, version, tally, ends_at, closed, now)


@st.fragment(key="class_follow")
def _follow(code: str, version: int, tally: int, ends_at: float | None, closed: bool,
            now: float) -> None:
    _component(key="xattn_follow", height=0,
               data={"url": f"live/{code}/pulse", "version": version, "tally": tally,
                     "ends_at": ends_at, "closed": closed, "now": now},
               on_moved_change=_moved, on_tally_change=_tally_moved)
