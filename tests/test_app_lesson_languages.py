"""The lesson on the lecturer's page (and the projector) in the page's language (issue 45;
``xattn.ui.lesson.words``), under Streamlit's AppTest: a step's title, text, computed answer
and verdict alone, a class's revealed answer and misconception panel, said from the
``lesson`` catalogs with the same numbers and the same tokens as in English; the class's
CSV the English class's, whatever the lecturer's language."""

from __future__ import annotations

import re

import pytest
from apptest_helpers import page
from phone_helpers import Phone
from streamlit.testing.v1 import AppTest

from xattn.lesson import SHIPPED, STEPS, verdict
from xattn.lesson.lessonfile import read_lesson
from xattn.lesson.translated import said_as
from xattn.live.answers import class_step
from xattn.live.prepared import prepared_attention
from xattn.words import say, speaking

pytestmark = pytest.mark.usefixtures("fresh_cache")

NUMBER = re.compile(r"\d+[.,]\d+")
CODE = re.compile(r"`[^`]+`")


@pytest.fixture(autouse=True)
def class_file(tmp_path, monkeypatch):
    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    monkeypatch.delenv("XATTN_PUBLIC_URL", raising=False)
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "classes.sqlite3"))



def said(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown]


def told_of(n: int, lang: str):
    """What shipped step ``n`` tells of its prepared weights, said in ``lang``."""
    step = STEPS[n - 1]
    a = prepared_attention(step)
    with speaking(lang):
        return step.tell(a, step.layer(a.n_layers))


def numbers(text: str) -> list[str]:
    return [n.replace(",", ".") for n in NUMBER.findall(text)]


def test_a_lesson_step_alone_says_its_texts_answer_and_verdict_in_the_pages_language():
    shown = {}
    for lang, locale in (("en", None), ("fr", "fr-FR"), ("ar", "ar-EG")):
        at = page(locale, view="Lesson", lesson="3")
        at.number_input(key="predict").set_value(0.268).run()     # the masked share: a slip
        assert not at.exception, at.exception
        shown[lang] = said(at)
        told = told_of(3, lang)
        assert told.answer in shown[lang]                        # the computed answer
        with speaking(lang):
            assert verdict(told, 0.268) in shown[lang]           # the verdict, the slip named
            step = said_as(SHIPPED, STEPS[2], 3, lang)
        assert any(step.title in m for m in shown[lang] if m.startswith("## "))
        assert any(m.startswith(step.text.strip()[:40]) for m in shown[lang])
        assert any(step.title in o for o in at.selectbox(key="lesson").options)   # the picker
    linked = said(page(None, view="Lesson", lesson="3", lang="fr"))   # the link's language:
    assert told_of(3, "fr").answer in linked       # the step's own settings still (its mask)
    fr, en, ar = (" ".join(shown[k]) for k in ("fr", "en", "ar"))
    assert "Masquage\u00a0: cacher un token source" in fr and "القناع: إخفاء رمز مصدر" in ar
    assert "0,268" in fr and "Masking: hide a source token" not in fr
    with speaking("fr"):
        assert say("{n:.3f} of the weight", n=0.268) == "0,268 of the weight"
    answers = {k: told_of(3, k).answer for k in ("en", "fr", "ar")}
    assert answers["fr"] != answers["en"] != answers["ar"]
    for k in ("fr", "ar"):                     # the same numbers, the tokens byte for byte
        assert numbers(answers[k]) == numbers(answers["en"])
        assert CODE.findall(answers[k]) == CODE.findall(answers["en"])


def test_a_choices_labels_are_in_the_pages_language_and_its_value_the_same():
    told_en, told_fr = told_of(4, "en"), told_of(4, "fr")     # wait-k: which tokens
    at = page("fr-FR", view="Lesson", lesson="4")
    pills = at.button_group(key="predict")
    assert "`les 2 premiers : the black`" in pills.options
    assert not any(o.strip("`") in told_en.question.choices for o in pills.options)
    pills.set_value(told_en.truth).run()               # the value: the question's own
    assert not at.exception, at.exception
    assert at.button_group(key="predict").value == told_en.truth
    with speaking("fr"):
        assert verdict(told_fr, told_en.truth) in said(at)
    nine = page("fr-FR", view="Lesson", lesson="9").button_group(key="predict")
    assert "`Elle baisse`" in nine.options                    # a value said from the catalog
    assert page(None, view="Lesson", lesson="4").button_group(key="predict").options == \
        [f"`{c}`" for c in told_en.question.choices]          # English: the values


def start(locale: str | None) -> tuple[AppTest, str, str]:
    host = page(locale, **{"class": "new"})
    code = host.session_state["room"]
    return host, code, host.session_state["_xattn_host_keys"][code]


def to_step(host: AppTest, code: str, key: str, n: int) -> None:
    from xattn.live.stores import class_store
    class_store().set_step(code, key, n)
    host.run()
    assert not host.exception, host.exception


