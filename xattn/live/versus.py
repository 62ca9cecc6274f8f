"""The class against the heads, drawn: the class's alignment (or one person's) beside every
layer's and every head's weights, and one table of AER against gold (``xattn.lesson.versus``,
scored by ``xattn.alignlab`` from the class store's counts).

A room's counts are closed once the step is revealed, so the table and the chart are the same
for every student of a class: each is made once per server process for those counts.
"""

from __future__ import annotations

from xattn.figures.aligns import versus_parts
from xattn.figures.class_words import VERSUS_ALT
from xattn.figures.frozen import frozen
from xattn.lesson import Told, Versus, versus
from xattn.live.compute import derived, figure
from xattn.words import language

__all__ = ["class_versus", "versus_chart", "ALT"]

ALT = VERSUS_ALT          # in English; in a language: chart_words(lang)(ALT)


def _counted(counts: dict) -> tuple:
    return tuple(sorted((k, int(v)) for k, v in counts.items() if v))


def class_versus(a, counts: dict, n_answered: int, who: str = "the class") -> Versus:
    """``who``'s majority alignment beside every layer and head, once per server for these
    weights and counts in the context's language (``xattn.words.speaking``: its table names
    the heads in it)."""
    return derived(("versus", a.key, who, _counted(counts), int(n_answered), language()),
                   lambda: versus(a, counts, n_answered, who))


def versus_chart(a, told: Told, v: Versus, counts: dict, *, who: str = "the class",
                 lang: str = "en", font_scale: float = 1.0, max_cols: int = 3):
    """The chart of ``v`` (a `Versus` of ``counts``), once per server and language (made
    as plain dicts, without Plotly's object tree: a room in six languages makes six)."""
    q = told.question
    return figure(("versus-chart", a.key, who, _counted(counts), font_scale, max_cols, lang),
                  lambda: frozen(*versus_parts(v.shares, v.panels, q.choices, q.rows,
                                               gold=v.gold, who=who, max_cols=max_cols,
                                               font_scale=font_scale, lang=lang)))
