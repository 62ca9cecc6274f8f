"""The attributes of every cookie the server sets, by how the request came: framed or not,
over HTTPS or not.

- **Over HTTPS inside a frame** (a Hugging Face Space shows its app in a frame of
  huggingface.co): ``SameSite=None; Secure; Partitioned``. A ``SameSite=Lax`` cookie is never
  sent to a frame of another site, so Chromium kept none there (the lecturer's reload became
  a phone's page, a phone's answer got 401); ``Partitioned`` (CHIPS) keeps it in a jar of
  that top site only, so browsers that block third-party cookies keep it too.
- **Over HTTPS, not framed**: ``SameSite=Lax; Secure``.
- **Over plain HTTP**: ``SameSite=Lax``. In a frame of another site such a cookie is kept by
  no browser (``SameSite=None`` needs ``Secure``, and ``Secure`` needs HTTPS): the phone's
  page says to open the class in a tab of its own (``assets/phone.js``), the lecturer's page
  says to teach from the app's own address (``xattn/ui/room/framed.py``).

A request is **framed** when the browser says so (``Sec-Fetch-Dest: iframe``: a frame's
navigation) or the page does (its scripts' requests send ``X-Xattn-Framed: 1`` when
``window.top`` is not the page itself); it is **over HTTPS** when its scheme is, or a proxy
in front says ``X-Forwarded-Proto: https``. Every cookie is ``HttpOnly`` and ``Path=/``.
"""

from __future__ import annotations

__all__ = ["set_cookie", "cookie_attributes", "framed", "https", "FRAMED_HEADER"]

FRAMED_HEADER = "x-xattn-framed"


def _header(scope, name: bytes) -> bytes:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return value
    return b""


def https(scope) -> bool:
    """Whether the request came over HTTPS (itself, or to a proxy in front)."""
    return scope.get("scheme") in ("https", "wss") or \
        _header(scope, b"x-forwarded-proto").strip().lower() == b"https"


def framed(scope) -> bool:
    """Whether the request comes from inside a frame (the browser's or the page's word)."""
    return _header(scope, b"sec-fetch-dest").strip().lower() == b"iframe" or \
        _header(scope, FRAMED_HEADER.encode()).strip() == b"1"


def cookie_attributes(scope) -> str:
    """The attributes after ``Max-Age`` for a cookie set in answer to this request.

    Examples
    --------
    >>> cookie_attributes({"scheme": "http", "headers": []})
    'HttpOnly; SameSite=Lax'
    >>> cookie_attributes({"scheme": "http", "headers": [(b"x-forwarded-proto", b"https"),
    ...                                                 (b"sec-fetch-dest", b"iframe")]})
    'HttpOnly; SameSite=None; Secure; Partitioned'
    >>> cookie_attributes({"scheme": "http", "headers": [(b"sec-fetch-dest", b"iframe")]})
    'HttpOnly; SameSite=Lax'
    """
    if not https(scope):
        return "HttpOnly; SameSite=Lax"
    if framed(scope):
        return "HttpOnly; SameSite=None; Secure; Partitioned"
    return "HttpOnly; SameSite=Lax; Secure"


def set_cookie(scope, name: str, value: str, age: int) -> str:
    """A ``Set-Cookie`` header's value: ``name=value`` for ``age`` seconds (0: drop it),
    with this request's attributes (`cookie_attributes`)."""
    return f"{name}={value}; Path=/; Max-Age={int(age)}; {cookie_attributes(scope)}"
