"""The class's taps on an image (question kind ``tap``): a heatmap of the shares of the class
over the image's patches, the model's peak outlined, beside the model's attention."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import (
    HIGHLIGHT,
    base_layout,
)
from xattn.figures.class_words import counted_title
from xattn.figures.classroom import class_shares
from xattn.figures.words import chart_words

__all__ = ["patch_taps_figure", "SEE_THROUGH"]

# Taps over an image: none see-through, more ever redder (the image shows under every cell)
SEE_THROUGH = [[0.0, "rgba(255,255,255,0)"], [0.05, "rgba(253,174,97,0.45)"],
               [1.0, "rgba(165,0,38,0.85)"]]


def _patch_panel(z, text, k: int, what: str, *, colorbar: bool, share: str) -> dict:
    """One heatmap over the image (subplot ``k``, 1 or 2), its first row on top; a share of
    none is see-through (the image shows)."""
    n = z.shape[0]
    suffix = "" if k == 1 else str(k)
    return dict(type="heatmap", z=np.asarray(z).tolist(), x=list(range(z.shape[1])),
                y=list(range(n)), zmin=0, zmax=1, colorscale=SEE_THROUGH,
                text=text, xgap=1, ygap=1,
                texttemplate="%{text}" if text is not None else None,
                xaxis="x" + suffix, yaxis="y" + suffix, showscale=colorbar,
                colorbar=dict(title=dict(text=share), thickness=12),
                hovertemplate=f"{what} %{{z:.0%}}<extra></extra>")


def _peak_mark(cell, n_rows: int, k: int, name: str) -> dict:
    suffix = "" if k == 1 else str(k)
    return dict(type="scatter", x=[cell[1]], y=[cell[0]], mode="markers",
                name=name, xaxis="x" + suffix, yaxis="y" + suffix, showlegend=False,
                hoverinfo="skip", marker=dict(symbol="square-open", size=26, color=HIGHLIGHT,
                                              line=dict(width=3)))


def patch_taps_figure(question, counts: dict, n_answered: int, *, truth=None, weights=None,
                      font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """The class's taps on an image (a ``"tap"`` question): each patch the share of the
    students who tapped it, over the image; once ``truth`` (the peak's (row, column)) is
    given it is outlined, and ``weights`` (the model's attention over the patches, rows ×
    columns) are drawn beside, over the same image.

    Parameters
    ----------
    question : xattn.classroom.Question
        Of kind ``"tap"``: ``rows`` and ``choices`` name the patches' rows and columns,
        ``image`` the picture (a data: URL; "" draws the grid alone).
    counts : dict of (int, int) to int
        (row, column) to the students who tapped it.
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    n_rows, n_cols = len(question.rows), len(question.choices)
    z, text = class_shares(counts, n_answered, list(range(n_rows)), list(range(n_cols)))
    panels = 1 if weights is None else 2
    data = [_patch_panel(z, text, 1, tr("tapped by"), colorbar=True, share=tr("share"))]
    if truth is not None:
        data.append(_peak_mark(truth, n_rows, 1, tr("the model's peak")))
    if weights is not None:
        w = np.asarray(weights, np.float32).reshape(n_rows, n_cols)
        data.append(_patch_panel(w / max(float(w.max()), 1e-9), None, 2,
                                 tr("weight (of the largest)"), colorbar=False,
                                 share=tr("share")))
        data.append(_peak_mark(np.unravel_index(int(np.argmax(w)), w.shape), n_rows, 2,
                               "peak"))
    title = counted_title(question, n_answered, tr)
    if truth is not None:
        title = tr("{title}, the model's peak outlined", title=title)
    if weights is not None:
        title = tr("{title} · right: the model's attention", title=title)
    side = round(300 * font_scale)
    layout = base_layout(title, side + 90, top=50, font_scale=font_scale, showlegend=False)
    for k in range(1, panels + 1):
        suffix = "" if k == 1 else str(k)
        lo, hi = ((0, 0.46), (0.54, 1))[k - 1] if panels == 2 else (0, 1)
        layout["xaxis" + suffix] = dict(domain=[lo, hi], range=[-0.5, n_cols - 0.5],
                                        tickvals=list(range(n_cols)),
                                        ticktext=list(question.choices), showgrid=False,
                                        zeroline=False, title=dict(text=tr("column")),
                                        anchor="y" + suffix)
        layout["yaxis" + suffix] = dict(range=[n_rows - 0.5, -0.5],     # row 1 on top
                                        tickvals=list(range(n_rows)),
                                        ticktext=list(question.rows), showgrid=False,
                                        zeroline=False, anchor="x" + suffix,
                                        scaleanchor="x" + suffix,
                                        title=dict(text=tr("row") if k == 1 else ""))
    if question.image:
        layout["images"] = [dict(source=question.image, xref="x" + ("" if k == 1 else str(k)),
                                 yref="y" + ("" if k == 1 else str(k)), x=-0.5,
                                 y=-0.5, sizex=n_cols, sizey=n_rows, xanchor="left",
                                 yanchor="top", sizing="stretch", layer="below")
                            for k in range(1, panels + 1)]
    return go.Figure(data=data, layout=layout, _validate=False)
