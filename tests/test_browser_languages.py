"""The phone's page in other languages, in Chromium at 390 px, with no server (every request
answered here, as tests/test_classroom_kinds.py does): the pseudo-locale through axe, Arabic
right to left with nothing overflowing and its controls and receipt on the screen, and the
model's tokens byte for byte the same, untranslated and isolated, in every language. Last, a
real server (one of its own, ~10 s): three phones in three languages, and the CSV of their
class equal to an English class's; an answer refused (the step revealed while it was on its
way) told in French and in Arabic, the server's sentence in the phone's language; a phone's
picker switching it to German."""

from __future__ import annotations

import json

import pytest

from devtools.axe import audit, report

TOKENS = ["▁the", "cat", "قطة", "12,5", "猫", "l'"]
ASKS = {
    "tokens": {"kind": "token", "control": "tokens", "prompt": "<p>Which <code>token</code>?</p>",
               "choices": TOKENS},
    "links": {"kind": "links", "control": "links", "prompt": "<p>Link them.</p>",
              "rows": ["le", "chat", "قطة"], "choices": TOKENS[:4]},
}


def _phone(chromium, lang: str, ask: dict, room: dict | None = None):
    from xattn.server.phone import page_html

    frame = {"now": 0, "me": {"mine": None}, "room": {
        "code": "LANGS", "step": 3, "n_steps": 14, "round": 1, "version": 1,
        "phase": "asking", "title": "One", "question": "<p>Which?</p>", "about": "",
        "ask": ask, **(room or {})}}
    context = chromium.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                   has_touch=True)
    page = context.new_page()
    page.route("**/live/LANGS/events", lambda route: route.fulfill(
        status=200, headers={"content-type": "text/event-stream"},
        body=f"retry: 600000\ndata: {json.dumps(frame)}\n\n"))
    page.route("**/live/LANGS/join", lambda route: route.fulfill(status=503, body="{}"))
    page.route("http://phone.test/?room=LANGS", lambda route: route.fulfill(
        status=200, content_type="text/html; charset=utf-8",
        body=page_html({"code": "LANGS"}, lang)))
    page.goto("http://phone.test/?room=LANGS")
    page.wait_for_function("document.getElementById('controls').children.length > 0",
                           timeout=60_000)
    return context, page


def _tokens(page) -> list[tuple[str, str, str]]:
    return page.evaluate("""[...document.querySelectorAll('#controls bdi')].map((b) =>
        [b.textContent, b.getAttribute('dir'), b.getAttribute('translate')])""")


def test_the_pseudo_locale_passes_axe_at_390_px(chromium):
    context, page = _phone(chromium, "en-XA", ASKS["links"])
    try:
        assert page.evaluate("document.documentElement.lang") == "en-XA"
        assert "⟦" in page.inner_text("#controls")
        found = audit(page, "phone en-XA")
        assert not found.blocking(), report(found.blocking())
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    finally:
        context.close()


def test_arabic_is_right_to_left_with_nothing_overflowing(chromium):
    context, page = _phone(chromium, "ar", ASKS["links"])
    try:
        assert page.evaluate("[document.documentElement.lang, document.documentElement.dir]") \
            == ["ar", "rtl"]
        assert page.evaluate("getComputedStyle(document.getElementById('controls')).direction") \
            == "rtl"
        page.locator("#controls [data-key=source-1]").tap()
        page.wait_for_function("document.getElementById('receipt').textContent.length > 0")
        wide = page.evaluate("""(() => { const w = window.innerWidth;
            const out = [...document.querySelectorAll('body *')].filter((e) => {
              const r = e.getBoundingClientRect();
              return r.width && (r.left < -1 || r.right > w + 1); });
            return [document.documentElement.scrollWidth, w, out.map((e) => e.id || e.tagName)];
        })()""")
        assert wide[0] <= wide[1] and not wide[2], f"overflows at 390 px: {wide}"
        for sel in ("#receipt", "#controls [data-key=target-0]", "#controls [data-key=source-3]",
                    "#lang"):
            page.locator(sel).scroll_into_view_if_needed()
            box = page.locator(sel).bounding_box()
            assert box and 0 <= box["x"] and box["x"] + box["width"] <= 391, (sel, box)
        assert "رابط" in page.inner_text("#controls")          # "your link", in Arabic
    finally:
        context.close()


@pytest.mark.parametrize("name", sorted(ASKS))
def test_the_tokens_are_the_same_bytes_in_every_language(chromium, name):
    seen = {}
    for lang in ("en", "fr", "ar", "zh", "en-XA"):
        context, page = _phone(chromium, lang, ASKS[name])
        try:
            seen[lang] = _tokens(page)
            assert page.evaluate("[...document.querySelectorAll('#prompt code')].every("
                                 "(c) => c.getAttribute('translate') === 'no')")
        finally:
            context.close()
    assert all(t == seen["en"] for t in seen.values()), seen
    texts = [t for t, _, _ in seen["en"]]
    assert set(TOKENS[:4]) <= set(texts)
    assert all(d == "auto" and tr == "no" for _, d, tr in seen["en"])


POLL = {"kind": "poll", "control": "pills", "prompt": "<p>Touchez une réponse.</p>",
        "choices": ["Yes", "No"], "shown": ["Oui", "Non"]}


