"""The lesson's own words in every phone's language (issue 45): the ``lesson`` catalogs
(xattn/words.py, xattn/locale/<lang>/LC_MESSAGES/lesson.po), a lesson file's texts per
language (xattn/lesson/translated.py), and a room built once per language in use
(xattn/live/build.py, xattn/classroom/hub.py)."""

from __future__ import annotations

import asyncio
import json
import re
import threading

import pytest
from babel.messages.plurals import get_plural

from devtools.lesson_catalog import msgids
from devtools.protocol import run_async
from xattn.classroom import RoomView, new_student_id
from xattn.classroom.hub import Hub
from xattn.lesson import LessonError, read_lesson, shipped_lessons
from xattn.lesson.lessonfile import Lesson
from xattn.lesson.translated import speaks, step_in, words_in
from xattn.live import build as build_module
from xattn.live import messages as messages_module
from xattn.live.answers import class_step
from xattn.live.messages import room_message
from xattn.words import LANGS, catalog, number, say, say_n, speaking

OTHERS = [lang for lang in LANGS if lang != "en"]
_NAME = re.compile(r"\{([a-z_][a-z0-9_]*)")
_FIELD = re.compile("«([a-z_]+)»")
_CODE = re.compile(r"<code>(.*?)</code>")
_DECIMAL = re.compile(r"\d+[.,]\d+")


# --- the catalogs --------------------------------------------------------------------------------
@pytest.mark.parametrize("lang", LANGS)
def test_every_msgid_is_in_every_catalog_and_none_is_unused(lang):
    """The msgids are the lesson's Python ``say`` literals and the shipped lessons' texts
    (devtools/lesson_catalog.py): a catalog with one missing, or one no longer said, fails."""
    wanted = msgids()
    have = {m.id for m in catalog(lang) if m.id}
    assert not wanted - have, f"{lang} lacks {sorted(map(str, wanted - have))[:5]}"
    assert not have - wanted, f"{lang} has unused {sorted(map(str, have - wanted))[:5]}"
    empty = [m.id for m in catalog(lang) if m.id and not all(
        m.string if isinstance(m.string, tuple) else (m.string,))]
    assert not empty, f"{lang}: untranslated {empty[:5]}"


@pytest.mark.parametrize("lang", OTHERS)
def test_translations_keep_every_placeholder_field_code_span_and_formula(lang):
    """``{name}`` (a plural form may drop ``{n}`` or a number word), «field», `code` and
    $formula$ are the same in each translation as in the English."""
    for m in catalog(lang):
        if not m.id:
            continue
        english = m.id if isinstance(m.id, str) else m.id[1]
        forms = m.string if isinstance(m.string, tuple) else (m.string,)
        for text in forms:
            names, want = set(_NAME.findall(text)), set(_NAME.findall(english))
            if isinstance(m.id, tuple):
                assert names <= want | {"n"}, (lang, m.id, text)
            else:
                assert names == want, (lang, m.id, text)
            assert set(_FIELD.findall(text)) == set(_FIELD.findall(english)), (lang, text)
            assert text.count("`") == english.count("`"), (lang, text)
            assert text.count("$") == english.count("$"), (lang, text)
            for span in re.findall(r"`[^`]+`", english):
                assert span in text, (lang, span, text)   # a token or code never translated


@pytest.mark.parametrize("lang", LANGS)
def test_plural_forms_are_babels(lang):
    assert catalog(lang).plural_forms == get_plural(lang).plural_forms


def test_a_plural_takes_the_languages_cldr_form():
    """Arabic's six forms (zero, one, two, few, many, other), French's "one" for 0 and 1."""
    with speaking("ar"):
        said = [say_n("{word} head", "{word} heads", n, word="x") for n in (0, 1, 2, 3, 11, 100)]
    assert said == ["لا رؤوس", "رأس واحد", "رأسان", "3 رؤوس", "11 رأسًا", "100 رأس"]
    with speaking("fr"):
        assert [say_n("{word} head", "{word} heads", n, word="x") for n in (0, 1, 2)] == \
            ["0 tête", "1 tête", "2 têtes"]
    assert say_n("{word} head", "{word} heads", 4, word="four") == "four heads"


