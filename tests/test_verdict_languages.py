"""What a phone is told in its language beyond the lesson's texts (issue 45): the verdicts of
the parts, links, tap, tap_time and head kinds (xattn/classroom/parts.py, links.py, taps.py,
kinds.py), the class against the heads (xattn/lesson/aligns.py `versus`, its cache per
language in xattn/live/versus.py), a homework's own lines (xattn/live/homework.py), the round
before's chart title (xattn/live/messages.py), and a guard over every frame of the shipped
lessons and the docs' example: no text a phone reads in fr or ar is its English one, except
what is listed below with its reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from xattn.classroom import NO_QUESTION, Question, RoomView, Tally
from xattn.classroom.kinds import Key
from xattn.classroom.taps import time_bin_labels
from xattn.lesson import read_lesson, shipped_lessons, versus
from xattn.live.answers import class_step
from xattn.live.messages import earlier_chart, room_message
from xattn.live.prepared import StepUnavailable
from xattn.words import speaking

PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgAB"
       "SK+kcQAAAABJRU5ErkJggg==")
PARTS = Question("parts", ("sink", "aligns", "position"), rows=("head 1", "head 2", "head 3"))
PARTS_KEY = Key(("aligns", "sink", "position"), parts=(("head 1", "aligns", ()),
                                                       ("head 2", "sink", ()),
                                                       ("head 3", "position", ())))
LINKS = Question("links", ("le", "chat", "noir"), rows=("the", "black", "cat"))
LINKS_KEY = Key(((0, 0), (1, 2), (2, 1)))
TAP = Question("tap", tuple("1234567"), rows=("1", "2", "3"), image=PNG)
TIME = Question("tap_time", time_bin_labels(20, 0.1), image=PNG)
HEAD = Question("head", ("L1 H1", "L1 H2", "L2 H1"))
_CODE = re.compile(r"`[^`]*`")

# (question, key, answer, what English says, what French says, what Arabic says)
CASES = {
    "parts right": (PARTS, PARTS_KEY, ("aligns", "sink", "position"), "**3 of 3 right**.",
                    "**3 sur 3 justes**.", "**3 أجزاء صحيحة من 3**."),
    "parts one wrong, one left": (
        PARTS, PARTS_KEY, ("aligns", "position", None),
        "**1 of 2 right** (1 not guessed): head 2: you said `position`, the measures say `sink`.",
        "**1 sur 2 juste** (1 sans réponse)\u00a0: head 2\u00a0: vous avez dit `position`, les mesures "
        "disent `sink`.",
        "**جزء واحد صحيح من 2** (جزء واحد دون إجابة): head 2: قلت `position`، والقياسات تقول "
        "`sink`."),
    "links exact": (LINKS, LINKS_KEY, ((0, 0), (1, 2), (2, 1)),
                    "**Right: the gold alignment exactly** (AER 0.00).",
                    "**Juste\u00a0: exactement l'alignement de référence** (AER 0,00).",
                    "**صحيح: المحاذاة المرجعية تمامًا** (AER 0.00)."),
    "links one gold of two": (
        LINKS, LINKS_KEY, ((0, 0), (1, 1)),
        "**Your AER 0.60**: 1 of your 2 links is gold, of the 3 gold links (lower AER is "
        "better; 0 is the gold alignment).",
        "**Votre AER\u00a0: 0,60**\u00a0: 1 de vos 2 liens est dans la référence, qui compte 3 liens (un "
        "AER plus bas est meilleur\u00a0; 0 est l'alignement de référence).",
        "**AER لديك 0.60**: رابط مرجعي واحد بين رابطين التي رسمتها، من أصل 3 في المحاذاة "
        "المرجعية (كلما قلّ AER كان أفضل؛ 0 هو المحاذاة المرجعية تمامًا)."),
    "tap on the peak": (TAP, Key((1, 2)), (1, 2),
                        "**Right**: you tapped the peak's patch (row 2, column 3).",
                        "**Juste**\u00a0: vous avez touché le carreau du pic (ligne 2, colonne 3).",
                        "**صحيح**: لمست مربع الذروة (الصف 2، العمود 3)."),
    "tap next to it": (TAP, Key((1, 2)), (2, 3), "next to the peak's patch",
                       "à côté du carreau du pic", "بجوار مربع الذروة"),
    "tap 3 patches away": (
        TAP, Key((1, 2)), (1, 5),
        "**Not this time**: you tapped row 2, column 6, 3 patches from the peak's patch (row 2, "
        "column 3).",
        "**Pas cette fois**\u00a0: vous avez touché ligne 2, colonne 6, à 3 carreaux du carreau du "
        "pic (ligne 2, colonne 3).",
        "**ليس هذه المرة**: لمست الصف 2، العمود 6، على بُعد 3 مربعات من مربع الذروة (الصف 2، "
        "العمود 3)."),
    "a moment 2 bins away": (TIME, Key(5), 3, "2 time bins from the peak's moment (0.50–0.60 s)",
                             "à 2 tranches de temps du moment du pic (0.50–0.60 s)",
                             "على بُعد فترتين زمنيتين من لحظة الذروة (0.50–0.60 s)"),
    "a moment 11 bins away": (TIME, Key(0), 11, "11 time bins from", "à 11 tranches de temps",
                              "على بُعد 11 فترةً زمنية"),
    "the head that tells time": (HEAD, Key("L2 H1"), "L2 H1", "`L2 H1` tells time best",
                                 "`L2 H1` indique le mieux le moment",
                                 "`L2 H1` هو الأفضل في تحديد الوقت"),
    "another head": (HEAD, Key("L2 H1"), "L1 H1", "the head whose peaks land nearest the words' "
                     "times is `L2 H1`", "la tête dont les pics tombent au plus près",
                     "الرأس الذي تقع ذُراه أقرب"),
}


@pytest.mark.parametrize("case", CASES)
def test_each_kinds_verdict_is_said_in_french_and_arabic_with_its_tokens_untouched(case):
    """English as before; French and Arabic by the catalog, in the language's plural form
    (Arabic: one, two, few, many), numbers per locale, the code spans byte for byte."""
    q, key, answer, en, fr, ar = CASES[case]
    said = {}
    for lang in ("en", "fr", "ar"):
        with speaking(lang):
            said[lang] = q.of.verdict(q, key, answer)
    for lang, want in (("en", en), ("fr", fr), ("ar", ar)):
        assert want in said[lang], (lang, said[lang])
    assert said["fr"] != said["en"] != said["ar"]
    for lang in ("fr", "ar"):
        assert sorted(_CODE.findall(said[lang])) == sorted(_CODE.findall(said["en"]))


def test_the_verdicts_value_and_the_csvs_words_stay_english():
    """What is stored and written to the CSV (`named`) is the same in every language."""
    named = {}
    for lang in ("en", "fr", "ar"):
        with speaking(lang):
            named[lang] = (TAP.of.named(TAP, (1, 2)), LINKS.of.named(LINKS, (1, 2)),
                           TAP.encode((1, 2)), TIME.encode(3), PARTS.encode(("aligns", None,
                                                                             "sink")))
    assert named["fr"] == named["ar"] == named["en"]
    assert named["en"][0] == ("1-2", "row 2, column 3")


# --- the class against the heads -------------------------------------------------------------
@pytest.fixture(scope="module")
def pair_step():
    """The short lesson's last step (the class links words against a model's heads)."""
    lesson = shipped_lessons()["short"]
    n = next(k for k in range(1, len(lesson.steps) + 1)
             if (q := class_step(lesson, k)[1].question) is not None and q.kind == "links")
    return lesson, n, *class_step(lesson, n)


def test_the_class_against_the_heads_is_said_in_the_phones_language(pair_step):
    """The table's heads and names, the line, the numbers per locale; the numbers equal."""
    _, _, a, told = pair_step
    truth = told.truth
    counts = {link: 3 for link in truth}
    lines = {}
    for lang in ("en", "fr", "ar"):
        with speaking(lang):
            lines[lang] = versus(a, counts, 3)
    en, fr, ar = lines["en"], lines["fr"], lines["ar"]
    assert en.line.startswith("AER (lower is better): the class 0.00 · ")
    assert "| | AER | precision | recall |" in en.table
    assert fr.line.startswith("AER (plus bas, c'est mieux)\u00a0: la classe 0,00 · ")
    assert "| | AER | précision | rappel |" in fr.table
    assert "| **la classe** (liens tracés par plus de la moitié de 3) | 0,000 |" in fr.table
    assert "meilleure tête" in fr.line and "أفضل رأس" in ar.line
    assert ar.line.startswith("AER (الأقل أفضل): الصف 0.00 · ")
    assert "| | AER | الدقة | الاستدعاء |" in ar.table
    assert fr.aer == en.aer == ar.aer and (fr.shares == en.shares).all()
    digits = [sorted(re.findall(r"\d+[.,]\d+", v.table)) for v in (en, fr)]
    assert [d.replace(",", ".") for d in digits[1]] == digits[0]


