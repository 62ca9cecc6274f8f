"""Figures of the analysis views: per-head statistics and ablation."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.ablation import AblationResult
from xattn.figures._style import ACCENT, OKABE_ITO, axis_labels, base_layout, category_axis

__all__ = ["statistics_figure", "ablation_figure"]


def statistics_figure(stats: dict[str, np.ndarray], names: dict[str, str]) -> go.Figure:
    """One small bar chart per measure, one bar per head.

    Parameters
    ----------
    stats : dict of str to ndarray of shape (n_heads,)
        As returned by ``xattn.metrics.head_statistics``.
    names : dict of str to str
        The measures to draw (keys of ``stats``) and their titles.
    """
    n = len(names)
    heads = [f"head {h + 1}" for h in stats["head"]]
    gap = 0.04
    width = (1 - gap * (n - 1)) / n
    traces, layout = [], base_layout("Head statistics", 330, top=60, showlegend=False,
                                     annotations=[])
    for k, (key, title) in enumerate(names.items()):
        axis = "" if k == 0 else str(k + 1)
        x0 = k * (width + gap)
        values = np.asarray(stats[key], dtype=float)
        traces.append(dict(type="bar", x=heads, y=values, xaxis=f"x{axis}", yaxis=f"y{axis}",
                           marker=dict(color=[OKABE_ITO[h % len(OKABE_ITO)]
                                              for h in range(len(heads))]),
                           hovertemplate=f"%{{x}}<br>{title}: %{{y:.3f}}<extra></extra>"))
        top = 1.05 if key != "effective_keys" else max(1.0, float(np.nanmax(values))) * 1.1
        layout[f"xaxis{axis}"] = dict(domain=[x0, x0 + width], anchor=f"y{axis}",
                                      tickangle=-45, type="category")
        layout[f"yaxis{axis}"] = dict(anchor=f"x{axis}", range=[0, top])
        layout["annotations"].append(dict(text=title, x=x0 + width / 2, xref="paper", y=1.0,
                                          yref="paper", yanchor="bottom", showarrow=False,
                                          font=dict(size=11)))
    return go.Figure(data=traces, layout=layout, _validate=False)


def ablation_figure(res: AblationResult, tgt_tokens: list[str], heads_off: list[int]) -> go.Figure:
    """Relative output change per target token for the switched-off heads."""
    y, y_text = labels = axis_labels(tgt_tokens)
    what = f"heads {', '.join(map(str, heads_off))} off" if heads_off else "no head off"
    bar = dict(type="bar", x=y, y=np.asarray(res.per_token, dtype=float),
               marker=dict(color=ACCENT),
               hovertemplate="target %{x}<br>relative change %{y:.1%}<extra></extra>")
    layout = base_layout(
        f"Change of each target token's output row ({what})", 320, top=50,
        xaxis=category_axis(labels, title="target token", angle=-60),
        yaxis=dict(tickformat=".0%", rangemode="tozero",
                   title=dict(text="||Y - Y_ablated|| / ||Y||")))
    return go.Figure(data=[bar], layout=layout, _validate=False)
