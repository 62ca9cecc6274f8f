"""Who is asking: a student's id in a class, the client's network address, and the limits per
address that a lecture hall never meets but a script does.

**One vote per browser.** A student's id is issued by the server and signed with the class
store's key (`xattn.classroom.codes.signed_student`); the browser keeps it in a cookie
(``xattn_student``, 12 hours), so its tabs, reloads and reconnections to any server process are
one student. A page opened without a valid one is given one: the page sets the cookie and
reloads itself once, and only a page whose connection carries the cookie answers. A script that
opens sessions without it, or with a made-up one, answers nothing; one that plays along is held
by the limit on new students per address (``Limits.new_students``).

**The client's address** is the connection's, or behind ``deploy/serve.sh``'s HAProxy (a proxy
on this machine, which replaces any ``X-Forwarded-For`` a client sends) the address HAProxy
puts there. Only a hash of it is kept, by the store's counters. A run without a connection
(AppTest, a bare script) has no address: no limits apply, and a student is a random id.
"""

from __future__ import annotations

import os

import streamlit as st

from xattn.classroom import ClassroomError, ClassStore, new_student_id
from xattn.classroom.codes import signed_student, student_of
from xattn.literal import md_code

__all__ = ["STUDENT_COOKIE", "HOST_COOKIE", "host_cookie", "TRUST_FORWARDED_ENV",
           "client_address", "address_of", "student_id", "allowed", "join_screen"]

STUDENT_COOKIE = "xattn_student"
HOST_COOKIE = "xattn_host_"                      # + a room's code: its host key (HttpOnly)
TRUST_FORWARDED_ENV = "XATTN_TRUST_FORWARDED"   # "1": trust X-Forwarded-For from any proxy
_SID = "_xattn_student"                          # session: this session's student id
_COOKIE_AGE = 12 * 3600                          # seconds, as long as a class lives


def host_cookie() -> dict[str, str]:
    """The host keys this browser's cookies hold, by room code (``xattn/ui/server/host.py``
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


def student_id(store: ClassStore) -> str | None:
    """This browser's student id: from its signed cookie (or, without a connection, a random
    one kept in the session); None when the browser has no valid one yet (`join_screen`)."""
    known = st.session_state.get(_SID)
    if known is not None:
        return known
    if client_address() is None:
        known = new_student_id()
    else:
        try:
            cookie = st.context.cookies.get(STUDENT_COOKIE)
        except Exception:  # noqa: BLE001 - no request
            cookie = None
        known = student_of(store.signing_key(), cookie) if cookie else None
    if known is not None:
        st.session_state[_SID] = known
    return known


def allowed(store: ClassStore, kind: str, *, peek: bool = False) -> bool:
    """Whether this client may do one more ``kind`` (`ClassStore.allow`), counted unless
    ``peek``; always, where there is no connection."""
    who = client_address()
    return True if who is None else store.allow(kind, who, peek=peek)


def join_screen(store: ClassStore, code: str) -> None:
    """The page of a browser that has no student id yet: issue one (within the limit of new
    students per address), have the browser keep it and reload; or say why not."""
    try:
        ok = allowed(store, "new_students")
        value = signed_student(store.signing_key(), new_student_id()) if ok else None
    except ClassroomError as err:
        st.warning(f"Joining class {code} has to wait: the class store is not answering "
                   f"({md_code(str(err))}). Reload this page in a moment.",
                   icon=":material/cloud_off:")
        return
    if value is None:
        limit, window = store.limits.new_students
        st.warning(f"More than {limit} new students joined classes from your network in the "
                   f"last {window / 60:g} minutes, the most this server takes. Wait a few "
                   "minutes, then reload this page.", icon=":material/hourglass_top:")
        return
    st.info(f"Joining class {code}: this page reloads once to keep your place in the class.",
            icon=":material/login:")
    # The value is made here (base64url id, '.', hex): nothing a user typed.
    st.html(
        '<p id="xattn-no-cookie" style="display:none;color:#8a1c1c">This browser does not keep '
        "cookies for this page, so it cannot join the class: allow cookies for this site, then "
        "reload the page.</p><script>(() => {"
        f"const v = {value!r}; const secure = location.protocol === 'https:' ? '; secure' : '';"
        f"document.cookie = '{STUDENT_COOKIE}=' + v + '; path=/; max-age={_COOKIE_AGE}; "
        "samesite=lax' + secure;"
        f"if (document.cookie.split('; ').includes('{STUDENT_COOKIE}=' + v)) "
        "{ location.reload(); } else "
        "{ document.getElementById('xattn-no-cookie').style.display = 'block'; }})()</script>",
        unsafe_allow_javascript=True)
