"""The lecturer's devices: another device drives the class through a one-time code, and one
press signs every other device out.

Lecturers project their browser, so nothing the projector shows may grant control for long.
The address bar holds no host key (it is an HttpOnly cookie: ``xattn/server/host.py``).
*Add a device* makes a one-time device code (`ClassStore.add_device`: it works once, for
five minutes) shown as a QR code and a link ``?room=CODE&device=ABCDEFGH`` on this page only,
after the press, until it is used or expires; *Sign out every other device* makes a new host
key (`ClassStore.rotate_host`): this page keeps driving the class, every other host page is
a student's page at its next run (the room's pulse moves, so at once), and the device codes
made before stop working.
"""

from __future__ import annotations

import base64
import html
import time

import streamlit as st

from xattn.classroom import ClassroomError, qr_svg
from xattn.classroom.rules import DEVICE_SECONDS
from xattn.literal import md_code
from xattn.live.link import DEVICE
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext
from xattn.ui.room.hostkey import keep_host_key
from xattn.ui.room.room import Room, class_store
from xattn.ui.room.session import HOST_ERROR

__all__ = ["devices_panel", "device_link", "door"]

_MADE = "_xattn_device_code"     # session: (room code, device code, expires) last made


def device_link(student_link: str, device: str) -> str:
    """The link that opens a room's host page on another device (one use, minutes)."""
    return f"{student_link}&{DEVICE.key}={device}"


def _add(room: Room) -> None:
    try:
        device, expires = class_store().add_device(room.code, room.host)
    except ClassroomError as err:
        st.session_state[HOST_ERROR] = str(err)
        return
    st.session_state[_MADE] = (room.code, device, expires)


def _rotate(room: Room) -> None:
    try:
        keep_host_key(room.code, class_store().rotate_host(room.code, room.host))
        st.session_state.pop(_MADE, None)        # its codes wrapped the old key
    except ClassroomError as err:
        st.session_state[HOST_ERROR] = str(err)
    st.rerun(scope="app")


def _lock(room: Room, locked: bool) -> None:
    try:
        class_store().lock(room.code, room.host, locked)   # not by version: never stale
    except ClassroomError as err:
        st.session_state[HOST_ERROR] = str(err)
    st.rerun(scope="app")


def door(room: Room, view) -> None:
    """Who is in: students present, and the room's lock (no new students once the class is
    in, as class tools do; those in it stay, and it opens again in one press)."""
    left, right = st.columns([3, 2], vertical_alignment="center")
    left.caption(_("{present} present · {answered} answered", present=view.n_present,
                   answered=view.n_answered)
                 + (_(" · locked: nobody new joins") if view.locked else ""))
    if view.locked:
        right.button(_("Open the room"), key="unlock_room", icon=":material/lock_open:",
                     on_click=_lock, args=(room, False), width="stretch",
                     help=_("New students may join again (a late student, a phone that "
                            "changed)."))
    else:
        right.button(_("Lock the room"), key="lock_room", icon=":material/lock:",
                     on_click=_lock, args=(room, True), width="stretch",
                     help=_("Once the class is in: nobody new joins (a script, or someone who "
                            "saw the code from outside); every student in it keeps "
                            "answering."))


def devices_panel(room: Room, student_link: str) -> None:
    """*Your devices*: add a device with a one-time code, or sign every other one out."""
    with st.expander(_("Your devices")):
        st.markdown(_("This page's address holds no host key, so a projected or photographed "
                      "address gives nobody control: the key is in this browser only. To "
                      "drive the class from a second device too (the projector's computer, a "
                      "tablet), press *Add a device*: its code works once, for {minutes} "
                      "minutes. Make it while the projector shows something else.",
                      minutes=format(DEVICE_SECONDS / 60, "g")))
        made = st.session_state.get(_MADE)
        left = 0 if made is None or made[0] != room.code else made[2] - time.time()
        if left > 0:
            _show(made[1], device_link(student_link, made[1]), left)
        st.button(_("Add a device"), key="add_device", on_click=_add, args=(room,),
                  icon=":material/devices:", width="stretch",
                  help=_("A one-time code for your other device: open its link or scan it "
                         "there, and that device drives the class too."))
        st.button(_("Sign out every other device"), key="rotate_host", on_click=_rotate,
                  args=(room,), icon=":material/key:", width="stretch",
                  help=_("A new host key: this page keeps driving the class, every other "
                         "device that drove it stops at once. The class and its answers "
                         "stay."))


def _show(device: str, link: str, left: float) -> None:
    svg = base64.b64encode(qr_svg(link).encode()).decode()
    alt = html.escape(_("QR code of a one-time link that lets another device drive this "
                        "class"), quote=True)
    st.html(f'<img alt="{alt}" src="data:image/svg+xml;base64,{svg}" '
            'style="width:100%;max-width:160px;image-rendering:pixelated">')
    typed = f"{device[:4]}-{device[4:]}"          # A-Z and 2-9 only: nothing to escape
    st.markdown(ngettext("Device code **{code}**: on the other device open {link}. It works "
                         "once, for about {n} more minute.",
                         "Device code **{code}**: on the other device open {link}. It works "
                         "once, for about {n} more minutes.", max(1, round(left / 60)),
                         code=typed, link=md_code(link)))


def end_panel(room: Room, csv_text) -> None:
    """*End the class*: every answer is deleted at once, so the CSV comes first (``csv_text``:
    its text, or the function that makes it on click); a second press, in the same box, ends
    it for every page and phone of the class."""
    with st.popover(_("End the class"), icon=":material/stop_circle:", width="stretch"):
        st.markdown(_("Ending the class deletes it at once: its steps, every answer and who "
                      "was in it. Every phone is told the class is over. Download what you "
                      "want to keep first."))
        st.download_button(_("The class's answers (CSV)"), csv_text,
                           f"xattn-class-{room.code}.csv", "text/csv", key="class_csv_end",
                           on_click="ignore", width="stretch")
        st.button(_("End it now, for everyone"), key="end_class", type="primary",
                  on_click=_end, args=(room,), width="stretch")


def _end(room: Room) -> None:
    try:
        class_store().end_room(room.code, room.host)
    except ClassroomError as err:
        st.session_state[HOST_ERROR] = str(err)
        return
    st.rerun(scope="app")                   # the page leaves the class it ended
