"""Why were they wrong? After the reveal, the lecturer's page shows the class's misconception
histogram (the share of the class whose answer a named misconception gives, with its one-line
reason), and the answers' CSV names the misconception of each wrong answer.

Both read what each round asked (the step's own question or a follow-up's case) as the room's
phones do (``xattn.live.answers.class_step``) and the class's counts the store keeps:
nothing new is stored (``xattn.lesson.misconceptions``).
"""

from __future__ import annotations

import streamlit as st

from xattn.figures.frozen import narrowed
from xattn.figures.misconceptions import ALT, misconceptions_figure
from xattn.figures.words import chart_words
from xattn.lesson import Told
from xattn.lesson.misconceptions import (
    MISCONCEPTIONS,
    class_misconceptions,
    misconception_of,
)
from xattn.live.answers import class_step
from xattn.live.prepared import StepUnavailable
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import page_lang
from xattn.words import language

__all__ = ["round_told", "csv_misconceptions", "misconception_panel", "histogram_lines"]


def round_told(lesson, step: int, question, language: str | None = None) -> Told | None:
    """What ``question`` (a round of ``step``) tells, if the step's own question or a
    follow-up's case asked it here; None when its weights cannot be made. ``language``: its
    words' (the lecturer's page: the page's; default, and the CSV: the lesson's own)."""
    if lesson is None or not 1 <= step <= len(lesson.steps):
        return None
    try:
        told = class_step(lesson, step, case=question.case, language=language)[1]
    except StepUnavailable:
        return None
    return told if told.question == question else None


def csv_misconceptions(lesson, tallies) -> dict:
    """For each (step, round) of ``tallies`` with distractors, a function naming the
    misconception of a counted answer ("" for none): the CSV's ``misconception`` column, its
    English name whatever language the page (or the context) speaks, so that the CSV is the
    same in every language."""
    out = {}
    for t in tallies:
        told = round_told(lesson, t.step, t.question)
        if told is not None and told.distractors:
            out[(t.step, t.round)] = (lambda value, told=told: _english_name(
                misconception_of(told, value)))
    return out


def _english_name(distractor) -> str:
    return MISCONCEPTIONS[distractor.key].name if distractor is not None else ""


def histogram_lines(shares) -> str:
    """The histogram in words (Markdown): "**31 %** (13 of 42) **1/√d_head forgotten**:
    forgot the 1/√d_head scaling", one line each, most given first."""
    return "\n".join(f"- **{s.share:.0%}** ("
                     + _("{count} of {answered}", count=s.count, answered=s.answered)
                     + f") **{s.distractor.name}**: {s.distractor.why}" for s in shares)


def misconception_panel(room, view, font_scale: float = 1.0, compact: bool = False) -> None:
    """After the reveal: how many of the class gave each misconception's answer (``compact``:
    in the narrow column beside the answer, the chart narrowed as the class's answers are)."""
    if view.phase != "revealed" or room.lesson is None:
        return
    told = round_told(room.lesson, view.step, view.question, language())   # the page's words
    shares = class_misconceptions(told, view.counts, view.n_answered)
    if not shares:
        return
    st.markdown(_("**Why were they wrong?** The wrong answers that named misconceptions give "
                  "on these weights, and how many of the class gave each:"))
    st.markdown(histogram_lines(shares))
    fig = misconceptions_figure(shares, font_scale=font_scale, label_chars=16 if compact else 40,
                                lang=page_lang())
    if compact:
        fig = narrowed(fig, width_chars=round(30 / font_scale), font=round(12 * font_scale))
    show_chart(fig, key="class_slips",
               name=f"xattn-class-{room.code}-step{view.step}-misconceptions",
               alt=chart_words(page_lang())(ALT))
