"""A phone in a class: its page, its stream of the room's moves, and its answers.

Three routes (``st.App``'s, plain ASGI, beside Streamlit's own on the same port):

- the page: a student's link, ``/?room=CODE`` (the QR code, a typed code), is answered by
  `PhoneMiddleware` with one light page of our own (``assets/phone.html``, ``phone.css``
  and the modules of ``assets/phone/``: about 17 kB on the wire, no Plotly, no Streamlit
  front end; docs/phone-page.md). Its first response sets the student's signed
  cookie (one vote per browser; the per-address limit on new students as before), so the
  page never reloads to join. A link that also carries ``host`` or ``explore`` is the
  Streamlit page, as is every other request;
- ``GET /live/CODE/events``: the room's moves as server-sent events (`events`): a phone's
  ``EventSource`` reconnects by itself after a Wi-Fi blip or a restarted process, and its
  first frame is always the room as it is now (``xattn.classroom.hub``), or only the
  phone's own part where it says it has that frame already (each room frame's ``id``,
  sent back as ``Last-Event-ID`` or, by the stream opened once joined, ``?had=``);
- ``POST /live/CODE/answer``: the phone's answer, ``{"step", "round", "value"}`` and, where
  the room asks how sure it is, ``"confidence"`` (``"sure"``, ``"think_so"``, ``"guess"`` or
  null), and its receipt: saved (the value as stored, and the confidence), sending, retrying
  (the store does not answer: kept and sent again) or refused (why);
- ``GET /live/CODE/step/N``: a homework's step ``N`` as this phone's student sees it
  (``xattn/live/homework.py``: each student walks a homework at their own pace).

Host pages follow their room on ``GET /live/CODE/pulse`` (``follow.py``), hand their key to
an HttpOnly cookie (``POST /live/CODE/host``) and end the class with it (``POST
/live/CODE/end``: ``host.py``). No route ever shows a host key. A link to the Streamlit page
that may guess a code (``device``, ``explore``) from a browser without a token first gets
the token page, whose work ``POST /live/token`` trades for one (``token.py``).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from xattn.classroom import AnswerRefused, ClassroomError, RoomNotFound, normalize_code
from xattn.classroom.codes import secret_digest
from xattn.classroom.confidence import check_level
from xattn.classroom.hub import Follower
from xattn.classroom.said import Said, said, said_of
from xattn.live import homework
from xattn.live.cookies import browser_token
from xattn.server import bodies, host, join, live, phone_page, token
from xattn.server.phone_page import template

__all__ = ["PhoneMiddleware", "ROUTES", "page_html", "MAX_BODY", "COOKIE_AGE"]

MAX_BODY = bodies.ROUTE_BYTES["answer"]   # bytes of an answer's request
COOKIE_AGE = join.COOKIE_AGE
LANG_COOKIE = phone_page.LANG_COOKIE
RETRY_MS = 1500             # an EventSource's wait before it reconnects
_HEADERS = {"cache-control": "no-store", "referrer-policy": "no-referrer",
            "x-content-type-options": "nosniff"}
_NO_CACHE = [(k.encode(), v.encode()) for k, v in _HEADERS.items()]


def page_html(join: dict, lang: str = "en") -> str:
    """The phone's page in ``lang``, with ``join`` (how joining went: made only here, never
    from the request's text) for its script."""
    data = json.dumps(join, separators=(",", ":")).replace("<", "\\u003c")
    return template(lang).replace("/*JOIN*/null", data)


def _query(scope) -> dict[str, list[str]]:
    return parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


def _room_link(scope) -> dict[str, list[str]] | None:
    """The query of a page request that names a room (``/?room=…``), else None."""
    if scope["type"] != "http" or scope["method"] not in ("GET", "HEAD") \
            or scope["path"] not in ("/", ""):
        return None
    query = _query(scope)
    return query if query.get("room", [""])[0].strip() else None


