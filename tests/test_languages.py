"""The phone page's catalogs (``xattn/locale/*/LC_MESSAGES/phone.po``, read with Babel:
``xattn/server/languages.py``): every language has every English key and no other, the same
``{name}``s, plurals by CLDR (Arabic's six forms), the pseudo-locale longer with its names kept,
a request's language negotiated, and each language's catalog small enough to ship."""

from __future__ import annotations

import gzip
import json
import re

import pytest
from babel import Locale
from babel.messages.plurals import get_plural
from catalog_checks import check_catalog, check_names

from xattn.server import languages as L
from xattn.server.scripts import asset

OTHERS = [lang for lang in L.LANGS if lang != "en"]


def _keys(lang: str) -> set[str]:
    return set(L.catalog(lang)["strings"])


@pytest.mark.parametrize("lang", OTHERS)
def test_every_catalog_has_every_english_key_and_no_other(lang):
    missing, extra = _keys("en") - _keys(lang), _keys(lang) - _keys("en")
    assert not missing and not extra, f"{lang}: missing {sorted(missing)}, extra {sorted(extra)}"
    empty = [m.id for m in L.messages(lang) if m.id and not all(
        m.string if isinstance(m.string, tuple) else (m.string,))]
    assert not empty, f"{lang}: untranslated {empty}"


@pytest.mark.parametrize("lang", OTHERS)
def test_every_translation_keeps_the_english_names(lang):
    en, theirs = L.catalog("en")["strings"], L.catalog(lang)["strings"]
    for key, text in theirs.items():
        if isinstance(text, dict):      # a plural form may say the number in words ("two")
            names = set().union(*map(L.placeholders, en[key].values()))
            for form, t in text.items():
                assert L.placeholders(t) <= names, (lang, key, form)
        else:
            assert L.placeholders(text) == L.placeholders(en[key]), (lang, key, text)


@pytest.mark.parametrize("lang", L.LANGS)
def test_plural_forms_are_babels_and_map_to_cldr(lang):
    assert L.messages(lang).plural_forms == get_plural(lang).plural_forms
    rule = Locale.parse(lang).plural_form
    cats = L.plural_categories(lang)
    assert len(cats) == len(set(cats)) == L.messages(lang).num_plurals
    assert set(cats) == set(rule.tags) | {"other"}


def test_arabic_has_six_forms_chosen_by_cldr():
    links = L.catalog("ar")["strings"]["links"]
    assert list(links) == ["zero", "one", "two", "few", "many", "other"]
    assert len(set(links.values())) == 6
    rule = Locale.parse("ar").plural_form
    chosen = {n: links[rule(n)] for n in (0, 1, 2, 3, 10, 11, 99, 100, 101, 103, 111)}
    assert chosen[0] == "لا روابط" and chosen[1] == "رابط واحد" and chosen[2] == "رابطان"
    assert chosen[3] == chosen[10] == chosen[103] == "{n} روابط"
    assert chosen[11] == chosen[99] == chosen[111] == "{n} رابطًا"
    assert chosen[100] == chosen[101] == "{n} رابط"
    assert L.catalog("ar")["dir"] == "rtl" and L.catalog("fr")["dir"] == "ltr"


def test_every_key_said_is_in_the_catalog_and_every_key_is_said():
    """The ids the phone's scripts say (``say("id"...)``) and phone.html fills (``{{html.*}}``)
    are exactly the English catalog's keys (a few ids are built: ``chip.`` + a state...)."""
    from xattn.server.scripts import PHONE_MODULES

    code = "\n".join(asset(f"phone/{name}") for name in PHONE_MODULES)
    said = set(re.findall(r'say\("([\w.]+)"[,)]', code))
    said |= set(re.findall(r"\{\{(html\.[\w.]+)\}\}", asset("phone.html")))
    said |= set(_server_ids())          # the server's own sentences (said.py)
    built = {"mode.class", "mode.homework", "chart.darker", "chart.brighter", "until.timer",
             "until.reveal"} | {k for k in _keys("en") if k.startswith("chip.")}
    assert said - _keys("en") == set(), "said but in no catalog"
    assert _keys("en") - said - built == set(), "in the catalog but never said"


