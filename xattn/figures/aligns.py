"""The class against the heads: the class's alignment beside each layer's and each head's
weights on the same pair, gold links outlined, one 0-1 colour scale.

Small multiples that stay readable in a narrow column (a phone, a projector's right half):
the target words are written once per row of panels (left), the source words once per column
(under its last panel), and each panel's title is short ("L2 head 2": layer 2, head 2; in the
chart's language, "C2 tête 2" in French).
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import (
    COLORSCALE,
    axis_labels,
    base_layout,
    category_axis,
    subplot_ref,
)
from xattn.figures.heads import gold_marks, head_height
from xattn.figures.words import N_, chart_words

__all__ = ["panel_title", "versus_figure", "versus_parts"]

# whose links the first panel shows, as the lesson names them (said in the chart's language)
WHO = (N_("the class"), N_("you"))


def panel_title(name, tr) -> str:
    """A panel's short title in ``tr``'s language: ``name`` is plain text (said as it is) or
    a record with ``layer`` and ``head`` (1-based, None for none: ``xattn.lesson.PanelName``),
    said "L2 head 2", "L2 mean", "head 2" or "mean"."""
    if isinstance(name, str):
        return name
    if name.layer is None:
        return tr("mean") if name.head is None else tr("head {h}", h=name.head)
    return (tr("L{l} mean", l=name.layer) if name.head is None
            else tr("L{l} head {h}", l=name.layer, h=name.head))


def _panel(z, x, y, k: int, name: str, what: str, tr) -> dict:
    return dict(type="heatmap", z=np.asarray(z, np.float32), x=x, y=y, coloraxis="coloraxis",
                xaxis=subplot_ref(k, "x"), yaxis=subplot_ref(k, "y"), name=name, xgap=0.5,
                ygap=0.5, hovertemplate=(f"<b>{name}</b><br>{tr('target')} %{{y}}<br>"
                                         f"{tr('source')} %{{x}}<br>{what} %{{z:.2f}}"
                                         "<extra></extra>"))


def versus_figure(shares: np.ndarray, panels, src_words, tgt_words, *, gold: np.ndarray,
                  who: str | None = None, max_cols: int = 3,
                  font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """Small multiples: ``who``'s links (each link's share of the class) first, then each
    named panel (a layer's average, a head), with the gold links outlined on each.

    Parameters
    ----------
    shares : ndarray of shape (n_tgt, n_src)
        Each link's share of the class (1: everyone drew it).
    panels : sequence of (name, ndarray of shape (n_tgt, n_src))
        Each panel's name (plain text, or a layer and head said by `panel_title`) and weights
        (``xattn.lesson.Versus.panels``).
    src_words, tgt_words : sequence of str
    gold : ndarray of bool, shape (n_tgt, n_src)
    who : str, optional
        Plain text: whose links the first panel shows (default "the class" in ``lang``).
    max_cols : int
        Panels per row.
    font_scale : float
        Larger text for a projector.
    lang : str, default "en"
        The language of the chart's words, the panels' names among them.

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig.data[k]`` is panel k's heatmap (k = 0: the class), then each panel's gold marks.
    """
    data, layout = versus_parts(shares, panels, src_words, tgt_words, gold=gold, who=who,
                                max_cols=max_cols, font_scale=font_scale, lang=lang)
    return go.Figure(data=data, layout=layout, _validate=False)


def versus_parts(shares: np.ndarray, panels, src_words, tgt_words, *, gold: np.ndarray,
                 who: str | None = None, max_cols: int = 3, font_scale: float = 1.0,
                 lang: str = "en") -> tuple[list[dict], dict]:
    """`versus_figure`'s traces and layout as plain dicts, same parameters:
    ``xattn.figures.frozen.frozen`` of them is the converted figure, made without Plotly's
    object tree (a phone's build makes one per language at each reveal)."""
    tr = chart_words(lang)
    who = tr(who) if who else tr("the class")
    named = [(who, np.asarray(shares, np.float64)),
             *((panel_title(name, tr), z) for name, z in panels)]
    n_tgt, n_src = named[0][1].shape
    x, x_text = axis_labels(src_words)
    y, y_text = axis_labels(tgt_words)
    cols = min(len(named), max_cols)
    rows = math.ceil(len(named) / cols)
    font, label_px, _ = head_height(src_words, n_tgt, font_scale=font_scale)
    title_px, heat_px = round(22 * font_scale), max(90, (font + 5) * n_tgt)
    row_px = title_px + heat_px + 8
    plot_px = rows * row_px + label_px
    bar_px = round(56 * font_scale)        # the colour bar, under the panels: the width is theirs
    layout = base_layout(tr("{who} beside each layer (L) and head", who=who[:1].upper() + who[1:]),
                         plot_px + 50 + bar_px, top=50, font_scale=font_scale, showlegend=False,
                         coloraxis=dict(colorscale=COLORSCALE, cmin=0.0, cmax=1.0, colorbar=dict(
                             title=dict(text=tr("share or weight (gold links outlined)"),
                                        side="top"), orientation="h", thickness=10, len=0.9,
                             x=0, xanchor="left", y=0, yanchor="top", ypad=4)))
    layout["margin"]["b"] = bar_px
    gap = 0.04
    width = (1 - gap * (cols - 1)) / cols
    data, marks, notes = [], [], []
    for k, (name, z) in enumerate(named):
        r, c = divmod(k, cols)
        top = 1 - (r * row_px + title_px) / plot_px
        xd = (c * (width + gap), c * (width + gap) + width)
        yd = (top - heat_px / plot_px, top)
        bottom = k + cols >= len(named)                 # the last panel of its column
        data.append(_panel(z, x, y, k, name, tr("share") if k == 0 else tr("weight"), tr))
        marks.append(gold_marks(gold, x, y, k) | {"marker": dict(
            symbol="square-open", size=max(6, round(heat_px / n_tgt) - 6), color="#ff2d55",
            line=dict(width=2))})
        ax, ay = subplot_ref(k, "x"), subplot_ref(k, "y")
        layout[f"xaxis{ax[1:]}"] = category_axis(
            (x, x_text), angle=-60, font=font, domain=xd, anchor=ay, showticklabels=bottom,
            title=tr("source") if bottom and c == 0 else None)
        layout[f"yaxis{ay[1:]}"] = category_axis(
            (y, y_text), reverse=True, font=font, domain=yd, anchor=ax,
            showticklabels=c == 0, title=tr("target") if c == 0 and r == 0 else None)
        notes.append(dict(text=f"<b>{name}</b>", x=sum(xd) / 2, xref="paper", y=yd[1],
                          yref="paper", yanchor="bottom", showarrow=False,
                          font=dict(size=round(12 * font_scale))))
    layout["annotations"] = notes
    return data + marks, layout
