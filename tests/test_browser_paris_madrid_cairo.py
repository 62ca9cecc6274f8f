"""Issue 45's "done when", end to end in Chromium on a server of its own (a fresh class
store): a lecturer in Paris (the lecturer's page with ``?lang=fr``), a student in Madrid (a
phone whose browser is es-ES) and one in Cairo (ar-EG) take the lesson's first two steps
together (a token tapped, a number typed): both answer, the lecturer reveals, each step. Each screen says the step's title, question and verdict in its
own language (from the catalogs, as the server makes them), the revealed answer's numbers are
the same on the three (a decimal comma read as a point), the model's tokens the same bytes,
untranslated and isolated; the Arabic page runs right to left; and the class's CSV,
downloaded from the French page, is the CSV of the same class taken in English on the same
tab (which the test also sees in English)."""

from __future__ import annotations

import csv as csv_module
import html
import io
import json
import re

import pytest

from xattn.lesson import SHIPPED, STEPS, verdict
from xattn.lesson.translated import step_in
from xattn.live.prepared import prepared_attention
from xattn.markup import to_html
from xattn.words import speaking

NUMBER = re.compile(r"\d+(?:[.,]\d+)?")
CODE = re.compile(r"`([^`]+)`")
TAPS = (5, 2)             # Madrid taps the answer ("the (5)"), Cairo a wrong one ("cat")
TYPED = ("1", "0.8")      # step 2, a row's sum: Madrid types the answer, Cairo a wrong one


def told(lang: str, n: int = 1):
    """What the lesson's step ``n`` tells of its weights, in ``lang``."""
    step = STEPS[n - 1]
    a = prepared_attention(step)
    with speaking(lang):
        return step.tell(a, step.layer(a.n_layers))


def text_of(markdown: str) -> str:
    """The words a browser shows for the lesson's Markdown."""
    return html.unescape(re.sub(r"<[^>]+>", "", to_html(markdown))).strip()


def numbers(text: str) -> list[str]:
    return [n.replace(",", ".") for n in NUMBER.findall(text)]


def a_class(chromium, host, lecturer: str, phones: dict[str, str]) -> list:
    """A class on step 1 (a token question) started on the lecturer's page ``host``
    (``?lang=lecturer``; "": the page's default): its phones (name → browser locale) tap
    `TAPS`, the lecturer reveals. The phones."""
    from devtools.browser import Phone

    host.start(f"class=new&lang={lecturer}" if lecturer else "class=new")
    shown = []
    try:
        for (name, locale), tap in zip(phones.items(), TAPS, strict=True):
            phone = Phone(chromium, name, 390, 844, locale=locale)
            shown.append(phone)
            phone.open(host.student_url)
            phone.tap_option(tap)
            phone.wait_receipt("saved")
        host.act("reveal", "!!document.querySelector('.st-key-class_next')", "reveal")
        for phone in shown:            # (`Phone.on_step` reads "step 1 of", in English)
            phone.wait("!document.getElementById('reveal').hidden && document.getElementById("
                       "'answer').textContent.length > 0", what="the answer revealed")
    except BaseException:
        for phone in shown:
            phone.close()
        raise
    return shown


def next_step(host, phones: list) -> None:
    """The lecturer's *Next step*: step 2 (a number), typed by the phones (`TYPED`), then
    revealed."""
    host.act("class_next", "!!document.querySelector('.st-key-reveal')", "next step")
    for phone, typed in zip(phones, TYPED, strict=True):
        phone.wait("document.getElementById('title').textContent.startsWith('2. ') && "
                   "document.getElementById('number')", what="step 2 asking")
        phone.send_number(typed)
        phone.wait(f"document.getElementById('receipt').classList.contains('saved') && "
                   f"document.getElementById('receipt').textContent.includes({typed[-1]!r})",
                   what=f"{typed} saved")
    host.act("reveal", "!!document.querySelector('.st-key-class_next')", "reveal step 2")
    for phone in phones:
        phone.wait("document.getElementById('title').textContent.startsWith('2. ') && "
                   "!document.getElementById('reveal').hidden && "
                   "document.getElementById('answer').textContent.length > 0",
                   what="step 2's answer revealed")


def class_csv(host) -> str:
    with host.page.expect_download() as info:
        host.press("class_csv")
    download = info.value
    assert download.failure() is None, download.failure()
    return download.path().read_text(encoding="utf-8")


def phone_screen(phone) -> dict:
    return phone.page.evaluate("""(() => {
      const q = (s) => document.querySelector(s), codes = (s) =>
        [...document.querySelectorAll(s)].map((c) => [c.textContent,
          c.getAttribute('translate'), c.getAttribute('dir')]);
      return {lang: document.documentElement.lang, dir: document.documentElement.dir,
              title: q('#title').textContent, prompt: q('#prompt').textContent.trim(),
              verdict: q('#verdict').textContent.trim(), answer: q('#answer').textContent,
              tokens: codes('#answer code'), pills: codes('#controls bdi')};
    })()""")


def host_screen(host, answer: str) -> dict:
    """The lecturer's page once it shows ``answer`` (its Markdown): its headings, its
    Markdown blocks' text and the code (tokens) in each."""
    host.idle(f"document.body.innerText.includes({json.dumps(text_of(answer))})")
    return host.page.evaluate("""(() => {
      const said = [...document.querySelectorAll('[data-testid="stMarkdownContainer"]')];
      return {lang: new URLSearchParams(location.search).get('lang'),
              heads: [...document.querySelectorAll('h2')].map((h) => h.textContent),
              texts: said.map((m) => m.innerText),
              codes: said.map((m) => [...m.querySelectorAll('code')].map((c) =>
                c.textContent))};
    })()""")


