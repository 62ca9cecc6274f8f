"""The charts' msgids (``xattn.figures.words``), found in the code, and their catalogs
brought up to date: ``python -m devtools.chart_catalog``.

An AST walk over ``xattn/figures/*.py`` (and ``xattn/lesson/charts.py`` and
``xattn/lesson/probe.py``: the titles and text alternatives of the charts a lesson's answer
names) finds every ``tr("...")`` (or ``chart_words(lang)("...")``),
``tr.plural("...", "...", n)`` and ``N_("...")`` with literal text, also inside an f-string
(the hover labels are built in f-strings, where ``pybabel extract`` does not look). Each catalog
``xattn/locale/<lang>/LC_MESSAGES/charts.po`` then gets every msgid (kept translations
stay; a new msgid comes untranslated, and tests/test_chart_words.py fails until it is
translated; a msgid no longer said is dropped).
"""

from __future__ import annotations

import ast
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from xattn.figures import words
from xattn.locales import LANGS, LOCALE_DIR

__all__ = ["said", "update"]

FIGURES = Path(words.__file__).resolve().parent
SOURCES = (*sorted(FIGURES.glob("*.py")), FIGURES.parent / "lesson" / "charts.py",
           FIGURES.parent / "lesson" / "probe.py")


def _literal(node) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _where(path: Path) -> str:
    return path.relative_to(FIGURES.parent.parent).as_posix()


def said() -> dict:
    """Every msgid the figures say: msgid (a plural: its singular) -> the message (a str,
    or (singular, plural)), with the first file that says it."""
    found: dict = {}
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            f = node.func
            if isinstance(f, ast.Call):          # chart_words(lang)("..."), _tr(lang)("...")
                f = f.func
                name = "tr" if isinstance(f, ast.Name) and f.id in ("chart_words", "_tr") \
                    else None
            else:
                name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(
                    f, ast.Attribute) else None
            first = _literal(node.args[0])
            if first is None:
                continue
            if name in ("tr", "N_"):
                found.setdefault(first, (first, _where(path)))
            elif name == "plural" and len(node.args) >= 2 and _literal(node.args[1]):
                found.setdefault(first, ((first, _literal(node.args[1])), _where(path)))
    return found


def update(lang: str) -> Path:
    """Write ``lang``'s ``charts.po`` with every msgid said, its translations kept."""
    exists = (LOCALE_DIR / lang / "LC_MESSAGES" / f"{words.DOMAIN}.po").exists()
    before = words.catalog(lang) if exists else None
    old = {m.id if not m.pluralizable else m.id[0]: m.string for m in before or () if m.id}
    cat = Catalog(locale=lang, domain=words.DOMAIN, project="xattn charts",
                  version="1", msgid_bugs_address="the project's issues",
                  last_translator="written by hand, not yet read by a native speaker",
                  language_team=lang, fuzzy=False,
                  **({"creation_date": before.creation_date} if before else {}),
                  header_comment=f"# The charts' words in {lang}: the gettext `charts` domain "
                                 "(docs/languages.md).\n# msgid: the English the figures say "
                                 "(xattn/figures, `tr`, `tr.plural`, `N_`).")
    for key, (message, where) in said().items():
        string = old.get(key) or ("" if isinstance(message, str) else ("",) * cat.num_plurals)
        if lang == "en":
            string = message if isinstance(message, str) else (message[0],) + (
                message[1],) * (cat.num_plurals - 1)
        cat.add(message, string, locations=[(where, None)])
    path = LOCALE_DIR / lang / "LC_MESSAGES" / f"{words.DOMAIN}.po"
    with open(path, "wb") as f:
        write_po(f, cat, width=100, omit_header=False, sort_output=False)
    words.catalog.cache_clear()
    return path


if __name__ == "__main__":
    for lang in LANGS:
        print(update(lang))
