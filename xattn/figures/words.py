"""The charts' own words in a language: the ``charts`` gettext domain, read with Babel.

Every figure builder of ``xattn.figures`` takes ``lang`` (one of ``xattn.locales.LANGS``,
default ``"en"``) and says its titles, axis and colour-bar titles, legend names and the words
of its hover labels with ``tr = chart_words(lang)``: ``tr("source (keys)")``,
``tr.plural("{title} ({n} answer)", "{title} ({n} answers)", n, title=...)``. The English
text is the msgid;
``xattn/locale/<lang>/LC_MESSAGES/charts.po`` gives its translation. A ``{name}`` is filled
after the lookup (a translation may move it): a number is formatted for the language by
Babel (``xattn.words.number``: ``0,331`` in French), a text (a token, a head's name) is put
in as it is. The model's tokens never go through a catalog: they are the axes' categories.

The lecturer's page passes its language (``xattn.ui.i18n.page_lang``), a phone's build the
language it is built in (``xattn.words.language``). The language is an argument, never a
context, so a figure cached by its arguments is cached per language.

>>> chart_words("fr")("source (keys)")
'source (clés)'
>>> chart_words("de").plural("{title} ({n} answer)", "{title} ({n} answers)", 1234,
...                         title="Die Vorhersagen der Klasse")
'Die Vorhersagen der Klasse (1.234 Antworten)'
"""

from __future__ import annotations

import re
from functools import cache
from gettext import c2py

from babel.messages.pofile import read_po

from xattn.locales import LOCALE_DIR, check_lang
from xattn.words import number

__all__ = ["DOMAIN", "KEYWORDS", "ChartWords", "chart_words", "catalog", "N_"]

DOMAIN = "charts"
# what `pybabel extract -k` is told (tests/test_chart_words.py extracts xattn/figures with them)
KEYWORDS = {"tr": None, "plural": (1, 2), "N_": None}
_FIELD = re.compile(r"\{([a-z_][a-z0-9_]*)(?::([^{}]*))?\}")


@cache
def catalog(lang: str):
    """The Babel catalog of ``lang``'s charts (its ``charts.po``)."""
    with open(LOCALE_DIR / check_lang(lang) / "LC_MESSAGES" / f"{DOMAIN}.po", "rb") as f:
        return read_po(f, locale=lang, domain=DOMAIN)


def N_(message: str) -> str:
    """``message`` itself: marked for the catalogs, said later with ``tr(message)``."""
    return message


class ChartWords:
    """The charts' words in one language: ``tr(msgid, **names)`` and ``tr.plural(...)``."""

    def __init__(self, lang: str):
        self.lang = check_lang(lang)
        self._texts: dict = {}
        self._index = lambda n: 0 if n == 1 else 1
        if lang != "en":
            cat = catalog(lang)
            for m in cat:
                if m.id and m.pluralizable and all(m.string):
                    self._texts[m.id[0]] = tuple(m.string)
                elif m.id and not m.pluralizable and m.string:
                    self._texts[m.id] = m.string
            self._index = c2py(cat.plural_expr)

    def __repr__(self) -> str:
        return f"ChartWords({self.lang!r})"

    def _fill(self, text: str, names: dict) -> str:
        def put(m: re.Match) -> str:
            name, spec = m.group(1), m.group(2) or ""
            if name not in names:
                return m.group(0)
            value = names[name]
            return value if isinstance(value, str) else number(value, spec, self.lang)
        return _FIELD.sub(put, text) if names else text

    def __call__(self, msgid: str, /, **names) -> str:
        """``msgid`` (English) in this language, its ``{name}``s filled."""
        return self._fill(self._texts.get(msgid, msgid), names)

    def plural(self, singular: str, plural: str, n: int, /, **names) -> str:
        """The form of ``singular``/``plural`` for ``n`` (CLDR's, by the catalog's
        ``Plural-Forms``: Arabic's six), ``{n}`` and ``names`` filled."""
        forms = self._texts.get(singular)
        text = forms[self._index(n)] if forms else (singular if n == 1 else plural)
        return self._fill(text, {"n": n, **names})


@cache
def _words(lang: str) -> ChartWords:
    return ChartWords(lang)


def chart_words(lang: str = "en") -> ChartWords:
    """The charts' words in ``lang`` (one of ``LANGS``; a TypeError for a non-str, a
    ValueError naming the languages otherwise)."""
    return _words(check_lang(lang, "a chart's language"))

