"""The last English of the lecturer's page's library sentences, in the page's language
(issue 45): the lesson's *Not this step's setting* notice (`off_plan`), the shipped lessons'
titles in the lesson picker, a training snapshot's label and a media model's built-in
example, said from the ``lesson`` catalog in French and Arabic with English's numbers."""

from __future__ import annotations

import pytest

from xattn import words
from xattn.lesson import STEPS, off_plan, shipped_lessons
from xattn.media_models import example_of
from xattn.pipeline import Settings, run
from xattn.sources import random_attention, said_text, snapshot_label


def trained_step():
    return next(s for s in STEPS if s.state.get("weights") == "trained")


@pytest.mark.parametrize(("lang", "starts", "shown"), [
    ("en", "**Not this step's setting.** The step is written for the toy task's trained "
           "weights;", "shows random weights"),
    ("fr", "**Pas le réglage de cette étape.** L'étape est écrite pour les poids entraînés de "
           "la tâche jouet\u00a0;", "montre des poids aléatoires"),
    ("ar", "**ليس إعداد هذه الخطوة.** كُتبت الخطوة من أجل الأوزان المدرَّبة للمهمة التجريبية؛",
     "ويعرض أوزان عشوائية"),
])
def test_a_step_on_other_weights_says_so_in_the_contexts_language(lang, starts, shown):
    a = random_attention(run(Settings()))
    with words.speaking(lang):
        text = off_plan(trained_step(), a)
        assert off_plan(STEPS[0], a) is None                 # the weights fit the step
    assert text.startswith(starts) and shown in text, text


def test_the_shipped_lessons_titles_are_in_every_lesson_catalog():
    titles = [lesson.title for lesson in shipped_lessons().values() if lesson.language == "en"]
    assert len(titles) >= 3
    for lang in ("fr", "de", "es", "zh", "ar"):
        said = [words.translated(t, lang) for t in titles]
        assert all(s and s != t for s, t in zip(said, titles, strict=True)), (lang, said)
    assert words.translated("Cross-attention, head by head", "fr") == \
        "L'attention croisée, tête par tête"


@pytest.mark.parametrize(("lang", "text"), [
    ("en", "Snapshot at step 1,200."), ("fr", "Instantané au pas 1\u202f200."),
    ("de", "Momentaufnahme bei Schritt 1.200."), ("ar", "لقطة عند الخطوة 1,200."),
])
def test_a_training_snapshots_label_is_said_in_the_language(lang, text):
    label, said = snapshot_label(1200)
    assert label == "Snapshot at step 1,200."                     # the record keeps English
    with words.speaking(lang):
        assert " ".join(said_text(s) for s in said) == text


@pytest.mark.parametrize(("name", "kind", "english", "french"), [
    ("toy-digits", "audio", "the built-in example, the tone words “",
     "l'exemple intégré, les mots en tons «\u00a0"),
    ("any", "audio", "the built-in example", "l'exemple intégré"),
    ("any", "image", "the built-in example, the word “", "l'exemple intégré, le mot «\u00a0"),
])
def test_a_media_models_example_keeps_its_origin_as_a_message(name, kind, english, french):
    ex = example_of(name, kind)
    assert ex.origin.startswith(english) and ex.said is not None
    with words.speaking("en"):
        assert said_text(ex.said) == ex.origin
    with words.speaking("fr"):
        fr = said_text(ex.said)
    assert fr.startswith(french)
    tail = ex.origin[len(english):].rstrip("”")                  # the words, as they are
    assert tail in fr
