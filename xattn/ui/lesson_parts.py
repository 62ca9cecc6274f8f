"""A lesson step's extras alone (no room): the charts that belong to an answer.

Several predictions at once (each head's job) and the aligning control are prediction
controls of their own kinds (``xattn.ui.predict``), alike alone and in a room.
"""

from __future__ import annotations

from xattn.lesson import Told
from xattn.ui.charts import show_chart

__all__ = ["answer_charts"]


def answer_charts(told: Told, scale: float) -> None:
    """The answer's figures (``Told.charts``), each built with the page's text size."""
    for k, make in enumerate(told.charts):
        show_chart(make(scale), key=f"lesson_answer_chart_{k}", name=f"xattn-lesson-answer-{k}",
                   alt="Bar chart comparing attention weights with the measured effect of "
                       "masking each source word or switching each head off.")
