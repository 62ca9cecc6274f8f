"""Every kind of question, declared once: a `Kind` is one row of `KINDS`; its functions take
the `Question` (the room's spec) and give everything a kind decides:

- **checked and canonicalised**: ``encode`` (an answer to its stored text, or None when it is
  refused), ``decode`` (back), ``expects`` (what an answer must be, in words);
- **stored and counted**: ``options`` (what a count is kept of), ``elements`` (what one answer
  counts towards);
- **judged**: ``right`` and ``verdict`` against the step's `Key` (its truth, ties, tolerance);
  a kind that is not ``graded`` (a poll) has no right answer, and says so;
- **measured**: ``off`` (how far a wrong answer is, in [0, 1]) and ``differs`` (a new case's
  truth another answer), ``xattn.classroom.measures``;
- **asked**: ``control``, a name of `CONTROLS` (``xattn.classroom.controls``): what a student
  taps on the lecturer's page (``xattn.ui.lesson.predict``) and on the phone (``phone.js``),
  and what a phone is sent to draw it (`Kind.payload`);
- **drawn**: ``chart``, a name of `CHARTS` (``xattn.figures.classroom.class_figure``), its
  title and text alternative (`Kind.alt`); ``number``: whether an answer is a number;
- **written**: ``named`` (a counted answer's CSV ``index`` and ``answer``), ``shown`` (in
  words), ``moodle`` (``xattn.classroom.moodle``: the Moodle question grading it alike) and
  ``own`` (``xattn.classroom.own``: its keys in a lesson file; None: a file cannot ask it).

A new kind whose students answer with a registered control is one `add_kind` (see
``"poll"``, a choice with no right answer); a new control is one ``add_control`` and, where
it is drawn in a new way, one drawing on each page. docs/kinds.md says how.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from xattn._checks import quote
from xattn.classroom import measures as _m
from xattn.classroom import moodle as _moodle
from xattn.classroom.controls import CHARTS, CONTROLS, Chart, Control
from xattn.classroom.links import MAX_LINKS, encode_links, verdict_links
from xattn.classroom.own import NUMBER, OPTIONS, OwnKeys
from xattn.classroom.parts import as_parts, encode_parts, right_parts, verdict_parts
from xattn.classroom.taps import (
    TAP_REACH,
    TIME_REACH,
    differs_tap,
    differs_time,
    encode_tap,
    encode_time,
    expects_time,
    off_tap,
    off_time,
    patch_words,
    right_tap,
    right_time,
    time_words,
    verdict_tap,
    verdict_time,
)
from xattn.words import listed, say

__all__ = ["Kind", "Key", "KINDS", "CONTROLS", "CHARTS", "MAX_CHOICES", "MAX_ROWS",
           "MAX_WORDS", "MAX_LINKS", "MAX_PATCHES", "MAX_BINS", "TAP_REACH", "TIME_REACH",
           "kind_of", "add_kind", "own_kinds"]

MAX_CHOICES = 64             # a token question lists the source tokens: at most 64 (MAX_TOKENS)
MAX_ROWS = 8                 # parts of a "parts" question (each head of a layer: jobs.MAX_HEADS)
MAX_WORDS = 16               # words on each side of a "links" question: a short pair, tapped
MAX_PATCHES = 32             # patches along each side of a tap question's grid
MAX_BINS = 40                # time bins of a tap_time question's strip (a phone's width)
_LINK = re.compile(r"(\d+)-(\d+)")


class Key(NamedTuple):
    """What a step's answer is checked against (``xattn.lesson.Told.key``).

    ``truth``: the right answer as ``decode`` gives it (None: no right answer); ``also``:
    answers just as right (a tie); ``tolerance``: how far a number may be off; ``tokens``:
    a token question's tokens as typed (a repeated word: "the right word, the wrong place");
    ``parts``: for each part, ``(name, truth, also)``; ``weights``: a token question's row
    of weights (how far off a wrong token is)."""

    truth: object = None
    also: tuple = ()
    tolerance: float = 0.005
    tokens: tuple = ()
    parts: tuple = ()
    weights: tuple = ()


def _code(text) -> str:
    """A Markdown code span of ``text`` (``xattn.literal.md_code``, imported late: the store
    needs no Markdown)."""
    from xattn.literal import md_code

    return md_code(str(text))


@dataclass(frozen=True)
class Kind:
    """One kind of question (a row of `KINDS`); see the module's docstring."""

    name: str
    about: str                                   # one line: what the class answers
    control: str                                 # a name of CONTROLS
    chart: str                                   # a name of CHARTS
    graded: bool                                 # has a right answer
    choices: tuple[int, int] | None              # (least, most) choices; None: a range
    rows: tuple[int, int] | None = None          # (least, most) rows; None: takes no rows
    distinct: bool = False                       # the choices (and rows) must differ
    image: bool = False                          # takes an image (Question.image) to tap on
    moodle: Callable = _moodle.no_moodle         # (question, Key) -> a Moodle record, or None
    own: OwnKeys | None = None                   # its lesson-file keys; None: not a lesson's
    title: str = ""                              # the class chart's title ("": the chart's)
    encode: Callable = None
    decode: Callable = None
    options: Callable = None
    elements: Callable = lambda q, answer: (answer,)
    expects: Callable = None
    named: Callable = None
    shown: Callable = None
    right: Callable = None
    verdict: Callable = None
    off: Callable = _m.off_one                   # how far a wrong answer is, in [0, 1]
    differs: Callable = _m.differs_one           # a new case's truth another answer

    @property
    def number(self) -> bool:
        """An answer is a number in a range (not one of the choices)."""
        return self.choices is None

    @property
    def drawn(self) -> Chart:
        """How the class's answers are drawn (its `Chart`)."""
        return CHARTS[self.chart]

    @property
    def asked(self) -> Control:
        """What a student answers with (its `Control`)."""
        return CONTROLS[self.control]

    @property
    def one_answer(self) -> bool:
        """Each answer counts once (bars), not once per part or link."""
        return self.drawn.one_answer

    @property
    def chart_title(self) -> str:
        """The class chart's title, before its count of answers."""
        return self.title or self.drawn.title

    def alt(self, *, revealed: bool = False) -> str:
        """The class chart's text alternative (its truth outlined once ``revealed``, where
        it has one), in the context's language (``xattn.words.speaking``: a phone's)."""
        chart = self.drawn
        return say(chart.alt) + (say(chart.outlined) if revealed and self.graded else "")

    def payload(self, question) -> dict:
        """What a phone is sent to draw this kind's control for ``question`` (JSON)."""
        return {"kind": self.name, "control": self.asked.draws, **self.asked.payload(question)}

    def __repr__(self) -> str:
        return f"Kind({self.name!r}, control={self.control!r}, chart={self.chart!r})"


