"""The phone's page in one language: its HTML with its static words filled from the
language's catalog, its CSS, its scripts and the catalog the scripts read (docs/languages.md,
docs/phone-page.md); the language a phone reads (`language_of`, `stream_language`); and the
routes of what it fetches apart: the server's sentences (`words`) and the modules it loads
when it first needs them (`late`: the charts)."""

from __future__ import annotations

import asyncio
import html
import json
import re
from functools import lru_cache

from babel import Locale
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from xattn.classroom import ClassroomError
from xattn.server import languages, minify
from xattn.server.join import cookies, gzipped, header
from xattn.server.scripts import LATE_MODULES, asset, joined_modules, late_name, late_script, lean

__all__ = ["template", "picker", "words", "late", "late_urls", "language_of", "stream_language",
           "LANG_COOKIE"]

LANG_COOKIE = "xattn_lang"   # the phone's picker: its language (docs/languages.md)


@lru_cache(maxsize=8)
def template(lang: str = "en") -> str:
    """The phone's page in ``lang`` (`languages.LANGS`, ``en-XA``): its HTML with its static
    words and ``lang``/``dir`` filled from the language's catalog, its CSS and scripts
    (``work.js``, then the modules of ``assets/phone/`` joined: `scripts.joined_modules`),
    without their comments and needless spaces (`minify`), and that catalog alone as JSON
    (docs/languages.md), without the server's own sentences (`languages.words`: a phone
    fetches them when it first shows one) and without the late modules (`late_urls`: their
    addresses only)."""
    cat = languages.catalog(lang)
    words = {**cat["strings"], "lang": cat["lang"], "dir": cat["dir"],
             "LANGS": picker(cat["lang"])}
    page = re.sub(r"\{\{([\w.]+)\}\}",
                  lambda m: words[m[1]] if m[1] == "LANGS" else html.escape(words[m[1]]),
                  lean(asset("phone.html")))
    shipped = {**cat, "strings": {k: v for k, v in cat["strings"].items()     # html.*: filled
                                  if not k.startswith(("html.", languages.SERVER))}}  # in above
    data = json.dumps(shipped, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    return (page.replace("/*CSS*/", minify.css(asset("phone.css")))
            .replace("/*CATALOG*/null", data)
            .replace("/*LATE*/null", json.dumps(late_urls(), separators=(",", ":")))
            .replace("/*JS*/", minify.js(asset("work.js")) + "\n" + minify.js(joined_modules())))


def picker(lang: str) -> str:
    """The language picker's options, each language named in itself."""
    return "".join(
        f'<option value="{code}" lang="{code}"{" selected" if code == lang else ""}>'
        f"{html.escape(Locale.parse(code).get_display_name(code).capitalize())}</option>"
        for code in languages.LANGS)


async def words(request: Request) -> Response:
    """``GET /live/words/LANG``: the server's own sentences in ``LANG`` (`languages.words`),
    which a phone fetches when it first shows one; the same for everyone, so cached an hour."""
    try:
        data = languages.words(request.path_params["lang"])
    except ValueError:
        return JSONResponse({"why": "No such language."}, status_code=404)
    body = json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode()
    headers = {"cache-control": "public, max-age=3600", "x-content-type-options": "nosniff"}
    return gzipped(Response(body, media_type="application/json", headers=headers),
                   request.scope)


def late_urls() -> dict[str, str]:
    """Each late module's address, relative to the page (``live/late/charts-0123abcd.js``)."""
    return {name.removesuffix(".js"): f"live/late/{late_name(name)}" for name in LATE_MODULES}


@lru_cache(maxsize=4)
def _late_body(name: str) -> bytes:
    return minify.js(late_script(name)).encode()


async def late(request: Request) -> Response:
    """``GET /live/late/NAME-DIGEST.js``: a late module's script (`scripts.late_script`,
    minified), the same for everyone and named by its text's digest: kept a year. Any other
    name (an older digest) is a 404: the page names the current one."""
    served = {late_name(name): name for name in LATE_MODULES}
    name = served.get(request.path_params["name"])
    if name is None:
        return Response("No such script.", status_code=404, media_type="text/plain")
    headers = {"cache-control": "public, max-age=31536000, immutable",
               "x-content-type-options": "nosniff"}
    return gzipped(Response(_late_body(name), media_type="text/javascript; charset=utf-8",
                            headers=headers), request.scope)


async def language_of(scope, hub, code: str | None) -> str:
    """The language of a phone's page: its own pick (the `LANG_COOKIE`), else the room's
    default (its lecturer's, read when ``hub`` and ``code`` are given), else the best of
    ``Accept-Language``, else English (`languages.negotiate`; ``en-XA`` possible)."""
    picked = cookies(scope).get(LANG_COOKIE)
    room = None if picked or hub is None or code is None else await _room_language(hub, code)
    return languages.negotiate(header(scope, b"accept-language"), picked, room)


async def stream_language(scope, hub, code: str) -> str:
    """The language a phone's stream and homework steps read the lesson in: its page's
    (`language_of`: the browser sends the cookie and ``Accept-Language`` with an
    ``EventSource`` too); the pseudo-locale reads English."""
    lang = await language_of(scope, hub, code)
    return lang if lang in languages.LANGS else "en"


async def _room_language(hub, code: str) -> str | None:
    """The room's default language (its lecturer's; "" for none), None if unread."""
    try:
        return await asyncio.to_thread(hub.store.language, code)
    except ClassroomError:
        return None
