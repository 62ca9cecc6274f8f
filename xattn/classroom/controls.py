"""The controls a student answers with and the charts a class's answers are drawn as: one
registry each, shared by the lecturer's page, the phone and the figures.

A `Control` is what a student taps: its ``payload`` is what a phone is sent to draw it
(``xattn.live.messages.ask_of`` adds the kind, the prompt and the levels), and its
``draws`` names the drawing both pages have for it, one of `DRAWN`:
``xattn.ui.lesson.predict`` keys its widgets by these names and ``phone.js`` its ``CONTROLS``
table (``tests/test_classroom_kinds.py`` compares the three). A new control drawn as an
existing one (a scale of pills, say) is one `add_control`; a new drawing is a name in `DRAWN`,
a widget in ``predict.py`` and a function in ``phone.js``'s table (the test says which is
missing). `add_control` refuses a control no page can draw, so a phone is never left without
one.

A `Chart` is how the class's answers are drawn (``xattn.figures.classroom.FIGURES`` keys its
figures by these names): its title, its text alternative, the words for a whole right answer,
and what the pages do around it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xattn._checks import quote
from xattn.words import N_

__all__ = ["Control", "Chart", "CONTROLS", "CHARTS", "DRAWN", "add_control"]

DRAWN = ("pills", "tokens", "number", "grid", "links", "tap", "strip")  # drawings both pages have


@dataclass(frozen=True)
class Control:
    """One control a student answers with (a row of `CONTROLS`)."""

    name: str
    about: str                                   # one line: what a student does
    payload: Callable                            # question -> the phone's fields (a dict)
    draws: str = ""                              # one of DRAWN ("": its own name)
    taps: bool = False                           # answers are source positions: a row's taps

    def __post_init__(self):
        if not self.draws:
            object.__setattr__(self, "draws", self.name)

    def __repr__(self) -> str:
        return f"Control({self.name!r}, draws={self.draws!r})"


@dataclass(frozen=True)
class Chart:
    """One way to draw a class's answers (a row of `CHARTS`)."""

    name: str
    title: str                                   # the figure's title, before its count
    alt: str                                     # its text alternative (a lesson msgid)
    outlined: str                                # added once the truth is outlined (too)
    whole: str                                   # a whole answer right, in words
    one_answer: bool = False                     # each answer counts once (not per element)
    versus: bool = False                         # drawn against every layer and head instead
    sparse: bool = False                         # the CSV leaves out what nobody gave

    def __repr__(self) -> str:
        return f"Chart({self.name!r})"


def _choices(q) -> dict:
    return {"choices": list(q.choices)}


def _grid(q) -> dict:
    from xattn.jobs import LABELS  # short names of the jobs (the store needs no NumPy)

    return {"rows": list(q.rows), "choices": list(q.choices),
            "labels": [LABELS.get(c, c) for c in q.choices]}


CONTROLS: dict[str, Control] = {}
CHARTS: dict[str, Chart] = {c.name: c for c in (
    Chart("bars", "The class's predictions",
          N_("Bar chart of the class's predictions, one bar per answer."),
          N_(" The right answer is outlined."), "the right answer", one_answer=True),
    Chart("grid", "The class's labels",
          N_("Grid of the class's labels: one row per head, one column per job, each cell the "
             "students who chose it."), N_(" The right job is outlined."),
          "the right answer (every part right)"),
    Chart("links", "The class's links",
          N_("Heatmap of the class's alignment: one row per target word, one column per "
             "source word, each cell the share of students who linked them."),
          N_(" The gold links are outlined."), "the gold alignment exactly", versus=True,
          sparse=True),
    Chart("taps", "The class's taps",
          N_("Heatmap of the class's taps over the image: one cell per patch, each cell the "
             "share of students who tapped it."),
          N_(" The patch of the model's attention peak is outlined."),
          "within one patch of the peak", sparse=True),
    Chart("strip", "The class's taps over time",
          N_("Strip of the class's taps over the clip's time: one cell per time bin, each "
             "cell the share of students who tapped it; once the truth is shown, the model's "
             "attention over the same bins above it."),
          N_(" The bin of the model's attention peak is outlined."), "within one bin of the peak",
          sparse=True),
)}


def add_control(control: Control) -> Control:
    """Register ``control`` (its name new, its drawing one of `DRAWN`); returns it."""
    if not isinstance(control, Control):
        raise TypeError(f"add_control takes a Control; received {type(control).__name__} "
                        f"{quote(control)}.")
    if control.name in CONTROLS:
        raise ValueError(f"a control named {quote(control.name)} exists already: "
                         f"{CONTROLS[control.name]!r}.")
    if control.draws not in DRAWN:
        raise ValueError(f"control {quote(control.name)} draws {quote(control.draws)}, which "
                         f"neither page can draw: expected one of {DRAWN} (a new drawing is "
                         "a name in DRAWN, a widget in xattn/ui/lesson/predict.py and a "
                         "function in phone.js's CONTROLS).")
    if not callable(control.payload):
        raise TypeError(f"control {quote(control.name)}'s payload must be a function of the "
                        f"question; received {quote(control.payload)}.")
    CONTROLS[control.name] = control
    return control


for _c in (
    Control("pills", "taps one of the choices", _choices),
    Control("tokens", "taps one token of the sentence, by its position", _choices, taps=True),
    Control("number", "types a number",
            lambda q: {"low": q.low, "high": q.high, "decimals": q.decimals}),
    Control("grid", "taps one choice in each row of parts", _grid),
    Control("links", "taps a target word, then the source words it translates",
            lambda q: {"rows": list(q.rows), "choices": list(q.choices)}),
    Control("tap", "taps a point of an image: the patch under the finger",
            lambda q: {"rows": list(q.rows), "choices": list(q.choices), "image": q.image}),
    Control("strip", "taps a moment of a clip: one bin of a strip of time over its "
            "spectrogram", lambda q: {"choices": list(q.choices), "image": q.image}),
):
    add_control(_c)
