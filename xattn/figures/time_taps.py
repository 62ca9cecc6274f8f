"""The class's taps on a clip's time strip (question kind ``tap_time``): a strip of the shares
of the class over the clip's time bins, the model's peak outlined, under the model's attention
over the same bins (one time axis for both)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import COLORSCALE, GOLD_COLOUR, base_layout
from xattn.figures.class_words import counted_title
from xattn.figures.classroom import class_shares
from xattn.figures.words import N_, chart_words

__all__ = ["time_taps_figure", "bin_starts"]

# the strips, bottom up: the class's under the model's
_ROWS = (N_("the class"), N_("the model"))


def bin_starts(question) -> list[str]:
    """Each time bin's start in seconds (``"0.10"``), from its name (``"0.10–0.20 s"``)."""
    return [c.split("–")[0] for c in question.choices]


def _strip(z, text, k: int, what: str, *, colorbar: bool, tr) -> dict:
    """One strip of cells (subplot ``k``, 1 or 2) over the bins, 0 to 1."""
    suffix = "" if k == 1 else str(k)
    return dict(type="heatmap", z=np.asarray(z).tolist(), x=list(range(z.shape[1])), y=[0],
                zmin=0, zmax=1, colorscale=COLORSCALE, text=text, xgap=1,
                texttemplate="%{text}" if text is not None else None,
                xaxis="x" + suffix, yaxis="y" + suffix, showscale=colorbar,
                colorbar=dict(title=dict(text=tr("share")), thickness=12, len=0.5, y=0.25),
                hovertemplate=f"{tr('bin')} %{{x}}: {what} %{{z:.0%}}<extra></extra>")


def _peak_mark(b: int, k: int, name: str) -> dict:
    suffix = "" if k == 1 else str(k)
    return dict(type="scatter", x=[int(b)], y=[0], mode="markers", name=name,
                xaxis="x" + suffix, yaxis="y" + suffix, showlegend=False, hoverinfo="skip",
                marker=dict(symbol="square-open", size=22, color=GOLD_COLOUR,
                            line=dict(width=3)))


def time_taps_figure(question, counts: dict, n_answered: int, *, truth=None, weights=None,
                     font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """The class's taps on a clip's time strip (a ``"tap_time"`` question): each time bin
    the share of the students who tapped it; once ``truth`` (the peak's bin) is given it is
    outlined, and ``weights`` (the model's attention over the bins, each bin its strongest
    position's weight) are drawn above, on the same time axis, scaled to their largest.

    Parameters
    ----------
    question : xattn.classroom.Question
        Of kind ``"tap_time"``: ``choices`` name the bins (``"0.10–0.20 s"``).
    counts : dict of int to int
        A bin to the students who tapped it.
    weights : sequence of float of length n_bins, optional
    lang : str, default "en"
        The language of the chart's words (the bins' times are numbers, as Plotly writes them).
    """
    tr = chart_words(lang)
    n_bins = len(question.choices)
    z, text = class_shares({(0, b): n for b, n in counts.items()}, n_answered, [0],
                           list(range(n_bins)))                                  # (1, n_bins)
    panels = 1 if weights is None else 2
    data = []                           # the model's strip first: a phone draws it on top
    if weights is not None:
        w = np.asarray(weights, np.float32).reshape(1, n_bins)                   # (1, n_bins)
        data.append(_strip(w / max(float(w.max()), 1e-9), None, 2,
                           tr("weight (of the largest)"), colorbar=False, tr=tr))
        data.append(_peak_mark(int(np.argmax(w)), 2, "peak"))
    data.append(_strip(z, text, 1, tr("tapped by"), colorbar=True, tr=tr))
    if truth is not None:
        data.append(_peak_mark(truth, 1, tr("the model's peak")))
    title = counted_title(question, n_answered, tr)
    if truth is not None:
        title = tr("{title}, the model's peak outlined", title=title)
    if weights is not None:
        title = tr("{title} · above: the model's attention", title=title)
    layout = base_layout(title, round((150 + 70 * panels) * font_scale), top=50,
                         font_scale=font_scale, showlegend=False)
    starts = bin_starts(question)
    for k in range(1, panels + 1):
        suffix = "" if k == 1 else str(k)
        lo, hi = ((0, 0.42), (0.58, 1))[k - 1] if panels == 2 else (0, 1)
        layout["xaxis" + suffix] = dict(
            range=[-0.5, n_bins - 0.5], tickvals=list(range(n_bins)), ticktext=starts,
            tickangle=-45 if n_bins > 10 else 0, showgrid=False, zeroline=False,
            anchor="y" + suffix,
            title=dict(text=tr("time (s): where each bin starts") if k == 1 else ""),
            **({} if k == 1 else {"matches": "x", "showticklabels": False}))
        layout["yaxis" + suffix] = dict(domain=[lo, hi], range=[-0.5, 0.5], tickvals=[0],
                                        ticktext=[tr(_ROWS[k - 1])], showgrid=False,
                                        zeroline=False, anchor="x" + suffix)
    return go.Figure(data=data, layout=layout, _validate=False)
