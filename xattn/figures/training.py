"""Figures of training: the loss curve, and gold-alignment marks on per-head heatmaps."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import ACCENT, GOLD_COLOUR, axis_labels, base_layout, subplot_ref

__all__ = ["loss_figure", "add_gold_marks", "gold_marks"]


def loss_figure(losses, steps: int) -> go.Figure:
    """Training loss per step on a log scale, the x axis fixed to the whole run.

    Parameters
    ----------
    losses : array_like of shape (n,)
        The losses so far (``n <= steps``): the figure is redrawn live during training.
    steps : int
        Length of the whole run.
    """
    trace = dict(type="scatter", x=np.arange(1, len(losses) + 1), y=np.asarray(losses),
                 mode="lines", line=dict(color=ACCENT, width=2),
                 hovertemplate="step %{x}<br>loss %{y:.4f}<extra></extra>")
    layout = base_layout("Training loss (MSE, log scale)", 260,
                         xaxis=dict(title=dict(text="step (one Adam update of 32 sentences)"),
                                    range=[0, steps + 1]),
                         yaxis=dict(title=dict(text="loss"), type="log", dtick=1))  # powers of 10
    return go.Figure(data=[trace], layout=layout, _validate=False)


def gold_marks(gold: np.ndarray, src_tokens, tgt_tokens, head: int = 0) -> dict:
    """The gold cells of one heatmap (subplot ``head``, 0-based) as an outlined-square
    scatter trace (a dict).

    Parameters
    ----------
    gold : ndarray of bool, shape (n_tgt, n_src)
        True at each target token's gold source token.
    """
    rows, cols = np.nonzero(gold)                                     # gold cells
    x, y = axis_labels(src_tokens)[0], axis_labels(tgt_tokens)[0]
    return dict(type="scatter", x=[x[j] for j in cols], y=[y[i] for i in rows],
                mode="markers", name="gold", xaxis=subplot_ref(head, "x"),
                yaxis=subplot_ref(head, "y"), showlegend=False, hoverinfo="skip",
                marker=dict(symbol="square-open", size=max(8, 20 - len(x)), color=GOLD_COLOUR,
                            line=dict(width=2.5)))


def add_gold_marks(fig: go.Figure, gold: np.ndarray, src_tokens, tgt_tokens) -> go.Figure:
    """Outline the gold cell of every target row in every head's heatmap, in place.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
        A figure of ``xattn.figures.per_head_figure`` (head h on subplot h).
    gold : ndarray of bool, shape (n_tgt, n_src)
        True at each target token's gold source token.
    """
    n_heads = sum(t.type == "heatmap" for t in fig.data)
    fig.add_traces([gold_marks(gold, src_tokens, tgt_tokens, h) for h in range(n_heads)])
    return fig
