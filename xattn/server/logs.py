"""What the server's own log says about its clients: never a whole session id, and no
traceback when a client leaves.

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

A client that closes its connection while the server reads its request's body (a tab closed
during an upload of a 20 MB attention file; a phone that leaves the Wi-Fi) makes Starlette
raise ``ClientDisconnect`` in Streamlit's upload handler, and uvicorn logs it as "Exception in
ASGI application" with a 40-line traceback, although nothing went wrong: the request was
dropped, and Starlette's spooled parts go with it. The second filter turns exactly that record
(uvicorn's logger, Starlette's ``ClientDisconnect`` itself) into one line, a warning: under
Streamlit's logging setup ``uvicorn.error`` has no handler of its own, and Python's last-resort
handler prints warnings and errors only, so a line at INFO would vanish. Websocket
closes (clean, reset, or a closed tab mid-run) log nothing in Streamlit 1.67 with uvicorn 0.54
and Starlette 1.10: Streamlit catches ``WebSocketDisconnect`` and uvicorn's
``ClientDisconnected``.

Filters change records only; nothing is patched. The lecture-hall test
(``tests/test_hall_logs.py``) reconnects a session by its id, abandons an upload half way and
closes sessions in each of those ways, then checks that no log file of the run holds the id or
a traceback, and that the upload's line is there; were Starlette to raise another exception
there, that test fails on the traceback.
"""

from __future__ import annotations

import logging
import re

__all__ = ["install", "SessionIdFilter", "ClientLeftFilter", "SESSION_LOGGER", "ASGI_LOGGER",
           "CLIENT_LEFT"]

_LOGGER = logging.getLogger(__name__)
SESSION_LOGGER = "streamlit.runtime.websocket_session_manager"
ASGI_LOGGER = "uvicorn.error"     # where uvicorn logs "Exception in ASGI application"
CLIENT_LEFT = ("A client closed its connection while sending a request (Starlette's "
               "ClientDisconnect): the request was dropped.")
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


class ClientLeftFilter(logging.Filter):
    """Turns a record whose exception is ``disconnect`` (exactly that class) into one line, a
    warning, without the traceback; leaves every other record as it is."""

    def __init__(self, disconnect: type[BaseException]) -> None:
        super().__init__()
        self.disconnect = disconnect

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and type(record.exc_info[1]) is self.disconnect:
            record.msg, record.args = CLIENT_LEFT, ()
            record.exc_info, record.exc_text, record.stack_info = None, None, None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def _add_once(logger: logging.Logger, made: logging.Filter) -> None:
    if not any(type(f) is type(made) for f in logger.filters):
        logger.addFilter(made)


def install() -> None:
    """Add the filters to their loggers, once per process (later calls change nothing)."""
    _add_once(logging.getLogger(SESSION_LOGGER), SessionIdFilter())
    try:
        from starlette.requests import ClientDisconnect
    except ImportError:                                  # pragma: no cover - another Starlette
        _LOGGER.warning("xattn: Starlette has no ClientDisconnect; a client that leaves during "
                        "an upload will log a traceback")
        return
    _add_once(logging.getLogger(ASGI_LOGGER), ClientLeftFilter(ClientDisconnect))