def a_class(locale: str | None) -> tuple[AppTest, str, str]:
    """A class on step 2 (a number, two named slips): six phones answer, the lecturer
    reveals; the page, the class's CSV, and its CSV made while Arabic is spoken."""
    from xattn.ui.room.class_csv import class_csv
    from xattn.ui.room.room import Room

    host, code, key = start(locale)
    to_step(host, code, key, 2)
    slips = {d.key: d.value for d in told_of(2, "en").distractors}
    for phone, value in zip([Phone(code) for _ in range(6)],
                            [1.0, 1.0, round(slips["swapped"], 2), round(slips["swapped"], 2),
                             round(slips["axis"], 2), 0.8], strict=True):
        phone.answer(value)
    host.run()
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    room = Room(code=code, host=key, view=None, student=None, lesson=SHIPPED)
    with speaking("ar"):                   # made while another language is spoken
        spoken = class_csv(room)
    return host, class_csv(room), spoken


def test_a_class_revealed_on_a_french_or_arabic_page_says_the_lesson_there_same_csv():
    shown, csvs = {}, {}
    for lang, locale in (("en", None), ("fr", "fr-FR"), ("ar", "ar")):
        host, csvs[lang], spoken = a_class(locale)
        assert spoken == csvs[lang]
        shown[lang] = " ".join(said(host))
        told = told_of(2, lang)
        assert told.answer in shown[lang]                   # the revealed answer
        assert told.question.kind == "number"
        with speaking(lang):
            for d in told.distractors:                      # the misconception panel
                assert f"**{d.name}**: {d.why}" in shown[lang]
            title = said_as(SHIPPED, STEPS[1], 2, lang).title
        assert any(title in m for m in said(host) if m.startswith("## "))
    assert "rows and columns swapped" not in shown["fr"] + shown["ar"]
    assert numbers(told_of(2, "fr").answer) == numbers(told_of(2, "en").answer)
    assert csvs["en"] and csvs["fr"] == csvs["en"] == csvs["ar"]   # stored values: English
    assert "rows and columns swapped" in csvs["fr"]


def test_a_token_steps_taps_beside_the_row_are_described_in_the_pages_language():
    host, code, key = start("fr-FR")
    to_step(host, code, key, 6)                        # tap the source word: a token step
    assert told_of(6, "en").question.kind == "token"
    Phone(code).answer(1)
    host.run()
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    from xattn.figures.class_words import TAPS_ALT
    from xattn.figures.words import chart_words

    alt = chart_words("fr")(TAPS_ALT)
    assert alt.startswith("Deux") and host.get_by_key("class_taps").proto.alt == alt


def test_a_homeworks_table_names_its_steps_in_the_pages_language():
    from xattn.lesson.translated import step_in

    shown = " ".join(said(page("de-DE", **{"class": "new", "homework": "3"})))
    title = step_in(SHIPPED, 1, "de").title
    assert title != STEPS[0].title and f"| 1. `{title}` |" in shown
    assert f"`{STEPS[0].title}`" not in shown


LESSON = '''
title = "Mine"
language = "en"
[fr]
title = "La mienne"

[[step]]
title = "One head"
text = "Each row is a target token."
look = "The row of «target»."
[step.fr]
title = "Une tête"
text = "Chaque ligne est un token cible."
[step.page]
view = "Heads"

[[step]]
title = "A poll"
[step.fr]
options = ["Oui", "Non"]
[step.question]
kind = "poll"
prompt = "Tap one."
options = ["Yes", "No"]
'''


def test_the_page_takes_a_lessons_own_texts_and_says_once_when_it_lacks_the_language(
        monkeypatch):
    from xattn.ui.lesson import words

    lesson = read_lesson(LESSON)
    step = lesson.steps[0]
    fr = said_as(lesson, step, 1, "fr")
    assert (fr.title, fr.text, fr.look) == ("Une tête", "Chaque ligne est un token cible.",
                                            "The row of «target».")   # look: the lesson's own
    assert fr.state == step.state and said_as(lesson, step, 1, "de") is step
    monkeypatch.setattr(words, "page_lang", lambda: "de")
    assert words.lesson_language(lesson) == "en" and words.step_words(lesson, step, 1) is step
    assert words.fallback_note(lesson) == \
        "This lesson has no texts in this page's language (Deutsch): it is shown in its " \
        "own (English)."
    monkeypatch.setattr(words, "page_lang", lambda: "fr")
    assert words.lesson_language(lesson) == "fr" and words.fallback_note(lesson) is None
    assert words.step_titles(lesson) == ["Une tête", "A poll"]
    told = class_step(lesson, 2)[1]
    assert words.option_labels(lesson, 2, told) == ["Oui", "Non"]      # the values: Yes, No
    assert told.question.choices == ("Yes", "No")
    monkeypatch.setattr(words, "page_lang", lambda: "de")
    assert words.option_labels(lesson, 2, told) is None
