"""The layers x heads overview of the Heads view: a click opens that layer and head."""

from __future__ import annotations

import streamlit as st

from xattn.figures import overview_figure
from xattn.live.compute import figure
from xattn.live.link import FOCUS, LAYER
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext, page_lang
from xattn.ui.state import PageState

__all__ = ["layers_overview"]

PICK_KEY = "overview_pick"


def _on_pick() -> None:
    """A clicked panel opens its layer and head (before the widgets of the next run)."""
    points = st.session_state.get(PICK_KEY, {}).get("selection", {}).get("points", [])
    if points:
        layer, head = (int(v) for v in points[0]["customdata"])
        st.session_state[LAYER.key], st.session_state[FOCUS.key] = layer, head


def layers_overview(a: Attention, layer: int, state: PageState) -> int | None:
    """Draw the overview; return the opened head (0-based), or None."""
    heads = range(0, a.n_heads + 1)
    focus = state.value(FOCUS, heads, why=ngettext("(there is {n} head)",
                                                   "(there are {n} heads)", a.n_heads))
    st.markdown(_("**Every layer and head** ({layers} × {heads}): click one to open it "
                  "below.", layers=ngettext("{n} layer", "{n} layers", a.n_layers),
                  heads=ngettext("{n} head", "{n} heads", a.n_heads)))
    selected = (layer, focus - 1) if focus else None
    lang = page_lang()
    fig = figure((a.key, "overview", selected, lang),
                 lambda: overview_figure(a.weights, selected=selected, lang=lang))
    show_chart(fig, key=PICK_KEY, name="xattn-layers-heads", toolbar=False,
               on_select=_on_pick, selection_mode="points", width="content",
               alt=_("Small heatmaps of all {n} heads, one row per layer; click one to open "
                     "it, or choose it in the box below.", n=a.n_layers * a.n_heads))
    names = {h: _("none: every head below") if h == 0 else _("head {head}", head=h)
             for h in heads}
    st.selectbox(_("Open one head of this layer (or click it above)"), heads, key=FOCUS.key,
                 format_func=names.get)
    return focus - 1 if focus else None
