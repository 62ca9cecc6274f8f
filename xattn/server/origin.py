"""One origin: a page of another origin acts on nothing of this server, its websocket included.

A browser sends ``Origin`` with every websocket it opens and every request a script makes
(``fetch`` with a body, a module script), so a page of another origin that holds the
lecturer's cookie (another port of the same host is the same *site*: its requests carry
``SameSite=Lax`` and ``Strict`` cookies alike) is told apart by ``Origin`` alone. `SameOrigin`
refuses every request and websocket whose ``Origin`` is not one of:

- the origin the request was sent to (its ``Host``; behind a proxy on this machine, as
  ``deploy/serve.sh``'s HAProxy, also ``X-Forwarded-Host``), scheme aside: a TLS proxy in
  front sends ``http`` on to the app;
- ``XATTN_PUBLIC_URL``'s origin (the address phones use, where a proxy rewrites ``Host``).

A request **without** ``Origin`` passes: browsers leave it out only of plain navigations
and same-origin ``GET``\\ s of images and styles, and a client that is no browser (curl, a
test, a monitor) can send any ``Origin`` it likes, so refusing it would stop no one and
break monitors. ``Origin: null`` (a sandboxed frame, a ``file://`` page) is another origin.

A refused websocket is closed before it is accepted (the browser sees HTTP 403), a refused
request gets HTTP 403 with why.
"""

from __future__ import annotations

import os
from urllib.parse import urlsplit

__all__ = ["SameOrigin", "allowed_origin", "PUBLIC_URL_ENV"]

PUBLIC_URL_ENV = "XATTN_PUBLIC_URL"
_DEFAULT_PORTS = {"http": "80", "https": "443", "ws": "80", "wss": "443"}
REFUSED = ("This server answers pages of its own address only: a page at {origin} may not "
           "use it.")


def _hostport(netloc: str, scheme: str) -> str:
    """``netloc`` lower-cased with the scheme's default port spelled out."""
    netloc = netloc.strip().lower()
    if netloc.startswith("["):                                 # [::1]:8501
        host, _, port = netloc.partition("]")
        host, port = host + "]", port.lstrip(":")
    else:
        host, _, port = netloc.partition(":")
    return f"{host}:{port or _DEFAULT_PORTS.get(scheme, '80')}"


def allowed_origin(origin: str, hosts: list[str], public_url: str = "") -> bool:
    """Whether a request sent to one of ``hosts`` (``Host`` values) from a page at ``origin``
    comes from this server's own origin (or ``public_url``'s).

    Examples
    --------
    >>> allowed_origin("http://127.0.0.1:8501", ["127.0.0.1:8501"])
    True
    >>> allowed_origin("http://127.0.0.1:8502", ["127.0.0.1:8501"])     # another port
    False
    >>> allowed_origin("https://class.example.org", ["class.example.org"])  # TLS in front
    True
    >>> allowed_origin("https://class.example.org", ["10.0.0.5:8501"],
    ...                "https://class.example.org/xattn/")
    True
    >>> allowed_origin("null", ["127.0.0.1:8501"])
    False
    """
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return False
    seen = _hostport(parts.netloc, parts.scheme)
    for host in hosts:
        if host and seen in (_hostport(host, "http"), _hostport(host, "https")):
            return True
    public = urlsplit(public_url.strip())
    return bool(public.netloc) and seen == _hostport(public.netloc, public.scheme)


def _headers(scope) -> dict[bytes, bytes]:
    return {k.lower(): v for k, v in scope.get("headers", [])}


def origin_refused(scope) -> str | None:
    """The other origin a request comes from, or None (its own, or no ``Origin``)."""
    headers = _headers(scope)
    origin = headers.get(b"origin")
    if origin is None:
        return None
    hosts = [headers.get(b"host", b"").decode("latin-1")]
    peer = (scope.get("client") or (None,))[0]
    if peer in (None, "127.0.0.1", "::1"):               # a proxy on this machine says it
        hosts += headers.get(b"x-forwarded-host", b"").decode("latin-1").split(",")
    text = origin.decode("latin-1")
    if allowed_origin(text, hosts, os.environ.get(PUBLIC_URL_ENV, "")):
        return None
    return text[:100]


class SameOrigin:
    """ASGI middleware: a request or websocket from another origin is refused (403)."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        other = None if scope["type"] not in ("http", "websocket") else origin_refused(scope)
        if other is None:
            await self.app(scope, receive, send)
            return
        why = REFUSED.format(origin=other)
        if scope["type"] == "websocket":
            message = await receive()                 # websocket.connect
            if message["type"] == "websocket.connect":
                await send({"type": "websocket.close", "code": 1008, "reason": why[:120]})
            return
        await send({"type": "http.response.start", "status": 403, "headers": [
            (b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store"),
            (b"referrer-policy", b"no-referrer")]})
        await send({"type": "http.response.body", "body": why.encode()})
