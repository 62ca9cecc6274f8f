"""The class against the heads on the lecturer's page: the line, the chart and the folded table
(made once per server by ``xattn.live.versus``)."""

from __future__ import annotations

import streamlit as st

from xattn.figures.words import chart_words
from xattn.lesson import Told, Versus
from xattn.live.versus import ALT, class_versus, versus_chart
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import page_lang

__all__ = ["show_versus"]


def show_versus(a, told: Told, counts: dict, n_answered: int, *, who: str = "the class",
                key: str, name: str, font_scale: float = 1.0, table: bool = True,
                chart: bool = True) -> Versus:
    """The one-line comparison, the chart and (folded) the table."""
    v = class_versus(a, counts, n_answered, who)
    st.markdown(v.line)
    if chart:
        show_chart(versus_chart(a, told, v, counts, who=who, font_scale=font_scale,
                                lang=page_lang()), key=key,
                   name=name, alt=chart_words(page_lang())(ALT))
    if table:
        with st.expander(_("AER of the class, every layer and every head")
                         if who == "the class" else
                         _("Your AER, every layer and every head") if who == "you" else
                         _("AER of {who}, every layer and every head", who=who)):
            st.markdown(v.table)
    return v
