"""xattn/server/logs.py: the filters on the server's loggers (a real run: test_hall_logs)."""

from __future__ import annotations

import logging
import sys
from unittest import mock

import streamlit.runtime
from starlette.requests import ClientDisconnect
from streamlit.runtime.memory_session_storage import MemorySessionStorage
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.runtime.script_data import ScriptData
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

from devtools.protocol import run_async
from xattn.server import logs as server_logs
from xattn.server.logs import (
    ASGI_LOGGER,
    CLIENT_LEFT,
    SESSION_LOGGER,
    ClientLeftFilter,
    SessionIdFilter,
)

SID = "3f1c90c1-1a7d-425a-8ddd-85abf2048403"


def record(msg: str, *args, exc: BaseException | None = None) -> logging.LogRecord:
    info = None
    if exc is not None:
        try:
            raise exc
        except BaseException:
            info = sys.exc_info()
    return logging.LogRecord(SESSION_LOGGER, logging.ERROR, __file__, 1, msg, args, info)


def test_only_session_ids_are_shortened():
    rec = record("%s %s %s %s", SID, SID.upper(), "not-a-session", 7)
    assert SessionIdFilter().filter(rec) is True          # shortened, never dropped
    assert rec.getMessage() == f"3f1c90c1… {SID.upper()} not-a-session 7"
    assert SID not in rec.getMessage()


class Kept(logging.Handler):
    def __init__(self):
        super().__init__()
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def test_streamlits_reconnect_warning_names_no_session_whole():
    server_logs.install()
    server_logs.install()                                  # once per process, however called
    logger = logging.getLogger(SESSION_LOGGER)
    assert sum(isinstance(f, SessionIdFilter) for f in logger.filters) == 1
    kept = Kept()             # on the logger itself: Streamlit's loggers do not propagate
    logger.addHandler(kept)
    try:
        logger.warning("Session with id %s is already connected! Reconnecting to existing "
                       "session.", SID)
    finally:
        logger.removeHandler(kept)
    assert kept.messages == ["Session with id 3f1c90c1… is already connected! Reconnecting "
                             "to existing session."]


def test_streamlit_warns_of_a_reconnect_on_the_logger_the_filter_is_on(tmp_path):
    """``SESSION_LOGGER`` names the logger of Streamlit 1.67's private session manager module:
    a real one's warning about a reconnect goes there, shortened. If this fails, Streamlit
    moved that module (or its warning) and whole session ids reach the log again."""
    script = tmp_path / "page.py"
    script.write_text("import streamlit as st\n")
    server_logs.install()
    logger = logging.getLogger(SESSION_LOGGER)
    kept = Kept()

    async def reconnect() -> str:
        manager = WebsocketSessionManager(MemorySessionStorage(), MemoryUploadedFileManager("/u"),
                                          ScriptCache(), None)
        first = manager.connect_session(mock.MagicMock(), ScriptData(str(script)), {})
        again = manager.connect_session(mock.MagicMock(), ScriptData(str(script)), {},
                                        existing_session_id=first)
        manager.get_active_session_info(again).session.shutdown()
        return first

    logger.addHandler(kept)
    try:
        with mock.patch.object(streamlit.runtime, "get_instance", lambda: mock.MagicMock()):
            sid = run_async(reconnect())
    finally:
        logger.removeHandler(kept)
    assert kept.messages == [f"Session with id {sid[:8]}… is already connected! Reconnecting "
                             "to existing session."]


class Cousin(ClientDisconnect):
    """A subclass: not the exception the filter was written for."""


def test_a_client_that_left_is_one_line_without_traceback():
    rec = record("Exception in ASGI application\n", exc=ClientDisconnect())
    assert ClientLeftFilter(ClientDisconnect).filter(rec) is True
    assert (rec.getMessage(), rec.levelno, rec.levelname) == (CLIENT_LEFT, logging.WARNING,
                                                              "WARNING")
    assert rec.exc_info is None and "Traceback" not in logging.Formatter().format(rec)


def test_other_exceptions_keep_their_traceback():
    for exc in (ValueError("x"), Cousin(), ConnectionResetError()):
        rec = record("Exception in ASGI application\n", exc=exc)
        assert ClientLeftFilter(ClientDisconnect).filter(rec) is True
        assert rec.levelno == logging.ERROR and rec.exc_info[1] is exc
        assert "Traceback" in logging.Formatter().format(rec)


def test_uvicorns_logger_gets_the_filter_once():
    server_logs.install()
    server_logs.install()
    filters = logging.getLogger(ASGI_LOGGER).filters
    assert [type(f) for f in filters].count(ClientLeftFilter) == 1
