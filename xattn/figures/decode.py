"""Figures of a translation being made (``xattn.decoding.Decoded``): one step's
cross-attention in every layer and head, the next-token candidates, and the rows so far."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import (
    ACCENT,
    COLORSCALE,
    HIGHLIGHT,
    OUTPUT_COLORSCALE,
    axis_labels,
    base_layout,
    category_axis,
    tick_font,
)
from xattn.figures.words import chart_words

__all__ = ["step_rows_figure", "candidates_figure", "rows_so_far_figure", "query_figure",
           "query_scores_figure"]


def step_rows_figure(rows: np.ndarray, src_tokens, *, title: str,
                     font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """One decoder step's cross-attention row in every layer and head.

    Parameters
    ----------
    rows : ndarray of shape (n_layers, n_heads, n_src)
    src_tokens : list of str
    title : str
        Trusted text (tokens in it already literal: ``axis_labels``).
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    n_layers, n_heads, n_src = rows.shape
    x, x_text = axis_labels(src_tokens)
    y = [tr("layer {l} · head {h}", l=layer + 1, h=h + 1) for layer in range(n_layers)
         for h in range(n_heads)]
    z = np.asarray(rows, np.float32).reshape(n_layers * n_heads, n_src)     # (L*H, S)
    heat = dict(type="heatmap", z=z, x=x, y=y, zmin=0, zmax=1, colorscale=COLORSCALE,
                xgap=0.5, ygap=0.5, colorbar=dict(title=dict(text=tr("weight")), thickness=12),
                hovertemplate=f"%{{y}}<br>{tr('source (key)')} %{{x}}<br>{tr('weight')} "
                              "%{z:.3f}<extra></extra>")
    font = tick_font(n_src, font_scale)
    layout = base_layout(title, 120 + 18 * len(y) + 10 * font, font_scale=font_scale,
                         xaxis=category_axis((x, x_text), title=tr("source (keys)"), angle=-60,
                                             font=font),
                         yaxis=dict(autorange="reversed", tickfont=dict(size=font)))
    return go.Figure(data=[heat], layout=layout, _validate=False)


def candidates_figure(top, chosen: str, *, forced: bool, font_scale: float = 1.0,
                      lang: str = "en") -> go.Figure:
    """The most likely next tokens and their probabilities, the one taken outlined (and
    named "forced" when it was not the model's choice); ``lang``: the language of its
    words (the tokens stay as they are)."""
    tr = chart_words(lang)
    names = [p for p, _ in top]
    probs = [float(q) for _, q in top]
    if chosen not in names:                        # a forced token outside the top five
        names, probs = [*names, chosen], [*probs, float("nan")]
    y, y_text = axis_labels(names)
    taken = [n == chosen for n in names]
    bar = dict(type="bar", orientation="h", x=np.nan_to_num(probs), y=y,
               text=[(tr("forced · ") if forced and t else tr("taken · ") if t else "") +
                     (tr("n/a") if np.isnan(p) else f"{p:.1%}") for p, t in zip(probs, taken,
                                                                                strict=True)],
               # Inside a long bar, past the end of a short one: a label never needs more room
               # than the bar leaves, so none runs past the chart on a 390 px phone.
               textposition=["inside" if p >= 0.5 else "outside" for p in probs],
               textangle=0, insidetextanchor="end", constraintext="none", cliponaxis=False,
               insidetextfont=dict(color=["#ffffff" if t else "#111111" for t in taken]),
               marker=dict(color=[ACCENT if t else "#9e9e9e" for t in taken],
                           line=dict(color=HIGHLIGHT, width=[3 if t else 0 for t in taken])),
               hovertemplate=f"%{{y}}<br>{tr('probability')} %{{x:.3f}}<extra></extra>")
    layout = base_layout(tr("The most likely next tokens"), round(260 * font_scale),
                         font_scale=font_scale,   # room on the right for the "100%" tick
                         margin=dict(l=10, r=round(24 * font_scale), t=40, b=10),
                         xaxis=dict(range=[0, 1.02], tickformat=".0%",
                                    title=dict(text=tr("probability"))),
                         yaxis=category_axis((y, y_text), reverse=True,
                                             font=tick_font(len(y), font_scale)))
    return go.Figure(data=[bar], layout=layout, _validate=False)