def test_numbers_in_prose_follow_the_language_and_texts_go_in_untouched():
    with speaking("fr"):
        assert say("{target} looks most at {source} ({weight:.3f}).", target="`le`",
                   source="`the` (4)", weight=0.5) == "`le` regarde surtout `the` (4) (0,500)."
    with speaking("de"):
        assert say("**Off by {off:g}**: you said {said:g}; the page shows {true:.3f}.",
                   off=0.2, said=1234.5, true=0.25) == \
            "**Um 0,2 daneben**: Sie sagten 1.234,5; die Seite zeigt 0,250."
    assert (number(0.125, ".1%", "fr"), number(0.125, ".1%", "en")) == ("12,5\xa0%", "12.5%")
    assert say("**Right**: {true}.", true="`1,5`") == "**Right**: `1,5`."   # a token as is


def test_a_bad_language_or_number_is_refused_naming_what_came():
    with pytest.raises(ValueError, match="one of en, fr, de, es, zh, ar, received 'pt'"):
        with speaking("pt"):
            pass
    with pytest.raises(TypeError, match="a language is a str such as 'fr', received int"):
        with speaking(3):
            pass
    with pytest.raises(TypeError, match="an int or float, received bool"):
        number(True)
    with pytest.raises(ValueError, match="received '.3e'"):
        number(0.5, ".3e")


def test_every_shipped_lesson_speaks_the_six_languages():
    for lesson in shipped_lessons().values():
        assert [lang for lang in LANGS if speaks(lesson, lang)] == list(LANGS), lesson.name


def test_a_check_step_says_its_own_words_in_the_language():
    lesson = read_lesson('title = "T"\ncheck = [1]\n[[step]]\ntitle = "One head"\n'
                         '[step.question]\ncomputed = "strongest_source"\n')
    assert [s.title for s in lesson.steps] == ["Before the lesson: One head", "One head",
                                               "After the lesson: One head"]
    # its one text is a msgid of the catalogs: it speaks French, its check's words too
    assert step_in(lesson, 1, "fr").title == "Avant la leçon\u00a0: Une tête"
    assert step_in(lesson, 3, "fr").text.startswith("**Le même test après la leçon.**")
    own = read_lesson('title = "T"\ncheck = [1]\n[[step]]\ntitle = "My head"\n'
                      '[step.question]\ncomputed = "strongest_source"\n')
    assert not speaks(own, "fr") and step_in(own, 1, "fr").title == "Before the lesson: My head"
    shipped = shipped_lessons()["short"]
    assert step_in(shipped, 2, "de").title == "Ein Head"


# --- a lesson file's texts per language -------------------------------------------------------
LESSON = '''
title = "Mine"
[fr]
title = "La mienne"
[[step]]
title = "One head"
text = "Each row is a target token."
look = "The row of «target»."
[step.fr]
title = "Une tête"
text = "Chaque ligne est un token cible."
[step.question]
computed = "strongest_source"
target = "chat"

[[step]]
title = "A poll"
[step.fr]
prompt = "Touchez une réponse."
options = ["Oui", "Non"]
[step.question]
kind = "poll"
prompt = "Tap one."
options = ["Yes", "No"]
'''


def test_a_lesson_file_carries_texts_per_language_and_travels_with_them():
    lesson = read_lesson(LESSON)
    assert lesson.language == "en" and set(lesson.texts) == {"fr"}
    assert lesson.texts["fr"]["title"] == "La mienne"
    again = Lesson.from_json(lesson.to_json())
    assert again.texts == lesson.texts and again.digest == lesson.digest
    fr = step_in(lesson, 1, "fr")
    assert (fr.title, fr.text) == ("Une tête", "Chaque ligne est un token cible.")
    assert fr.look == "The row of «target»."              # missing in fr: the lesson's own
    assert step_in(lesson, 2, "fr").ask.own.prompt == "Touchez une réponse."
    assert step_in(lesson, 2, "fr").ask.own.options == ("Yes", "No")   # the values stay
    assert words_in(lesson, "fr") == "fr" and words_in(lesson, "de") == "en"


