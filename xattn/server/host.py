"""The lecturer's host key never shows: it lives in an HttpOnly cookie, not in the address bar.

Lecturers project their browser, so whatever the address bar or the page shows, a student can
photograph. The host key is a secret to open the room once:

- a host link (``/?room=CODE&host=KEY…``, the one a lecturer keeps for a second device) is
  traded by `trade_host_link` for the cookie ``xattn_host_CODE`` (HttpOnly: no script and no
  screen shows it; SameSite=Lax, or in a frame over HTTPS ``SameSite=None; Secure;
  Partitioned``: ``cookies.py``; the class's lifetime, days for a homework), and the browser
  is sent on to the same link without ``host`` (303). A key the room refuses is not traded:
  the page says so;
- a room made on the page (``?class=new``) or a key made anew (*Sign out every other
  device*) is handed to the browser by the page itself (``xattn/ui/room/room.py``'s claim, a
  component that POSTs it here, ``POST /live/CODE/host``, answered with the cookie);
- ``/?room=CODE`` with a cookie whose key drives that room is the lecturer's Streamlit page
  (`is_host`); without one, or with a key made old by a new one, it is a student's phone
  page (and the old cookie is dropped);
- ``POST /live/CODE/end`` with that cookie, from the class's own origin, ends the class
  (`end`): nothing of it is kept, and every page of the room is told.

Every response of the server says ``Referrer-Policy: no-referrer`` (`no_referrer`).
"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from xattn.classroom import ClassroomError, HostRefused, RoomNotFound, normalize_code
from xattn.live import homework
from xattn.live.cookies import COOKIE_AGE, HOST_COOKIE
from xattn.server import bodies, live
from xattn.server.cookies import set_cookie
from xattn.server.join import cookie_age

__all__ = ["cookie_name", "is_host", "trade_host_link", "claim", "end", "no_referrer",
           "drop_cookie", "dropping", "COOKIE_AGE", "MAX_KEY"]

MAX_KEY = 100                  # characters of a host key (xattn.live.link.HOST's bound)


def cookie_name(code: str) -> str:
    """The cookie that holds room ``code``'s host key (the code is A-Z and 2-9)."""
    return HOST_COOKIE + code


def _set_cookie(response: Response, scope, code: str, key: str, age: int = COOKIE_AGE) -> None:
    response.headers.append("set-cookie", set_cookie(scope, cookie_name(code), key, age))


async def _age(hub, code: str) -> int:
    """Seconds room ``code``'s host cookie lives (a homework's: days, `join.cookie_age`)."""
    try:
        days = await asyncio.to_thread(homework.is_homework, hub.store, code)
    except ClassroomError:
        days = False
    return cookie_age(hub.store.limits, days)


def drop_cookie(response: Response, scope, code: str) -> None:
    response.headers.append("set-cookie", set_cookie(scope, cookie_name(code), "", 0))


def dropping(send, scope, code: str):
    """``send`` with room ``code``'s host cookie dropped by the response it starts (a key
    a new one replaced: this browser is a student's now)."""
    async def sending(message):
        if message["type"] == "http.response.start":
            header = (b"set-cookie", set_cookie(scope, cookie_name(code), "", 0).encode())
            message = {**message, "headers": [*message.get("headers", []), header]}
        await send(message)
    return sending


def _plain_key(key: str) -> bool:
    """A key as the store makes them (URL-safe base64): nothing a cookie header could split."""
    return 0 < len(key) <= MAX_KEY and all(c.isalnum() or c in "-_" for c in key)


async def _drives(hub, code: str, key: str) -> bool:
    if not _plain_key(key):
        return False
    try:
        await asyncio.to_thread(hub.store.check_host, code, key)
        return True
    except ClassroomError:
        return False


async def is_host(hub, code: str, cookies: dict[str, str]) -> bool | None:
    """Whether the request's cookie holds a key that drives room ``code``: True, False (a
    cookie whose key is refused: drop it), or None (no such cookie)."""
    key = cookies.get(cookie_name(code))
    if not key:
        return None
    return await _drives(hub, code, key)


