"""Figures of a class's predictions: how the class answered, and what it expected to see.

Every label that can come from a sentence is literal text (``_style.axis_labels``); the right
answer is marked by an outline and the word "right" in its bar's text, not by colour alone.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import (
    ACCENT,
    COLORSCALE,
    HIGHLIGHT,
    axis_labels,
    base_layout,
    category_axis,
    tick_font,
)

__all__ = ["answers_figure", "taps_figure", "revote_figure"]

MUTED = "#9e9e9e"


def _options(question, counts: dict) -> list:
    if question.kind == "number":
        return sorted(counts)
    return question.options()


def answers_figure(question, counts: dict, *, truth=None, font_scale: float = 1.0) -> go.Figure:
    """One bar per answer the class gave (every choice or token, zeros included; every
    distinct number), the right one outlined once ``truth`` is given (after the reveal).

    Parameters
    ----------
    question : xattn.classroom.Question
    counts : dict
        Answer (a choice's text, a token's position, a number) to how many gave it.
    truth : optional
        The right answer, in the same form.
    """
    options = _options(question, counts)
    if question.kind == "token":
        names = list(question.choices)
    elif question.kind == "number":
        names = [f"{v:.{question.decimals}f}" for v in options]
    else:
        names = list(options)
    x, x_text = axis_labels(names)
    n = [int(counts.get(o, 0)) for o in options]
    right = [truth is not None and (o == truth if question.kind != "number"
                                    else abs(float(o) - float(truth)) < 10 ** -question.decimals)
             for o in options]
    bar = dict(type="bar", x=x, y=n, text=[f"{k} · right" if r else str(k)
                                           for k, r in zip(n, right, strict=True)],
               textposition="outside", cliponaxis=False,
               marker=dict(color=[ACCENT if r else MUTED for r in right],
                           line=dict(color=HIGHLIGHT, width=[3 if r else 0 for r in right])),
               hovertemplate="%{x}<br>%{y} students<extra></extra>")
    total = sum(n)
    layout = base_layout(
        f"The class's predictions ({total} answer{'s' if total != 1 else ''})", 320,
        font_scale=font_scale,
        xaxis=category_axis((x, x_text), angle=-45 if len(x) > 6 else 0,
                            font=round(tick_font(len(x)) * font_scale), title="prediction"),
        yaxis=dict(title=dict(text="students"), rangemode="tozero",
                   range=[0, max(1, max(n, default=0)) * 1.25], dtick=max(1, total // 5)))
    return go.Figure(data=[bar], layout=layout, _validate=False)


def taps_figure(src_tokens, taps: dict, weights_row: np.ndarray, *, target: str,
                head: str) -> go.Figure:
    """What the class expected beside what the head does: the share of students who tapped
    each source token (the class's "expected attention" for one target token) above the true
    row of weights, on one 0-1 scale.

    Parameters
    ----------
    src_tokens : list of str
    taps : dict of int to int
        Source position to the number of students who tapped it.
    weights_row : ndarray of shape (n_src,)
    target, head : str
        Plain text for the title: the target token (as typed) and which head.
    """
    n_src = len(src_tokens)
    total = max(1, sum(taps.values()))
    expected = np.array([taps.get(j, 0) / total for j in range(n_src)], dtype=np.float32)
    z = np.stack([expected, np.asarray(weights_row, np.float32)])            # (2, n_src)
    x, x_text = axis_labels(src_tokens)
    rows = ["the class (share of taps)", f"{head} (weights)"]
    heat = dict(type="heatmap", z=z, x=x, y=rows, zmin=0, zmax=1, colorscale=COLORSCALE,
                colorbar=dict(title=dict(text="share"), thickness=12), xgap=1, ygap=1,
                hovertemplate="%{y}<br>source %{x}<br>%{z:.3f}<extra></extra>")
    title = axis_labels([target])[1][0]
    layout = base_layout(f"Where {title} looks: the class's guess and the weights", 240,
                         xaxis=category_axis((x, x_text), angle=-45 if n_src > 4 else 0,
                                             font=tick_font(n_src), title="source (keys)"),
                         yaxis=dict(autorange="reversed"))
    return go.Figure(data=[heat], layout=layout, _validate=False)


def revote_figure(question, first: dict, then: dict, *, truth=None, rounds=(1, 2),
                  font_scale: float = 1.0) -> go.Figure:
    """The class's answers in two rounds of one step, side by side per answer (peer
    instruction: vote, discuss, vote again); the right answer's bars outlined once ``truth``
    is given.

    Parameters
    ----------
    question : xattn.classroom.Question
    first, then : dict
        Answer to count in the earlier and the later round.
    rounds : (int, int)
        The rounds' numbers, for the legend.
    """
    options = sorted(set(first) | set(then)) if question.kind == "number" else \
        question.options()
    if question.kind == "token":
        names = list(question.choices)
    elif question.kind == "number":
        names = [f"{v:.{question.decimals}f}" for v in options]
    else:
        names = list(options)
    x, x_text = axis_labels(names)
    right = [truth is not None and (o == truth if question.kind != "number"
                                    else abs(float(o) - float(truth)) < 10 ** -question.decimals)
             for o in options]
    bars = []
    for counts, rnd, color in ((first, rounds[0], MUTED), (then, rounds[1], ACCENT)):
        n = [int(counts.get(o, 0)) for o in options]
        bars.append(dict(type="bar", x=x, y=n, name=f"round {rnd}", text=[str(k) for k in n],
                         textposition="outside", cliponaxis=False,
                         marker=dict(color=color, line=dict(
                             color=HIGHLIGHT, width=[3 if r else 0 for r in right])),
                         hovertemplate=f"round {rnd}<br>%{{x}}<br>%{{y}} students<extra></extra>"))
    top = max([int(v) for v in (*first.values(), *then.values())] or [1])
    layout = base_layout(
        f"Round {rounds[0]} beside round {rounds[1]}" + (" (right answer outlined)"
                                                        if truth is not None else ""), 320,
        font_scale=font_scale, barmode="group", showlegend=True,
        legend=dict(orientation="h", y=-0.3, x=0),
        xaxis=category_axis((x, x_text), angle=-45 if len(x) > 6 else 0,
                            font=round(tick_font(len(x)) * font_scale), title="prediction"),
        yaxis=dict(title=dict(text="students"), rangemode="tozero", range=[0, top * 1.25]))
    return go.Figure(data=bars, layout=layout, _validate=False)
