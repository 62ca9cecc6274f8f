"""The class against the heads on the lecturer's page: the line, the chart and the folded table
(made once per server by ``xattn.live.versus``)."""

from __future__ import annotations

import streamlit as st

from xattn.lesson import Told, Versus
from xattn.live.versus import alt, class_versus, versus_chart
from xattn.ui.charts import show_chart

__all__ = ["show_versus"]


def show_versus(a, told: Told, counts: dict, n_answered: int, *, who: str = "the class",
                key: str, name: str, font_scale: float = 1.0, table: bool = True,
                chart: bool = True) -> Versus:
    """The one-line comparison, the chart and (folded) the table."""
    v = class_versus(a, counts, n_answered, who)
    st.markdown(v.line)
    if chart:
        show_chart(versus_chart(a, told, v, counts, who=who, font_scale=font_scale), key=key,
                   name=name, alt=alt(who))
    if table:
        with st.expander(f"AER of {who}, every layer and every head"):
            st.markdown(v.table)
    return v
