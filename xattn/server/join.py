"""Who a phone is in a class: joining a room with a small proof of work, and its cookie.

A lecture hall is one network address (campus Wi-Fi's NAT), so limits per address must let a
hall of 1,000 phones in, and a script must still not mint voters for free. So:

- the phone's page (``/?room=CODE``) carries a **challenge** (``codes.new_challenge``: a time,
  a random part, the server's MAC, bound to the room) and the page's JavaScript finds
  ``Limits.join_work_pieces`` nonces whose SHA-256s start with ``Limits.join_work_bits`` zero
  bits (``assets/work.js``: about a second of a phone's time; a script needs 4 x 2**15 = 2**17
  hashes per voter). ``POST /live/CODE/join``
  with the solution gives the browser its student id in the cookie ``xattn_student_CODE``
  (12 hours; a homework's: as long as the homework can be kept, `cookie_age`),
  signed for that room only (a cookie of one class counts in no other). A solution sent
  twice is the same student; a challenge is good for ``Limits.join_seconds``;
- joins of one room from one address come out of a **token bucket**
  (``Limits.join_bucket``, ``ClassStore.take_join``): a burst a hall of 1,000 phones behind
  one campus address fits in, then one join a second; a join refused is told when to try
  again (429, ``retry``), and the phone's page waits and joins by itself. A script behind one
  address mints one voter a second in a room once the burst is spent, whatever its CPU;
- a room the host **locked** takes no new student (those in it stay);
- codes that open no class count **per browser, never per address** (a hall is one address:
  300 fresh browsers' wrong codes must not lock its phones and its lecturer out):
  against the browser's signed token (``xattn_browser``, `identity.signed_browser`;
  ``Limits.browser_failed_joins``). A browser without a valid token is told nothing about a
  code for free: its page gets a challenge whatever the code, and the join that follows the
  work says whether the code opens a class, and gives the token (derived from the solved
  challenge: the same solution sent again is the same token, with its count). So a script
  that sheds its token pays a join's work per fresh token. A code this process served in the
  last hours never counts (a store that restarted empty is restoring it: ``Hub.knows``).

A valid cookie's signature is checked against every key the servers sign with (the store
re-read once when it fails: ``ClassStore.refresh_signing_keys``).
"""

from __future__ import annotations

import asyncio
import base64
import gzip
import hashlib
import math
import time
from http.cookies import SimpleCookie
from typing import NamedTuple

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from xattn.classroom import ClassroomError, RoomNotFound, normalize_code
from xattn.classroom.codes import joined_student, new_challenge, signed_student, student_of
from xattn.classroom.said import Said, said, said_of
from xattn.live.cookies import (
    BROWSER_COOKIE,
    COOKIE_AGE,
    address_of,
    browser_token,
    signed_browser,
    student_cookie,
    too_many,
)
from xattn.server import bodies, live
from xattn.server.cookies import set_cookie

__all__ = ["cookies", "header", "client", "student", "look_up", "join", "cookie_age", "gzipped",
           "COOKIE_AGE", "browser_cookie", "token_of"]

_HEADERS = {"cache-control": "no-store", "referrer-policy": "no-referrer",
            "x-content-type-options": "nosniff"}
LOCKED = ("This class is closed to new students: your teacher locked it once the class was "
          "in. Ask your teacher to open it for a moment.")


def cookie_age(limits, homework: bool) -> int:
    """Seconds a room's cookie (a student's id, a host key) lives: a live class's
    `COOKIE_AGE`, or the longest a homework room can (open for ``Limits.homework_seconds``
    from an extension, then kept ``Limits.results_seconds``): a student back another day is
    the same student, and the lecturer drives it still."""
    if not homework:
        return COOKIE_AGE
    return int(limits.homework_seconds + limits.results_seconds)


def header(scope, name: bytes) -> str | None:
    """A request's header ``name`` (lower case), None without it."""
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def cookies(scope) -> dict[str, str]:
    jar = SimpleCookie()
    for name, value in scope.get("headers", []):
        if name == b"cookie":
            try:
                jar.load(value.decode("latin-1"))
            except Exception:  # noqa: BLE001 - a malformed cookie header: no cookies
                return {}
    return {k: m.value for k, m in jar.items()}


def client(scope) -> str:
    peer = (scope.get("client") or (None,))[0]
    forwarded = ""
    for name, value in scope.get("headers", []):
        if name == b"x-forwarded-for":
            forwarded = value.decode("latin-1")
    local = peer in (None, "127.0.0.1", "::1")
    return address_of(None if local else peer, forwarded)