def test_the_versus_is_made_once_per_language_not_once_for_all(pair_step):
    """`class_versus` is cached per server: a French phone never gets the English table."""
    from xattn.figures.class_words import VERSUS_ALT_YOURS
    from xattn.figures.words import chart_words
    from xattn.live.versus import class_versus

    _, _, a, told = pair_step
    counts = {link: 1 for link in told.truth[:2]}
    with speaking("en"):
        en = class_versus(a, counts, 2, "you")
    with speaking("fr"):
        fr = class_versus(a, counts, 2, "you")
        yours = chart_words("fr")(VERSUS_ALT_YOURS)
        assert yours.startswith("Petites cartes de chaleur") and "vos liens" in yours
    assert fr.table != en.table and "**vous**" in fr.table and "**you**" in en.table
    with speaking("fr"):
        assert class_versus(a, counts, 2, "you") is fr


def test_a_revealed_pair_step_sends_each_phone_the_line_in_its_language(pair_step):
    lesson, n, _, told = pair_step
    counts = dict.fromkeys(told.truth, 2)
    view = RoomView("HJK23M", n, len(lesson.steps), "revealed", 1, told.question, counts, 2)
    rooms = {lang: json.loads(room_message(view, lesson, None, lang).room)
             for lang in ("en", "fr", "ar")}
    assert "the class" in rooms["en"]["answer"]["versus"]
    assert "la classe" in rooms["fr"]["answer"]["versus"]
    assert "الصف" in rooms["ar"]["answer"]["versus"]
    assert rooms["fr"]["answer"]["charts"][0]["alt"].startswith("Petites cartes de chaleur")
    assert rooms["fr"]["ask"]["choices"] == rooms["en"]["ask"]["choices"]