def _server_ids() -> dict[str, set[str]]:
    """Every ``said("why.…", name=...)`` in the package's code: each id a server may send a
    phone, with the names it fills (collected from the code, not a list kept by hand)."""
    import ast
    from pathlib import Path

    import xattn

    found: dict[str, set[str]] = {}
    for path in Path(xattn.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "said" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.setdefault(node.args[0].value, set()).update(k.arg for k in node.keywords)
    return found


def test_the_server_says_its_sentences_by_ids_the_code_names():
    ids = _server_ids()
    assert len(ids) >= 25 and {"why.stale.round", "why.revealed", "why.store", "why.no.class",
                               "why.ended", "why.locked", "why.join.busy"} <= set(ids)
    assert all(i.startswith(L.SERVER) for i in ids)


@pytest.mark.parametrize("lang", [*L.LANGS, L.PSEUDO])
def test_every_id_the_server_sends_is_in_every_catalog_with_its_names(lang):
    """A phone in any language finds every sentence the server may send it, and each
    translation names only what the server fills (a plural message: by ``n``)."""
    strings = L.words(lang)["strings"]
    for id_, names in _server_ids().items():
        assert id_ in strings, f"{lang}: {id_} is sent by the server and missing"
        text = strings[id_]
        if isinstance(text, dict):
            assert "n" in names, f"{id_}: a plural message is chosen by n, sent {names}"
            for form, t in text.items():
                assert L.placeholders(t) <= names, (lang, id_, form)
        else:
            assert L.placeholders(text) <= names, (lang, id_, text)
            if lang == "en":
                assert L.placeholders(text) == names, (id_, names)
    assert set(strings) == set(_server_ids()), "a why.* entry no server sends"


def test_the_server_sentences_are_served_apart_and_not_in_the_page():
    from xattn.server.phone import page_html

    page = page_html({"code": "HJK23M"}, "fr")
    assert '"why.locked":' not in page and L.words("fr")["strings"]["why.locked"] not in page
    with pytest.raises(ValueError, match="a language is one of en, .* received 'pt'"):
        L.words("pt")
    with pytest.raises(TypeError, match="a language is a str, received int"):
        L.words(3)


@pytest.mark.parametrize("lang", [*L.LANGS, L.PSEUDO])
def test_the_page_in_each_language_is_whole_and_under_20_kb(lang):
    from xattn.server.phone import page_html

    page = page_html({"code": "HJK23M"}, lang)
    assert "{{" not in page and "/*CATALOG*/" not in page
    direction = "rtl" if lang == "ar" else "ltr"
    assert f'<html lang="{lang}" dir="{direction}">' in page
    assert L.catalog(lang)["strings"]["html.join"] in page
    assert f'<option value="{lang}" lang="{lang}" selected>' in page or lang == L.PSEUDO
    size = len(gzip.compress(page.encode()))
    print(lang, size)
    assert size <= 20_000, f"{lang}: {size} bytes gzipped, expected at most 20,000"


def test_the_pseudo_locale_is_longer_accented_and_keeps_every_name():
    en, xa = L.catalog("en")["strings"], L.pseudo()["strings"]
    assert set(xa) == set(en)
    for key, text in en.items():
        pairs = text.items() if isinstance(text, dict) else [(None, text)]
        for form, t in pairs:
            p = xa[key][form] if form else xa[key]
            assert L.placeholders(p) == L.placeholders(t), key
            assert len(p) >= 1.4 * len(t), key
    assert L.catalog("en-XA")["lang"] == "en-XA"
    assert "Šéñd" in xa["send"]


@pytest.mark.parametrize(("header", "cookie", "lang"), [
    ("fr-FR,fr;q=0.9,en;q=0.8", None, "fr"),
    ("es-ES", None, "es"),
    ("de-AT,de;q=0.9", None, "de"),
    ("zh-CN,zh;q=0.9", None, "zh"),
    ("ar-EG,ar;q=0.9,en;q=0.5", None, "ar"),
    ("pt-BR,pt;q=0.9", None, "en"),
    ("en;q=0.3,ar;q=0.9", None, "ar"),
    ("", None, "en"),
    (None, None, "en"),
    ("ar-EG", "es", "es"),
    ("ar-EG", "klingon", "ar"),
    ("en-XA", None, "en-XA"),
])
def test_a_requests_language(header, cookie, lang):
    assert L.negotiate(header, cookie) == lang


def test_each_catalog_ships_in_under_3_kb():
    """The page ships only its own language's catalog, without the server's sentences
    (fetched apart: `languages.words`), kept under 20 kB."""
    def shipped(lang):
        cat = L.catalog(lang)
        return {**cat, "strings": {k: v for k, v in cat["strings"].items()
                                   if not k.startswith(L.SERVER)}}

    sizes = {lang: len(gzip.compress(json.dumps(shipped(lang), ensure_ascii=False,
                                                separators=(",", ":")).encode()))
             for lang in (*L.LANGS, L.PSEUDO)}
    print(sizes)
    assert max(sizes.values()) < 3000, sizes


def test_a_language_is_named_as_expected():
    with pytest.raises(ValueError, match="a language is one of en, fr.*received 'pt'"):
        L.messages("pt")
    with pytest.raises(TypeError, match="a language is a str, received int"):
        L.messages(3)


# --- the lecturer's page: the `app` domain (xattn/ui/i18n.py) -----------------------------------

def _said_in_the_page() -> dict:
    """Every message the lecturer's page says (``_``, ``N_``, ``ngettext`` in xattn/ui), as
    ``pybabel extract`` finds them: msgid (a plural: its singular) -> the message."""
    from babel.messages.extract import extract_from_dir

    from xattn.ui.i18n import KEYWORDS

    root = L.LOCALE_DIR.parent / "ui"
    return {(m[0] if isinstance(m, tuple) else m): m for _, _, m, _, _ in extract_from_dir(
        str(root), method_map=[("**.py", "python")], keywords=KEYWORDS)}


@pytest.mark.parametrize("lang", L.LANGS)
def test_every_message_of_the_page_is_in_every_app_catalog_and_none_is_unused(lang):
    from xattn.ui.i18n import catalog

    check_catalog(lang, catalog(lang), _said_in_the_page(), 120,   # the page, not a token
                  plural=lambda said: isinstance(said, tuple))


@pytest.mark.parametrize("lang", OTHERS)
def test_every_app_translation_keeps_the_english_names(lang):
    from xattn.ui.i18n import catalog

    check_names(lang, catalog(lang), L.placeholders)


def test_the_page_says_a_count_in_each_languages_plural_form(monkeypatch):
    from xattn.ui import i18n

    said = "{title}: {n} step, checked.", "{title}: {n} steps, checked."
    for lang, n, text in [("en", 1, "L: 1 step, checked."), ("en", 7, "L: 7 steps, checked."),
                          ("fr", 0, "L\u00a0: 0 étape, vérifiée."), ("de", 2, "L: 2 Schritte, geprüft."),
                          ("zh", 5, "L：5 步，已检查。"), ("ar", 2, "L: خطوتان، تم الفحص."),
                          ("ar", 7, "L: 7 خطوات، تم الفحص."), ("ar", 11, "L: 11 خطوة، تم الفحص.")]:
        monkeypatch.setattr(i18n, "page_lang", lambda lang=lang: lang)
        assert i18n.ngettext(*said, n, title="L") == text
    monkeypatch.setattr(i18n, "page_lang", lambda: "es")
    assert i18n.gettext("Reveal") == "Revelar" and i18n.gettext("not in any catalog") == "not in any catalog"
    assert i18n.gettext("{s} s", s=30) == "30 s"
