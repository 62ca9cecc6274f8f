"""The Lines view (as in BertViz and Tensor2Tensor): target tokens joined to source tokens."""

from __future__ import annotations

import streamlit as st

from xattn.figures import lines_figure
from xattn.live.link import LINES_HEADS, THRESHOLD
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext, page_lang
from xattn.ui.state import PageState
from xattn.ui.views.heads import file_stem


def lines_view(a: Attention, layer: int, state: PageState) -> None:
    n_heads = a.n_heads
    heads = range(1, n_heads + 1)
    left, right = st.columns([2, 1])
    chosen = state.value(LINES_HEADS, heads, why=ngettext("(there is {n} head)",
                                                          "(there are {n} heads)", n_heads))
    left.multiselect(_("Heads to draw (empty = all)"), heads, key=LINES_HEADS.key,
                     placeholder=_("all heads"))
    threshold = state.value(THRESHOLD)
    right.slider(_("Hide lines below weight"), 0.0, 0.5, step=0.01, key=THRESHOLD.key,
                 help=_("Lines for smaller weights are not drawn, so the strong links stand "
                        "out."))
    fig = lines_figure(a.layer(layer), a.src_tokens, a.tgt_tokens,
                       heads=[h - 1 for h in chosen] or None, threshold=float(threshold),
                       mask=a.mask, lang=page_lang())
    show_chart(fig, key="lines", name=f"{file_stem(a, layer)}-lines",
               alt=_("Lines from each target token to the source tokens it attends to, one "
                     "colour per head, more opaque for larger weights."))
    st.caption(_("Each line joins a target token (left) to a source token (right); the "
                 "stronger the weight, the more opaque the line. Click a head in the legend to "
                 "hide it."))
