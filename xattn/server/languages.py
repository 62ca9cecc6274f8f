"""The phone page's languages: its catalogs (``xattn/locale/<lang>/LC_MESSAGES/phone.po``,
read with Babel), compiled to the small JSON a page would ship, and the language a request
asks for (docs/languages.md).

- `catalog`: one language's messages as ``{"lang", "dir", "strings"}``: a plural message is
  ``{CLDR category: text}`` (``zero``, ``one``, ``two``, ``few``, ``many``, ``other``), the
  categories a browser's ``Intl.PluralRules`` names; cached per language;
- `pseudo`: the pseudo-locale ``en-XA`` made from English (accented, about 40 % longer,
  every ``{name}`` kept) for tests of a longer language;
- `words`: the server's own sentences (ids ``why.*``: `xattn.classroom.said`) of one
  language, which a page does not carry: a phone fetches them when it first shows one;
- `negotiate`: the language of a request, from its cookie, else the room's default (the
  lecturer's), else ``Accept-Language`` (Babel's `negotiate_locale`), else English.
"""

from __future__ import annotations

import gettext
import math
import re
from functools import cache

from babel import Locale
from babel.core import negotiate_locale
from babel.messages.pofile import read_po

from xattn.locales import LANGS, LOCALE_DIR, RTL, check_lang

__all__ = ["LANGS", "PSEUDO", "RTL", "SERVER", "catalog", "messages", "negotiate",
           "placeholders", "plural_categories", "pseudo", "words"]

PSEUDO = "en-XA"
SERVER = "why."                 # the ids of the server's own sentences (said.py)
_NAME = re.compile(r"\{(\w+)\}")
# numbers that meet every gettext plural index of the six languages (fr, es: a million)
_SAMPLES = (*range(0, 1001), 10**6, 2 * 10**6)


@cache
def messages(lang: str):
    """The Babel catalog of ``lang`` (its ``phone.po``)."""
    with open(LOCALE_DIR / check_lang(lang) / "LC_MESSAGES" / "phone.po", "rb") as f:
        return read_po(f, locale=lang)


@cache
def plural_categories(lang: str) -> tuple[str, ...]:
    """The CLDR category of each gettext plural form of ``lang``'s catalog, in the catalog's
    order, found by numbers: ``ar`` is ``('zero', 'one', 'two', 'few', 'many', 'other')``.
    A ValueError if the catalog's ``Plural-Forms`` and CLDR's rules disagree."""
    cat = messages(lang)
    index = gettext.c2py(cat.plural_expr)
    rule = Locale.parse(lang).plural_form
    found: dict[int, str] = {}
    for n in _SAMPLES:
        i, name = index(n), rule(n)
        if found.setdefault(i, name) != name:
            raise ValueError(f"{lang}: plural form {i} is CLDR's {found[i]!r} and {name!r} "
                             f"(n={n}): expected one category per form")
    if sorted(found) != list(range(cat.num_plurals)):
        raise ValueError(f"{lang}: expected {cat.num_plurals} plural forms met, received "
                         f"{sorted(found)}")
    return tuple(found[i] for i in range(cat.num_plurals))


@cache
def catalog(lang: str) -> dict:
    """``lang``'s messages as a page ships them (``en-XA``: `pseudo`)."""
    if lang == PSEUDO:
        return pseudo()
    cats = plural_categories(lang)
    strings: dict[str, str | dict[str, str]] = {}
    for m in messages(lang):
        if not m.id:
            continue
        if m.pluralizable:
            strings[m.id[0]] = dict(zip(cats, m.string, strict=True))
        else:
            strings[m.id] = m.string
    return {"lang": lang, "dir": "rtl" if lang in RTL else "ltr", "strings": strings}


@cache
def words(lang: str) -> dict:
    """The server's own sentences in ``lang`` (`LANGS` or ``en-XA``): ``{"lang", "strings"}``,
    the ids starting ``why.``."""
    if not isinstance(lang, str):
        raise TypeError(f"a language is a str, received {type(lang).__name__}")
    if lang not in LANGS and lang != PSEUDO:
        raise ValueError(f"a language is one of {', '.join(LANGS)} or {PSEUDO}, received "
                         f"{lang!r}")
    strings = catalog(lang)["strings"]
    return {"lang": lang, "strings": {k: v for k, v in strings.items() if k.startswith(SERVER)}}


_ACCENTS = str.maketrans("aceinosuyACEINOSUY", "åçéîñöšüýÅÇÉÎÑÖŠÜÝ")


def _pseudo_text(text: str) -> str:
    parts = _NAME.split(text)        # even: prose, odd: a {name}, kept as it is
    body = "".join(p.translate(_ACCENTS) if k % 2 == 0 else "{" + p + "}"
                   for k, p in enumerate(parts))
    return "⟦" + body + "·" * math.ceil(0.4 * len(text)) + "⟧"


@cache
def pseudo() -> dict:
    """English made longer and accented, ``{name}``s kept: ``en-XA``.

    >>> pseudo()["strings"]["send"]
    '⟦Šéñd··⟧'
    """
    strings = {k: ({c: _pseudo_text(t) for c, t in v.items()} if isinstance(v, dict)
                   else _pseudo_text(v)) for k, v in catalog("en")["strings"].items()}
    return {"lang": PSEUDO, "dir": "ltr", "strings": strings}


def placeholders(text: str) -> set[str]:
    """The ``{name}``s of a message."""
    return set(_NAME.findall(text))


def negotiate(accept_language: str | None, cookie: str | None = None,
              room: str | None = None) -> str:
    """The language of a page: ``cookie`` (the phone's picker) when it is one of `LANGS` or
    `PSEUDO`, else ``room`` (the room's default, set by its lecturer) when it is one of
    `LANGS`, else the best of ``Accept-Language`` (q-values honoured), else ``en``.

    >>> negotiate("es-MX,es;q=0.9,en;q=0.5")
    'es'
    >>> negotiate("ar-EG", cookie="fr")
    'fr'
    >>> negotiate("ar-EG", room="es"), negotiate("ar-EG", cookie="fr", room="es")
    ('es', 'fr')
    """
    if cookie in LANGS or cookie == PSEUDO:
        return cookie
    if room in LANGS:
        return room
    wanted = []
    for k, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        if tag and q > 0:
            wanted.append((-q, k, tag.strip().replace("-", "_")))
    prefs = [t for _, _, t in sorted(wanted)]
    if any(t.lower() == PSEUDO.replace("-", "_").lower() for t in prefs[:1]):
        return PSEUDO
    return negotiate_locale(prefs, list(LANGS)) or "en"