def rows_so_far_figure(rows: np.ndarray, tgt_tokens, src_tokens, upto: int, *, title: str,
                       font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """The rows of one layer (heads averaged) as the decoder made them: rows up to ``upto``
    drawn, later rows left empty, the newest outlined.

    Parameters
    ----------
    rows : ndarray of shape (n_steps, n_src)
    tgt_tokens : list of str, length n_steps
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    n_steps, n_src = rows.shape
    z = np.asarray(rows, np.float32).copy()
    z[upto + 1:] = np.nan                                                   # not made yet
    x, x_text = axis_labels(src_tokens)
    y, y_text = axis_labels(tgt_tokens)
    heat = dict(type="heatmap", z=z, x=x, y=y, zmin=0, zmax=1, colorscale=COLORSCALE,
                xgap=0.5, ygap=0.5, colorbar=dict(title=dict(text=tr("weight")), thickness=12),
                hovertemplate=f"{tr('target')} %{{y}}<br>{tr('source')} %{{x}}<br>"
                              f"{tr('weight')} %{{z:.3f}}<extra></extra>")
    font = tick_font(max(n_steps, n_src), font_scale)
    layout = base_layout(title, 140 + max(150, (font + 5) * n_steps), font_scale=font_scale,
                         xaxis=category_axis((x, x_text), title=tr("source (keys)"), angle=-60,
                                             font=font),
                         yaxis=category_axis((y, y_text), title=tr("target, as produced"),
                                             reverse=True, font=font),
                         shapes=[dict(type="rect", xref="x", yref="y", x0=-0.5,
                                      x1=n_src - 0.5, y0=upto - 0.5, y1=upto + 0.5,
                                      line=dict(color=HIGHLIGHT, width=3))])
    return go.Figure(data=[heat], layout=layout, _validate=False)


def _heads(n_heads: int, tr) -> list[str]:
    return [tr("head {h}", h=h + 1) for h in range(n_heads)]


def _signed(z: np.ndarray) -> dict:
    """A symmetric colour range for signed values (0 in the middle of the scale)."""
    top = float(np.nanmax(np.abs(z))) if z.size else 1.0
    top = top if np.isfinite(top) and top > 0 else 1.0
    return dict(zmin=-top, zmax=top, zmid=0, colorscale=OUTPUT_COLORSCALE)


def query_figure(q: np.ndarray, *, title: str, font_scale: float = 1.0,
                 lang: str = "en") -> go.Figure:
    """One decoder step's query in every head of a layer: ``q = x W_Q + b_Q``, split by heads.

    Parameters
    ----------
    q : ndarray of shape (n_heads, d_head)
    title : str
        Trusted text.
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    n_heads, d_head = q.shape
    heat = dict(type="heatmap", z=np.asarray(q, np.float32), x=list(range(1, d_head + 1)),
                y=_heads(n_heads, tr), xgap=0.5, ygap=0.5, **_signed(q),
                colorbar=dict(title=dict(text="q"), thickness=12),
                hovertemplate=f"%{{y}}, {tr('component')} %{{x}}<br>q %{{z:.3f}}"
                              "<extra></extra>")
    font = tick_font(n_heads, font_scale)
    layout = base_layout(title, 130 + 26 * n_heads * font_scale, font_scale=font_scale,
                         xaxis=dict(title=dict(text=tr.plural(
                             "the query's {n} number (d_head)", "the query's {n} numbers (d_head)",
                             d_head)),
                                    tickfont=dict(size=font), showgrid=False),
                         yaxis=dict(autorange="reversed", tickfont=dict(size=font)))
    return go.Figure(data=[heat], layout=layout, _validate=False)


def query_scores_figure(scores: np.ndarray, src_tokens, *, title: str,
                        font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """The query's scores against every source key, ``q · k / sqrt(d_head)``, per head: the
    softmax of a head's row is its cross-attention row.

    Parameters
    ----------
    scores : ndarray of shape (n_heads, n_src)
    src_tokens : list of str
    title : str
        Trusted text.
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    n_heads, n_src = scores.shape
    x, x_text = axis_labels(src_tokens)
    heat = dict(type="heatmap", z=np.asarray(scores, np.float32), x=x, y=_heads(n_heads, tr),
                xgap=0.5, ygap=0.5, **_signed(scores),
                colorbar=dict(title=dict(text=tr("score")), thickness=12),
                hovertemplate=f"%{{y}}<br>{tr('source (key)')} %{{x}}<br>q·k/√d_head %{{z:.3f}}"
                              "<extra></extra>")
    font = tick_font(n_src, font_scale)
    layout = base_layout(title, 150 + 26 * n_heads * font_scale + 6 * font,
                         font_scale=font_scale,
                         xaxis=category_axis((x, x_text), title=tr("source (keys)"), angle=-60,
                                             font=font),
                         yaxis=dict(autorange="reversed",
                                    tickfont=dict(size=tick_font(n_heads, font_scale))))
    return go.Figure(data=[heat], layout=layout, _validate=False)
