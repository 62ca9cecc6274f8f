"""The views' tabs in the page's language while the link's ``view=`` stays English
(issue 45; xattn/ui/tabs.py), under Streamlit's AppTest."""

from __future__ import annotations

from collections import defaultdict

import pytest
from apptest_helpers import page
from streamlit.testing.v1 import AppTest

from xattn.live.link import VIEW_NAMES
from xattn.locales import LANGS
from xattn.ui import tabs
from xattn.ui.i18n import translated


def shown(at: AppTest) -> list[str]:
    return [t.label for t in at.tabs]


def click(at: AppTest, label: str) -> AppTest:
    """What the browser sends when a tab is clicked: the tabs' widget's new label."""
    at.session_state[tabs.TAB_KEY] = label
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_catalogs_messages_are_the_links_view_names():
    assert tabs._MESSAGES == VIEW_NAMES


@pytest.mark.parametrize("lang", [x for x in LANGS if x != "en"])
def test_every_tab_is_translated_and_no_label_names_two_views(lang):
    labels = [translated(name, lang) for name in VIEW_NAMES]
    assert len(set(labels)) == len(labels)
    assert sum(label == name for label, name in zip(labels, VIEW_NAMES, strict=True)) <= 3
    views_of = defaultdict(set)                  # a label in any language: one view
    for other in LANGS:
        for name in VIEW_NAMES:
            views_of[translated(name, other)].add(name)
    assert all(len(v) == 1 for v in views_of.values())
    assert set(tabs.names_of_labels().values()) == set(VIEW_NAMES)


def test_french_tabs_keep_the_links_english_view_and_a_click_writes_english():
    at = page("fr-FR", view="Compare")
    assert shown(at) == [translated(n, "fr") for n in VIEW_NAMES]
    assert shown(at)[:3] == ["Leçon", "Têtes", "Pas à pas"]
    assert at.session_state[tabs.TAB_KEY] == "Comparer"       # the link's view is open
    assert at.query_params["view"] == "Compare"
    click(at, "Alignement")
    assert at.query_params["view"] == "Alignment" and at.session_state["view"] == "Alignment"
    click(at, "Têtes")                                         # the default: not in the link
    assert "view" not in at.query_params and at.session_state[tabs.TAB_KEY] == "Têtes"


def test_a_link_made_in_french_opens_the_same_view_in_english_and_in_arabic():
    fr = click(page("fr-FR"), "Statistiques des têtes")
    link = {k: fr.query_params[k] for k in fr.query_params}
    assert link == {"view": "Head statistics"}
    en = page(None, **link)
    assert shown(en) == list(VIEW_NAMES) and en.session_state[tabs.TAB_KEY] == "Head statistics"
    ar = page("ar-EG", **link)
    assert ar.session_state[tabs.TAB_KEY] == "إحصاءات الرؤوس"
    assert shown(ar)[0] == "الدرس" and ar.query_params["view"] == "Head statistics"


def test_switching_the_pages_language_keeps_the_open_view():
    at = page("fr-FR", view="Lines")
    at.session_state["lang"] = "de"                 # the picker (in *Display*)
    at.run()
    assert not at.exception, at.exception
    assert at.session_state[tabs.TAB_KEY] == "Linien" and at.query_params["view"] == "Lines"
    click(at, "Dekodieren")
    assert at.query_params["view"] == "Decode"
