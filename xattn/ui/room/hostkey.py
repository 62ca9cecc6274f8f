"""The host key a page drives its room with: the one a link or a device code brought, the
one this session made, or its browser's cookie; checked on every run, and a page a newer key
signed out says so and stays in the room as a student's."""

from __future__ import annotations

import streamlit as st

from xattn.classroom import (
    ClassroomError,
    ClassStore,
    DeviceCodeRefused,
    HostRefused,
    RoomNotFound,
    normalize_code,
)
from xattn.literal import md_code
from xattn.live.stores import class_store
from xattn.ui.room.identity import (
    guesses_allowed,
    host_cookie,
    too_many,
)
from xattn.ui.room.session import JOINED, KEYS, OLD_KEYS
from xattn.ui.state import Notice, PageState

__all__ = ["still_host", "redeem", "host_key", "keep_host_key", "Away", "SIGNED_OUT", "NO_TOKEN"]


SIGNED_OUT = ("This device no longer drives class {code}: another of your devices signed "
              "every other device out (a new host key). It shows the class as a student "
              "sees it; to drive the class from here again, make a device code on the device "
              "that drives it (*Your devices*).")


def still_host(state: PageState, store: ClassStore, code: str, key: str, *,
                from_link: bool) -> str | None:
    """``key`` if it still drives the room. A key this page or its browser held that a new
    one replaced signs this device out: the page says so and stays in the room as a
    student's (None). A host link's refused key leaves the room (`HostRefused`)."""
    try:
        store.check_host(code, key)
        return key
    except HostRefused:
        if from_link:
            raise
        if st.session_state.get(JOINED) == code and code not in store.pulse([code]):
            store.room_view(code)                  # RoomEnded: its lecturer ended it
            raise Away(Away.MESSAGE) from None   # not signed out: the room is away
    st.session_state.get(KEYS, {}).pop(code, None)
    st.session_state.setdefault(OLD_KEYS, set()).add(key)
    state.notices.append(Notice("link", SIGNED_OUT.format(code=code)))
    return None


def redeem(state: PageState, code: str, device: str) -> None:
    """A one-time device code from the link (*Your devices* on another host page): this
    session drives the room with the key it was made for, or the page says why not."""
    try:
        store = class_store()
        may = guesses_allowed(store)        # per browser (its token), never per address
        if not may:
            state.notices.append(Notice("link", NO_TOKEN.format(code=code) if may is None
                                        else too_many(store.limits)))
            return
        keep_host_key(normalize_code(code), store.redeem_device(code, device))
    except (HostRefused, RoomNotFound) as err:      # DeviceCodeRefused: the same words
        try:
            guesses_allowed(class_store(), count=True)
        except ClassroomError:
            pass
        state.notices.append(Notice("link", md_code(str(err)) if isinstance(err, RoomNotFound)
                                    else DeviceCodeRefused.MESSAGE))
    except ClassroomError as err:
        state.notices.append(Notice("link", f"The device code could not be checked: "
                                    f"{md_code(str(err))} It was not used: open its link "
                                    "again in a moment."))


def host_key(code: str, linked: str) -> str | None:
    """The host key of room ``code`` this page holds: the one a link brought (a server
    without ``xattn/server/host.py`` in front, as in AppTest), the one this session
    made or made anew, or the one in this browser's cookie."""
    try:
        code = normalize_code(code)
    except (RoomNotFound, TypeError):
        return None
    keys = st.session_state.setdefault(KEYS, {})
    if linked:
        keys[code] = linked
    cookie = host_cookie().get(code)
    if cookie in st.session_state.get(OLD_KEYS, ()):
        cookie = None                        # signed out: the browser drops it on its next load
    return keys.get(code) or cookie or None


def keep_host_key(code: str, key: str) -> None:
    """This session drives room ``code`` with ``key`` (a room it made, a key it made anew)."""
    st.session_state.setdefault(KEYS, {})[code] = key


class Away(ClassroomError):
    """The store does not have a room this page was in a moment ago (it restarted empty):
    the server process that serves its streams gives it back (``xattn.classroom.hub``)."""

    MESSAGE = ("The class store does not have this class at this moment (it restarted?): the "
               "server is giving it back, answers included. This page stays on the step it "
               "last read and follows the class as soon as it is back.")


NO_TOKEN = ("This browser has not shown yet that it is a browser (a second of work its page "
             "does): open the class's link, [?room={code}](?room={code}), and it joins.")
