"""Figures of the analysis views: per-head statistics and ablation."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.ablation import AblationResult
from xattn.figures._style import ACCENT, OKABE_ITO, axis_labels, base_layout, category_axis
from xattn.figures.words import chart_words

__all__ = ["measure_figure", "ablation_figure"]


def measure_figure(stats: dict[str, np.ndarray], key: str, title: str, *,
                   font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """One measure of ``xattn.metrics.head_statistics`` as a bar chart, one bar per head.

    One chart a measure (not five subplots in one figure): a page lays them out in columns,
    which stack on a phone, so each keeps its width and its axis numbers stay off the bars.

    Parameters
    ----------
    stats : dict of str to ndarray of shape (n_heads,)
    key : str
        The measure (a key of ``stats``).
    title : str
        Trusted text, in the page's language (the caller's).
    lang : str, default "en"
        The language of the chart's words (the heads' names).
    """
    tr = chart_words(lang)
    heads = [tr("head {h}", h=int(h) + 1) for h in stats["head"]]
    values = np.asarray(stats[key], dtype=float)
    top = 1.05 if key != "effective_keys" else max(1.0, float(np.nanmax(values))) * 1.1
    bar = dict(type="bar", x=heads, y=values, text=[f"{v:.2f}" for v in values],
               textposition="outside", cliponaxis=False,
               marker=dict(color=[OKABE_ITO[h % len(OKABE_ITO)] for h in range(len(heads))]),
               hovertemplate=f"%{{x}}<br>{title}: %{{y:.3f}}<extra></extra>")
    layout = base_layout(title, round(260 * font_scale), top=40, font_scale=font_scale,
                         showlegend=False,
                         xaxis=dict(type="category", tickangle=-45 if len(heads) > 4 else 0),
                         yaxis=dict(range=[0, top * 1.12], nticks=4))
    return go.Figure(data=[bar], layout=layout, _validate=False)


def ablation_figure(res: AblationResult, tgt_tokens: list[str], heads_off: list[int], *,
                    lang: str = "en") -> go.Figure:
    """Relative output change per target token for the switched-off heads (``lang``: the
    language of the chart's words)."""
    tr = chart_words(lang)
    y, y_text = labels = axis_labels(tgt_tokens)
    what = tr.plural("head {heads} off", "heads {heads} off", len(heads_off),
                     heads=", ".join(map(str, heads_off))) if heads_off else tr("no head off")
    bar = dict(type="bar", x=y, y=np.asarray(res.per_token, dtype=float),
               marker=dict(color=ACCENT),
               hovertemplate=f"{tr('target')} %{{x}}<br>{tr('relative change')} %{{y:.1%}}"
                             "<extra></extra>")
    layout = base_layout(
        tr("Change of each target token's output row ({what})", what=what), 320, top=50,
        xaxis=category_axis(labels, title=tr("target token"), angle=-60),
        yaxis=dict(tickformat=".0%", rangemode="tozero",
                   title=dict(text="||Y - Y_ablated|| / ||Y||")))
    return go.Figure(data=[bar], layout=layout, _validate=False)
