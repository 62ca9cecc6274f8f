"""A download made on click belongs to the session that clicked, until its page's next run.

``st.download_button`` with a callable (a deferred download) works in two steps: the browser
asks the session's process to make the file (a ``backend_operation_request``), gets a
``/media/<id>`` URL back and fetches it. Streamlit 1.67's ``MediaFileManager.execute_deferred``
stores the made file without tying it to any session, and every script run of any session
ends with ``remove_orphaned_files``, which marks an unreferenced download on one pass and
deletes it on the next: when two other runs end between the two steps, the fetch is a 404
(``benchmarks/download_race.py``; in a busy class up to 42 % of downloads failed). So the
page sent every file up to 8,000 weights with the page instead, as bytes the session holds for
as long as it lives: about 0.27 MB per session of a setting of its own, the largest part of a
session's memory (``benchmarks/bench_sessions.py``).

`install` wraps ``execute_deferred`` so that the file it made is referenced by the session
that drew the button, under the button's coordinates, as a file sent with the page is: it
outlives other sessions' runs, and goes after that session's next full run (Streamlit clears a
session's references when a full run starts) or with the session. The page then sends only
small files with the page (``xattn.ui.views.heads.SMALL_DOWNLOAD``) and makes the others on click.

Private names, pinned with Streamlit's minor version in requirements.txt and checked on a real
``MediaFileManager`` by ``tests/test_streamlit_internals.py`` (which also checks that stock
Streamlit still loses the file): ``MediaFileManager._lock``, ``_deferred_callables`` (each
entry's ``session_id`` and ``coordinates``), ``_file_metadata`` and
``_files_by_session_and_coord``; the made file's id is the last part of its URL, before the
extension (``MemoryMediaFileStorage.get_url``).
"""

from __future__ import annotations

import functools
import logging

__all__ = ["install", "MADE_ON_CLICK"]

_LOGGER = logging.getLogger(__name__)
_MARK = "_xattn_keeps_made_files"
MADE_ON_CLICK = "/made-on-click"     # appended to the button's coordinates


def _file_id(url: str) -> str:
    return url.rsplit("/", 1)[-1].split(".", 1)[0]


def install() -> bool:
    """Patch ``MediaFileManager.execute_deferred`` once per process; False if Streamlit's shape
    is not the one this was written against (then nothing is changed)."""
    try:
        from streamlit.runtime.media_file_manager import MediaFileManager
    except ImportError:                                    # pragma: no cover - other Streamlit
        _LOGGER.warning("xattn: Streamlit has no MediaFileManager; downloads made on click "
                        "may be lost")
        return False
    execute = getattr(MediaFileManager, "execute_deferred", None)
    if execute is None:
        _LOGGER.warning("xattn: Streamlit's MediaFileManager changed; downloads made on click "
                        "may be lost")
        return False
    if getattr(execute, _MARK, False):
        return True

    @functools.wraps(execute)
    def execute_and_keep(self, file_id: str) -> str:
        with self._lock:
            entry = self._deferred_callables.get(file_id)
        url = execute(self, file_id)
        if entry is not None:
            made = _file_id(url)
            with self._lock:
                # a session that has ended since has no references left: nothing to keep
                refs = self._files_by_session_and_coord.get(entry["session_id"])
                if refs is not None and made in self._file_metadata:
                    refs[entry["coordinates"] + MADE_ON_CLICK] = made
        return url

    setattr(execute_and_keep, _MARK, True)
    MediaFileManager.execute_deferred = execute_and_keep
    return True