def test_the_class_charts_text_alternative_is_in_the_phones_language():
    """Its title and axes are the figure's (English, `ALLOWED`); its alt, which a screen
    reader says, is the phone's language, with the range note of a binned number."""
    lesson = shipped_lessons()["short"]
    n = next(k for k in range(1, len(lesson.steps) + 1)
             if (q := class_step(lesson, k)[1].question) is not None and q.kind == "number")
    told = class_step(lesson, n)[1]
    view = RoomView("HJK23M", n, len(lesson.steps), "revealed", 1, told.question,
                    {told.truth: 2}, 2)
    alts = {lang: json.loads(room_message(view, lesson, None, lang).room)["answer"]["charts"][0]
            ["alt"] for lang in ("en", "fr", "ar")}
    assert alts == {"en": "Bar chart of the class's predictions, one bar per answer. The right "
                          "answer is outlined.",
                    "fr": "Diagramme en barres des prédictions de la classe, une barre par "
                          "réponse. La bonne réponse est encadrée.",
                    "ar": "مخطط أعمدة لتوقعات الصف، عمود لكل إجابة. الإجابة الصحيحة محاطة "
                          "بإطار."}
    token = next(k for k in range(1, len(lesson.steps) + 1)
                 if class_step(lesson, k)[1].row is not None)
    told = class_step(lesson, token)[1]
    view = RoomView("HJK23M", token, len(lesson.steps), "revealed", 1, told.question,
                    {told.truth: 2}, 2)
    taps = json.loads(room_message(view, lesson, None, "fr").room)["answer"]["charts"][0]
    assert taps["alt"].startswith("Deux lignes de couleur\u00a0: la part de la classe")
    number = Question("number", low=0, high=1, decimals=2)
    many = Tally(1, 1, number, {k / 100: 1 for k in range(30)}, n_answered=30)
    with speaking("fr"):
        chart = earlier_chart(many)
    assert chart["alt"].endswith("Les réponses sont comptées en 20 intervalles égaux de "
                                 "l'échelle.")
    assert chart["title"].endswith("(30 réponses), comptées en 20 intervalles")


# --- a homework's own lines, the round before --------------------------------------------------
def _checked_short():
    """The short lesson with its second step asked before and after the lesson (room steps
    1 and 7)."""
    text = (Path(__file__).resolve().parent.parent / "xattn" / "lesson" / "lessons" /
            "short.toml").read_text()
    return read_lesson("check = [2]\n" + text)


