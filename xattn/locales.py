"""The languages xattn speaks, in one table every part reads: the phone page's catalogs
(``xattn.server.languages``), the lecturer's page (``xattn.ui.i18n``) and a room's default
language in the class store (``ClassStore.set_language``). docs/languages.md.

>>> check_lang("fr")
'fr'
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["LANGS", "NAMES", "RTL", "LOCALE_DIR", "check_lang"]

LANGS = ("en", "fr", "de", "es", "zh", "ar")
RTL = frozenset({"ar"})
# each language in its own words (the pickers)
NAMES = {"en": "English", "fr": "Français", "de": "Deutsch", "es": "Español", "zh": "中文",
         "ar": "العربية"}
LOCALE_DIR = Path(__file__).resolve().parent / "locale"


def check_lang(lang, what: str = "a language") -> str:
    """``lang`` if it is one of `LANGS`; TypeError for a non-str, ValueError otherwise."""
    if not isinstance(lang, str):
        raise TypeError(f"{what} is a str, received {type(lang).__name__}")
    if lang not in LANGS:
        raise ValueError(f"{what} is one of {', '.join(LANGS)}, received {lang!r}")
    return lang
