"""Keep the end of every run: a fragment's rerun waits for the run before it to be delivered.

A page in a class polls the room with a fragment (``run_every``). In Streamlit 1.67, when that
poll arrives just after the session's script runner finished a full run, but before the
server's event loop has handled that runner's last events, the page loses the end of the run:

- ``AppSession.request_rerun`` asks the runner to rerun; a finished runner refuses
  (its request queue is ``STOP``), so the session makes a new runner at once;
- the old runner's remaining events (its last elements, its fragments' ``auto_rerun``
  messages and ``script_finished``) were posted to the event loop before it stopped, and the
  loop handles them only after that, when ``_handle_scriptrunner_event_on_event_loop`` drops
  every event whose sender is not the current runner.

The browser then never hears that the full run ended: the page is left half drawn, without its
fragment timers, and no longer follows the class until the student taps something. The window
is as long as the event loop lags behind the script threads, so it opens under load: in
``benchmarks/bench_room.py`` (200 students, 2 processes, a busy 2-core machine) 66 and 95 pages
froze in one class. Streamlit knows the shape of it (the comment above ``has_fragment`` in
``request_rerun``, streamlit#9921) but closes only the case of a fragment that no longer exists.

`install` makes the session create the new runner one event-loop turn later, behind the old
runner's events (the loop handles its callbacks in order, and the old runner posted its last
events before it could refuse a rerun). The old run's end is then delivered while the old
runner is still current, and the new run starts right after: the poll is late by one turn of
the loop, never lost. If another runner took over meanwhile, the rerun is handed to it.
``tests/test_run_ends.py`` reproduces the race on a real ``AppSession`` and fails without this.

When it can go: no upstream issue names this race (a search of Streamlit's issues found none);
the nearest is streamlit#9921, which Streamlit's ``request_rerun`` cites for the fragment that
no longer exists. The patch can be removed once Streamlit delivers a stopped runner's last
events (or holds a new runner behind them); ``test_without_it_streamlit_drops_the_end_of_the_run``
runs stock Streamlit and fails on the version that does. Written for Streamlit 1.67
(``requirements.txt`` pins the minor version).
"""

from __future__ import annotations

import functools
import logging

_LOGGER = logging.getLogger(__name__)
_MARK = "_xattn_waits_for_run_ends"


def install() -> bool:
    """Patch ``AppSession._create_scriptrunner`` once per process; False if Streamlit's shape
    is not the one this was written against (then nothing is changed)."""
    try:
        from streamlit.runtime.app_session import AppSession, AppSessionState
    except ImportError:                                    # pragma: no cover - other Streamlit
        _LOGGER.warning("xattn: Streamlit has no AppSession; run ends are not protected")
        return False
    create = getattr(AppSession, "_create_scriptrunner", None)
    if create is None or not hasattr(AppSession, "_call_soon_on_event_loop"):
        _LOGGER.warning("xattn: Streamlit's AppSession changed; run ends are not protected")
        return False
    if getattr(create, _MARK, False):
        return True

    # The patch: remove with this module once stock Streamlit keeps the end of a raced run
    # (see the module docstring; streamlit#9921 is the neighbouring case upstream fixed).
    @functools.wraps(create)
    def create_after_run_ends(self, rerun_data) -> None:
        stopped = getattr(self, "_scriptrunner", None)
        if stopped is None:                # no runner to replace: nothing can be lost
            create(self, rerun_data)
            return

        def later() -> None:
            if self._state == AppSessionState.SHUTDOWN_REQUESTED:
                return
            current = self._scriptrunner
            if current is not None and current is not stopped and current.request_rerun(
                    rerun_data):
                return                     # another runner started meanwhile: it reruns
            create(self, rerun_data)

        self._call_soon_on_event_loop(later)

    setattr(create_after_run_ends, _MARK, True)
    AppSession._create_scriptrunner = create_after_run_ends
    return True
