"""What a request may send: every route's body bounded before anything reads it, and JSON read
with its depth and numbers checked.

Before, ``POST /live/CODE/join`` and ``/host`` read the whole body before any check and with
no cookie: one 1 GB body took a process to 2.2 GB (1,041 MB held after), and deep JSON,
``1e999`` or ``NaN`` gave HTTP 500. Now:

- `Bodies` (ASGI middleware, the first of ``xattn.server.middleware``) gives every request
  the cap of its route (`cap_of`): a declared ``Content-Length`` over it gets HTTP 413 at
  once, before Streamlit or a route reads a byte; a body sent without one (``Transfer-Encoding:
  chunked``) is counted as it arrives and cut with 413 past the cap. A request of a method
  that carries no body (GET, HEAD, OPTIONS, DELETE) that declares one gets 413 too. Uvicorn
  reads a body only as fast as the app asks (about 64 kB ahead), so a refused body is never
  held;
- `read_json` reads a route's JSON within its cap and `parse_json` checks it before
  ``json.loads`` builds anything: at most `MAX_DEPTH` arrays and objects inside each other,
  no ``NaN`` or ``Infinity``, no number that overflows a float (``1e999``), no integer of
  more than `MAX_DIGITS` digits. A refusal is `BadBody` (a ValueError) with its HTTP status
  (400, or 413) and one line saying what was expected and what was found.

The websocket (``/_stcore/stream``) is bounded by Streamlit's ``server.maxMessageSize``
(``.streamlit/config.toml``: uvicorn refuses a larger message by its frame header).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import NamedTuple

from xattn.classroom.said import Said, said

__all__ = ["Bodies", "BadBody", "Cap", "cap_of", "said_of", "parse_json", "read_json",
           "ROUTE_BYTES", "UPLOAD_OVERHEAD", "OTHER_BYTES", "MAX_DEPTH", "MAX_DIGITS"]

ROUTE_BYTES = {"join": 2_048,      # {"challenge": ~90 characters, "nonce": ~40}
               "answer": 4_096,    # a links answer is ~200
               "host": 1_024,      # {"key": at most 100 characters}
               "end": 1_024}       # nothing is read
UPLOAD_OVERHEAD = 1 << 20          # multipart framing over the file (Streamlit allows the same)
OTHER_BYTES = 65_536               # a body on a route this table does not name
MAX_DEPTH = 8                      # arrays and objects inside each other (an answer: 3)
MAX_DIGITS = 20                    # digits of a JSON integer (a step, a round: 1 or 2)
_NO_BODY = frozenset({"GET", "HEAD", "OPTIONS", "DELETE"})
_ROUTE = re.compile(r"(?:^|/)live/[^/]+/(join|answer|host|end)$")


class Cap(NamedTuple):
    """The most bytes of body a request may send, and what it is sent to (for the refusal)."""

    limit: int
    what: str


class BadBody(ValueError):
    """A body a route does not read: ``status`` 413 (too large) or 400 (not the JSON it
    takes), ``str()`` one line saying what was expected and what was found."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def said_of(err: BadBody) -> Said:
    """What a phone is told of a body refused (`xattn.classroom.said`): too large (413), or
    not a request its page sends."""
    return said("why.too.big") if err.status == 413 else said("why.bad.request")


def cap_of(scope, upload_bytes: Callable[[], int]) -> Cap:
    """The body cap of an HTTP request (its method and path): the phones' and hosts' posts a
    few kB (`ROUTE_BYTES`), an upload the largest file the page accepts plus its framing,
    none on a method that carries no body, `OTHER_BYTES` elsewhere. ``upload_bytes()``: the
    largest file the page takes (Streamlit's ``server.maxUploadSize`` in bytes: ``app.py``
    reads it; this package never imports streamlit)."""
    method, path = scope.get("method", "GET"), scope.get("path", "")
    if method in _NO_BODY:
        return Cap(0, f"a {method} request")
    found = _ROUTE.search(path)
    if found and method == "POST":
        return Cap(ROUTE_BYTES[found.group(1)], f"POST /live/CODE/{found.group(1)}")
    if method == "PUT" and "/_stcore/upload_file/" in path:
        return Cap(upload_bytes() + UPLOAD_OVERHEAD, "an upload")
    return Cap(OTHER_BYTES, f"{method} {path[:60]}")