class PhoneMiddleware:
    """Answers a student's link (``/?room=CODE``, no ``explore`` nor ``device``) with the
    phone's page, and trades a host link's key for its cookie (``host.py``); passes
    everything else to Streamlit: the lecturer's page is ``/?room=CODE`` with a cookie whose
    key drives the room, and ``device=`` a one-time device code the page trades for the key.
    Every response says ``Referrer-Policy: no-referrer``."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            send = host.no_referrer(send)
        query = _room_link(scope)
        if query is None:                          # Streamlit's pages
            await self.app(scope, receive, send)
            return
        try:
            hub = live.hub()
        except ClassroomError:
            hub = None
        if ("device" in query or "explore" in query) and hub is not None \
                and await _no_token(hub, scope):   # links that may guess: a token first
            await (await token.token_page(hub))(scope, receive, send)
            return
        if "device" in query:                      # the page trades the code for the key
            await self.app(scope, receive, send)
            return
        if "explore" in query:          # a student's full page: an old host key is dropped
            if hub is not None and await _refused_cookie(hub, query, scope):
                send = host.dropping(send, scope, normalize_code(query["room"][0]))
            await self.app(scope, receive, send)
            return
        if "host" in query:
            traded = None if hub is None else await host.trade_host_link(hub, scope)
            if traded is None:          # a key refused: the page says so, without the key
                await self.app(scope, receive, send)
            else:
                await traded(scope, receive, send)
            return
        driving = None
        if hub is not None:
            try:
                code = normalize_code(query["room"][0])
                driving = await host.is_host(hub, code, join.cookies(scope))
            except (RoomNotFound, TypeError):
                driving = None
        if driving:
            await self.app(scope, receive, send)
            return
        response = await _phone_page(scope)
        if driving is False:            # a key made old by a new one: a student's page now
            host.drop_cookie(response, scope, code)
        await response(scope, receive, send)


async def _no_token(hub, scope) -> bool:
    """Whether the request's browser has no token the servers signed (`token.token_page`)."""
    try:
        found = await asyncio.to_thread(browser_token, hub.store, join.cookies(scope))
    except ClassroomError:
        return False                 # the page says the store is out
    return found is None


async def _refused_cookie(hub, query, scope) -> bool:
    try:
        code = normalize_code(query["room"][0])
    except (RoomNotFound, TypeError):
        return False
    return await host.is_host(hub, code, join.cookies(scope)) is False


async def _phone_page(scope) -> Response:
    typed = _query(scope)["room"][0]
    data = {"typed": typed[:40]}
    try:
        data["code"] = normalize_code(typed)
    except (RoomNotFound, TypeError) as err:
        told = said_of(err) or said("why.not.code")
        data["problem"], data["say"] = str(err), told.json()
    browser = None
    try:
        hub = live.hub()
    except ClassroomError as err:
        data["problem"] = (f"The class store is not answering ({err}). This page tries "
                           "again by itself.")
        data["say"], data["retry"] = said("why.store").json(), True
        hub = None
    if hub is not None and "code" in data:
        browser = await join.look_up(scope, hub, data)
    lang = await phone_page.language_of(scope, hub, None if "problem" in data else
                                        data.get("code"))
    body = page_html(data, lang).encode()
    response = Response(body, media_type="text/html; charset=utf-8", headers=_HEADERS)
    if browser is not None:          # a student without a token: one from its id
        response.headers.append("set-cookie", join.browser_cookie(scope, browser))
    return join.gzipped(response, scope)


def _code(scope) -> str | None:
    try:
        return normalize_code(scope["path_params"]["code"])
    except (RoomNotFound, TypeError, KeyError):
        return None


