"""A lesson step's extras alone (no room): several predictions at once (each head's job, one
row each, tappable with one thumb), their verdict, and the charts that belong to an answer.

A room asks one ``Question`` a step; a step with ``Told.parts`` is asked here, on the
student's own page, until rooms can hold one answer per part.
"""

from __future__ import annotations

import streamlit as st

from xattn.lesson import Told, parts_verdict
from xattn.ui.charts import show_chart

__all__ = ["PART_PREFIX", "parts_prediction", "parts_answer", "answer_charts"]

PART_PREFIX = "predict_part_"   # the widgets' keys: a student's own, never in the link
SHORT = {"follows position": "position", "aligns words": "aligns", "sink": "sink",
         "spread out": "spread"}


def parts_prediction(told: Told) -> dict:
    """One row per part: its name, then its choices as pills in short words (four fit one
    line of a phone and of a projector's column; one tap picks, another takes it back).
    Returns part name: answer, for the parts answered."""
    said = {}
    with st.container(key="predict"):
        st.markdown(f"**Your prediction.** {told.prompt}")
        for k, part in enumerate(told.parts):
            said[part.name] = st.pills(part.name, part.question.options(),
                                       key=f"{PART_PREFIX}{k}",
                                       format_func=lambda o: SHORT.get(o, o))
    return {k: v for k, v in said.items() if v is not None}


def parts_answer(told: Told, said: dict) -> None:
    """The verdict of the parts answered (in the answer, after the prediction)."""
    text = parts_verdict(told, said)
    if text:
        st.markdown(text)


def answer_charts(told: Told, scale: float) -> None:
    """The answer's figures (``Told.charts``), each built with the page's text size."""
    for k, make in enumerate(told.charts):
        show_chart(make(scale), key=f"lesson_answer_chart_{k}", name=f"xattn-lesson-answer-{k}",
                   alt="Bar chart comparing attention weights with the measured effect of "
                       "masking each source word or switching each head off.")