@pytest.mark.parametrize("lang, locked, held, asking, closed, unanswered", [
    ("fr", "Répondez d'abord au test avant la leçon (étape 1)", "(étape 7)",
     "Choisissez votre réponse", "Le devoir est clos", "avant la clôture du devoir"),
    ("ar", "أجب أولًا عن اختبار ما قبل الدرس (الخطوة 1)", "(الخطوة 7)", "اختر إجابتك",
     "الواجب مغلق", "قبل إغلاق الواجب"),
])
def test_a_homeworks_own_lines_are_in_the_phones_language(lang, locked, held, asking, closed,
                                                          unanswered):
    from xattn.live.homework import step_message

    lesson = _checked_short()
    n_steps = len(lesson.steps)
    view = RoomView("HJK23M", 1, n_steps, "asking", 1, NO_QUESTION, closes_at=4e9)
    first = class_step(lesson, 1)[1].question
    assert dict(lesson.checks())[1] == 7                          # the same question after
    assert step_message(view, lesson, 2, {}, lang)["room"]["line"].startswith(locked)
    held_line = step_message(view, lesson, 1, {1: (first.choices[0], None)}, lang)["room"]
    assert held_line["phase"] == "held" and held in held_line["line"]
    assert step_message(view, lesson, 1, {}, lang)["room"]["line"].startswith(asking)
    shut = RoomView("HJK23M", 1, n_steps, "closed", 1, NO_QUESTION, closes_at=1.0)
    done = step_message(shut, lesson, 3, {}, lang)
    assert done["room"]["line"].startswith(closed) and unanswered in done["me"]["verdict"]
    english = step_message(shut, lesson, 3, {}, "en")
    assert english["room"]["line"] == "The homework is closed: every step's answer is shown."
    assert done["room"]["ask"]["choices"] == english["room"]["ask"]["choices"]


def test_the_round_befores_chart_title_is_in_the_phones_language():
    q = Question("choice", ("up", "down"))
    tally = Tally(1, 1, q, {"up": 2, "down": 1}, n_answered=3)
    titles = {}
    for lang in ("en", "fr", "ar"):
        with speaking(lang):
            titles[lang] = earlier_chart(tally)["title"]
    assert titles == {"en": "Round 1: how the class answered (3 answers)",
                      "fr": "Tour 1\u00a0: ce qu'a répondu la classe (3 réponses)",
                      "ar": "الجولة 1: كيف أجاب الصف (3 إجابات)"}


# --- every frame of the shipped lessons and the docs' example --------------------------------
# What a phone in fr or ar may still read in English, and why (docs/languages.md lists them):
ALLOWED = (
    r"\.(code|kind|control|phase|lang|image)$",   # protocol words, not shown
    r"\.(choices|rows)\[\d+\]$",                  # the tokens, the values sent back
    r"\.mine$|\.mine\[\d+\]$",                    # the value sent: the same in every language
    r"\.charts\[\d+\]\.panels",                   # tokens, marks (names: test_chart_words)
    r"\.ask\.labels\[\d+\]$",                     # head_jobs' job names (xattn/lesson/computed.py)
)


