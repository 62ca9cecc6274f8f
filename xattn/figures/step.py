"""Figures of the step-through view: a clickable heatmap of one head, and one row of weights.

Heatmap traces do not report clicks in Streamlit, so the clickable heatmap carries an invisible
scatter trace with one marker per cell; its selected point gives (target, source) through
``customdata``.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import (
    ACCENT,
    COLORSCALE,
    HIGHLIGHT,
    OKABE_ITO,
    axis_labels,
    base_layout,
    bottom_legend,
    category_axis,
    tick_font,
)
from xattn.figures.heads import head_height, mask_marks
from xattn.figures.words import N_, chart_words

__all__ = ["clickable_head_figure", "weights_bar_figure", "saturation_figure"]

BAR, MUTED = "#21918c", "#bdbdbd"   # viridis' teal for weights, grey for masked keys


def clickable_head_figure(weights: np.ndarray, src_tokens: list[str], tgt_tokens: list[str], *,
                          head: int, selected: int | None = None,
                          mask: np.ndarray | None = None,
                          column: int | None = None, font_scale: float = 1.0,
                          lang: str = "en") -> go.Figure:
    """One head's heatmap where clicking a cell selects its target row.

    Parameters
    ----------
    weights : ndarray of shape (n_tgt, n_src)
        The weights of one head.
    head : int
        0-based head index (shown as ``head + 1``).
    selected : int, optional
        Target row to outline.
    column : int, optional
        Source column of the clicked cell: that cell is outlined too.
    mask : ndarray of bool, shape (n_tgt, n_src), optional
    lang : str, default "en"
        The language of the chart's words (``xattn.figures.words``).

    Returns
    -------
    plotly.graph_objects.Figure
        ``data[0]`` the heatmap, ``data[1]`` the invisible click layer whose point
        ``customdata`` is ``[target_pos, source_pos]``.
    """
    tr = chart_words(lang)
    n_tgt, n_src = weights.shape
    (x, x_text), (y, y_text) = axis_labels(src_tokens), axis_labels(tgt_tokens)
    rows, cols = np.indices((n_tgt, n_src)).reshape(2, -1)
    heat = dict(type="heatmap", z=np.asarray(weights, np.float32), x=x, y=y,
                colorscale=COLORSCALE, zmin=0, zmax=1, xgap=0.5, ygap=0.5,
                colorbar=dict(title=dict(text=tr("weight")), thickness=12), hoverinfo="skip")
    click = dict(type="scatter", mode="markers", x=[x[j] for j in cols], y=[y[i] for i in rows],
                 customdata=[[int(i), int(j)] for i, j in zip(rows, cols, strict=True)],
                 # Small markers: Plotly picks the marker nearest to the click, and markers
                 # larger than a cell would overlap their neighbours and tie.
                 marker=dict(size=6, symbol="square", opacity=0, color="black"),
                 name="cells", showlegend=False,
                 hovertemplate=(f"<b>{tr('head {h}', h=head + 1)}</b><br>{tr('target (query)')}"
                                f" %{{y}}<br>{tr('source (key)')} %{{x}}<br>"
                                f"{tr('click to step through this row')}<extra></extra>"))
    shapes = []
    if selected is not None:
        shapes.append(dict(type="rect", xref="x", x0=-0.5, x1=n_src - 0.5, yref="y",
                           y0=selected - 0.5, y1=selected + 0.5,
                           line=dict(color=HIGHLIGHT, width=3)))
        if column is not None and 0 <= column < n_src:
            shapes.append(dict(type="rect", xref="x", x0=column - 0.5, x1=column + 0.5,
                               yref="y", y0=selected - 0.5, y1=selected + 0.5,
                               line=dict(color="white", width=3)))
    font, _, height = head_height(src_tokens, n_tgt, font_scale=font_scale,
                                  row_px=22)                      # rows a finger can hit
    layout = base_layout(
        tr("Head {h}: click a cell to pick its target token", h=head + 1), height,
        font_scale=font_scale,
        xaxis=category_axis((x, x_text), title=tr("source (keys)"), angle=-60, font=font),
        yaxis=category_axis((y, y_text), title=tr("target (queries)"), reverse=True, font=font),
        shapes=shapes, clickmode="event+select", dragmode=False)
    marks = None if mask is None else mask_marks(np.asarray(mask, bool), x, y, 0, size=12)
    return go.Figure(data=[heat, click] + ([marks] if marks else []), layout=layout,
                     _validate=False)


def weights_bar_figure(weights_row: np.ndarray, src_tokens: list[str], *,
                       allowed: np.ndarray, query: str, head: int,
                       marked: int | None = None, font_scale: float = 1.0,
                       lang: str = "en") -> go.Figure:
    """The softmax weights of one target token as bars over the source tokens.

    Parameters
    ----------
    weights_row : ndarray of shape (n_src,)
    allowed : ndarray of bool, shape (n_src,)
        Masked source tokens are drawn as grey, empty bars.
    query : str
        The target token whose weights these are (shown literally in the title).
    head : int
        0-based head index (shown as ``head + 1``).
    marked : int, optional
        A source position to outline (the clicked cell's column).
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    token = axis_labels([query])[1][0]                                # literal, cut
    x, x_text = axis_labels(src_tokens)
    colours = [BAR if a else MUTED for a in allowed]
    text = [f"{w:.3f}" if a else tr("masked") for w, a in zip(weights_row, allowed, strict=True)]
    outline = [3 if j == marked else 0 for j in range(len(x))]
    bar = dict(type="bar", x=x, y=np.asarray(weights_row, np.float32), text=text,
               marker=dict(color=colours, line=dict(color=HIGHLIGHT, width=outline)),
               textposition="outside",
               hovertemplate=(f"{tr('source')} %{{x}}<br>{tr('weight')} %{{y:.3f}}"
                              "<extra></extra>"))
    layout = base_layout(tr("Weights of {token} (head {h})", token=token, h=head + 1),
                         round(300 * font_scale), font_scale=font_scale, xaxis=category_axis(
        (x, x_text), title=tr("source (keys)"), angle=-60, font=tick_font(len(x), font_scale)),
        yaxis=dict(range=[0, 1.12], title=dict(text=tr("weight"))))
    return go.Figure(data=[bar], layout=layout, _validate=False)


def saturation_figure(curve: dict[str, np.ndarray], current_d_head: int, *,
                      font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """Mean normalised entropy against d_head, with and without the 1/sqrt(d_head) scaling
    (``font_scale``: presenter mode's larger text; ``lang``: the language of its words)."""
    tr = chart_words(lang)
    traces = [dict(type="scatter", mode="lines+markers", x=curve["d_head"], y=curve[key],
                   name=tr(name), line=dict(color=colour, dash=dash))
              for key, name, colour, dash in (("scaled", N_("divided by sqrt(d_head)"), ACCENT,
                                               "solid"),
                                              ("unscaled", N_("not scaled"), OKABE_ITO[3],
                                               "dash"))]
    tick = dict(size=round(12 * font_scale))
    layout = base_layout(
        tr("Without scaling, the softmax saturates as d_head grows"), round(320 * font_scale),
        font_scale=font_scale,
        xaxis=dict(type="log", title=dict(text=tr("d_head (log scale)")),
                   tickvals=curve["d_head"], tickfont=tick),
        yaxis=dict(range=[0, 1.05], title=dict(text=tr("mean normalised entropy")),
                   tickfont=tick),
        legend=bottom_legend(),
        shapes=[dict(type="line", x0=current_d_head, x1=current_d_head, yref="paper", y0=0,
                     y1=1, line=dict(color="#777", dash="dot"))],
        annotations=[dict(x=np.log10(current_d_head), y=1.02, yref="paper", text=tr("this run"),
                          showarrow=False, font=dict(size=round(11 * font_scale)))])
    return go.Figure(data=traces, layout=layout, _validate=False)