class _Stream:
    """``GET /live/CODE/events`` (a phone) or ``/live/CODE/pulse`` (a host page): the room's
    frames as server-sent events, as long as the client stays."""

    def __init__(self, host: bool):
        self.host = host

    async def __call__(self, scope, receive, send):
        code = _code(scope)
        try:
            hub = live.hub()
        except ClassroomError as err:
            await _plain(send, 503, f"The class store is not answering: {err}")
            return
        if code is None:
            await _plain(send, 404, "That is not a class code.")
            return
        student = None if self.host else await join.student(scope, hub, code)
        taught = await _taught(hub, code, scope) if self.host else None
        try:
            lang = await phone_page.stream_language(scope, hub, code)
            follower = hub.subscribe(code, student, host=self.host, taught=taught, lang=lang,
                                     had=None if self.host else _had(scope))
        except OverflowError as err:
            await _plain(send, 503, str(err))
            return
        try:
            await self._stream(follower, receive, send)
        finally:
            hub.unsubscribe(follower)

    @staticmethod
    async def _stream(f: Follower, receive, send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"x-accel-buffering", b"no"), *_NO_CACHE]})
        await send({"type": "http.response.body", "body": f"retry: {RETRY_MS}\n\n".encode(),
                    "more_body": True})
        gone = asyncio.ensure_future(_disconnected(receive))
        gone.add_done_callback(lambda _: f.close())
        try:
            while not f.closed:
                await f.wake.wait()
                frames = f.take()
                if frames:
                    await send({"type": "http.response.body", "body": frames,
                                "more_body": True})
            await send({"type": "http.response.body", "body": f.take(), "more_body": False})
        except OSError:
            pass                                       # the client left mid-write
        finally:
            gone.cancel()


def _had(scope) -> str | None:
    """The room frame's id (`frames.frame_id`) a phone's stream says it has: ``?had=`` (its
    stream before it joined) or ``Last-Event-ID`` (a reconnect); else None."""
    said = _query(scope).get("had", [""])[0] or join.header(scope, b"last-event-id") or ""
    return said if re.fullmatch(r"[0-9a-f]{8}", said) else None


async def _taught(hub, code: str, scope) -> str | None:
    """The digest of the host key a pulse stream's cookie holds, if it drives room ``code``
    (the stream then keeps the room taught: ``Hub.subscribe``), else None: a stream anyone
    opens follows the room's pulse but never keeps it."""
    key = join.cookies(scope).get(host.cookie_name(code), "")
    if not await host.is_host(hub, code, {host.cookie_name(code): key}):
        return None
    return secret_digest(key)


async def _disconnected(receive) -> None:
    """Returns when the client has gone (its request's body, if any, is read and dropped)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def _plain(send, status: int, text: str) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"), *_NO_CACHE]})
    await send({"type": "http.response.body", "body": text.encode()})


async def answer(request: Request) -> JSONResponse:
    """``POST /live/CODE/answer``: a phone's answer and its receipt."""
    code = _code(request.scope)
    if code is None:
        return _refused("That is not a class code.", 404, said("why.not.code"))
    origin = request.headers.get("origin")
    if origin and origin.split("://")[-1] != request.headers.get("host", ""):
        return _refused("An answer comes from the class's own page.", 403, said("why.origin"))
    if not request.headers.get("content-type", "").startswith("application/json"):
        return _refused("An answer is sent as JSON.", 415, said("why.bad.request"))
    try:
        sent = await bodies.read_json(request, MAX_BODY)
        step, round_, value = sent["step"], sent["round"], sent["value"]
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (step, round_)):
            raise TypeError
    except bodies.BadBody as err:
        return _refused(f'An answer is {{"step": int, "round": int, "value": ...}}: {err}.',
                        err.status, bodies.said_of(err))
    except (TypeError, KeyError):
        return _refused('An answer is {"step": int, "round": int, "value": ...}.', 400,
                        said("why.bad.request"))
    try:
        level = check_level(sent.get("confidence"))
    except AnswerRefused as err:
        return _refused(str(err), 400, said_of(err))
    try:
        hub = live.hub()
    except ClassroomError as err:
        return _refused(f"the class store cannot be opened ({err}); tell your teacher.", 503,
                        said("why.store"))
    student = await join.student(request.scope, hub, code)
    if student is None:
        return _refused("This browser has not joined the class yet: it joins in a moment "
                        "(or reload the page).", 401, said("why.not.joined"))
    why = None
    if homework.known(code) is not False:        # a live class known here: no read
        try:
            why = await asyncio.to_thread(_out_of_order, hub.store, code, student, step)
        except ClassroomError:
            pass                       # the store says what it says when the answer is sent
    if why:
        return JSONResponse({"step": step, "round": round_, "value": _lists(value),
                             "confidence": level, "state": "refused", "why": str(why),
                             "say": said_of(why).json()}, status_code=409, headers=_HEADERS)
    receipt = await hub.answer(code, student, step, round_, value, level)
    data = {"step": receipt.step, "round": receipt.round, "value": _lists(receipt.value),
            "confidence": receipt.confidence, "state": receipt.state, "why": receipt.why,
            "at": round(time.time(), 3)}
    if receipt.said is not None:
        data["say"] = receipt.said.json()
    return JSONResponse(data, headers=_HEADERS)