def _strings(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _strings(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _strings(v, f"{path}[{i}]")
    elif isinstance(x, str):
        yield path, x


def _words(html: str) -> bool:
    """Whether ``html`` says words (not only tokens, code, numbers and signs)."""
    return bool(re.search(r"[A-Za-z]{3,}", re.sub(r"<code>.*?</code>|<[^>]+>|\bAER\b", "",
                                                  html)))


def _wrong(q, truth):
    if q.kind == "number":
        return q.low if abs(q.low - float(truth)) > 0.01 else q.high
    if q.kind == "parts":
        return tuple(q.choices[0] for _ in q.rows)
    if q.kind in ("links", "tap"):
        return ((0, 0),) if q.kind == "links" else (0, 0)
    return next(o for o in q.of.options(q) if o != truth)


def _frames(lesson, n: int, lang: str) -> dict:
    """Step ``n`` of ``lesson`` as a phone in ``lang`` reads it: asking, revealed, and the
    verdicts of a right and a wrong answer."""
    told = class_step(lesson, n)[1]
    q = told.question or NO_QUESTION
    out = {}
    for phase in ("asking", "revealed"):
        m = room_message(RoomView("HJK23M", n, len(lesson.steps), phase, 1, q), lesson, None,
                         lang)
        out[phase] = json.loads(m.room)
    if told.question is not None:
        right = () if told.truth is None else (("right", told.truth),)   # a poll: none
        for which, value in (*right, ("wrong", _wrong(q, told.truth))):
            out[which] = m.personal(q.encode(value))
    return out


def _english_left(lesson, steps) -> list:
    """Every (step, language, path, text) a phone reads in fr or ar as in en (`ALLOWED`
    aside); a step whose weights this server cannot make is skipped, and a
    lesson none of whose steps it can make skips the test."""
    left, built = [], 0
    for n in steps:
        try:
            en = dict(_strings(_frames(lesson, n, "en")))
        except StepUnavailable:
            continue
        built += 1
        for lang in ("fr", "ar"):
            theirs = dict(_strings(_frames(lesson, n, lang)))
            assert en.keys() <= theirs.keys(), (n, lang)     # (+ options' labels: ask.shown)
            left += [(n, lang, path, text) for path, text in theirs.items()
                     if text == en.get(path) and _words(text)
                     and not any(re.search(p, path) for p in ALLOWED)]
    if not built:
        pytest.skip(f"no step of {lesson.title!r} can be made on this server")
    return left


@pytest.mark.parametrize("name", ["short", "cross-attention", "en-de"])
def test_no_frame_of_a_shipped_lesson_reads_english_in_french_or_arabic(name):
    """Every step of each shipped lesson (a step whose model is not on this server skipped),
    asking and revealed, and a right and a wrong answer's verdict: every text with words
    differs from the English, but for `ALLOWED`."""
    lesson = shipped_lessons()[name]
    assert _english_left(lesson, range(1, len(lesson.steps) + 1)) == []


def test_the_docs_example_in_french_and_arabic_says_its_verdicts_in_them():
    """docs/examples/image-and-clip.toml (tap, head, tap_time on the shipped toy models),
    given French and Arabic titles (a lesson file's own texts: their words stay the
    lecturer's): the phone's own words and every verdict are in French and Arabic."""
    text = (Path(__file__).resolve().parent.parent / "docs" / "examples" /
            "image-and-clip.toml").read_text()
    head, *steps = text.split("\n[[step]]")
    titled = "".join(f"\n[[step]]{s}\n[step.fr]\ntitle = \"Étape {k}\"\n[step.ar]\n"
                     f"title = \"الخطوة {k}\"\n" for k, s in enumerate(steps, 1))
    lesson = read_lesson(head + titled)
    own = {t.strip() for step in lesson.steps for t in (step.title, step.text, step.look) if t}
    left = [(n, lang, path, t) for n, lang, path, t in
            _english_left(lesson, range(1, len(lesson.steps) + 1))
            if not path.endswith((".about", ".question")) and t.strip() not in own]
    assert left == []
    fr = _frames(lesson, 3, "fr")
    assert fr["right"]["verdict"].startswith("<p><strong>Juste</strong>\u00a0: vous avez touché le "
                                             "moment du pic")
    assert _frames(lesson, 1, "ar")["wrong"]["verdict"].startswith(
        "<p><strong>ليس هذه المرة</strong>: لمست الصف")


# --- a homework's closing time on the phone, in the page's language ---------------------------
def test_a_homeworks_closing_time_is_written_in_the_pages_language_not_the_browsers(chromium):
    """A French page in a German browser writes *lun. 7 déc.*, not *Mo., 7. Dez.*
    (``view.js``: ``toLocaleString(LANG, ...)``); the phone's own words are French."""
    from xattn.server.phone import page_html

    closes = 1796637600                               # Monday 7 December 2026, 10:00 UTC
    room = {"code": "LANGS", "mode": "homework", "n_steps": 2, "version": 1,
            "phase": "asking", "closes_at": closes}
    ask = {"kind": "choice", "control": "pills", "prompt": "<p>Choisissez.</p>",
           "choices": ["oui", "non"]}
    step = {"now": closes - 3 * 86400, "me": {"mine": None, "level": None}, "room": {
        **room, "step": 1, "round": 1, "closed": False, "timer": None, "title": "Un",
        "steps": ["open", "open"], "reads": False, "question": "<p>Q ?</p>", "about": "",
        "note": None, "ask": ask, "lang": "fr", "line": "Choisissez votre réponse"}}
    context = chromium.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                   has_touch=True, locale="de-DE", timezone_id="UTC")
    page = context.new_page()
    page.route("**/live/LANGS/events", lambda route: route.fulfill(
        status=200, headers={"content-type": "text/event-stream"},
        body="retry: 600000\ndata: " + json.dumps({"now": step["now"], "room": room}) + "\n\n"))
    page.route("**/live/LANGS/step/*", lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps(step)))
    page.route("**/live/LANGS/join", lambda route: route.fulfill(status=503, body="{}"))
    page.route("http://phone.test/?room=LANGS", lambda route: route.fulfill(
        status=200, content_type="text/html; charset=utf-8",
        body=page_html({"code": "LANGS"}, "fr")))
    try:
        page.goto("http://phone.test/?room=LANGS")
        page.wait_for_function("document.getElementById('hw').textContent.length > 0",
                               timeout=60_000)
        said = page.inner_text("#hw")
        assert "déc." in said and "lun." in said and "10:00" in said, said
        assert "Dez" not in said and "Mo." not in said
    finally:
        context.close()