@pytest.mark.parametrize("text, problem", [
    (LESSON.replace("[step.fr]\nprompt", "[step.fr]\nwhat = 1\nprompt"),
     "step 2, `fr.what`: unknown key 'what'"),
    (LESSON.replace('options = ["Oui", "Non"]', 'options = ["Oui"]'),
     "step 2, `fr.options`: expected the step's 2 options in fr"),
    (LESSON.replace('title = "Mine"', 'title = "Mine"\nlanguage = "pt"'),
     "`language`: expected one of en, fr, de, es, zh, ar, found 'pt'"),
    (LESSON.replace("[fr]\ntitle", "[en]\ntitle"),
     "expected texts in a language other than the lesson's own (en); found [en] tables"),
    (LESSON.replace('text = "Chaque', 'text = "' + "x" * 3001 + '"\nlook = "Chaque'),
     "`fr.text`: expected at most 3,000 characters"),
])
def test_a_language_table_is_checked_like_the_lessons_own_texts(text, problem):
    with pytest.raises(LessonError) as err:
        read_lesson(text)
    assert any(problem in p for p in err.value.problems), err.value.problems


def test_a_phone_in_a_language_the_lesson_lacks_gets_its_own_language_said_in_the_message():
    """A lesson with French texts: a phone in German gets the English message (``lang``:
    "en", which the page says once), a French phone the French; one build each."""
    lesson = read_lesson(LESSON)
    _, told = class_step(lesson, 1)
    view = RoomView("HJK23M", 1, 2, "asking", 1, told.question)
    built = build_module.messages_by_language(view, lesson, None, ("de", "fr", "en"))
    de, fr, en = (json.loads(built[lang].room) for lang in ("de", "fr", "en"))
    assert built["de"] is built["en"] and de["lang"] == "en" and de["title"] == "One head"
    assert fr["lang"] == "fr" and fr["title"] == "Une tête"
    assert "Votre prédiction" in fr["ask"]["prompt"]         # the catalog's words around it
    poll = class_step(lesson, 2)[1]
    asked = room_message(RoomView("HJK23M", 2, 2, "asking", 1, poll.question), lesson, None,
                         "fr")
    ask = json.loads(asked.room)["ask"]
    assert ask["choices"] == ["Yes", "No"] and ask["shown"] == ["Oui", "Non"]


# --- a room in several languages --------------------------------------------------------------
class Counted:
    """`xattn.live.messages.room_message`, counting its builds by (version, language)."""

    def __init__(self, real):
        self.real, self.calls, self.lock = real, [], threading.Lock()

    def __call__(self, view, lesson, earlier=None, language=None):
        with self.lock:
            self.calls.append((view.version, language))
        return self.real(view, lesson, earlier, language)


def _frames(raw: bytes) -> list[dict]:
    return [json.loads(line[6:]) for block in raw.decode().split("\n\n")
            for line in block.split("\n") if line.startswith("data: ")]


