"""The layers x heads overview (as BertViz's model view): every head of every layer, small.

One small heatmap per (layer, head), layers top to bottom and heads left to right, on the
shared 0-1 scale, without token labels: the shapes of the patterns are what it is for. An
invisible square marker covers each panel, so a click on a panel reports its (layer, head)
through Streamlit's selection (heatmap traces report no clicks there). The weights travel as
8-bit values (0..255 for 0..1): a quarter of the float32 payload, finer than the eye can tell.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import COLORSCALE, base_layout, subplot_ref
from xattn.figures.words import chart_words

__all__ = ["overview_figure", "PANEL_PX"]

PANEL_PX = 64          # each head's panel, square, in pixels
_GAP_PX = 8


def overview_figure(weights: np.ndarray, *, selected: tuple[int, int] | None = None,
                    lang: str = "en") -> go.Figure:
    """Small multiples of every layer and head.

    Parameters
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tgt, n_src)
    selected : (layer, head), optional
        0-based; that panel is outlined.
    lang : str, default "en"
        The language of the chart's words (the panels' names, hover).

    Returns
    -------
    plotly.graph_objects.Figure
        Heatmap ``k = layer * n_heads + head`` on subplot k; the last trace holds one
        invisible marker per panel whose ``customdata`` is ``[layer, head]`` counted from 1
        (as on screen).
    """
    tr = chart_words(lang)
    weights = np.asarray(weights)
    if weights.ndim != 4:
        raise ValueError(f"weights must have shape (n_layers, n_heads, n_tgt, n_src); received "
                         f"{weights.shape}.")
    n_layers, n_heads, n_tgt, n_src = weights.shape
    step = PANEL_PX + _GAP_PX
    width, height = 70 + n_heads * step, 40 + n_layers * step
    z8 = np.rint(np.clip(weights, 0, 1) * 255).astype(np.uint8)   # (L, H, T, S)
    # The click-catching subplot covers every panel: its plot background must be transparent,
    # or it paints white over all the thumbnails (the JSON is right, the screen is blank).
    layout = base_layout(None, height, top=30, width=width, showlegend=False, dragmode=False,
                         clickmode="event+select", hovermode="closest",
                         plot_bgcolor="rgba(0,0,0,0)",
                         margin=dict(l=60, r=10, t=30, b=10),
                         coloraxis=dict(colorscale=COLORSCALE, cmin=0, cmax=255,
                                        showscale=False))
    traces, centres, cells = [], ([], []), []
    plot_w, plot_h = width - 70, height - 40
    for layer in range(n_layers):
        for head in range(n_heads):
            k = layer * n_heads + head
            x0, y1 = head * step / plot_w, 1 - layer * step / plot_h
            x_dom, y_dom = [x0, x0 + PANEL_PX / plot_w], [y1 - PANEL_PX / plot_h, y1]
            traces.append(dict(type="heatmap", z=z8[layer, head], coloraxis="coloraxis",
                               xaxis=subplot_ref(k, "x"), yaxis=subplot_ref(k, "y"),
                               hoverinfo="skip"))
            axis = dict(visible=False, fixedrange=True)
            layout["xaxis" + subplot_ref(k, "x")[1:]] = dict(axis, domain=x_dom,
                                                            anchor=subplot_ref(k, "y"))
            layout["yaxis" + subplot_ref(k, "y")[1:]] = dict(axis, domain=y_dom,
                                                            anchor=subplot_ref(k, "x"),
                                                            autorange="reversed")
            centres[0].append(sum(x_dom) / 2)
            centres[1].append(sum(y_dom) / 2)
            cells.append([layer + 1, head + 1])
    annotations = [dict(text=tr("layer {l}", l=layer + 1), x=-0.01, xref="paper", xanchor="right",
                        y=1 - (layer * step + PANEL_PX / 2) / plot_h, yref="paper",
                        showarrow=False, font=dict(size=11)) for layer in range(n_layers)]
    annotations += [dict(text=tr("head {h}", h=head + 1), x=(head * step + PANEL_PX / 2) / plot_w,
                         xref="paper", y=1, yref="paper", yanchor="bottom", showarrow=False,
                         font=dict(size=11)) for head in range(n_heads)]
    shapes = []
    if selected is not None:
        layer, head = selected
        x0, y1 = head * step / plot_w, 1 - layer * step / plot_h
        shapes.append(dict(type="rect", xref="paper", yref="paper", x0=x0 - 0.004,
                           x1=x0 + PANEL_PX / plot_w + 0.004, y0=y1 - PANEL_PX / plot_h - 0.01,
                           y1=y1 + 0.01, line=dict(color="#ff7f0e", width=3)))
    layout.update(annotations=annotations, shapes=shapes,
                  xaxis999=dict(domain=[0, 1], range=[0, 1], visible=False, fixedrange=True,
                                anchor="y999"),
                  yaxis999=dict(domain=[0, 1], range=[0, 1], visible=False, fixedrange=True,
                                anchor="x999"))
    click = dict(type="scatter", mode="markers", x=centres[0], y=centres[1], xaxis="x999",
                 yaxis="y999", customdata=cells, showlegend=False,
                 marker=dict(size=PANEL_PX, symbol="square", opacity=0, color="black"),
                 hovertemplate=(f"{tr('layer')} %{{customdata[0]:d}} · {tr('head')} "
                                f"%{{customdata[1]:d}}: {tr('click to open')}<extra></extra>"))
    return go.Figure(data=traces + [click], layout=layout, _validate=False)
