"""One chart per head, in columns: on a phone the columns stack, one readable head a row.

A single figure of all heads squeezes them into the page's width (four heads in 358 px on a
phone, titles overlapping); separate charts let Streamlit's columns do the layout. Long
sentences get fewer, bigger columns, and pages of heads instead of a grid taller than a screen
or two. One colour legend serves every chart.
"""

from __future__ import annotations

import html
import math
from functools import partial

import numpy as np
import streamlit as st

from xattn.figures import COLOR_STOPS
from xattn.figures.frozen import frozen
from xattn.figures.heads import head_height, head_parts
from xattn.figures.words import chart_words
from xattn.live.compute import figure
from xattn.live.link import HPAGE, SCALE
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext, page_lang
from xattn.ui.state import PageState

__all__ = ["head_grid", "colour_top"]

GRID_PX = 1400            # a page of heads at most this tall


def colour_top(weights: np.ndarray, state: PageState) -> float:
    """The top of the colour scale (sidebar, *Display*): 1 (fixed, comparable across heads)
    or the picture's maximum (its structure shows even when every weight is small)."""
    top = float(np.max(weights)) if state.shown(SCALE) == "max" else 1.0
    return top if top > 0 else 1.0


def legend(top: float) -> None:
    """The colour scale of the charts below, as one bar (constant HTML and the page's word
    for "weight", no user text), left to right in every language (``xattn-ltr``) as the
    charts' own colour bars are.

    Markdown, not ``st.html``: the page's style sheet already brings Markdown's HTML support
    to the browser, while ``st.html`` would fetch and run two more scripts (its element and
    DOMPurify) before a first visitor's first heatmap."""
    stops = ", ".join(COLOR_STOPS)
    word = html.escape(chart_words(page_lang())("weight"))
    # margin-bottom 1rem, as a paragraph has: Streamlit's markdown container takes 1rem off
    # its bottom (a paragraph's margin), which a div lacks, so the charts below overlapped it
    st.markdown(f'<div class="xattn-ltr" dir="ltr" style="display:flex;align-items:center;'
                f'gap:8px;font-size:0.85rem;color:#555;white-space:nowrap;margin-bottom:1rem">'
                f'<span>{word} 0</span>'
                f'<span style="flex:0 1 280px;min-width:80px;height:12px;border-radius:3px;'
                f'background:linear-gradient(to right, {stops})"></span>'
                f'<span>{top:.3f}</span></div>',
                unsafe_allow_html=True)


def _layout(n_heads: int, n_tokens: int, n_tgt: int, src_tokens,
            max_cols: int = 4) -> tuple[int, int]:
    """Columns, and heads on a page, so that a page stays under GRID_PX."""
    cols = min(n_heads, max_cols, 4 if n_tokens <= 16 else 3 if n_tokens <= 32 else 2)
    height = head_height(src_tokens, n_tgt)[2]                   # as head_parts draws it
    return cols, cols * max(1, GRID_PX // height)


def _head(a: Attention, weights: np.ndarray, h: int, top: float, font_scale: float,
          labels: int):
    """Head ``h``'s chart, made as Plotly's dict without the figure objects."""
    return frozen(*head_parts(weights[h], a.src_tokens, a.tgt_tokens, head=h, mask=a.mask,
                              zmax=top, max_x_labels=labels, font_scale=font_scale,
                              gold=a.gold, lang=page_lang()))


def head_grid(a: Attention, layer: int, state: PageState, *, top: float,
              stem: str, font_scale: float = 1.0, max_cols: int = 4,
              legend_below: bool = False) -> None:
    """Draw one chart per head of ``a``'s layer ``layer``, paged if needed. Each chart is built
    once per server (``xattn.live.compute.figure``): a rerun that does not change it, or another
    student asking for the same, only sends it. The colour legend comes first, or after the
    charts (``legend_below``: a projector's first screen starts with a chart)."""
    weights = a.layer(layer)
    n_heads, n_tgt, n_src = weights.shape
    cols, per_page = _layout(n_heads, max(n_tgt, n_src), n_tgt, a.src_tokens, max_cols)
    pages = math.ceil(n_heads / per_page)
    first = 0
    if pages > 1:
        names = {p: _("heads {first}–{last}", first=(p - 1) * per_page + 1,
                      last=min(p * per_page, n_heads))
                 for p in range(1, pages + 1)}
        page = state.value(HPAGE, list(names),
                           why=ngettext("(there is {n} page of heads)",
                                        "(there are {n} pages of heads)", pages))
        st.segmented_control(_("Heads"), list(names), key=HPAGE.key, format_func=names.get,
                             help=_("Long sentences make tall charts: the heads come a page "
                                    "at a time."))
        first = (page - 1) * per_page
    if not legend_below:
        legend(top)
    shown = range(first, min(first + per_page, n_heads))
    labels = {4: 16, 3: 20, 2: 24}.get(cols, 32)
    for row in range(0, len(shown), cols):
        for col, h in zip(st.columns(cols), shown[row:row + cols], strict=False):
            fig = figure((a.key, layer, "head", h, top, font_scale, labels, page_lang()),
                         partial(_head, a, weights, h, top, font_scale, labels))
            show_chart(fig, key=f"head_{h + 1}", name=f"{stem}-head{h + 1}", where=col,
                       alt=_("Heatmap of head {head}: target tokens (rows) by source tokens "
                             "(columns); a text version is in the expander below.", head=h + 1))
    if legend_below:
        legend(top)