@pytest.fixture(scope="module")
def class_server(tmp_path_factory):
    """A server of its own (~8 s) on a fresh class store: the shared ``server`` keeps the
    user's default store, where its 12 classes an hour per address (docs/classroom.md) run
    out after a few runs of the suite on one machine."""
    from devtools.browser import ARTIFACTS, StreamlitServer

    tmp = tmp_path_factory.mktemp("paris")
    env = {"XATTN_CLASS_STORE": str(tmp / "classes.sqlite3"), "XATTN_REDIS_URL": "",
           "XATTN_LIMITS": "new_rooms=100/3600"}
    with StreamlitServer(log=ARTIFACTS / "paris-server.log", env=env) as server:
        yield server


def test_paris_madrid_and_cairo_take_one_class_with_the_same_numbers(class_server, chromium):
    from devtools.browser import Host

    server = class_server
    en, fr = told("en"), told("fr")
    host = Host(chromium, server.url, 1024, 900)       # one tab: the second class loads warm
    phones = []
    try:
        phones = a_class(chromium, host, "fr", {"Madrid": "es-ES", "Cairo": "ar-EG"})
        paris, madrid, cairo = host_screen(host, fr.answer), *map(phone_screen, phones)
        next_step(host, phones)
        second = [host_screen(host, told("fr", 2).answer), *map(phone_screen, phones)]
        csv = class_csv(host)
        for phone in phones:
            phone.close()
        phones = a_class(chromium, host, "", {"London": "en-GB", "Boston": "en-US"})
        london = host_screen(host, en.answer)
        next_step(host, phones)
        english_csv = class_csv(host)
    finally:
        for each in [host, *phones]:
            each.close()

    # Paris: the step's title and the revealed answer in French, from the lesson's catalog
    assert paris["lang"] == "fr"
    assert any(step_in(SHIPPED, 1, "fr").title in h for h in paris["heads"]), paris["heads"]
    answer = text_of(fr.answer)
    assert fr.answer != en.answer
    paris_answer = next(t for t in paris["texts"] if answer in t)
    codes = next(c for t, c in zip(paris["texts"], paris["codes"], strict=True)
                 if answer in t)
    # Madrid and Cairo: the title, question and verdict in each phone's language
    for screen, lang, tap in ((madrid, "es", TAPS[0]), (cairo, "ar", TAPS[1])):
        said = told(lang)
        assert screen["lang"] == lang
        assert screen["title"] == f"1. {step_in(SHIPPED, 1, lang).title}"
        assert screen["prompt"].endswith(" " + text_of(said.prompt))     # after "Your guess."
        with speaking(lang):
            assert screen["verdict"] == text_of(verdict(said, tap))
        assert screen["answer"] == text_of(said.answer)
    assert madrid["dir"] == "ltr" and cairo["dir"] == "rtl"
    assert len({madrid["verdict"], cairo["verdict"]}) == 2           # right, and wrong
    assert len({paris_answer, madrid["answer"], cairo["answer"]}) == 3
    # the same numbers on the three screens, and the English answer's
    assert numbers(text_of(en.answer)) == numbers(madrid["answer"]) == numbers(cairo["answer"])
    assert numbers(answer) == numbers(text_of(en.answer)) and answer in paris_answer
    assert "0,331" in paris_answer and "0,331" in madrid["answer"] and "0.331" in cairo["answer"]
    # the model's tokens: the same bytes everywhere, marked untranslated and isolated
    tokens = CODE.findall(en.answer)
    assert codes == tokens
    assert madrid["tokens"] == cairo["tokens"] == [[t, "no", "auto"] for t in tokens]
    assert madrid["pills"] == cairo["pills"]
    assert [t for t, _, _ in madrid["pills"]] == list(en.question.choices)
    assert all(tr == "no" and d == "auto" for _, tr, d in madrid["pills"])
    assert london["lang"] is None and any(STEPS[0].title in h for h in london["heads"])
    # the class's CSV: the English class's, whatever language the lecturer and phones speak
    assert csv and csv == english_csv
    rows = list(csv_module.DictReader(io.StringIO(csv)))
    assert {(r["step"], r["answer"], r["count"]) for r in rows} >= {
        ("1", "the (5)", "1"), ("1", "cat", "1")}, rows
    assert sum(int(r["count"]) for r in rows if r["step"] == "2") == 2, rows
    on_step_two(*second)


def on_step_two(paris: dict, madrid: dict, cairo: dict) -> None:
    """Step 2 revealed (a number: a row's weights and their sum): its title, the verdicts
    and the answer in each screen's language, the same numbers and tokens."""
    en = told("en", 2)
    assert any(step_in(SHIPPED, 2, "fr").title in h for h in paris["heads"]), paris["heads"]
    answer = text_of(told("fr", 2).answer)
    assert any(answer in t for t in paris["texts"])
    for screen, lang, typed in ((madrid, "es", TYPED[0]), (cairo, "ar", TYPED[1])):
        said = told(lang, 2)
        assert screen["title"] == f"2. {step_in(SHIPPED, 2, lang).title}"
        assert screen["prompt"].endswith(" " + text_of(said.prompt))
        with speaking(lang):
            assert screen["verdict"] == text_of(verdict(said, float(typed)))
        assert screen["answer"] == text_of(said.answer)
        assert [t for t, _, _ in screen["tokens"]] == CODE.findall(en.answer)
    assert "1,000" in answer and "1,000" in madrid["answer"] and "1.000" in cairo["answer"]
    assert numbers(text_of(en.answer)) == numbers(answer) == numbers(madrid["answer"]) \
        == numbers(cairo["answer"])
