"""The lesson's words in a language: the ``lesson`` gettext domain, read with Babel.

Every sentence the lesson's Python says to a student (a computed answer, a verdict, a
misconception's reason, the words around a step) is written ``say("... {name} ...",
name=value)``: the English text is the msgid, and ``xattn/locale/<lang>/LC_MESSAGES/lesson.po``
gives its translation. The shipped lessons' own texts (``xattn/lesson/lessons/*.toml``) are
msgids of the same catalogs (``xattn.lesson.translated``). The catalogs are compiled when
first used (``.po`` to ``.mo`` in memory: a fresh clone has nothing to build).

The language is the caller's context (`speaking`): a room's message is built once per
language in that room, each build inside ``with speaking(lang):``. Placeholders are named
(``{name}``, or ``{name:.3f}`` / ``{name:.1%}`` for a number): a number is formatted for the
language by Babel (``format_decimal``, ``format_percent``), a text (a token, a code span) is
put in exactly as given, never reformatted.

>>> with speaking("fr"):
...     say("{n:.3f} of the weight", n=0.5)
'0,500 of the weight'
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache, lru_cache
from pathlib import Path

from babel import Locale
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_decimal, format_percent
from babel.support import Translations

__all__ = ["LANGS", "DOMAIN", "LOCALE_DIR", "say", "say_n", "speaking", "language",
           "translations", "catalog", "number", "translated", "N_", "sentences", "listed",
           "full_stop"]

LANGS = ("en", "fr", "de", "es", "zh", "ar")
DOMAIN = "lesson"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
_LANG: ContextVar[str] = ContextVar("xattn_lesson_language", default="en")
_FIELD = re.compile(r"\{([a-z_][a-z0-9_]*)(?::([^{}]*))?\}")
# Chinese full-width punctuation: no space follows the closing ones nor precedes the opening.
_CLOSING = frozenset("。，、：；！？）」』】")
_OPENING = frozenset("（「『【")
# A list's separators per language, (comma, semicolon): Chinese and Arabic have their own.
_LIST = {"zh": ("，", "；"), "ar": ("، ", "؛ ")}


def _check(lang) -> str:
    if not isinstance(lang, str):
        raise TypeError(f"a language is a str such as 'fr', received {type(lang).__name__}")
    if lang not in LANGS:
        raise ValueError(f"a language is one of {', '.join(LANGS)}, received {lang!r}")
    return lang


@cache
def catalog(lang: str):
    """The Babel catalog of ``lang``'s ``lesson.po`` (its messages, plural forms)."""
    with open(LOCALE_DIR / _check(lang) / "LC_MESSAGES" / f"{DOMAIN}.po", "rb") as f:
        return read_po(f, locale=lang, domain=DOMAIN)


@cache
def translations(lang: str) -> Translations:
    """``lang``'s catalog compiled (in memory) to Babel's `Translations`."""
    buffer = io.BytesIO()
    write_mo(buffer, catalog(lang))
    buffer.seek(0)
    return Translations(buffer, domain=DOMAIN)


def language() -> str:
    """The language the lesson speaks in this context (default ``en``)."""
    return _LANG.get()


@contextmanager
def speaking(lang: str) -> Iterator[str]:
    """The lesson's words in ``lang`` inside the ``with`` (a context variable: each thread
    and task has its own)."""
    token = _LANG.set(_check(lang))
    try:
        yield lang
    finally:
        _LANG.reset(token)


def translated(msgid: str, lang: str | None = None) -> str | None:
    """The translation of ``msgid`` in ``lang`` (default: the context's), None if the
    catalog lacks it (English gives every msgid back as it is)."""
    lang = _check(lang) if lang is not None else language()
    if lang == "en":
        return msgid
    message = catalog(lang).get(msgid)
    if message is None or not message.string or isinstance(message.string, tuple):
        return None
    return message.string


def number(value, spec: str = "", lang: str | None = None) -> str:
    """``value`` as prose writes it in ``lang`` (default: the context's): ``spec`` is a
    Python format spec among ``""``, ``"g"``, ``".Nf"`` and ``".N%"``. Each (value, spec,
    language) is formatted by Babel once per process (a Reveal says a number in the verdict
    of every phone's answer: Babel takes 0.02 ms a number).

    >>> number(1234.5, ".2f", "de"), number(0.125, ".1%", "fr")
    ('1.234,50', '12,5\\xa0%')
    """
    lang = _check(lang) if lang is not None else language()
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(
            value, "__float__"):
        raise TypeError(f"a number to format is an int or float, received "
                        f"{type(value).__name__} ({value!r})")
    v = value if isinstance(value, int) else float(value)
    # typed: 1 and 1.0 apart; the sign apart too (-0.0 == 0.0, and prints "-0")
    return _formatted(v, isinstance(v, float) and math.copysign(1.0, v) < 0, spec, lang)