@pytest.mark.parametrize("lang, words, line", [
    ("de", "en", "Die Texte dieser Lektion sind auf Englisch."),
    ("fr", "fr", None),
])
def test_a_lesson_without_the_pages_language_says_so_in_one_line(chromium, lang, words, line):
    """A message whose words are in the lesson's own language (``lang``), not the page's: one
    line above the step says which, once; a lesson's options show their labels and send
    their values."""
    context, page = _phone(chromium, lang, POLL, {"lang": words})
    try:
        shown = page.locator("#texts-lang")
        if line is None:
            assert shown.is_hidden()
        else:
            assert shown.inner_text() == line
            assert page.locator("main").inner_text().count(line) == 1
        assert page.locator("#controls .pill").all_inner_texts() == ["Oui", "Non"]
        assert page.locator("#controls .pill bdi").count() == 0      # labels, not tokens
    finally:
        context.close()


WAIT_K = {"kind": "choice", "control": "pills", "prompt": "<p>Lesquels ?</p>",
          "choices": ["the first 2: ▁le قطة", "all 3"],
          "shown": [["les 2 premiers : ", "▁le", " ", "قطة", ""], "tous les 3"]}


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_an_option_said_in_pieces_keeps_its_tokens_untranslated(chromium, lang):
    """A computed option built from tokens (a wait-k choice) comes as its pieces: the pill
    reads the whole label, each token inside it a ``<bdi translate="no">`` of the same
    bytes, the words around them left to the page's language."""
    context, page = _phone(chromium, lang, WAIT_K)
    try:
        assert page.locator("#controls .pill").all_inner_texts() == [
            "les 2 premiers : ▁le قطة", "tous les 3"]
        assert _tokens(page) == [["▁le", "auto", "no"], ["قطة", "auto", "no"]]
    finally:
        context.close()


def test_three_phones_in_three_languages_make_the_english_csv(chromium, tmp_path):
    """A class of three phones (fr, es, ar by ``Accept-Language``) and one of three English
    phones tap the same answers on a real server: the two classes' CSVs are equal."""
    from devtools.browser import ARTIFACTS, Host, Phone, StreamlitServer
    from xattn.classroom import SQLiteStore, answers_csv

    store_path = tmp_path / "classes.sqlite3"
    env = {"XATTN_CLASS_STORE": str(store_path), "XATTN_REDIS_URL": ""}
    with StreamlitServer(log=ARTIFACTS / "languages-server.log", env=env) as server:
        store = SQLiteStore(store_path)
        csvs, phones, rooms, titles = [], [], [], []
        try:
            for langs in (("fr-FR,fr", "es-ES,es", "ar-EG,ar"), ("en", "en-GB", "en-US")):
                host = Host(chromium, server.url)
                code, key = host.start()
                rooms.append((code, key))
                host.close()
                for k, lang in enumerate(langs):
                    phone = Phone(chromium, f"phone {lang}", 390, 844)
                    phone.context.set_extra_http_headers({"Accept-Language": lang})
                    phones.append(phone.open(f"{server.url}?room={code}"))
                    expected = lang.split(",")[-1].split("-")[0]
                    assert phone.page.evaluate("document.documentElement.lang") == expected
                    titles.append(phone.page.locator("#title").inner_text())
                    phone.tap_option([2, 2, 0][k])
                    phone.wait_receipt("saved")
                tallies = store.results(code, key)
                step1 = [t for t in tallies if t.step == 1 and t.round == 1][0]
                assert sorted(step1.counts.values())[-2:] == [1, 2], step1.counts
                csvs.append(answers_csv(tallies))
            spanish = phones[1]              # its picker: German from now on, kept in a cookie
            spanish.page.select_option("#lang", "de")
            spanish.page.wait_for_function("document.documentElement.lang === 'de'")
            assert spanish.cookie("xattn_lang") == "de"
            assert spanish.page.evaluate("document.documentElement.dir") == "ltr"
            spanish.wait_receipt("saved")    # its answer, from the stream, as before
            _refused_in_their_language(store, *rooms[0], [phones[0], phones[2]])
        finally:
            for phone in phones:
                phone.close()
    assert csvs[0] == csvs[1]
    # the lesson's own words in each phone's language: French, Spanish, Arabic, then English
    assert len(set(titles[:3])) == 3 and titles[3] == titles[4] == titles[5]
    assert titles[3] not in titles[:3] and any("\u0600" <= c <= "\u06ff" for c in titles[2])


def _refused_in_their_language(store, code: str, key: str, phones) -> None:
    """Each phone's next tap is held on its way, the step revealed meanwhile: the server
    refuses it (``why.revealed``) and each phone says why in its own language."""
    from xattn.server.languages import words

    held = []
    for phone in phones:
        phone.page.route("**/live/*/answer", lambda route: held.append(route))
        phone.tap_option(1)
    for _ in range(600):
        if len(held) == len(phones):
            break
        phones[0].page.wait_for_timeout(50)
    assert len(held) == len(phones), "a tap was not sent"
    store.reveal(code, key, 1)
    for route in held:
        route.continue_()
    for phone in phones:
        lang = phone.page.evaluate("document.documentElement.lang")
        one = phone.page.evaluate("new Intl.NumberFormat(document.documentElement.lang)"
                                  ".format(1)")
        told = words(lang)["strings"]["why.revealed"].replace("{step}", one)
        phone.wait(f"document.getElementById('receipt').textContent.includes({json.dumps(told)})",
                   what=f"the refusal in {lang}: {told}")
        assert "revealed" not in phone.page.inner_text("#receipt")      # not the English
        phone.page.unroute("**/live/*/answer")