def _out_of_order(store, code: str, student: str, step: int) -> AnswerRefused | None:
    """Why a homework refuses an answer to ``step`` before its pre-check is answered (a
    request made around the phone's page), else None (a live class: never; one read per
    process and room, its mode)."""
    if not homework.is_homework(store, code):
        return None
    from xattn.live.catalog import room_lesson

    lesson = room_lesson(store, code)
    if not lesson.check or not 1 <= step <= len(lesson.steps):
        return None
    return homework.refused_before_check(lesson, step, store.student_answers(code, student))


def _refused(why: str, status: int, told: Said | None) -> JSONResponse:
    """A refused answer's receipt: ``why`` in English, ``told`` the phone's message of it."""
    data = {"state": "refused", "why": why}
    if told is not None:
        data["say"] = told.json()
    return JSONResponse(data, status_code=status, headers=_HEADERS)


def _lists(value):
    if isinstance(value, (tuple, list)):
        return [_lists(v) for v in value]
    return value


async def homework_step(request: Request) -> Response:
    """``GET /live/CODE/step/N``: step ``N`` (or ``next``) of a homework as this browser's
    student sees it (a browser that has not joined yet: as a new student;
    `homework.step_json`)."""
    try:
        code = normalize_code(request.path_params["code"])
    except (RoomNotFound, TypeError):
        return _why("That is not a class code.", 404, said("why.not.code"))
    try:
        hub = live.hub()
    except ClassroomError as err:
        return _why(f"The class store is not answering ({err}); this page tries again.", 503,
                    said("why.store"))
    student = await join.student(request.scope, hub, code)
    try:
        lang = await phone_page.stream_language(request.scope, hub, code)
        data = await asyncio.to_thread(homework.step_json, hub.store, code,
                                       request.path_params["n"], student, lang)
    except homework.StepRefused as err:
        return _why(str(err), err.status, said("why.step.none"))
    except RoomNotFound as err:
        return _why(str(err), 404, said_of(err))
    except ClassroomError as err:
        return _why(f"The class store is not answering ({err}); this page tries again.", 503,
                    said("why.store"))
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=homework.json_number).encode()
    return join.gzipped(Response(body, media_type="application/json", headers=_HEADERS),
                        request.scope)


def _why(why: str, status: int, told: Said | None) -> JSONResponse:
    data = {"why": why} if told is None else {"why": why, "say": told.json()}
    return JSONResponse(data, status_code=status, headers=_HEADERS)


ROUTES = [Route("/live/words/{lang}", phone_page.words),
          Route("/live/late/{name}", phone_page.late),
          Route("/live/{code}/events", _Stream(host=False)),
          Route("/live/{code}/step/{n}", homework_step),
          Route("/live/{code}/pulse", _Stream(host=True)),
          Route("/live/{code}/answer", answer, methods=["POST"]),
          Route("/live/{code}/host", host.claim, methods=["POST"]),
          Route("/live/{code}/end", host.end, methods=["POST"]),
          Route("/live/{code}/join", join.join, methods=["POST"]),
          Route("/live/token", token.take_token, methods=["POST"])]
