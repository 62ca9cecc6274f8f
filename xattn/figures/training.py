"""Figures of training: the loss curve."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import ACCENT, base_layout
from xattn.figures.words import chart_words

__all__ = ["loss_figure"]


def loss_figure(losses, steps: int, *, font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """Training loss per step on a log scale, the x axis fixed to the whole run.

    Parameters
    ----------
    losses : array_like of shape (n,)
        The losses so far (``n <= steps``): the figure is redrawn live during training.
    steps : int
        Length of the whole run.
    font_scale : float
        Enlarges the text (presenter mode).
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    trace = dict(type="scatter", x=np.arange(1, len(losses) + 1), y=np.asarray(losses),
                 mode="lines", line=dict(color=ACCENT, width=2),
                 hovertemplate=f"{tr('step')} %{{x}}<br>{tr('loss')} %{{y:.4f}}<extra></extra>")
    layout = base_layout(tr("Training loss (MSE, log scale)"), round(260 * font_scale),
                         top=round(40 * font_scale), font_scale=font_scale,
                         xaxis=dict(title=dict(text=tr("step (one Adam update of 32 sentences)")),
                                    range=[0, steps + 1]),
                         # powers of 10
                         yaxis=dict(title=dict(text=tr("loss")), type="log", dtick=1))
    return go.Figure(data=[trace], layout=layout, _validate=False)
