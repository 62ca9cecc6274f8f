"""The room's default language for the phones (issue 45; docs/languages.md): chosen in
*Start a class* (`start_choice`, set on the new room by `set_new_room_language`) and in the
class panel while the class runs (`room_language`). A phone without a language of its own
(its picker's cookie) opens in it, before its browser's; a phone already open keeps its
language until it reloads. The lecturer's page keeps its own language (`xattn.ui.i18n`)."""

from __future__ import annotations

import streamlit as st

from xattn.classroom import ClassroomError
from xattn.locales import LANGS, NAMES
from xattn.ui.i18n import gettext as _
from xattn.ui.room.actions import host_action
from xattn.ui.room.room import Room, class_store

__all__ = ["start_choice", "set_new_room_language", "room_language", "START_KEY", "ROOM_KEY"]

START_KEY = "class_lang"      # *Start a class*'s choice (a widget, not in the link)
ROOM_KEY = "room_lang"        # the class panel's choice
_READ = "_xattn_room_lang"    # session: (code, version, language) as last read
_CHOICES = ("", *LANGS)       # "": none, each phone's browser decides


def _labels():
    """The choices' labels, in the page's language of this run (a table, not a call of `_`
    at each label: the widget's options are fixed when it is drawn)."""
    return {"": _("Each phone's own (its browser's)"), **NAMES}.get


def _help() -> str:
    return _("The language a phone opens the class in, unless its student picked one on the "
             "phone. This page stays in its own language.")


def start_choice(where) -> None:
    """*Start a class*: the phones' default language of the class to start."""
    where.selectbox(_("The phones' language"), _CHOICES, key=START_KEY, format_func=_labels(),
                    help=_help())


def set_new_room_language(store, code: str, key: str) -> None:
    """Give the room just made the language chosen in *Start a class* (if any)."""
    lang = st.session_state.get(START_KEY) or ""
    if lang:
        store.set_language(code, key, lang)


def _read(room: Room, version: int) -> str:
    held = st.session_state.get(_READ)
    if held is not None and held[:2] == (room.code, version):
        return held[2]
    try:
        lang = class_store().language(room.code)
    except ClassroomError:
        return held[2] if held is not None and held[0] == room.code else ""
    st.session_state[_READ] = (room.code, version, lang)
    return lang


def _chosen(room: Room, seen: int | None) -> None:
    lang = st.session_state.get(ROOM_KEY) or ""
    host_action(lambda s: s.set_language(room.code, room.host, lang), room, seen)
    st.rerun(scope="app")


def room_language(room: Room, view) -> None:
    """The class panel's choice of the phones' default language, showing what the store
    holds (read once per room version: another host device may have changed it)."""
    st.session_state[ROOM_KEY] = _read(room, view.version)
    st.selectbox(_("The phones' language"), _CHOICES, key=ROOM_KEY, format_func=_labels(),
                 help=_help(), on_change=_chosen, args=(room, view.version))