# --- a choice, a poll, a token ---------------------------------------------------------------
def _encode_choice(q, value) -> str | None:
    if isinstance(value, str) and value in q.choices:
        return str(q.choices.index(value))
    return None


def _expects_choice(q) -> str:
    return "one of " + ", ".join(quote(c, 30) for c in q.choices)


def _named_choice(q, value) -> tuple:
    return q.choices.index(value), q.choices[q.choices.index(value)]


def _right_choice(q, key: Key, answer) -> bool:
    return answer is not None and (answer == key.truth or answer in key.also)


def _verdict_choice(q, key: Key, answer) -> str:
    v = dict(said=_code(answer), true=_code(key.truth),
             tied=listed(map(_code, (key.truth, *key.also))))
    if key.also and _right_choice(q, key, answer):
        return say("**Right**: {said} ties for the answer with the others ({tied}).", **v)
    if key.also:
        return say("**Not this time**: you chose {said}; the page shows a tie: {tied}.", **v)
    return say("**Right**: {true}.", **v) if answer == key.truth else say(
        "**Not this time**: you chose {said}; the page shows {true}.", **v)


def _encode_token(q, value) -> str | None:
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and 0 <= value < len(q.choices):
        return str(int(value))
    return None


def _shown_token(q, value) -> str:
    return q.choices[value] if isinstance(value, int) and 0 <= value < len(q.choices) \
        else str(value)


def _verdict_token(q, key: Key, answer) -> str:
    v = dict(said=_code(q.choices[answer]), true=_code(q.choices[key.truth]))
    if answer == key.truth:
        return say("**Right**: {true}.", **v)
    if key.tokens and key.tokens[answer] == key.tokens[key.truth]:
        return say("**The right word, the wrong place**: you chose {said}, position {answer}; "
                   "the page shows position {truth}.", answer=answer, truth=key.truth, **v)
    return say("**Not this time**: you chose {said}; the page shows {true}.", **v)


# --- a number --------------------------------------------------------------------------------
def _encode_number(q, value) -> str | None:
    if isinstance(value, numbers.Real) and not isinstance(value, bool) \
            and math.isfinite(value) and q.low <= value <= q.high:
        # + 0.0 turns -0.0 (a typed "-0", or -0.001 rounded) into 0.0: one answer, one text
        return f"{round(float(value), q.decimals) + 0.0:.{q.decimals}f}"
    return None


