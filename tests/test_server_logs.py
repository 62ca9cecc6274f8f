"""xattn/ui/server_logs.py: the filters on the server's loggers (a real run: test_hall_logs)."""

from __future__ import annotations

import logging

from xattn.ui import server_logs
from xattn.ui.server_logs import SESSION_LOGGER, SessionIdFilter

SID = "3f1c90c1-1a7d-425a-8ddd-85abf2048403"


def record(msg: str, *args) -> logging.LogRecord:
    return logging.LogRecord(SESSION_LOGGER, logging.WARNING, __file__, 1, msg, args, None)


def test_only_session_ids_are_shortened():
    rec = record("%s %s %s %s", SID, SID.upper(), "not-a-session", 7)
    assert SessionIdFilter().filter(rec) is True          # shortened, never dropped
    assert rec.getMessage() == f"3f1c90c1… {SID.upper()} not-a-session 7"
    assert SID not in rec.getMessage()


def test_streamlits_reconnect_warning_names_no_session_whole(caplog):
    server_logs.install()
    server_logs.install()                                  # once per process, however called
    logger = logging.getLogger(SESSION_LOGGER)
    assert sum(isinstance(f, SessionIdFilter) for f in logger.filters) == 1
    with caplog.at_level(logging.WARNING, logger=SESSION_LOGGER):
        logger.warning("Session with id %s is already connected! Reconnecting to existing "
                       "session.", SID)
    assert caplog.messages == ["Session with id 3f1c90c1… is already connected! Reconnecting "
                               "to existing session."]
