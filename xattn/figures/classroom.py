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
from xattn.figures.class_words import class_alt, counted_title
from xattn.figures.heads import gold_marks
from xattn.figures.words import chart_words

__all__ = ["answers_figure", "taps_figure", "revote_figure", "parts_figure", "links_figure",
           "class_figure", "class_alt", "FIGURES", "learning_figure"]

MUTED = "#9e9e9e"
def _options(question, counts: dict) -> list:
    """The bars' answers: every option, or every distinct number given (a range's kind)."""
    if question.of.number:
        return sorted(counts, key=_order)
    return question.options()


def _order(value) -> tuple:
    """A sort key for any answers (numbers first, in order; the rest by their text)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return 0, float(value), ""
    return 1, 0.0, repr(value)


def _is_truth(question, option, truth) -> bool:
    if truth is None:
        return False
    if question.of.number:                       # a number: the same after rounding
        return abs(float(option) - float(truth)) < 10 ** -question.decimals
    return option == truth


def answers_figure(question, counts: dict, *, truth=None, font_scale: float = 1.0,
                   lang: str = "en") -> go.Figure:
    """One bar per answer the class gave (every choice or token, zeros included; every
    distinct number), the right one outlined once ``truth`` is given (after the reveal).

    Parameters
    ----------
    question : xattn.classroom.Question
    counts : dict
        Answer (a choice's text, a token's position, a number) to how many gave it.
    truth : optional
        The right answer, in the same form.
    lang : str, default "en"
        The language of the chart's words (the answers' own words stay as they are).
    """
    tr = chart_words(lang)
    options = _options(question, counts)
    x, x_text = axis_labels([question.of.shown(question, o) for o in options])
    n = [int(counts.get(o, 0)) for o in options]
    right = [_is_truth(question, o, truth) for o in options]
    bar = dict(type="bar", x=x, y=n, text=[tr("{n} · right", n=k) if r else str(k)
                                           for k, r in zip(n, right, strict=True)],
               textposition="outside", cliponaxis=False,
               marker=dict(color=[ACCENT if r else MUTED for r in right],
                           line=dict(color=HIGHLIGHT, width=[3 if r else 0 for r in right])),
               hovertemplate=f"%{{x}}<br>%{{y}} {tr('students')}<extra></extra>")
    total = sum(n)
    layout = base_layout(
        counted_title(question, total, tr), 320,
        font_scale=font_scale,
        xaxis=category_axis((x, x_text), angle=-45 if len(x) > 6 else 0,
                            font=round(tick_font(len(x)) * font_scale), title=tr("prediction")),
        yaxis=dict(title=dict(text=tr("students")), rangemode="tozero",
                   range=[0, max(1, max(n, default=0)) * 1.25], dtick=max(1, total // 5)))
    return go.Figure(data=[bar], layout=layout, _validate=False)


def taps_figure(src_tokens, taps: dict, weights_row: np.ndarray, *, target: str,
                head: str, lang: str = "en") -> go.Figure:
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
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    n_src = len(src_tokens)
    total = max(1, sum(taps.values()))
    expected = np.array([taps.get(j, 0) / total for j in range(n_src)], dtype=np.float32)
    z = np.stack([expected, np.asarray(weights_row, np.float32)])            # (2, n_src)
    x, x_text = axis_labels(src_tokens)
    rows = [tr("the class (share of taps)"), tr("{head} (weights)", head=head)]
    heat = dict(type="heatmap", z=z, x=x, y=rows, zmin=0, zmax=1, colorscale=COLORSCALE,
                colorbar=dict(title=dict(text=tr("share")), thickness=12), xgap=1, ygap=1,
                hovertemplate=f"%{{y}}<br>{tr('source')} %{{x}}<br>%{{z:.3f}}<extra></extra>")
    title = axis_labels([target])[1][0]
    layout = base_layout(tr("Where {token} looks: the class's guess and the weights",
                            token=title), 240,
                         xaxis=category_axis((x, x_text), angle=-45 if n_src > 4 else 0,
                                             font=tick_font(n_src), title=tr("source (keys)")),
                         yaxis=dict(autorange="reversed"))
    return go.Figure(data=[heat], layout=layout, _validate=False)


def revote_figure(question, first: dict, then: dict, *, truth=None, rounds=(1, 2),
                  font_scale: float = 1.0, lang: str = "en") -> go.Figure:
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
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    options = _options(question, {**first, **then})
    x, x_text = axis_labels([question.of.shown(question, o) for o in options])
    right = [_is_truth(question, o, truth) for o in options]
    bars = []
    for counts, rnd, color in ((first, rounds[0], MUTED), (then, rounds[1], ACCENT)):
        n = [int(counts.get(o, 0)) for o in options]
        name = tr("round {r}", r=rnd)
        bars.append(dict(type="bar", x=x, y=n, name=name, text=[str(k) for k in n],
                         textposition="outside", cliponaxis=False,
                         marker=dict(color=color, line=dict(
                             color=HIGHLIGHT, width=[3 if r else 0 for r in right])),
                         hovertemplate=f"{name}<br>%{{x}}<br>%{{y}} {tr('students')}"
                                       "<extra></extra>"))
    top = max([int(v) for v in (*first.values(), *then.values())] or [1])
    layout = base_layout(
        tr("Round {first} beside round {then} (right answer outlined)", first=rounds[0],
           then=rounds[1]) if truth is not None else
        tr("Round {first} beside round {then}", first=rounds[0], then=rounds[1]), 320,
        font_scale=font_scale, barmode="group", showlegend=True,
        legend=dict(orientation="h", y=-0.3, x=0),
        xaxis=category_axis((x, x_text), angle=-45 if len(x) > 6 else 0,
                            font=round(tick_font(len(x)) * font_scale), title=tr("prediction")),
        yaxis=dict(title=dict(text=tr("students")), rangemode="tozero", range=[0, top * 1.25]))
    return go.Figure(data=bars, layout=layout, _validate=False)


def class_shares(counts: dict, n_answered: int, rows: list, cols: list) -> tuple[np.ndarray, list]:
    """Counts of (row, column) keys as shares of ``n_answered`` (n_rows, n_cols), and the
    counts as cell text."""
    n = np.array([[int(counts.get((r, c), 0)) for c in cols] for r in rows])   # (R, C)
    return (n / max(1, n_answered)).astype(np.float32), [[str(k) if k else "" for k in row]
                                                         for row in n]


def _grid_layout(title: str, x, y, *, height: int, font_scale: float, x_title: str,
                 y_title: str) -> dict:
    font = round(tick_font(max(len(x[0]), len(y[0]))) * font_scale)
    return base_layout(
        title, height, top=40, font_scale=font_scale, showlegend=False,
        xaxis=category_axis(x, title=x_title, angle=-45 if len(x[0]) > 4 else 0, font=font),
        yaxis=category_axis(y, title=y_title, reverse=True, font=font))


def _heat(z, x, y, text, what: str, tr) -> dict:
    return dict(type="heatmap", z=z, x=x, y=y, zmin=0, zmax=1, colorscale=COLORSCALE,
                text=text, texttemplate="%{text}", xgap=1, ygap=1,
                colorbar=dict(title=dict(text=tr("share")), thickness=12),
                hovertemplate=f"%{{y}}<br>{what} %{{x}}<br>{tr('share')} %{{z:.0%}}"
                              "<extra></extra>")


def _outline(cells: np.ndarray, x, y, name: str, width: float) -> dict:
    """Outlined squares on ``cells`` (bool), as large as a cell allows."""
    mark = gold_marks(cells, x, y)
    mark["name"] = name
    mark["marker"] = dict(mark["marker"], size=24, line=dict(width=width))
    return mark


def parts_figure(question, counts: dict, n_answered: int, *, truth=None, also=(),
                 labels=None, font_scale: float = 1.0, weights=None,
                 lang: str = "en") -> go.Figure:
    """The class's choice for each part (a ``"parts"`` question: each head's job): one row
    per part, one column per choice, each cell the students who chose it (its colour their
    share); once ``truth`` is given (after the reveal) each part's right choice is outlined,
    and each close call (``also``) too.

    Parameters
    ----------
    question : xattn.classroom.Question
        Of kind ``"parts"``.
    counts : dict of (str, str) to int
        (part, choice) to the students who chose it (``RoomView.counts``).
    n_answered : int
        Students who answered (a share's denominator).
    truth : tuple of str, optional
        Each part's right choice, in the question's row order.
    also : tuple of tuple of str
        Each part's choices that are just as right.
    labels : dict of str to str, optional
        Shorter names for the choices.
    lang : str, default "en"
        The language of the chart's words (the parts' and choices' own stay as they are).
    """
    tr = chart_words(lang)
    rows, cols = list(question.rows), list(question.choices)
    z, text = class_shares(counts, n_answered, rows, cols)
    x = axis_labels([(labels or {}).get(c, c) for c in cols])
    y = axis_labels(rows)
    data = [_heat(z, x[0], y[0], text, tr("chose"), tr)]
    if truth is not None:
        right, close = np.zeros(z.shape, dtype=bool), np.zeros(z.shape, dtype=bool)
        for r, (t, more) in enumerate(zip(truth, also or [()] * len(rows), strict=True)):
            right[r, cols.index(t)] = True
            for c in more:
                close[r, cols.index(c)] = True
        data.append(_outline(right, x[0], y[0], tr("right"), 3))
        if close.any():
            data.append(_outline(close, x[0], y[0], tr("close call"), 1))
    height = 130 + round(34 * font_scale) * len(rows)
    title = counted_title(question, n_answered, tr)
    layout = _grid_layout(tr("{title}, right outlined", title=title) if truth is not None
                          else title,
                          x, y, height=height, font_scale=font_scale, x_title="",
                          y_title="")
    return go.Figure(data=data, layout=layout, _validate=False)


def links_figure(question, counts: dict, n_answered: int, *, gold=None,
                 font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """The class's alignment (a ``"links"`` question): one row per target word, one column
    per source word, each cell the share of the students who linked them; once ``gold`` is
    given (after the reveal) the gold links are outlined.

    Parameters
    ----------
    question : xattn.classroom.Question
        Of kind ``"links"``: ``rows`` the target words, ``choices`` the source words.
    counts : dict of (int, int) to int
        (target, source) to the students who drew the link (``RoomView.counts``).
    n_answered : int
    gold : ndarray of bool, shape (n_tgt, n_src), optional
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    rows, cols = range(len(question.rows)), range(len(question.choices))
    z, text = class_shares(counts, n_answered, list(rows), list(cols))
    x, y = axis_labels(question.choices), axis_labels(question.rows)
    data = [_heat(z, x[0], y[0], text, tr("linked to"), tr)]
    if gold is not None:
        data.append(_outline(np.asarray(gold, bool), x[0], y[0], tr("gold"), 3))
    height = 150 + round(30 * font_scale) * len(question.rows)
    title = counted_title(question, n_answered, tr)
    layout = _grid_layout(tr("{title}, gold outlined", title=title) if gold is not None
                          else title, x, y, height=height, font_scale=font_scale,
                          x_title=tr("source word"), y_title=tr("target word"))
    return go.Figure(data=data, layout=layout, _validate=False)


def learning_figure(rows, *, font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """Each step's share right, round by round: ``rows`` of (step label, first vote, revote,
    follow-up), a share in [0, 1] or None (not asked); ``lang``: the language of its words."""
    tr = chart_words(lang)
    x, x_text = axis_labels([r[0] for r in rows])
    bars = []
    for k, (name, color) in enumerate(((tr("first vote"), MUTED), (tr("revote"), ACCENT),
                                       (tr("follow-up (a new case)"), HIGHLIGHT)), 1):
        y = [None if r[k] is None else round(100 * r[k], 1) for r in rows]
        if any(v is not None for v in y):
            bars.append(dict(type="bar", x=x, y=y, name=name, marker=dict(color=color),
                             hovertemplate=f"{tr('step')} %{{x}}<br>{name}: %{{y:.0f}} "
                                           f"{tr('% right')}<extra></extra>"))
    layout = base_layout(tr("Right answers, step by step"), 300, font_scale=font_scale,
                         barmode="group", showlegend=True, legend=dict(orientation="h", y=-0.3),
                         xaxis=category_axis((x, x_text), title=tr("step"), font=round(
                             tick_font(len(x)) * font_scale)),
                         yaxis=dict(title=dict(text=tr("% right")), range=[0, 100]))
    return go.Figure(data=bars, layout=layout, _validate=False)


def class_figure(question, counts: dict, n_answered: int, *, truth=None, also=(),
                 labels=None, font_scale: float = 1.0, weights=None,
                 lang: str = "en") -> go.Figure:
    """The class's answers to any question: bars per answer (a choice, token, number), a
    part-by-choice grid (parts), or the class's alignment (links); the truth marked once
    given. ``also``: answers just as right (a tie), or each part's close calls (parts);
    ``labels``: shorter names of a parts question's choices; ``weights``: a tap question's
    model attention over the patches, drawn beside the class's taps (other charts ignore
    it); ``lang``: the language of the chart's words."""
    return FIGURES[question.of.chart](question, counts, n_answered, truth=truth, also=also,
                                      labels=labels, font_scale=font_scale, weights=weights,
                                      lang=lang)


def _bars(question, counts, n_answered, *, truth, also, labels, font_scale,
          weights=None, lang="en") -> go.Figure:
    return answers_figure(question, counts, truth=truth, font_scale=font_scale, lang=lang)


def _links(question, counts, n_answered, *, truth, also, labels, font_scale,
           weights=None, lang="en") -> go.Figure:
    gold = None
    if truth is not None:
        gold = np.zeros((len(question.rows), len(question.choices)), dtype=bool)
        for t, s in truth:
            gold[t, s] = True
    return links_figure(question, counts, n_answered, gold=gold, font_scale=font_scale,
                        lang=lang)


# Each chart of xattn.classroom.controls.CHARTS, drawn (tests/test_classroom_kinds.py checks
# that every chart has its figure).
def _taps(question, counts, n_answered, *, truth, also, labels, font_scale,
          weights=None, lang="en") -> go.Figure:
    from xattn.figures.patch_taps import patch_taps_figure

    return patch_taps_figure(question, counts, n_answered, truth=truth, weights=weights,
                             font_scale=font_scale, lang=lang)


def _strip(question, counts, n_answered, *, truth, also, labels, font_scale,
           weights=None, lang="en") -> go.Figure:
    from xattn.figures.time_taps import time_taps_figure

    return time_taps_figure(question, counts, n_answered, truth=truth, weights=weights,
                            font_scale=font_scale, lang=lang)


FIGURES = {"bars": _bars, "grid": parts_figure, "links": _links, "taps": _taps,
           "strip": _strip}
