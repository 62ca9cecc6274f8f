"""The lecturer's page in French and Arabic beyond its sidebar (issue 45): the lesson view's
navigation and frame, the lesson picker, and no message of the ``app`` catalog left in
English where the page's language has it, under Streamlit's AppTest."""

from __future__ import annotations

import re

import pytest
from apptest_helpers import page
from streamlit.testing.v1 import AppTest

from xattn import words
from xattn.live.catalog import default_lesson
from xattn.ui.i18n import catalog, translated


def texts(at: AppTest) -> list[str]:
    """Every label, heading, paragraph, caption and notice the page drew this run."""
    found = [t.label for t in at.tabs] + [e.label for e in at.expander]
    for kind in ("button", "selectbox", "radio", "checkbox", "toggle", "slider",
                 "number_input", "text_input", "text_area", "multiselect", "metric"):
        found += [w.label for w in at.get(kind)]
    for kind in ("markdown", "caption", "info", "warning", "error", "success", "title",
                 "header", "subheader"):
        found += [m.value for m in at.get(kind)]
    return [t for t in found if t]


def untranslated(at: AppTest, lang: str) -> set[str]:
    """The ``app`` messages the page showed in English though ``lang`` translates them: a
    whole label, or a sentence (a message without {names}, of several words) in a text."""
    shown = texts(at)
    whole = set(shown)
    out = set()
    for m in catalog("en"):
        if not m.id or m.pluralizable or translated(m.id, lang) == m.id:
            continue
        if m.id in whole or ("{" not in m.id and len(m.id.split()) >= 4
                             and any(m.id in t for t in shown)):
            out.add(m.id)
    return out


@pytest.mark.parametrize(("locale", "lang", "heading", "step", "next_", "look", "banner"), [
    ("fr-FR", "fr", "## Étape 2 sur 14\u00a0: ", "Étape", "Suivante →", "**Regardez\u00a0:**",
     "Poids aléatoires (graine 0)\u00a0: "),
    ("ar-EG", "ar", "## الخطوة 2 من 14: ", "الخطوة", "التالية ←", "**انظر إلى:**",
     "أوزان عشوائية (البذرة 0): "),
])
def test_the_lesson_views_frame_speaks_the_pages_language(locale, lang, heading, step,
                                                         next_, look, banner):
    at = page(locale, view="Lesson", lesson="2")
    said = texts(at)
    assert at.info[0].value.startswith(banner)       # the weights' label (xattn/sources.py)
    title = words.translated(default_lesson().steps[1].title, lang)   # the lesson's catalog
    assert heading + title in said and title in at.selectbox(key="lesson").options[1]
    assert any(look in t for t in said)
    assert at.selectbox(key="lesson").label == step
    assert at.button(key="lesson_next").label == next_
    assert translated("Show the answer (computed from the numbers on screen)", lang) in \
        [e.label for e in at.expander]
    options = at.selectbox(key="course").options                 # "(14 étapes, 90 min)"
    assert any(re.search(r"\(14 \w+\W+90 ", o) for o in options)
    assert not any("steps" in o for o in options)
    own = words.translated(default_lesson().title, lang)          # the lesson's catalog
    assert own and own != default_lesson().title and any(o.startswith(own) for o in options)
    assert not untranslated(at, lang)
    at.button(key="lesson_next").click().run()                   # the link stays English
    assert not at.exception and at.query_params["view"] == "Lesson"
    assert at.query_params["lesson"] == "3"
    assert any(t.startswith(heading.replace("2", "3")) for t in texts(at))


@pytest.mark.parametrize("view", ["Heads", "Step through", "Head statistics", "Switch heads off",
                                  "Lines", "Compare", "Decode", "Alignment", "Training", "Export",
                                  "How to read this"])
def test_no_catalog_message_is_left_in_english_on_a_french_view(view):
    at = page("fr-FR", view=view)
    assert not untranslated(at, "fr")


def test_the_check_finds_english_where_a_translation_exists():
    english = page("en-US", view="Lesson", lesson="2")
    assert {"Next →", "Show the answer (computed from the numbers on screen)",
            "Start a class"} <= untranslated(english, "fr")


@pytest.mark.parametrize(("view", "weights", "model"), [
    ("Heads", "model", "toy-en-fr"), ("Decode", "model", "toy-en-fr"),
    ("Heads", "trained", "toy-en-fr"), ("Alignment", "trained", "toy-en-fr"),
    ("Head statistics", "trained", "toy-en-fr"), ("Training", "trained", "toy-en-fr"),
    ("Heads", "file", "toy-en-fr"), ("Heads", "model", "toy-digits"),
    ("Alignment", "model", "toy-digits"), ("Alignment", "model", "toy-reader")])
def test_no_catalog_message_is_left_in_english_on_a_french_page_of_other_weights(
        view, weights, model):
    """The shipped model's page (its sidebar, notes, the layers × heads overview, decoding
    step by step), the toy task's (its training controls, lexicon, gold alignment, the
    alignment lab on the held-out corpus and its best-layer line, the gold statistics' head
    sentences), a file's, and the shipped speech and image
    models' (the clip, the time and letter labs)."""
    at = page("fr-FR", view=view, weights=weights, model=model)
    assert not untranslated(at, "fr")
    if (view, weights, model) == ("Heads", "model", "toy-en-fr"):
        assert any(t.startswith("**Chaque couche et chaque tête** (2 couches × 4 têtes)")
                   for t in texts(at))
    if (view, weights) == ("Alignment", "trained"):
        assert any(t.startswith("**Meilleure couche\u00a0: 1** sur 1") for t in texts(at))
    if model in ("toy-digits", "toy-reader"):          # the banner: xattn.media's label
        said = "un modèle de parole (Whisper)" if model == "toy-digits" else "image-vers-texte"
        assert any(said in i.value and "l'exemple intégré" in i.value for i in at.info)
    if (view, weights) == ("Head statistics", "trained"):
        assert any(t.startswith("- **Tête 1**\u00a0: ") for t in texts(at))


def test_the_measures_messages_are_the_metrics_own_words():
    from xattn.metrics import MEASURES
    from xattn.ui.views.analysis import MEASURE_WORDS

    assert MEASURE_WORDS == {k: (m.name, m.description) for k, m in MEASURES.items()}


def test_a_step_on_other_weights_says_so_in_the_pages_language():
    """lesson=6 with a link's own sentence (random weights under "Trained heads align words"):
    the notice above the paragraph is said in French (`off_plan`, the lesson's catalog)."""
    at = page("fr-FR", view="Lesson", lesson="6", tr_src="the red dog sees the cat")
    notice = [t for t in texts(at) if "**Pas le réglage de cette étape.**" in t]
    assert notice and "montre des poids aléatoires" in notice[0]
    assert not any("Not this step's setting" in t for t in texts(at))
