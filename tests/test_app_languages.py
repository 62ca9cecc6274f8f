"""The lecturer's page in its language (issue 45; xattn/ui/i18n.py) under Streamlit's AppTest:
English by default (AppTest's locale is None), the browser's language from
``st.context.locale``, the picker kept in the link's ``lang``, Arabic right to left, and the
room's default language for the phones set from *Start a class* and from the class panel."""

from __future__ import annotations

import pytest
from apptest_helpers import chart, page
from streamlit.testing.v1 import AppTest

from xattn.live.stores import class_store


@pytest.fixture(autouse=True)
def class_file(tmp_path, monkeypatch):
    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    monkeypatch.delenv("XATTN_PUBLIC_URL", raising=False)
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "classes.sqlite3"))



def picker(at: AppTest):
    """The page's language picker (in the sidebar's *Display* section, opened)."""
    at.session_state["fold_display"] = True
    at.run()
    assert not at.exception, at.exception
    return at.selectbox(key="lang")


def rtl(at: AppTest) -> bool:
    return any("direction: rtl" in h.proto.body for h in at.get("html"))


def labels(at: AppTest) -> set[str]:
    return ({t.value for t in at.title} | {h.value for h in at.header}
            | {b.label for b in at.button} | {s.label for s in at.selectbox}
            | {m.label for m in at.metric} | {r.label for r in at.radio})


def test_the_page_is_english_when_the_browser_says_nothing_or_english():
    for locale in (None, "en-US", "pt-BR"):
        at = page(locale)
        assert picker(at).value == "en" and "lang" not in at.query_params
        assert {"Multi-head cross-attention, head by head", "Start a class", "A class",
                "Weights", "Language of this page"} <= labels(at)
        assert not rtl(at)


def test_a_french_browser_gets_the_page_in_french_and_an_arabic_one_right_to_left():
    fr = page("fr-FR")
    assert not fr.get("selectbox")             # a first visit draws no selectbox (folded)
    assert picker(fr).value == "fr" and "lang" not in fr.query_params
    assert {"L'attention croisée multi-têtes, tête par tête", "Démarrer une classe",
            "Une classe", "Poids", "Langue de cette page", "Projections aléatoires"} <= labels(fr)
    assert "Start a class" not in labels(fr) and not rtl(fr)
    ar = page("ar-EG,ar;q=0.9")
    assert {"الانتباه المتقاطع متعدد الرؤوس، رأسًا رأسًا", "ابدأ صفًّا", "الأوزان"} <= labels(ar)
    assert rtl(ar)


def test_the_picker_is_kept_in_the_link_and_the_link_wins_over_the_browser():
    at = page("fr-FR")
    picker(at).set_value("de").run()
    assert not at.exception and at.query_params["lang"] == "de"
    assert "Eine Klasse starten" in labels(at)
    again = page("fr-FR", lang="de")                 # a reload of that link
    assert "Eine Klasse starten" in labels(again) and again.query_params["lang"] == "de"
    back = page("de", lang="de")                     # the browser's own: left out of the link
    assert "lang" not in back.query_params
    bad = page(None, lang="tlh")
    assert "Start a class" in labels(bad)
    assert any("lang=tlh" in w.value for w in bad.warning)   # said, as every bad link value


def test_a_class_started_in_french_drives_in_french_and_sets_the_phones_language():
    at = page("fr-FR")
    at.session_state["fold_class_lang"] = True                # *The phones' language*, opened
    at.run()
    at.selectbox(key="class_lang").set_value("es")
    at.button(key="start_class").click().run()
    assert not at.exception, at.exception
    code = at.session_state["room"]
    assert class_store().language(code) == "es"             # chosen in *Start a class*
    assert {"Révéler", "Étape suivante", "Prédictions", "Langue des téléphones"} <= labels(at)
    assert at.selectbox(key="room_lang").value == "es"
    axes = chart(at, "class_answers")["layout"]
    assert (axes["xaxis"]["title"]["text"], axes["yaxis"]["title"]["text"]) == \
        ("prédiction", "étudiants")                          # the class's chart, its axes
    at.selectbox(key="room_lang").set_value("ar").run()      # while the class runs
    assert not at.exception and class_store().language(code) == "ar"
    at.selectbox(key="room_lang").set_value("").run()        # none: each phone's browser
    assert class_store().language(code) == ""
    picker(at).set_value("ar").run()                         # the projector in Arabic
    assert {"اكشف", "الخطوة التالية", "التوقعات"} <= labels(at) and rtl(at)
    assert class_store().language(code) == ""                # the page's own is not the room's


def test_a_class_started_without_a_choice_has_no_language():
    at = page(None, **{"class": "new"})
    assert class_store().language(at.session_state["room"]) == ""
    assert {"Reveal", "Next step", "Predictions", "The phones' language"} <= labels(at)
    assert chart(at, "class_answers")["layout"]["yaxis"]["title"]["text"] == "students"


def test_a_homework_is_run_in_german():
    at = page("de-DE", **{"class": "new", "homework": "3"})
    assert {"Um 7 Tage verlängern", "Sprache der Handys", "Jetzt für alle beenden"} <= labels(at)
    said = " ".join(m.value for m in at.markdown)
    assert "**Hausaufgabe, offen** bis" in said and "2 Tage 23 Stunden" in said
    assert "| Schritt | geantwortet | richtig | Anteil richtig |" in said

