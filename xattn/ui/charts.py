"""The one door to ``st.plotly_chart``: every chart of the page is shown by `show_chart`.

It gives every chart the same toolbar (its camera button saves PNG or SVG, as the sidebar's
*Display* section says, under a file name that says what is in it) and an ``alt`` text for
screen readers, and hands Streamlit a ``FrozenFigure`` as it is (``xattn.figures.frozen``).
"""

from __future__ import annotations

import streamlit as st

from xattn.export import IMAGE_FORMATS, toolbar_config
from xattn.figures.frozen import right_to_left
from xattn.live.link import IMG
from xattn.locales import RTL
from xattn.ui.i18n import page_lang

__all__ = ["show_chart", "chart_config"]


def chart_config(name: str) -> dict:
    """Plotly config for a chart: toolbar download in the chosen format, named ``name``."""
    fmt = st.session_state.get(IMG.key, "png")
    return toolbar_config(name, fmt if fmt in IMAGE_FORMATS else "png")


def show_chart(fig, *, key: str | None, name: str, alt: str, toolbar: bool = True, where=None,
               **options):
    """Draw ``fig`` (a ``go.Figure`` or ``FrozenFigure``) with the page's toolbar config.

    ``name`` names the downloaded image, ``alt`` describes the chart for screen readers;
    ``toolbar=False`` hides the toolbar; ``where`` is a container or slot to draw in (the
    page by default); ``options`` go to ``st.plotly_chart`` (``on_select``, ``width``, ...).
    Returns what ``st.plotly_chart`` returns (the selection, for a chart with ``on_select``).
    """
    config = chart_config(name) | ({} if toolbar else {"displayModeBar": False})
    if page_lang() in RTL:                    # Arabic titles read right to left in the chart
        fig = right_to_left(fig)
    return (where or st).plotly_chart(fig, key=key, config=config, alt=alt, **options)


