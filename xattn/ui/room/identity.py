"""Who is asking: a student's id in a class, the client's network address, and the limits per
address that a lecture hall never meets but a script does.

**One vote per browser.** A student's id is issued by the server for one room, once the
phone's page did a join's small proof of work (``xattn/server/join.py``), and signed with
the servers' key for that room (`xattn.classroom.codes.signed_student`); the browser keeps it
in that room's cookie (``xattn_student_CODE``, 12 hours), so its tabs, reloads and
reconnections to any server process are one student. A page without a valid one answers
nothing: the full page of a class sends such a browser to the phone's page to join. A script
that opens sessions without it, or with a made-up one or another room's, answers nothing; one
that plays along does the work for every voter, and is held by the limit on new students per
address (``Limits.new_students``) and by the host's lock.

**A browser's token** (``xattn_browser``, `signed_browser`): a random id signed with the
servers' key, which a browser gets with its first join's proof of work (or the small page
of that work a link to the full page shows first: ``xattn/server/token.py``). Codes that
open no class and device codes that open none are counted per token
(``Limits.browser_failed_joins``), never per address: a hall behind one address shares no
count, and a browser that sheds its token pays the work again for a new one.

**The client's address** is the connection's, or behind ``deploy/serve.sh``'s HAProxy (a proxy
on this machine, which replaces any ``X-Forwarded-For`` a client sends) the address HAProxy
puts there. Only a hash of it is kept, by the store's counters. A run without a connection
(AppTest, a bare script) has no address: no limits apply, and a student is a random id.
"""

from __future__ import annotations

import streamlit as st

from xattn.classroom import ClassStore, new_student_id
from xattn.classroom.codes import student_of
from xattn.live.cookies import (
    BROWSER_COOKIE,
    HOST_COOKIE,
    STUDENT_COOKIE,
    TRUST_FORWARDED_ENV,
    address_of,
    browser_of,
    browser_token,
    signed_browser,
    student_cookie,
    too_many,
)

# The cookie names and the signed token are ``xattn.live.cookies``'s (the phones' routes read
# them too); they are named here as well, for the page's modules.
__all__ = ["STUDENT_COOKIE", "BROWSER_COOKIE", "HOST_COOKIE", "host_cookie", "student_cookie",
           "TRUST_FORWARDED_ENV", "client_address", "address_of", "student_id", "allowed",
           "signed_browser", "browser_of", "browser_token", "guesses_allowed", "too_many"]

_SID = "_xattn_student"                          # session: this session's student id


def host_cookie() -> dict[str, str]:
    """The host keys this browser's cookies hold, by room code (``xattn/server/host.py``
    sets them; none where there is no request)."""
    try:
        cookies = dict(st.context.cookies)
    except Exception:  # noqa: BLE001 - no request (a bare script run)
        return {}
    return {k[len(HOST_COOKIE):]: v for k, v in cookies.items()
            if k.startswith(HOST_COOKIE) and isinstance(v, str)}


def _headers() -> dict:
    try:
        return dict(st.context.headers)
    except Exception:  # noqa: BLE001 - no request (a bare script run)
        return {}


def client_address() -> str | None:
    """The client's network address, or None where there is no connection (AppTest)."""
    headers = {k.lower(): v for k, v in _headers().items()}
    if not headers:
        return None
    return address_of(st.context.ip_address, headers.get("x-forwarded-for", ""))


def student_id(store: ClassStore, code: str) -> str | None:
    """This browser's student id in room ``code``: from its signed cookie (or, without a
    connection, a random one kept in the session); None when the browser has not joined the
    room yet (the phone's page joins it)."""
    known = st.session_state.get(_SID, {}).get(code)
    if known is not None:
        return known
    if client_address() is None:
        known = new_student_id()
    else:
        try:
            cookie = st.context.cookies.get(student_cookie(code))
        except Exception:  # noqa: BLE001 - no request
            cookie = None
        known = student_of(store.signing_keys(), cookie, code) if cookie else None
        if cookie and known is None:         # another process may sign with a newer key
            known = student_of(store.refresh_signing_keys(), cookie, code)
    if known is not None:
        st.session_state.setdefault(_SID, {})[code] = known
    return known


def allowed(store: ClassStore, kind: str, *, peek: bool = False) -> bool:
    """Whether this client may do one more ``kind`` (`ClassStore.allow`), counted unless
    ``peek``; always, where there is no connection."""
    who = client_address()
    return True if who is None else store.allow(kind, who, peek=peek)


def guesses_allowed(store: ClassStore, *, count: bool = False) -> bool | None:
    """Whether this page's browser may try one more code (a class code, a device code) and,
    with ``count``, count one that opened nothing: by its token (`browser_token`), never by
    its address. None: the browser has no valid token (the server's token page gives one);
    always True where there is no connection (AppTest)."""
    if client_address() is None:
        return True
    try:
        cookies = dict(st.context.cookies)
    except Exception:  # noqa: BLE001 - no request
        return True
    browser = browser_token(store, cookies)
    if browser is None:
        return None
    return store.allow("browser_failed_joins", browser, peek=not count)
