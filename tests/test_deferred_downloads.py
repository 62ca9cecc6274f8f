"""A download made on click stays until the clicking session's next full run
(``xattn/ui/deferred_downloads.py``), on a real ``MediaFileManager``: the canary of the private
names the patch uses, and of the Streamlit behaviour it exists for (stock, two other runs'
``remove_orphaned_files`` delete the file before the browser fetches it); then the same race on
a real server (``benchmarks/download_race.py``).
"""

from __future__ import annotations

from unittest import mock

import pytest
from streamlit.runtime import media_file_manager
from streamlit.runtime.media_file_manager import MediaFileManager
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from benchmarks.download_race import BIG, race
from devtools.browser import ARTIFACTS, StreamlitServer
from devtools.protocol import run_async
from xattn.ui import deferred_downloads

SESSION = "session-a"


@pytest.fixture
def stock():
    """MediaFileManager as Streamlit ships it, for the length of a test."""
    patched = MediaFileManager.execute_deferred
    original = getattr(patched, "__wrapped__", patched)
    with mock.patch.object(MediaFileManager, "execute_deferred", original):
        yield


def clicked(manager: MediaFileManager) -> str:
    """Session A draws a deferred download and clicks it: the made file's id."""
    with mock.patch.object(media_file_manager, "_get_session_id", return_value=SESSION):
        placeholder = manager.add_deferred(lambda: "a,b\n1,2\n", "text/csv", "1.2.3", "w.csv")
    url = manager.execute_deferred(placeholder)
    return deferred_downloads._file_id(url)


def other_runs_end(manager: MediaFileManager, n: int = 2) -> None:
    for _ in range(n):           # each script run of any session ends with this
        manager.remove_orphaned_files()


def test_canary_stock_streamlit_loses_a_file_made_on_click(stock):
    manager = MediaFileManager(MemoryMediaFileStorage("/media"))
    made = clicked(manager)
    assert manager.read_file(made) is not None
    other_runs_end(manager)
    assert manager.read_file(made) is None         # the browser's fetch would be a 404


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
    with mock.patch.object(media_file_manager, "_get_session_id", return_value=SESSION):
        placeholder = manager.add_deferred(lambda: b"x" * 10, "text/csv", "1.2.3", "w.csv")
    manager.clear_session_refs(SESSION)              # the session ended meanwhile
    made = deferred_downloads._file_id(manager.execute_deferred(placeholder))
    other_runs_end(manager)
    assert manager.read_file(made) is None
    assert SESSION not in manager._files_by_session_and_coord


def test_a_large_csv_made_on_click_survives_other_students_clicks():
    """On a real server: a setting above SMALL_DOWNLOAD gets its CSV made on click, and the
    browser's fetch after two runs of another session still finds it."""
    with StreamlitServer(log=ARTIFACTS / "deferred-downloads-server.log") as server:
        results = dict(run_async(race(server.url, BIG)))
    assert results == {"made on click (deferred): fetched at once": 200,
                       "made on click (deferred): fetched after two runs of another session": 200}
