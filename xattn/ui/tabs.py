"""The views' tabs in the page's language, while the link's ``view=`` stays English.

``st.tabs`` keys a tab by its label, so the tabs' widget (`TAB_KEY`) holds the label in the
page's language and the view's own control (``VIEW.key``, in the link as ``view=``) holds
its English name: `take_click`, before the view is read (``PageState.value(VIEW)``), turns a
tab clicked since the last run into its English name; `view_tabs` draws the tabs on the
view the page settled on. A link made in French opens the same view in English, and old
links keep working.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import streamlit as st

from xattn.live.link import VIEW
from xattn.locales import LANGS
from xattn.ui.i18n import N_, translated
from xattn.ui.i18n import gettext as _

__all__ = ["TAB_KEY", "take_click", "view_tabs", "names_of_labels"]

TAB_KEY = "view_tab"        # the tabs' widget: the open tab's label, in the page's language
_PUT = "_xattn_tab_put"     # session: the label this page put into the tabs last

# The views' names as the catalogs' messages: ``xattn.live.link.VIEW_NAMES``, the link's values
# (tests/test_app_tabs.py checks they are the same)
_MESSAGES = (N_("Lesson"), N_("Heads"), N_("Step through"), N_("Head statistics"),
             N_("Switch heads off"), N_("Lines"), N_("Compare"), N_("Decode"),
             N_("Alignment"), N_("Training"), N_("Export"), N_("How to read this"))


@cache
def names_of_labels() -> dict[str, str]:
    """Every view's label in every language: its English name (the link's value)."""
    return {translated(name, lang): name for lang in LANGS for name in _MESSAGES}


def take_click() -> None:
    """A tab clicked since the last run (the tabs show a label other than the one the page
    put in): the view's control takes its English name, as if a widget of its own changed."""
    ss = st.session_state
    label = ss.get(TAB_KEY)
    if label is not None and label != ss.get(_PUT) and label in names_of_labels():
        ss[VIEW.key] = names_of_labels()[label]


def view_tabs(names: Sequence[str], view: str) -> Sequence:
    """The tabs of ``names`` (English), labelled in the page's language, ``view`` open."""
    label = _(view)
    st.session_state[TAB_KEY] = st.session_state[_PUT] = label
    return st.tabs([_(name) for name in names], key=TAB_KEY, on_change="rerun")
