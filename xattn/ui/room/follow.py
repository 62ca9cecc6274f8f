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

__all__ = ["follow_room", "new_run", "LIVE_FRAGMENTS"]

LIVE_FRAGMENTS = "_xattn_live_fragments"   # session: the count fragments drawn in the last run
_DRAWN = "_xattn_follow_drawn"              # session: the room's version the last full run drew

_JS = """
export default function (component) {
  const { data, setTriggerValue } = component;
  const all = (window.__xattnFollow = window.__xattnFollow || {});
  for (const [url, f] of Object.entries(all)) {
    if (url !== data.url) { f.es.close(); delete all[url]; }
  }
  let f = all[data.url];
  if (!f) {
    f = all[data.url] = { last: null, asked: "" };
    f.connect = () => {
      if (f.es) f.es.close();
      f.es = new EventSource(data.url);
      f.es.addEventListener("pulse", (e) => { f.last = JSON.parse(e.data); f.check(); });
      f.es.addEventListener("gone", () => { f.es.close(); f.ask("moved", "gone"); });
    };
    f.connect();
  }
  // The page's host key reached its cookie (room.py's claim) after the stream opened: open
  // it again, with the cookie, so that it keeps the room taught (a stream without the key
  // follows the room but never keeps it).
  if (!window.__xattnReopen) {
    window.__xattnReopen = true;
    window.addEventListener("xattn-claimed", (e) => {
      for (const [url, g] of Object.entries(window.__xattnFollow || {})) {
        if (url.startsWith("live/" + e.detail + "/")) g.connect();
      }
    });
  }
  clearTimeout(f.closing);
  clearTimeout(f.timer);
  f.drawn = data;
  f.trigger = setTriggerValue;
  f.ask = (name, value) => {
    const said = name + ":" + value;
    // a rerun asked for answers it; asked again only if the page still lags 3 s later
    if (f.asked === said && Date.now() - f.askedAt < 3000) return;
    f.asked = said;
    f.askedAt = Date.now();
    f.trigger(name, value);
  };
  f.check = () => {
    const p = f.last, d = f.drawn;
    if (!p || !d) return;
    // Versions and tallies only grow: a pulse older than what the page drew (its own click
    // drew the move first) asks nothing.
    if (p.version > d.version) return f.ask("moved", p.version);
    if (p.tally > d.tally) {
      d.tally = p.tally;                  // the count's fragments draw it: no full run
      return f.ask("tally", p.tally);
    }
  };
  if (data.ends_at && !data.closed) {        // the round's timer: the page redraws at zero
    const offset = data.now - Date.now() / 1000;
    const wait = Math.max(0, data.ends_at - (Date.now() / 1000 + offset)) * 1000 + 150;
    f.timer = setTimeout(() => f.ask("moved", "timer-" + data.ends_at), wait);
  }
  f.check();
  return () => { f.closing = setTimeout(() => { f.es.close(); delete all[data.url]; }, 3000); };
}
"""

_component = st.components.v2.component("xattn_follow", js=_JS)


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