def _right_number(q, key: Key, answer) -> bool:
    return answer is not None and abs(float(answer) - float(key.truth)) <= key.tolerance


def _verdict_number(q, key: Key, answer) -> str:
    off = abs(float(answer) - float(key.truth))
    v = dict(off=float(f"{off:.3g}"), said=float(answer), true=float(key.truth))
    if off <= key.tolerance:
        return say("**Right**: you said {said:g}, and it is {true:.3f}.", **v)
    return say("**Off by {off:g}**: you said {said:g}; the page shows {true:.3f}.", **v)


def _verdict_head(q, key: Key, answer) -> str:
    v = dict(said=_code(answer), true=_code(key.truth))
    if _right_choice(q, key, answer):
        return say("**Right**: {said} tells time best (its attention peaks land nearest the "
                   "words' times).", **v)
    return say("**Not this time**: you chose {said}; the head whose peaks land nearest the "
               "words' times is {true}.", **v)


# --- the table -------------------------------------------------------------------------------
_CHOICE = dict(encode=_encode_choice, decode=lambda q, text: q.choices[int(text)],
               options=lambda q: list(q.choices), expects=_expects_choice, named=_named_choice,
               shown=lambda q, value: str(value))
KINDS: dict[str, Kind] = {}
_BUILT_IN = (
    Kind("choice", "one of a few options, one of them right", "pills", "bars", True, (2, 64),
         distinct=True, moodle=_moodle.multichoice, own=OPTIONS, right=_right_choice,
         verdict=_verdict_choice, **_CHOICE),
    Kind("poll", "one of a few options, none of them right (what the class thinks)", "pills",
         "bars", False, (2, 64), distinct=True, own=OPTIONS, right=lambda q, key, answer: False,
         verdict=lambda q, key, answer: say("You said {said}. This question has no right "
                                            "answer: see how the class answered.",
                                            said=_code(answer)), **_CHOICE),
    Kind("token", "one token of a sentence, by its position (tokens may repeat)", "tokens",
         "bars", True, (1, MAX_CHOICES), moodle=_moodle.multichoice, encode=_encode_token,
         decode=lambda q, text: int(text), options=lambda q: list(range(len(q.choices))),
         expects=lambda q: f"a token position from 0 to {len(q.choices) - 1}",
         named=lambda q, value: (value, q.choices[value]), shown=_shown_token,
         right=_right_choice, verdict=_verdict_token, off=_m.off_token,
         differs=_m.differs_token),
    Kind("number", "a number in a range, rounded to a few decimals", "number", "bars", True,
         None, moodle=_moodle.numerical, own=NUMBER, encode=_encode_number,
         decode=lambda q, text: float(text),
         options=lambda q: [], expects=lambda q: f"a number from {q.low:g} to {q.high:g}",
         named=lambda q, value: ("", f"{value:.{q.decimals}f}"),
         shown=lambda q, value: f"{float(value):.{q.decimals}f}",
         right=_right_number, verdict=_verdict_number, off=_m.off_number,
         differs=_m.differs_number),
    Kind("parts", "one of the options for each of several named parts (each head's job)",
         "grid", "grid", True, (2, 64), rows=(1, MAX_ROWS), distinct=True,
         moodle=_moodle.matching,
         encode=encode_parts,
         decode=lambda q, text: tuple(None if k == "-" else q.choices[int(k)]
                                      for k in text.split(",")),
         options=lambda q: [(r, c) for r in q.rows for c in q.choices],
         elements=lambda q, answer: tuple((r, c) for r, c in zip(q.rows, answer, strict=True)
                                          if c is not None),
         expects=lambda q: ("one of " + ", ".join(quote(c, 30) for c in q.choices)
                            + " for some of " + ", ".join(quote(r, 30) for r in q.rows)
                            + " (a dict, or one choice or None per part), at least one"),
         named=lambda q, value: (q.choices.index(value[1]), f"{value[0]}: {value[1]}"),
         shown=lambda q, value: ", ".join(f"{name} {c}" for name, c in as_parts(
             q, value).items() if c is not None) or "none",
         right=right_parts, verdict=verdict_parts, off=_m.off_parts,
         differs=_m.differs_parts),
    Kind("links", "a word alignment: links between target and source words", "links",
         "links", True, (1, MAX_WORDS), rows=(1, MAX_WORDS), moodle=_moodle.matching,
         encode=encode_links,
         decode=lambda q, text: tuple((int(t), int(s)) for t, s in _LINK.findall(text)),
         options=lambda q: [(t, s) for t in range(len(q.rows)) for s in range(len(q.choices))],
         elements=lambda q, answer: tuple(answer),
         expects=lambda q: (f"1 to {MAX_LINKS} links (target, source): target positions from "
                            f"0 to {len(q.rows) - 1}, source positions from 0 to "
                            f"{len(q.choices) - 1}"),
         named=lambda q, value: (f"{value[0]}-{value[1]}",
                                 f"{q.rows[value[0]]} → {q.choices[value[1]]}"),
         shown=lambda q, value: f"{len(value)} link{'s' if len(value) != 1 else ''}",
         right=lambda q, key, answer: answer is not None
         and tuple(sorted(answer)) == tuple(key.truth),
         verdict=verdict_links, off=_m.off_links),
    Kind("tap", "a point of an image: the patch tapped (right within one patch of the truth)",
         "tap", "taps", True, (1, MAX_PATCHES), rows=(1, MAX_PATCHES), image=True,
         encode=encode_tap,
         decode=lambda q, text: tuple(int(k) for k in text.split("-")),
         options=lambda q: [(r, c) for r in range(len(q.rows)) for c in range(len(q.choices))],
         expects=lambda q: (f"a patch (row, column): rows from 0 to {len(q.rows) - 1}, "
                            f"columns from 0 to {len(q.choices) - 1}"),
         named=lambda q, value: (f"{value[0]}-{value[1]}", patch_words(q, value)),
         shown=lambda q, value: patch_words(q, value) if isinstance(value, tuple) else str(value),
         right=right_tap, verdict=verdict_tap, off=off_tap, differs=differs_tap),
    Kind("tap_time", "a moment of a clip: the time bin tapped (right within one bin of the "
         "truth)", "strip", "strip", True, (2, MAX_BINS), distinct=True, image=True,
         encode=encode_time, decode=lambda q, text: int(text),
         options=lambda q: list(range(len(q.choices))), expects=expects_time,
         named=lambda q, value: (value, q.choices[value]), shown=time_words,
         right=right_time, verdict=verdict_time, off=off_time, differs=differs_time),
    Kind("head", "one head of the model (which head tells time?), one of them right",
         "pills", "bars", True, (2, 64), distinct=True, moodle=_moodle.multichoice,
         right=_right_choice, verdict=_verdict_head, title="The class's heads", **_CHOICE),
)
_FUNCTIONS = ("encode", "decode", "options", "elements", "expects", "named", "shown", "right",
              "verdict", "moodle", "off", "differs")


