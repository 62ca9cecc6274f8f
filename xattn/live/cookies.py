"""Cookie names and the browser's signed token: plain values shared by the lecturer's page
(``xattn/ui/room/identity.py``, which reads them from ``st.context``) and the phones' routes
(``xattn/server/``, which read them from a Starlette request). ``xattn/ui/room/identity.py``
says what each is for."""

from __future__ import annotations

import hashlib
import hmac
import os

from xattn.classroom import ClassStore

__all__ = ["STUDENT_COOKIE", "BROWSER_COOKIE", "HOST_COOKIE", "COOKIE_AGE", "TRUST_FORWARDED_ENV",
           "student_cookie", "address_of", "signed_browser", "browser_of", "browser_token",
           "too_many"]

STUDENT_COOKIE = "xattn_student_"                # + a room's code: its student id, signed
BROWSER_COOKIE = "xattn_browser"                 # a browser's signed token: its failed codes
HOST_COOKIE = "xattn_host_"                      # + a room's code: its host key (HttpOnly)
TRUST_FORWARDED_ENV = "XATTN_TRUST_FORWARDED"   # "1": trust X-Forwarded-For from any proxy
COOKIE_AGE = 12 * 3600                          # seconds, as long as a class lives


def student_cookie(code: str) -> str:
    """The cookie that holds this browser's student id in room ``code`` (A-Z, 2-9)."""
    return STUDENT_COOKIE + code


def address_of(peer: str | None, forwarded: str) -> str:
    """The client's address from the connection's peer (None: this machine, e.g. its
    HAProxy) and an ``X-Forwarded-For`` header: the proxy's last entry, trusted only from a
    proxy on this machine (or any, with ``XATTN_TRUST_FORWARDED=1``).

    Examples
    --------
    >>> address_of(None, "10.0.0.7, 192.168.1.20"), address_of("203.0.113.9", "10.0.0.7")
    ('192.168.1.20', '203.0.113.9')
    """
    last = forwarded.split(",")[-1].strip()
    trust = peer is None or os.environ.get(TRUST_FORWARDED_ENV, "") == "1"
    return (last if trust and last else peer) or "localhost"


def signed_browser(key: bytes, browser: str) -> str:
    """A browser's token: its id (22 URL-safe characters) and the servers' MAC of it.

    Examples
    --------
    >>> token = signed_browser(b"k" * 32, "b" * 22)
    >>> browser_of(b"k" * 32, token), browser_of(b"j" * 32, token)
    ('bbbbbbbbbbbbbbbbbbbbbb', None)
    >>> browser_of(b"k" * 32, "b" * 22 + "." + "0" * 32) is None
    True
    """
    mac = hmac.new(key, f"xattn browser|{browser}".encode(), hashlib.sha256).hexdigest()
    return f"{browser}.{mac[:32]}"


def browser_of(keys, value) -> str | None:
    """The browser id of a token signed with one of ``keys`` (a key or several), or None."""
    if not isinstance(value, str) or value.count(".") != 1 or len(value) > 60:
        return None
    browser = value.split(".")[0]
    if not (len(browser) == 22 and browser.replace("-", "").replace("_", "").isalnum()):
        return None
    for key in [keys] if isinstance(keys, bytes) else keys:
        if hmac.compare_digest(signed_browser(key, browser), value):
            return browser
    return None


def browser_token(store: ClassStore, cookies: dict) -> str | None:
    """The browser id of the request's token cookie (``xattn_browser``) if the servers signed
    it (the store's keys read again once if not: another process may sign with a newer one),
    else None."""
    value = cookies.get(BROWSER_COOKIE)
    if not value:
        return None
    found = browser_of(store.signing_keys(), value)
    return found if found is not None else browser_of(store.refresh_signing_keys(), value)


def too_many(limits) -> str:
    """What a browser that tried too many codes that open nothing is told."""
    limit, window = limits.browser_failed_joins
    return (f"More than {limit} class codes or device codes that open nothing were tried in "
            f"this browser in the last {window / 60:g} minutes: wait a few minutes, then type "
            "the code your teacher shows.")
