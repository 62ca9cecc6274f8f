"""The ways between the Streamlit page and a class's light phone page, in one tab.

- `join_box`: a class code typed on the Streamlit page opens the class's phone page
  (``?room=CODE``, ``xattn/server/phone.py``: about 17 kB on the wire) in this same tab,
  instead of the Streamlit page as a student's (8.6 MB on a phone);
- `back_to_class`: on the full page a student explores, the link back to that phone page,
  in this same tab (a Markdown link would open a second one).
"""

from __future__ import annotations

from html import escape
from urllib.parse import urlencode

import streamlit as st

from xattn.live.link import ROOM
from xattn.ui.i18n import N_
from xattn.ui.i18n import gettext as _
from xattn.ui.page_assets import page_asset
from xattn.ui.room.session import FAILED

__all__ = ["join_box", "back_to_class", "phone_link", "FAILED", "JOIN_FORM"]

_FORM = ('<form class="xattn-join" method="get">'
         '<label for="xattn-join-code">{label}</label><div>'
         '<input id="xattn-join-code" name="room" autocomplete="off" '
         'autocapitalize="characters" spellcheck="false" maxlength="12" '
         'placeholder="{example}" required><button type="submit">{join}</button>'
         '</div></form>')
_WORDS = {"label": N_("Join a class: its code"), "example": N_("e.g. HJK23M"),
          "join": N_("Join")}
JOIN_FORM = _FORM.format(**_WORDS)        # in English


def join_form() -> str:
    """The form in the page's language (`JOIN_FORM` in English; constant words only)."""
    return _FORM.format(**{k: escape(_(v), quote=True) for k, v in _WORDS.items()})


def phone_link(code: str, step: int | None = None) -> str:
    """The relative link of class ``code``'s phone page (a homework's: on ``step``)."""
    return f"?{urlencode({ROOM.key: code})}" + (f"#{step}" if step is not None else "")


def join_box(sidebar=None) -> None:
    """A box to type a class code: on the page when the link's class could not be joined,
    in the sidebar otherwise (``sidebar``: a container in it, by default the sidebar).

    A plain HTML form (``GET``, its one field ``room``): the browser itself opens
    ``?room=CODE`` in this tab, the phone page (which normalizes the code as typed, and says
    so where it is not one), with no rerun of this page and nothing of Streamlit's loaded."""
    where = st.container() if st.session_state.get(FAILED) else (
        sidebar if sidebar is not None else st.sidebar)
    where.html(f"<style>{page_asset('join.css')}</style>{join_form()}")


def back_to_class(room) -> None:
    """On the full page a student explores: the way back to the phone's page of the class,
    in this tab."""
    if room.homework:                     # the phone's page, on this step
        link, words = phone_link(room.code, room.at), _("Back to the homework")
        where = _("homework {code}, step {step}", code=room.code, step=room.at)
    else:
        step = room.view.step if room.view is not None else "?"
        link, words = phone_link(room.code), _("Back to the class")
        where = _("class {code} is on step {step}", code=room.code, step=step)
    st.markdown(f'<a href="{escape(link)}" target="_self">{escape(words)}</a> · {where}',
                unsafe_allow_html=True)
