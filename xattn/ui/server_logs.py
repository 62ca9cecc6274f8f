"""What the server's own log says about its clients: never a whole session id.

A Streamlit session id is a bearer credential: a browser that reconnects with an id takes that
session over, the one still connected included (Streamlit 1.67's
``WebsocketSessionManager.connect_session`` disconnects it and hands its state to the newcomer),
and a lecturer's session holds the room's host key. Streamlit itself shortens ids to 8
characters where it logs a rejected backend request, but not in the three warnings of its
session manager about reconnects, which a phone that changes networks in a class triggers
("Session with id ... is already connected! Reconnecting to existing session."). `install`
adds a filter to that logger which shortens every session id in a record's arguments the same
way. (HAProxy's log, deploy/serve.sh, leaves out the query strings that carry the host key and
the session id in an upload's URL.)

Filters change records only; nothing is patched. The lecture-hall test
(``tests/test_hall_logs.py``) reconnects a session by its id and checks that the id appears in
no log file of the run.
"""

from __future__ import annotations

import logging
import re

__all__ = ["install", "SessionIdFilter", "SESSION_LOGGER"]

SESSION_LOGGER = "streamlit.runtime.websocket_session_manager"
_SESSION_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _short(value):
    """A session id (a UUID, as Streamlit makes them) cut to its first 8 characters; anything
    else as it is."""
    if isinstance(value, str) and _SESSION_ID.fullmatch(value):
        return value[:8] + "…"
    return value


class SessionIdFilter(logging.Filter):
    """Shortens the session ids among a record's arguments to their first 8 characters.

    Examples
    --------
    >>> record = logging.LogRecord(SESSION_LOGGER, logging.WARNING, "", 0,
    ...     "Session with id %s is already connected!",
    ...     ("3f1c90c1-1a7d-425a-8ddd-85abf2048403",), None)
    >>> SessionIdFilter().filter(record), record.getMessage()
    (True, 'Session with id 3f1c90c1… is already connected!')
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(_short(arg) for arg in record.args)
        return True


def _add_once(logger: logging.Logger, kind: type[logging.Filter]) -> None:
    if not any(isinstance(f, kind) for f in logger.filters):
        logger.addFilter(kind())


def install() -> None:
    """Add the filters to their loggers, once per process (later calls change nothing)."""
    _add_once(logging.getLogger(SESSION_LOGGER), SessionIdFilter)
