"""Keep a tap that names a fragment the session does not know: run the whole page with it.

A student's prediction is a fragment, so the browser tags a tap with that fragment's id and
asks for a fragment run. In Streamlit 1.67, ``AppSession.request_rerun`` drops a request whose
fragment does not exist (yet) in the session, with every widget value the request carries:

- a backend process dies; the browser reconnects to another process, whose new session has
  not finished its first run (the fragment registers during it), and the tap made meanwhile
  names the fragment the old process knew: the tap is gone, though the browser still shows it
  chosen, and nothing sends it again until the student taps once more;
- a full run that moved the fragment (a new layout) raced the tap.

Streamlit drops the request on purpose (streamlit#9921: rerunning a fragment the last full run
removed made a stale dialog reappear), but the widget values in it are the user's. `install`
turns such a request into a full run with the same widget values: the page then draws where
everything is now, and the tap counts. ``tests/test_push.py`` shows stock Streamlit dropping
the tap, and this keeping it. Written for Streamlit 1.67 (``requirements.txt`` pins the minor
version); it can go when Streamlit keeps the widget states of a fragment request it drops.
"""

from __future__ import annotations

import functools
import logging

__all__ = ["install"]

_LOGGER = logging.getLogger(__name__)
_MARK = "_xattn_keeps_late_fragment_taps"


def install() -> bool:
    """Patch ``AppSession.request_rerun`` once per process; False if Streamlit's shape is not
    the one this was written against (then nothing is changed)."""
    try:
        from streamlit.runtime.app_session import AppSession
    except ImportError:                                    # pragma: no cover - other Streamlit
        return False
    request = getattr(AppSession, "request_rerun", None)
    if request is None or not hasattr(AppSession, "has_fragment"):
        _LOGGER.warning("xattn: Streamlit's AppSession changed; late fragment taps may be lost")
        return False
    if getattr(request, _MARK, False):
        return True

    @functools.wraps(request)
    def request_rerun(self, client_state) -> None:
        fragment = getattr(client_state, "fragment_id", "") if client_state else ""
        if (fragment and not client_state.is_auto_rerun and not self.has_fragment(fragment)
                and len(client_state.widget_states.widgets)):      # a user's input, not a timer
            from streamlit.proto.ClientState_pb2 import ClientState

            whole = ClientState()
            whole.CopyFrom(client_state)
            whole.fragment_id = ""                 # the whole page, with the same values
            whole.is_auto_rerun = False
            client_state = whole
        request(self, client_state)

    setattr(request_rerun, _MARK, True)
    AppSession.request_rerun = request_rerun
    return True