async def trade_host_link(hub, scope) -> Response | None:
    """For a host link whose key drives its room: a 303 to the same link without ``host``,
    with the key's cookie. None for any other request (the page then says what is wrong)."""
    pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
    given = dict(pairs)
    try:
        code = normalize_code(given.get("room", ""))
    except (RoomNotFound, TypeError):
        return None
    key = given.get("host", "")
    if not await _drives(hub, code, key):
        return None
    rest = [(k, code if k == "room" else v) for k, v in pairs if k != "host"]
    response = Response(status_code=303, headers={
        "location": "./?" + urlencode(rest), "cache-control": "no-store",
        "referrer-policy": "no-referrer"})
    _set_cookie(response, scope, code, key, await _age(hub, code))
    return response


def _own_room(request: Request, refused: str) -> str | Response:
    """The room's code of a request sent from the class's own origin, else the refusal
    (``refused``: why a request from elsewhere is refused)."""
    try:
        code = normalize_code(request.path_params["code"])
    except (RoomNotFound, TypeError):
        return _no("That is not a class code.", 404)
    origin = request.headers.get("origin")
    if not origin or origin.split("://")[-1] != request.headers.get("host", ""):
        return _no(refused, 403)
    return code


async def claim(request: Request) -> Response:
    """``POST /live/CODE/host``, ``{"key": KEY}`` from the lecturer's own page: the key's
    cookie if it drives the room (204), else 403 with why."""
    code = _own_room(request, "A host key comes from the class's own page.")
    if isinstance(code, Response):
        return code
    try:
        key = (await bodies.read_json(request, bodies.ROUTE_BYTES["host"]))["key"]
        if not isinstance(key, str):
            raise TypeError
    except bodies.BadBody as err:
        return _no(f'A host key is sent as {{"key": "..."}}: {err}.', err.status)
    except (TypeError, KeyError):
        return _no('A host key is sent as {"key": "..."}.', 400)
    try:
        hub = live.hub()
    except ClassroomError as err:
        return _no(f"The class store cannot be opened ({err}).", 503)
    if not await _drives(hub, code, key):
        return _no("This key does not drive that class.", 403)
    response = Response(status_code=204, headers={"cache-control": "no-store"})
    _set_cookie(response, request.scope, code, key, await _age(hub, code))
    return response


async def end(request: Request) -> Response:
    """``POST /live/CODE/end`` from a page that drives the room (its host cookie) on the
    class's own origin: the class ends now (`ClassStore.end_room`), 204 with the cookie
    dropped; 403 with why otherwise."""
    code = _own_room(request, "A class is ended from its own page.")
    if isinstance(code, Response):
        return code
    key = request.cookies.get(cookie_name(code), "")
    try:
        hub = live.hub()
    except ClassroomError as err:
        return _no(f"The class store cannot be opened ({err}).", 503)
    if not _plain_key(key):
        return _no("Only a page that drives this class ends it.", 403)
    try:
        await asyncio.to_thread(hub.store.end_room, code, key)
    except HostRefused:
        return _no("Only a page that drives this class ends it.", 403)
    except ClassroomError as err:
        return _no(f"The class store did not end it ({err}): try again.", 503)
    response = Response(status_code=204, headers={"cache-control": "no-store"})
    drop_cookie(response, request.scope, code)
    return response


def _no(why: str, status: int) -> JSONResponse:
    return JSONResponse({"why": why}, status_code=status, headers={"cache-control": "no-store"})


def no_referrer(send):
    """``send`` with ``Referrer-Policy: no-referrer`` on every response it starts."""
    async def sending(message):
        if message["type"] == "http.response.start":
            headers = [(k, v) for k, v in message.get("headers", [])
                       if k.lower() != b"referrer-policy"]
            message = {**message, "headers": [*headers, (b"referrer-policy", b"no-referrer")]}
        await send(message)
    return sending