def gzipped(response: Response, scope) -> Response:
    """``response`` gzipped when the request accepts it and its body is worth it (over
    1,000 bytes): a phone's page and its steps on a slow network."""
    accepts = any(k == b"accept-encoding" and b"gzip" in v for k, v in scope["headers"])
    if accepts and len(response.body) > 1000:
        response.body = gzip.compress(response.body, 6)
        response.headers["content-encoding"] = "gzip"
        response.headers["content-length"] = str(len(response.body))
        response.headers.append("vary", "Accept-Encoding")
    return response


async def student(scope, hub, code: str) -> str | None:
    """The student id of the request's cookie for room ``code``, or None."""
    value = cookies(scope).get(student_cookie(code))
    if not value:
        return None
    store = hub.store
    try:
        found = student_of(await asyncio.to_thread(store.signing_keys), value, code)
        if found is None:            # another process may sign with a key made since
            found = student_of(await asyncio.to_thread(store.refresh_signing_keys), value,
                               code)
    except ClassroomError:
        return None
    return found


def browser_cookie(scope, token: str) -> str:
    """The ``Set-Cookie`` value of a browser's token (12 hours; `cookies.set_cookie`)."""
    return set_cookie(scope, BROWSER_COOKIE, token, COOKIE_AGE)


def token_of(keys, sid: str) -> str:
    """The browser token a solved join gives (its id derived from the student id, so the same
    solution sent twice is one token), signed with ``keys``' first."""
    digest = hashlib.sha256(f"xattn browser of|{sid}".encode()).digest()
    return signed_browser(keys[0], base64.urlsafe_b64encode(digest).decode()[:22])


async def look_up(scope, hub, join: dict) -> str | None:
    """Fill ``join`` (the phone's page's data) for room ``join["code"]``: a problem, or a
    challenge to solve unless the browser is in the room already. Returns the browser token
    to set (a student of the room without one: derived from its id), or None."""
    store, code = hub.store, join["code"]
    jar = cookies(scope)

    def look() -> tuple[str | None, bool]:
        """Why not (or None), and whether the browser has a valid token."""
        browser = browser_token(store, jar)
        if browser is None:          # no free look at a code: the join's work first
            return None, False
        if not store.allow("browser_failed_joins", browser, peek=True):
            return _too_many(store.limits), True
        if code in store.pulse([code]):
            return None, True
        if hub.knows(code):          # served here lately: the store is getting it back
            join["retry"] = True
            return _Told("The class store does not have this class at this moment (it "
                         "restarted?); this page tries again by itself.",
                         said("why.store.back")), True
        store.allow("browser_failed_joins", browser)
        err = RoomNotFound.for_code(code)
        return _Told(str(err), err.said), True

    try:
        problem, tokened = await asyncio.to_thread(look)
        if problem:
            join["problem"], join["say"] = problem.why, problem.said.json()
            return None
        sid = await student(scope, hub, code)
        if sid is not None:          # in the room: a token, if it has none, from its id
            keys = await asyncio.to_thread(store.signing_keys)
            return None if tokened else token_of(keys, sid)
        if tokened and (await asyncio.to_thread(store.room_view, code)).locked:
            join["problem"], join["say"] = LOCKED, said("why.locked").json()
            return None
    except RoomNotFound:             # gone between two reads: the join says so
        pass
    except ClassroomError as err:
        join["problem"] = (f"The class store is not answering ({err}). This page tries again "
                           "by itself.")
        join["say"], join["retry"] = said("why.store").json(), True
        return None
    key = await asyncio.to_thread(store.signing_key)
    join["challenge"] = new_challenge(key, code, time.time())
    join["bits"] = store.limits.join_work_bits
    join["pieces"] = store.limits.join_work_pieces
    return None


class _Told(NamedTuple):
    """A sentence for a phone: in English (``why``) and as its catalog's message (``said``)."""

    why: str
    said: Said


def _too_many(limits) -> _Told:
    return _Told(too_many(limits), said("why.codes.many", n=limits.browser_failed_joins[0]))


def _no(why: str, status: int, told: Said) -> JSONResponse:
    """A join refused: ``why`` in English, ``told`` the phone's message of it."""
    return JSONResponse({"joined": False, "why": why, "say": told.json()}, status_code=status,
                        headers=_HEADERS)