async def _room_frame(f, step, phase, timeout=30.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        left = deadline - asyncio.get_running_loop().time()
        assert left > 0, "no such frame came"
        await asyncio.wait_for(f.wake.wait(), left)
        raw = f.take()
        for d in _frames(raw):
            if "room" in d and d["room"]["step"] == step and d["room"]["phase"] == phase:
                return d, raw


def test_a_room_in_six_languages_is_built_once_per_language_with_the_same_numbers(
        store, monkeypatch):
    """1,002 phones in six languages: each move is built 6 times (once per language in
    use, never per phone); phones in en, fr and ar see the step's words in their language,
    the same numbers and the tokens byte for byte; each phone's frame stays under 10 kB."""
    lesson = shipped_lessons()["short"]
    questions = [class_step(lesson, n)[1].question for n in (1, 2, 3)]
    code, secret = store.create_room(questions)
    counted = Counted(messages_module.room_message)
    monkeypatch.setattr(messages_module, "room_message", counted)
    monkeypatch.setattr(build_module, "room_lesson", lambda _store, _code: lesson)
    monkeypatch.setattr(build_module, "class_store", lambda: store)
    monkeypatch.setattr(build_module, "_warmed", {lesson.digest})   # no warming thread

    async def main():
        hub = Hub(store, build_module.build)
        hub.start()
        try:
            phones = [hub.subscribe(code, new_student_id(), lang=LANGS[k % 6])
                      for k in range(1002)]
            for f in phones:
                await _room_frame(f, 1, "asking")
            moves = {}
            for step, phase in ((2, "asking"), (2, "revealed")):
                before = len(counted.calls)
                if phase == "asking":
                    store.set_step(code, secret, step)
                else:
                    store.reveal(code, secret, step)
                got = [await _room_frame(f, step, phase) for f in phones]
                made = counted.calls[before:]
                assert len(made) == 6 and {lang for _, lang in made} == set(LANGS)
                assert max(len(raw) for _, raw in got) <= 10_000
                moves[phase] = {f.lang: d for f, (d, _) in zip(phones, got, strict=True)}
            return moves
        finally:
            hub.stop()
    moves = run_async(asyncio.wait_for(main(), 180))
    asked, shown = moves["asking"], moves["revealed"]
    assert [asked[lang]["room"]["title"] for lang in ("en", "fr", "ar")] == \
        ["One head", "Une tête", "رأس واحد"]
    assert "Votre prédiction" in asked["fr"]["room"]["ask"]["prompt"]
    rooms = {lang: shown[lang]["room"] for lang in ("en", "fr", "ar")}
    for lang in ("fr", "ar"):
        room, en = rooms[lang], rooms["en"]
        assert room["ask"]["choices"] == en["ask"]["choices"]          # the tokens asked
        said = room["answer"]["text"] + room["ask"]["prompt"] + room["question"]
        english = en["answer"]["text"] + en["ask"]["prompt"] + en["question"]
        assert sorted(_CODE.findall(said)) == sorted(_CODE.findall(english))   # byte for byte
        assert sorted(n.replace(",", ".") for n in _DECIMAL.findall(room["answer"]["text"])) \
            == sorted(_DECIMAL.findall(en["answer"]["text"]))          # the same numbers
        assert room["answer"]["charts"]
        for chart, theirs in zip(room["answer"]["charts"], en["answer"]["charts"], strict=True):
            assert [p.get("z") or [s["y"] for s in p.get("series", [])]
                    for p in chart["panels"]] == \
                [p.get("z") or [s["y"] for s in p.get("series", [])] for p in theirs["panels"]]
    assert "0,3" in rooms["fr"]["answer"]["text"] and "0.3" in rooms["en"]["answer"]["text"]


def test_the_docs_example_of_a_lesson_in_two_languages_runs():
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "lesson-files.md").read_text()
    (example,) = [b for b in re.findall(r"```toml\n(.*?)```", text, re.S) if "[step.fr]" in b]
    lesson = read_lesson(example)
    assert step_in(lesson, 1, "fr").title == "Une tête" and words_in(lesson, "zh") == "en"
    assert step_in(lesson, 2, "fr").ask.own.prompt == "Touchez une réponse."


def test_a_homework_step_is_in_the_phones_language_with_the_same_value():
    """A homework's phone asks for its own step (``GET /live/CODE/step/N``): the lesson's
    words in its language, its verdict too; the answer stored is the same value."""
    from xattn.classroom import NO_QUESTION
    from xattn.live.homework import step_message

    lesson = shipped_lessons()["short"]
    view = RoomView("HJK23M", 1, len(lesson.steps), "closed", 1, NO_QUESTION)
    poll = class_step(lesson, 1)[1].question
    mine = {1: (poll.choices[0], None)}
    fr, en = (step_message(view, lesson, 1, mine, lang) for lang in ("fr", "en"))
    assert (fr["room"]["title"], en["room"]["title"]) == ("Qu'attendez-vous\u00a0?",
                                                          "What do you expect?")
    assert fr["room"]["lang"] == "fr" and fr["room"]["titles"][1] == "Une tête"
    assert fr["room"]["ask"]["choices"] == en["room"]["ask"]["choices"]
    assert fr["room"]["ask"]["shown"][0] == "Sur le mot qu'il traduit"
    assert fr["me"]["mine"] == en["me"]["mine"] and "Vous avez dit" in fr["me"]["verdict"]