class _TooLarge(Exception):
    """Raised from ``receive`` past the cap (not a RuntimeError nor a ClientDisconnect:
    nothing between here and the route catches it)."""


def _declared(scope) -> tuple[int | None, bool]:
    """The request's Content-Length (None: not said, -1: not a number) and whether its body
    is chunked."""
    length, chunked = None, False
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            text = value.decode("latin-1").strip()
            length = int(text) if text.isdigit() and len(text) < 19 else -1
        elif name == b"transfer-encoding":
            chunked = True
    return length, chunked


class Bodies:
    """ASGI middleware: no request body past its route's cap (`cap_of`) reaches the app."""

    def __init__(self, app, upload_bytes: Callable[[], int]):
        self.app = app
        self.upload_bytes = upload_bytes

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        cap = cap_of(scope, self.upload_bytes)
        length, chunked = _declared(scope)
        if length == -1:
            await _plain(send, 400, "The request's Content-Length is not a whole number of "
                                    "bytes.")
            return
        if (length or 0) > cap.limit or (chunked and cap.limit == 0):
            size = f"{length:,} bytes" if length is not None else "a chunked body"
            await _plain(send, 413, _too_large(cap, size))
            return
        received, started = 0, False

        async def counted():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > cap.limit:
                    raise _TooLarge
            return message

        async def sending(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, sending)
        except _TooLarge:
            if not started:
                await _plain(send, 413, _too_large(cap, f"more than {cap.limit:,} bytes"))


def _too_large(cap: Cap, found: str) -> str:
    if cap.limit == 0:
        return f"{cap.what[0].upper()}{cap.what[1:]} carries no body; this one declared {found}."
    return (f"{cap.what[0].upper()}{cap.what[1:]} takes a body of at most {cap.limit:,} "
            f"bytes; this one sent {found}.")


async def _plain(send, status: int, text: str) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store"),
        (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


async def read_json(request, limit: int):
    """The JSON of ``request``'s body, read to at most ``limit`` bytes (`parse_json`);
    `BadBody` (413 past the limit, 400 otherwise)."""
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BadBody(f"expected a body of at most {limit:,} bytes, found more", 413)
    return parse_json(bytes(body))


def parse_json(body: bytes):
    """``body`` as JSON, checked before ``json.loads`` builds it; `BadBody` (400) otherwise.

    Examples
    --------
    >>> parse_json(b'{"step": 1, "value": [[0, 1]]}')
    {'step': 1, 'value': [[0, 1]]}
    >>> parse_json(b'{"value": 1e999}')
    Traceback (most recent call last):
    xattn.server.bodies.BadBody: expected JSON numbers a float holds, found 1e999
    >>> parse_json(b'[' * 100)
    Traceback (most recent call last):
    xattn.server.bodies.BadBody: expected JSON nested at most 8 deep, found 9 or more
    """
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadBody(f"expected UTF-8 JSON, found byte {err.start} that is not") from None
    deepest = _depth(text)
    if deepest > MAX_DEPTH:
        raise BadBody(f"expected JSON nested at most {MAX_DEPTH} deep, found "
                      f"{MAX_DEPTH + 1} or more")
    try:
        return json.loads(text, parse_constant=_constant, parse_float=_float,
                          parse_int=_int)
    except BadBody:
        raise
    except ValueError as err:
        raise BadBody(f"expected JSON, found {str(err)[:80]}") from None


def _depth(text: str) -> int:
    """The deepest nesting of arrays and objects outside strings, counted up to one past
    `MAX_DEPTH` (one pass; no recursion)."""
    depth = deepest = 0
    inside = escaped = False
    for c in text:
        if inside:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                inside = False
        elif c == '"':
            inside = True
        elif c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return depth
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
    return deepest


def _constant(name: str):
    raise BadBody(f"expected JSON numbers, found {name}")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadBody(f"expected JSON numbers a float holds, found {text[:40]}")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise BadBody(f"expected integers of at most {MAX_DIGITS} digits, found one of "
                      f"{len(text.lstrip('-')):,}")
    return int(text)