@lru_cache(maxsize=8192, typed=True)
def _formatted(v: int | float, negative: bool, spec: str, lang: str) -> str:
    match = re.fullmatch(r"\.(\d)([f%])", spec)
    if match:
        digits, kind = int(match.group(1)), match.group(2)
        if kind == "%":             # the language's own pattern ("12,5 %"), with N decimals
            pattern = Locale.parse(lang).percent_formats[None].pattern.split(";")[0]
            if digits:
                pattern = re.sub(r"0(?!.*0)", "0." + "0" * digits, pattern, count=1)
            return format_percent(float(v), pattern, locale=lang)
        pattern = "#,##0" + ("." + "0" * digits if digits else "")
        return format_decimal(round(float(v), digits), pattern, locale=lang)
    if spec not in ("", "g", "d"):
        raise ValueError(f"a number's format is '', 'g', 'd', '.Nf' or '.N%', received {spec!r}")
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e15:
        v = int(v)
    return format_decimal(v, locale=lang)


def _fill(text: str, values: dict, lang: str) -> str:
    def put(m: re.Match) -> str:
        name, spec = m.group(1), m.group(2) or ""
        if name not in values:
            return m.group(0)
        value = values[name]
        if isinstance(value, str):             # a token, a code span, a word: as it is
            return value
        return number(value, spec, lang)
    return _FIELD.sub(put, text)


def N_(msgid: str) -> str:
    """``msgid`` as it is: marks a text kept in a table as a msgid (gettext's ``N_``), said
    later with ``say(text)``."""
    return msgid


def say(msgid: str, /, **values) -> str:
    """``msgid`` (English) in the context's language with its ``{name}``s filled: numbers
    formatted for the language, texts as they are."""
    lang = language()
    text = msgid if lang == "en" else translations(lang).gettext(msgid)
    return _fill(text, values, lang)


def say_n(singular: str, plural: str, n: int, /, **values) -> str:
    """A plural message for ``n`` (the language's CLDR forms, via its catalog's
    ``Plural-Forms``), ``n`` among its values."""
    lang = language()
    text = (singular if n == 1 else plural) if lang == "en" else \
        translations(lang).ngettext(singular, plural, n)
    return _fill(text, {"n": n, **values}, lang)


def sentences(*parts: str, lang: str | None = None) -> str:
    """The non-empty ``parts`` (sentences, already said) as one text, joined as ``lang``
    (default: the context's) writes them: a space between two, but none in Chinese after a
    full-width stop or comma (``。``, ``，``, ``：``...) or before an opening ``（``, where a
    space would show.

    >>> sentences("Head 1.", "", "Head 2."), sentences("头 1。", "头 2。", lang="zh")
    ('Head 1. Head 2.', '头 1。头 2。')
    """
    lang = _check(lang) if lang is not None else language()
    out = ""
    for part in filter(None, parts):
        if out and not (lang == "zh" and (out[-1] in _CLOSING or part[0] in _OPENING)):
            out += " "
        out += part
    return out


def listed(items, semicolons: bool = False, lang: str | None = None) -> str:
    """``items`` (texts) as a list in ``lang`` (default: the context's): ``, `` (``; `` with
    ``semicolons``) in most languages, ``，`` / ``；`` in Chinese, ``، `` / ``؛ `` in Arabic.

    >>> listed(["1", "2"], lang="ar"), listed(["1", "2"], True, lang="zh")
    ('1، 2', '1；2')
    """
    lang = _check(lang) if lang is not None else language()
    return _LIST.get(lang, (", ", "; "))[bool(semicolons)].join(items)


def full_stop(text: str, lang: str | None = None) -> str:
    """``text`` ended as a sentence in ``lang`` (default: the context's): ``。`` in Chinese,
    ``.`` elsewhere (Arabic's full stop is the Latin one)."""
    lang = _check(lang) if lang is not None else language()
    return text + ("。" if lang == "zh" else ".")