def _busy(limits, wait: float) -> JSONResponse:
    """A join the room's bucket for this address refused (``Limits.join_bucket``): 429 with
    when to try again (``retry``, seconds; the phone's page waits and joins by itself)."""
    burst, every = limits.join_bucket
    retry = max(1, math.ceil(wait))
    why = (f"More than {burst:,} phones joined this class from your network at once; one "
           f"more joins every {every:g} s. This page joins by itself in {retry} s.")
    told = said("why.join.busy", n=int(burst), retry=retry)
    return JSONResponse({"joined": False, "why": why, "say": told.json(), "retry": retry},
                        status_code=429, headers={**_HEADERS, "retry-after": str(retry)})


async def join(request: Request) -> JSONResponse:
    """``POST /live/CODE/join``, ``{"challenge": ..., "nonce": ...}`` from the phone's page:
    the room's student cookie once the work is done (200), else why not."""
    try:
        code = normalize_code(request.path_params["code"])
    except (RoomNotFound, TypeError):
        return _no("That is not a class code.", 404, said("why.not.code"))
    origin = request.headers.get("origin")
    if origin and origin.split("://")[-1] != request.headers.get("host", ""):
        return _no("A join comes from the class's own page.", 403, said("why.origin"))
    try:
        sent = await bodies.read_json(request, bodies.ROUTE_BYTES["join"])
        challenge, nonce = sent["challenge"], sent["nonce"]
        if not (isinstance(challenge, str) and isinstance(nonce, str)):
            raise TypeError
    except bodies.BadBody as err:
        return _no(f'A join is sent as {{"challenge": "...", "nonce": "..."}}: {err}.',
                   err.status, bodies.said_of(err))
    except (TypeError, KeyError):
        return _no('A join is sent as {"challenge": "...", "nonce": "..."}.', 400,
                   said("why.bad.request"))
    try:
        hub = live.hub()
        store = hub.store
        limits = store.limits
        keys = await asyncio.to_thread(store.signing_keys)
        args = (code, challenge, nonce, limits.join_work_bits, limits.join_work_pieces,
                time.time(), limits.join_seconds)
        sid = joined_student(keys, *args) or joined_student(
            await asyncio.to_thread(store.refresh_signing_keys), *args)
        if sid is None:
            return _no("This join's work is not done, or is older than "
                       f"{limits.join_seconds / 60:g} minutes: reload the page.", 403,
                       said("why.join.reload"))
        jar = cookies(request.scope)
        browser = await asyncio.to_thread(browser_token, store, jar)
        token = None if browser is not None else token_of(keys, sid)
        try:
            view = await asyncio.to_thread(store.room_view, code)
        except RoomNotFound as err:
            return await _no_class(request.scope, hub, code, err, browser, token)
        if view.locked:
            return _with_token(_no(LOCKED, 403, said("why.locked")), request.scope, token)
        wait = await asyncio.to_thread(store.take_join, code, client(request.scope))
        if wait > 0:
            return _with_token(_busy(limits, wait), request.scope, token)
        if not await asyncio.to_thread(store.allow, "new_students", client(request.scope)):
            limit, window = limits.new_students
            return _no(f"More than {limit} new students joined classes from your network in "
                       f"the last {window / 60:g} minutes, the most this server takes. Wait a "
                       "few minutes, then reload this page.", 429,
                       said("why.join.many", n=int(limit)))
        value = signed_student(await asyncio.to_thread(store.signing_key), sid, code)
    except ClassroomError as err:
        return _no(f"The class store is not answering ({err}): this page tries again.", 503,
                   said("why.store"))
    response = JSONResponse({"joined": True}, headers=_HEADERS)
    response.headers.append("set-cookie", set_cookie(request.scope, student_cookie(code), value,
                                                     cookie_age(limits, view.homework)))
    return _with_token(response, request.scope, token)


async def _no_class(scope, hub, code: str, err: RoomNotFound, browser: str | None,
                    token: str | None) -> JSONResponse:
    """A solved join of a code that opens no class: counted against the browser's token (its
    own, ``browser``, or ``token``, the one this join gives it), and said (a code this
    process served lately: the store is restoring it, try again)."""
    store = hub.store
    if hub.knows(code):
        return _no("The class store does not have this class at this moment (it "
                   "restarted?): this page tries again.", 503, said("why.store.back"))
    counted = browser or token.split(".")[0]
    if await asyncio.to_thread(store.allow, "browser_failed_joins", counted):
        refused = _no(str(err), 404, said_of(err) or said("why.no.class", code=code))
    else:
        told = _too_many(store.limits)
        refused = _no(told.why, 429, told.said)
    return _with_token(refused, scope, token)


def _with_token(response: JSONResponse, scope, token: str | None) -> JSONResponse:
    if token is not None:
        response.headers.append("set-cookie", browser_cookie(scope, token))
    return response
