"""A browser's token for the full page's links, bought with a join's small proof of work.

Codes are counted per browser (``identity.signed_browser``), so a fresh token must cost
something, or a script would shed it after each guess. The phone's page gets one with its
join (``join.py``). A link that opens the Streamlit page with a class code and may guess
(``?room=CODE&device=…``, a lecturer's other device; ``?room=CODE&explore=1``, a student's
full page) from a browser without a valid token is first answered by `token_page`: a few
lines of text and the same work as a join (``assets/work.js``, about a second), which
``POST /live/token`` (`take_token`) trades for the token; the page then loads the link
again. A browser that keeps its token never sees it again.
"""

from __future__ import annotations

import asyncio
import json
import time
from functools import lru_cache

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from xattn.classroom import ClassroomError
from xattn.classroom.codes import joined_student, new_challenge
from xattn.server import live
from xattn.server.join import browser_cookie, token_of
from xattn.server.scripts import asset

__all__ = ["token_page", "take_token", "TOKEN_ROOM"]

TOKEN_ROOM = "~browser"     # what a token's challenge is bound to (no class code has a ~)
_HEADERS = {"cache-control": "no-store", "referrer-policy": "no-referrer",
            "x-content-type-options": "nosniff"}
_HTML = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><title>xattn · checking this browser</title>
<link rel="icon" href="data:,"></head>
<body style="font: 1.1rem/1.5 system-ui, sans-serif; margin: 2rem; max-width: 40rem">
<p id="say" role="status">This browser proves it is a browser (a second or two), then the page
opens.</p>
<script>/*JS*/</script></body></html>
"""


@lru_cache(maxsize=1)
def _scripts() -> str:
    return asset("work.js") + "\n" + asset("token.js")


async def token_page(hub) -> Response:
    """The page that buys a browser's token with a join's work, then loads the link again."""
    store = hub.store
    key = await asyncio.to_thread(store.signing_key)
    data = {"challenge": new_challenge(key, TOKEN_ROOM, time.time()),
            "bits": store.limits.join_work_bits, "pieces": store.limits.join_work_pieces}
    body = _HTML.replace("/*JS*/", _scripts()).replace(
        "/*TOKEN*/null", json.dumps(data).replace("<", "\\u003c"))
    return Response(body, media_type="text/html; charset=utf-8", headers=_HEADERS)


async def take_token(request: Request) -> JSONResponse:
    """``POST /live/token``, ``{"challenge", "nonce"}``: the browser's token (204 with its
    cookie) once the work is done, else 403 with why."""
    try:
        sent = json.loads((await request.body())[:1000])
        challenge, nonce = sent["challenge"], sent["nonce"]
    except (ValueError, TypeError, KeyError):
        return _why('A token is asked as {"challenge": "...", "nonce": "..."}.', 400)
    try:
        store = live.hub().store
        limits = store.limits
        args = (TOKEN_ROOM, challenge, nonce, limits.join_work_bits, limits.join_work_pieces,
                time.time(), limits.join_seconds)
        keys = await asyncio.to_thread(store.signing_keys)
        sid = joined_student(keys, *args) or joined_student(
            await asyncio.to_thread(store.refresh_signing_keys), *args)
    except ClassroomError as err:
        return _why(f"The class store is not answering ({err}): reload this page.", 503)
    if sid is None:
        return _why("This page's work is not done, or is older than "
                    f"{limits.join_seconds / 60:g} minutes: reload the page.", 403)
    response = Response(status_code=204, headers=_HEADERS)
    response.headers.append("set-cookie", browser_cookie(request.scope, token_of(keys, sid)))
    return response


def _why(why: str, status: int) -> JSONResponse:
    return JSONResponse({"why": why}, status_code=status, headers=_HEADERS)
