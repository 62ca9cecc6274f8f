"""A lesson step's extras alone (no room): the charts that belong to an answer.

Several predictions at once (each head's job) and the aligning control are prediction
controls of their own kinds (``xattn.ui.lesson.predict``), alike alone and in a room.
"""

from __future__ import annotations

from xattn.lesson import Told
from xattn.live.compute import figure
from xattn.ui.charts import show_chart
from xattn.ui.i18n import page_lang

__all__ = ["answer_charts"]


def answer_charts(told: Told, scale: float, a) -> None:
    """The answer's figures (``Told.charts``: the head, layer or curve the question is about),
    each built once per server for the weights ``a`` and the page's text size."""
    lang = page_lang()
    for k, chart in enumerate(told.charts):
        fig = figure(("lesson-answer", a.key, scale, lang, *chart.key),
                     lambda chart=chart: chart.make(scale, lang))
        show_chart(fig, key=f"lesson_answer_chart_{k}", name=f"xattn-lesson-answer-{k}",
                   alt=chart.said(lang))