def test_a_verdict_names_the_option_in_the_words_the_phone_read():
    lesson = shipped_lessons()["short"]
    poll = class_step(lesson, 1)[1].question
    view = RoomView("HJK23M", 1, len(lesson.steps), "revealed", 1, poll, {poll.choices[0]: 1},
                    1, 1)
    fr, en = (room_message(view, lesson, None, lang) for lang in ("fr", "en"))
    text = poll.encode(poll.choices[0])
    assert "Vous avez dit <code>Sur le mot qu'il traduit</code>." in fr.personal(text)["verdict"]
    assert "<code>At the word it translates</code>" in en.personal(text)["verdict"]
    assert fr.personal(text)["mine"] == en.personal(text)["mine"] == poll.choices[0]


def test_a_phone_in_a_language_new_to_the_room_never_sees_another_languages_frame(store):
    """A French phone that opens its stream while the room's English message is being built
    waits for its own: its first room frame is French (a built message is never shown to a
    phone in another language)."""
    from xattn.classroom import Question
    from xattn.classroom.hub import Message

    code, _ = store.create_room([Question("choice", ("a", "b"))])
    gate, calls = threading.Event(), []

    def build(view, languages):
        calls.append(languages)
        if len(calls) == 1:
            gate.wait(10)                  # the English build, held until the French phone came
        return {lang: Message((view.code, view.version, view.phase, view.step, view.round),
                              json.dumps({"step": view.step, "phase": view.phase,
                                          "lang": lang}).encode(), view.step, view.round,
                              view.question, language=lang) for lang in languages}

    async def main():
        hub = Hub(store, build)
        hub.start()
        try:
            en = hub.subscribe(code, new_student_id(), lang="en")
            while not calls:
                await asyncio.sleep(0.01)
            fr = hub.subscribe(code, new_student_id(), lang="fr")
            gate.set()
            return [(await _room_frame(f, 1, "asking"))[0]["room"]["lang"] for f in (en, fr)]
        finally:
            hub.stop()
    assert run_async(asyncio.wait_for(main(), 60)) == ["en", "fr"]
    assert calls[0] == ("en",) and calls[-1] == ("en", "fr")


@pytest.mark.parametrize("lang", OTHERS)
def test_a_step_whose_weights_lack_what_it_needs_says_why_in_the_language(lang):
    """`missing`: "This step's answer needs other weights: ..." and the `NEEDS` reason it
    names, both from the lesson catalog (the reason filled in as said in the language)."""
    from xattn.lesson import NEEDS, STEPS, missing, needed
    from xattn.pipeline import Settings, run
    from xattn.sources import random_attention
    from xattn.words import translated

    a = random_attention(run(Settings()))                   # random: no gold, no training
    step = next(s for s in STEPS if "gold" in s.needs and missing(s, a) is not None)
    first = next(n for n in step.needs if not NEEDS[n][0](a))
    english = missing(step, a)
    assert english == "This step's answer needs other weights: " + NEEDS[first][1]
    with speaking(lang):
        said, why = missing(step, a), needed(step, a)
    reason = translated(NEEDS[first][1], lang)
    assert why == reason and reason != NEEDS[first][1]
    assert said == translated("This step's answer needs other weights: {why}", lang).replace(
        "{why}", reason)
    assert "needs other weights" not in said


def test_a_number_said_as_a_word_is_english_only_in_english():
    """«layers» of the alignment step and "the first two heads" are words in English only: in
    another language an English "two" inside its sentence would be wrong, so digits."""
    from xattn.lesson._words import number_word

    assert number_word(2) == "two" and number_word(17) == "17"
    for lang in OTHERS:
        with speaking(lang):
            assert number_word(2) == "2", lang
