"""How a URL parameter is spelled and read: `Param` and its kinds (int, choice, text, ...).

A `Param` says how a link spells its control's value and how to read it back; each parse
function refuses anything but a clean value of its kind (``seed=1e400``, ``seed=٣``,
``heads=4.0``), with a reason that completes the sentence "The link asked for ``...``, which
...". Every parameter of the page is declared in one table, ``xattn.live.link``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xattn.literal import md_code, show_value

__all__ = ["Param", "int_param", "float_param", "choice_param", "bool_param",
           "text_param", "list_param", "whole_number", "clean_text"]


@dataclass(frozen=True)
class Param:
    """One URL parameter: a control's key, its default, and how a link spells its value.

    ``parse`` turns one URL string into a value or raises ValueError whose message completes
    "which ..." (e.g. "is not a whole number from 0 to 9"); ``spell`` turns a value back into
    URL text. ``multi`` parameters repeat (``pad=0:+the&pad=6:+mat``) and hold a tuple.
    """

    key: str
    default: object
    parse: Callable[[str], object]
    spell: Callable[[object], str] = str
    multi: bool = False
    what: str = ""                 # words for notices: "the number of heads"
    max_chars: int | None = None   # free text: cut to this length (`clean_text`)

    def read(self, raw: list[str]) -> tuple[object, str | None]:
        """The value of this parameter's URL strings, and why not (None when fine)."""
        if self.multi:
            values, bad = [], []
            for text in raw:
                try:
                    values.append(self.parse(text))
                except ValueError as err:
                    bad.append(f"{show_value(text)}, {str(err).removeprefix('is ')}")
            return tuple(dict.fromkeys(values)), (f"holds {'; '.join(bad)}" if bad else None)
        if len(raw) > 1:
            return self.default, f"appears {len(raw)} times"
        try:
            return self.parse(raw[0]), None
        except ValueError as err:
            return self.default, str(err)

    def to_url(self, value) -> str | list[str]:
        return [self.spell(v) for v in value] if self.multi else self.spell(value)

    def shown(self, value) -> str:
        """``value`` as Markdown for a notice."""
        if self.multi:
            return ", ".join(show_value(self.spell(v)) for v in value) if value else "none"
        return show_value(self.spell(value))


def whole_number(lo: int, hi: int) -> Callable[[str], int]:
    """A parser of whole numbers from ``lo`` to ``hi`` written in ASCII digits."""
    def parse(text: str) -> int:
        # ASCII digits only: int() would also take " 4", "+4", "4_0" and "٣".
        if not (text.isascii() and text.isdigit()) or not lo <= int(text) <= hi:
            raise ValueError(f"is not a whole number from {lo:,} to {hi:,}")
        return int(text)
    return parse


def int_param(key: str, default: int, lo: int, hi: int, what: str = "") -> Param:
    """A whole number from ``lo`` to ``hi`` (non-negative), written in ASCII digits."""
    return Param(key, default, whole_number(lo, hi), what=what or key)


def float_param(key: str, default: float, lo: float, hi: float, what: str = "") -> Param:
    def parse(text: str) -> float:
        try:
            value = float(text) if text.isascii() and text.strip() == text else None
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:  # also refuses nan and inf
            raise ValueError(f"is not a number from {lo} to {hi}")
        return value
    return Param(key, default, parse, spell=lambda v: f"{v:g}", what=what or key)


def choice_param(key: str, default: str, choices: Sequence[str], what: str = "") -> Param:
    """One of ``choices``, matched without regard to case."""
    lookup = {c.lower(): c for c in choices}

    def parse(text: str) -> str:
        if text.lower() not in lookup:
            raise ValueError("is not one of " + ", ".join(md_code(c) for c in choices))
        return lookup[text.lower()]
    return Param(key, default, parse, what=what or key)


def bool_param(key: str, default: bool, what: str = "") -> Param:
    words = {"true": True, "false": False, "1": True, "0": False}

    def parse(text: str) -> bool:
        if text.lower() not in words:
            raise ValueError("is not `true` or `false`")
        return words[text.lower()]
    return Param(key, default, parse, spell=lambda v: "true" if v else "false",
                           what=what or key)


def text_param(key: str, default: str, max_chars: int, what: str = "") -> Param:
    """Free text. Line breaks and control characters become spaces (a text box cannot show
    them, so the tokens would not match the box) and the text is cut to ``max_chars``; the
    page then says so (`clean_text`)."""
    return Param(key, default, lambda text: text, what=what or key, max_chars=max_chars)


def list_param(key: str, parse: Callable[[str], object], spell: Callable[[object], str] = str,
               what: str = "") -> Param:
    """A repeated parameter; its value is a tuple (default empty)."""
    return Param(key, (), parse, spell=spell, multi=True, what=what or key)


def clean_text(text: str, max_chars: int) -> tuple[str, list[str]]:
    """``text`` with control characters and line breaks as spaces, cut to ``max_chars``, and
    what was changed, in words."""
    changes = []
    if not text.isprintable():
        cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
                          for ch in text)
        if cleaned != text:
            changes.append("its line breaks or control characters became spaces")
            text = cleaned
    if len(text) > max_chars:
        changes.append(f"it was cut from {len(text):,} to {max_chars:,} characters")
        text = text[:max_chars]
    return text, changes