def add_kind(kind: Kind) -> Kind:
    """Register ``kind``: its name new, its control and chart registered, every function
    given; returns it. A kind refused here never reaches a page, a phone or a figure."""
    if not isinstance(kind, Kind):
        raise TypeError(f"add_kind takes a Kind; received {type(kind).__name__} "
                        f"{quote(kind)}.")
    if not isinstance(kind.name, str) or not kind.name.isidentifier():
        raise ValueError(f"a kind's name is a word of letters, digits and _; received "
                         f"{quote(kind.name)}.")
    if kind.name in KINDS:
        raise ValueError(f"a kind named {quote(kind.name)} exists already: "
                         f"{KINDS[kind.name]!r}.")
    if kind.control not in CONTROLS:
        raise ValueError(f"kind {quote(kind.name)}: control must be one of {tuple(CONTROLS)} "
                         f"(xattn.classroom.controls.add_control registers a new one); "
                         f"received {quote(kind.control)}.")
    if kind.chart not in CHARTS:
        raise ValueError(f"kind {quote(kind.name)}: chart must be one of {tuple(CHARTS)}; "
                         f"received {quote(kind.chart)}.")
    missing = [f for f in _FUNCTIONS if not callable(getattr(kind, f))]
    if missing:
        raise TypeError(f"kind {quote(kind.name)} needs a function for each of {missing}.")
    if kind.own is not None and not isinstance(kind.own, OwnKeys):
        raise TypeError(f"kind {quote(kind.name)}: own must be an OwnKeys or None; received "
                        f"{quote(kind.own)}.")
    KINDS[kind.name] = kind
    return kind


for _k in _BUILT_IN:
    add_kind(_k)


def own_kinds() -> tuple[str, ...]:
    """The kinds a lesson file may ask as a lecturer's own question (those with keys)."""
    return tuple(name for name, k in KINDS.items() if k.own is not None)


def kind_of(question) -> Kind:
    """The `Kind` of ``question`` (a ``Question``)."""
    return KINDS[question.kind]
