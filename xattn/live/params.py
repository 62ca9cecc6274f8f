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
from typing import NamedTuple

from xattn.literal import md_code, show_value

__all__ = ["Why", "Param", "int_param", "float_param", "choice_param", "bool_param",
           "text_param", "list_param", "whole_number", "clean_text"]


class Why(NamedTuple):
    """Why a link's value was refused, or what was changed in it: an English message (a
    msgid of the lecturer's page's ``app`` catalog, said there by ``xattn.ui.state``) and its
    names, each a text, a whole number (said as the language writes it: 1,000 in English),
    a `Why` or a tuple of `Why`. ``str()`` is the English sentence.

    >>> str(Why("is not a number from {lo} to {hi}", (("lo", "0"), ("hi", "1"))))
    'is not a number from 0 to 1'
    """

    msgid: str
    names: tuple = ()            # (name, value) pairs

    def __str__(self) -> str:
        if not self.names:          # a message of no names is said as it is (braces too)
            return self.msgid
        return self.msgid.format(**{k: _english(v) for k, v in self.names})


def _english(value) -> str:
    if isinstance(value, Why):
        return str(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return "; ".join(map(str, value)) if isinstance(value, tuple) else str(value)


def why_of(err: ValueError) -> Why:
    """The `Why` a parse function raised (its first argument), or its message as one."""
    first = err.args[0] if err.args else ""
    return first if isinstance(first, Why) else Why(str(first))


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
        """The value of this parameter's URL strings, and why not (a `Why`; None when fine)."""
        if self.multi:
            values, bad = [], []
            for text in raw:
                try:
                    values.append(self.parse(text))
                except ValueError as err:
                    why = why_of(err)
                    bad.append(Why("{value}, {why}", (("value", show_value(text)), (
                        "why", why._replace(msgid=why.msgid.removeprefix("is "))))))
            return tuple(dict.fromkeys(values)), (Why("holds {bad}", (("bad", tuple(bad)),))
                                                  if bad else None)
        if len(raw) > 1:
            return self.default, Why("appears {n} times", (("n", len(raw)),))
        try:
            return self.parse(raw[0]), None
        except ValueError as err:
            return self.default, why_of(err)

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
            raise ValueError(Why("is not a whole number from {lo} to {hi}",
                                 (("lo", lo), ("hi", hi))))
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
            raise ValueError(Why("is not a number from {lo} to {hi}",
                                 (("lo", str(lo)), ("hi", str(hi)))))
        return value
    return Param(key, default, parse, spell=lambda v: f"{v:g}", what=what or key)


def choice_param(key: str, default: str, choices: Sequence[str], what: str = "") -> Param:
    """One of ``choices``, matched without regard to case."""
    lookup = {c.lower(): c for c in choices}

    def parse(text: str) -> str:
        if text.lower() not in lookup:
            raise ValueError(Why("is not one of {choices}",
                                 (("choices", ", ".join(md_code(c) for c in choices)),)))
        return lookup[text.lower()]
    return Param(key, default, parse, what=what or key)


def bool_param(key: str, default: bool, what: str = "") -> Param:
    words = {"true": True, "false": False, "1": True, "0": False}

    def parse(text: str) -> bool:
        if text.lower() not in words:
            raise ValueError(Why("is not `true` or `false`"))
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
    what was changed (each a `Why`, ``str()`` its English words)."""
    changes = []
    if not text.isprintable():
        cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
                          for ch in text)
        if cleaned != text:
            changes.append(Why("its line breaks or control characters became spaces"))
            text = cleaned
    if len(text) > max_chars:
        changes.append(Why("it was cut from {n} to {max} characters",
                           (("n", len(text)), ("max", max_chars))))
        text = text[:max_chars]
    return text, changes
