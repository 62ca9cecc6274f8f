"""Plotly figures of cross-attention: one heatmap per head, the head average, the output.

Conventions on every plot: rows are target tokens (queries, top to bottom), columns are source
tokens (keys, left to right); one colour scale from 0 to 1 (viridis); masked cells carry a grey
cross. Axes are categorical with labels made unique by position ("5: the"), so a repeated word
keeps its own row or column, and every token is literal text (``_style.axis_labels``). Figures
carry ``float32`` data to halve the payload.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from xattn._checks import check_int, check_tokens
from xattn.figures._style import (
    COLORSCALE,
    GOLD_COLOUR,
    MASK_COLOUR,
    OUTPUT_COLORSCALE,
    TICK_CHARS,
    axis_labels,
    base_layout,
    category_axis,
    subplot_ref,
    tick_font,
)
from xattn.figures.words import ChartWords, chart_words

__all__ = ["per_head_figure", "head_figure", "head_parts", "head_height", "average_figure",
           "output_figure", "mask_marks", "gold_marks"]


def _grid(n_panels: int, max_cols: int) -> tuple[int, int]:
    cols = min(n_panels, max_cols)
    return math.ceil(n_panels / cols), cols


def _domains(n: int, gap: float) -> list[tuple[float, float]]:
    size = (1 - gap * (n - 1)) / n
    return [(k * (size + gap), k * (size + gap) + size) for k in range(n)]


def head_height(src_tokens, n_tgt: int, *, font_scale: float = 1.0,
                row_px: int = 0) -> tuple[int, int, int]:
    """The one layout of a head's chart: (tick font size, pixels below the heatmap for the
    rotated source labels, total height). Rows get ``font + 3`` pixels (at least ``row_px``,
    e.g. a clickable chart's finger-sized rows) and the heatmap at least 150. The grid's
    paging, `head_parts`, `per_head_figure` and the step-through chart all use it."""
    font = tick_font(max(len(src_tokens), n_tgt), font_scale)
    label_px = 40 + int(0.55 * font * min(max(map(len, src_tokens), default=1), TICK_CHARS))
    return font, label_px, 40 + max(150, max(font + 3, row_px) * n_tgt) + label_px


def hover(tr: ChartWords, title: str) -> str:
    """A head's cell on hover: its title, target, source and weight in ``tr``'s words."""
    return (f"<b>{title}</b><br>{tr('target (query)')} %{{y}}<br>{tr('source (key)')} "
            f"%{{x}}<br>{tr('weight')} %{{z:.3f}}<extra></extra>")


def _heatmap(z, x, y, head: int, title: str, tr: ChartWords) -> dict:
    return dict(
        type="heatmap", z=np.asarray(z, dtype=np.float32), x=x, y=y, coloraxis="coloraxis",
        xaxis=subplot_ref(head, "x"), yaxis=subplot_ref(head, "y"), name=title, xgap=0.5,
        ygap=0.5, hovertemplate=hover(tr, title))


def mask_marks(mask: np.ndarray, x, y, head: int = 0, size: float = 12) -> dict | None:
    """A grey cross on every masked cell of subplot ``head`` (0-based), as a scatter trace
    (a dict), or None when nothing is masked.

    ``mask`` is bool (n_tgt, n_src), True = may attend; ``x``/``y`` are the axis categories.
    """
    rows, cols = np.nonzero(~mask)                                   # masked cells
    if rows.size == 0:
        return None
    return dict(type="scatter", mode="markers", x=[x[j] for j in cols], y=[y[i] for i in rows],
                xaxis=subplot_ref(head, "x"), yaxis=subplot_ref(head, "y"), name="masked",
                showlegend=False, hoverinfo="skip",
                marker=dict(symbol="x-thin", size=size, color=MASK_COLOUR,
                            line=dict(width=2, color=MASK_COLOUR)))


def gold_marks(gold: np.ndarray, x, y, head: int = 0) -> dict:
    """An outlined square on every gold cell of subplot ``head`` (0-based), as a scatter
    trace (a dict).

    ``gold`` is bool (n_tgt, n_src), True at each target token's gold source token;
    ``x``/``y`` are the axis categories.
    """
    rows, cols = np.nonzero(gold)                                     # gold cells
    return dict(type="scatter", x=[x[j] for j in cols], y=[y[i] for i in rows],
                mode="markers", name="gold", xaxis=subplot_ref(head, "x"),
                yaxis=subplot_ref(head, "y"), showlegend=False, hoverinfo="skip",
                marker=dict(symbol="square-open", size=max(8, 20 - len(x)), color=GOLD_COLOUR,
                            line=dict(width=2.5)))


def _layout(title: str, height: int, tr: ChartWords, font_scale: float = 1.0) -> dict:
    colorbar = dict(title=dict(text=tr("weight")), thickness=14, lenmode="pixels",
                    len=min(300, height - 90), yanchor="top", y=1)
    return base_layout(title, height, top=60, font_scale=font_scale, showlegend=False,
                       coloraxis=dict(colorscale=COLORSCALE, cmin=0.0, cmax=1.0,
                                      colorbar=colorbar))


def _axes(layout: dict, head: int, xd, yd, ticks_x, ticks_y, *, x_title: str | None,
          y_title: str | None, font: int, y_ticks: bool = True) -> None:
    x, y = subplot_ref(head, "x"), subplot_ref(head, "y")
    layout[f"xaxis{x[1:]}"] = category_axis(ticks_x, title=x_title, angle=-60, font=font,
                                            domain=xd, anchor=y)
    layout[f"yaxis{y[1:]}"] = category_axis(ticks_y, title=y_title, reverse=True, font=font,
                                            domain=yd, anchor=x, showticklabels=y_ticks)


def head_figure(weights: np.ndarray, src_tokens, tgt_tokens, *, head: int,
                mask: np.ndarray | None = None, zmax: float = 1.0, title: str | None = None,
                max_x_labels: int = 40, colorbar: bool = False, font_scale: float = 1.0,
                gold: np.ndarray | None = None, lang: str = "en") -> go.Figure:
    """One head's heatmap, a chart of its own: a page lays several out in columns (which stack
    on a phone) instead of squeezing them into one figure.

    Parameters
    ----------
    weights : ndarray of shape (n_tgt, n_src)
    head : int
        0-based (shown as ``head + 1``).
    mask : ndarray of bool, shape (n_tgt, n_src), optional
        Masked cells get a grey cross.
    zmax : float, default 1
        Top of the colour scale (1: comparable across heads; a picture's maximum shows the
        structure of long sentences, whose weights are all small).
    title : str, optional
        Trusted text (never a raw token); default "head h".
    max_x_labels : int, default 40
        Every k-th source label when there are more (hover names every cell).
    colorbar : bool, default False
        Draw the colour bar (a page draws it once for the grid).
    font_scale : float, default 1
        Larger text for a projector.
    gold : ndarray of bool, shape (n_tgt, n_src), optional
        Gold cells (trained weights) get an outlined square.
    lang : str, default "en"
        The language of the chart's words (``xattn.figures.words``); tokens stay as they are.
    """
    data, layout = head_parts(weights, src_tokens, tgt_tokens, head=head, mask=mask, zmax=zmax,
                              title=title, max_x_labels=max_x_labels, colorbar=colorbar,
                              font_scale=font_scale, gold=gold, lang=lang)
    return go.Figure(data=data, layout=layout, _validate=False)


def head_parts(weights: np.ndarray, src_tokens, tgt_tokens, *, head: int,
               mask: np.ndarray | None = None, zmax: float = 1.0, title: str | None = None,
               max_x_labels: int = 40, colorbar: bool = False, font_scale: float = 1.0,
               gold: np.ndarray | None = None, lang: str = "en") -> tuple[list[dict], dict]:
    """`head_figure`'s traces and layout as plain dicts, same parameters: ``go.Figure`` of them
    is the figure, ``xattn.figures.frozen.frozen`` of them the converted figure, made without
    Plotly's object tree (what a server does on every new setting)."""
    tr = chart_words(lang)
    weights = np.asarray(weights)
    src_tokens = check_tokens(src_tokens, weights.shape[1] if weights.ndim == 2 else None,
                              "src_tokens")
    tgt_tokens = check_tokens(tgt_tokens, weights.shape[0] if weights.ndim == 2 else None,
                              "tgt_tokens")
    if weights.ndim != 2:
        raise ValueError(f"weights must have shape (n_tgt, n_src) for one head; received "
                         f"{weights.shape}.")
    max_x_labels = check_int(max_x_labels, "max_x_labels", minimum=1)
    n_tgt, n_src = weights.shape
    x, x_text = axis_labels(src_tokens)
    y, y_text = axis_labels(tgt_tokens)
    font, _, height = head_height(src_tokens, n_tgt, font_scale=font_scale)
    step = math.ceil(n_src / max_x_labels)
    name = tr("head {h}", h=head + 1)
    layout = base_layout(title or name, height, top=36, font_scale=font_scale, showlegend=False,
                         coloraxis=dict(colorscale=COLORSCALE, cmin=0.0, cmax=float(zmax),
                                        showscale=colorbar,
                                        colorbar=dict(title=dict(text=tr("weight")),
                                                      thickness=12)),
                         xaxis=category_axis((x[::step], x_text[::step]),
                                             title=tr("source (keys)"), angle=-60, font=font),
                         yaxis=category_axis((y, y_text), title=tr("target (queries)"),
                                             reverse=True, font=font))
    layout["xaxis"]["range"] = [-0.5, n_src - 0.5]   # every category, labelled or not
    data = [_heatmap(weights, x, y, 0, name, tr)]
    data += _marks(mask, gold, x, y, 0, weights.shape)
    return data, layout


def _marks(mask, gold, x, y, head: int, shape: tuple[int, int]) -> list[dict]:
    """The mask crosses and gold squares of subplot ``head``, where there are any."""
    marks = []
    if mask is not None:
        mark = mask_marks(np.broadcast_to(np.asarray(mask, bool), shape), x, y, head,
                          size=max(4, 14 - shape[1] // 6))
        if mark:
            marks.append(mark)
    if gold is not None:
        marks.append(gold_marks(gold, x, y, head))
    return marks


def per_head_figure(weights: np.ndarray, src_tokens: list[str], tgt_tokens: list[str], *,
                    mask: np.ndarray | None = None, max_cols: int = 4,
                    title: str | None = None, gold: np.ndarray | None = None,
                    font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """Small multiples: one heatmap per head on a shared 0-1 colour scale.

    Parameters
    ----------
    weights : ndarray of shape (n_heads, n_tgt, n_src)
    src_tokens : list of str, length n_src
    tgt_tokens : list of str, length n_tgt
    mask : ndarray of bool, shape (n_tgt, n_src) or (n_src,), optional
        True where attention is allowed; masked cells get a grey cross.
    max_cols : int
        Heatmaps per row of the grid.
    gold : ndarray of bool, shape (n_tgt, n_src), optional
        Gold cells (trained weights) get an outlined square.
    font_scale : float, default 1
        Larger text for a projector.
    title : str, optional
        Trusted text; default "Cross-attention weights, one heatmap per head" in ``lang``.
    lang : str, default "en"
        The language of the chart's words (``xattn.figures.words``).

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig.data`` holds the heatmap of head h at index h (named "head h+1" in ``lang``),
        followed by each head's marks (mask crosses when anything is masked, gold squares).
    """
    tr = chart_words(lang)
    title = title or tr("Cross-attention weights, one heatmap per head")
    max_cols = check_int(max_cols, "max_cols", minimum=1)
    src_tokens = check_tokens(src_tokens, None, "src_tokens")
    tgt_tokens = check_tokens(tgt_tokens, None, "tgt_tokens")
    weights = np.asarray(weights)
    if weights.ndim != 3 or weights.shape[1:] != (len(tgt_tokens), len(src_tokens)):
        raise ValueError(f"weights must have shape (n_heads, {len(tgt_tokens)}, "
                         f"{len(src_tokens)}) to match the tokens; received {weights.shape}.")
    n_heads, n_tgt, n_src = weights.shape
    x, x_text = axis_labels(src_tokens)
    y, y_text = axis_labels(tgt_tokens)
    n_rows, n_cols = _grid(n_heads, max_cols)
    # Layout in pixels: per grid row a head title, then one head's chart (`head_height`: the
    # heatmap and room below for the source labels, rotated by 60 degrees).
    font, label_px, head_px = head_height(src_tokens, n_tgt, font_scale=font_scale)
    title_px, heat_px = round(24 * font_scale), head_px - 40 - label_px
    row_px = title_px + heat_px + label_px
    height = 70 + n_rows * row_px
    layout = _layout(title, height, tr, font_scale=font_scale)
    plot_px = height - 70                                          # minus the top/bottom margins
    y_dom = [(1 - (r * row_px + title_px + heat_px) / plot_px,
              1 - (r * row_px + title_px) / plot_px) for r in range(n_rows)]
    x_dom = _domains(n_cols, 0.03)
    # A narrow panel cannot show every source label: show every k-th (hover still names all).
    step = math.ceil(n_src / (80 // n_cols))
    x_ticks = (x[::step], x_text[::step])
    y_ticks = (y, y_text)
    heatmaps, marks, annotations = [], [], []
    for h in range(n_heads):
        r, c = divmod(h, n_cols)
        name = tr("head {h}", h=h + 1)
        heatmaps.append(_heatmap(weights[h], x, y, h, name, tr))
        _axes(layout, h, x_dom[c], y_dom[r], x_ticks, y_ticks, font=font,
              x_title=tr("source (keys)") if r == n_rows - 1 or h + n_cols >= n_heads else None,
              y_title=tr("target (queries)") if c == 0 else None, y_ticks=c == 0)
        annotations.append(dict(text=f"<b>{name}</b>", x=sum(x_dom[c]) / 2, xref="paper",
                                y=y_dom[r][1], yref="paper", yanchor="bottom", showarrow=False,
                                font=dict(size=round(13 * font_scale))))
        marks += _marks(mask, gold, x, y, h, (n_tgt, n_src))
    layout["annotations"] = annotations
    return go.Figure(data=heatmaps + marks, layout=layout, _validate=False)


def average_figure(weights: np.ndarray, src_tokens: list[str], tgt_tokens: list[str], *,
                   mask: np.ndarray | None = None, zmax: float = 1.0,
                   lang: str = "en") -> go.Figure:
    """One heatmap of the weights averaged over heads, shape (n_tgt, n_src); ``zmax`` is the
    top of the colour scale; ``lang`` the language of its words."""
    tr = chart_words(lang)
    mean = np.asarray(weights).mean(axis=0, keepdims=True)         # (1, n_tgt, n_src)
    fig = per_head_figure(mean, src_tokens, tgt_tokens, mask=mask, max_cols=1, lang=lang,
                          title=tr.plural("Average over the {n} head",
                                          "Average over the {n} heads", len(weights)))
    fig.layout.coloraxis.cmax = float(zmax)
    fig.data[0].hovertemplate = hover(tr, tr("mean of heads"))
    fig.layout.annotations = ()
    return fig


def output_figure(output: np.ndarray, tgt_tokens: list[str], *, lang: str = "en") -> go.Figure:
    """The output representation: one row per target token, one column per model dimension.

    Parameters
    ----------
    output : ndarray of shape (n_tgt, d_model)
    tgt_tokens : list of str
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    output = np.asarray(output, dtype=np.float32)
    if output.ndim != 2:
        raise ValueError(f"output must have shape (n_tgt, d_model); received {output.shape}.")
    n_tgt, d_model = output.shape
    tgt_tokens = check_tokens(tgt_tokens, n_tgt, "tgt_tokens")
    y, y_text = axis_labels(tgt_tokens)
    bound = float(np.abs(output).max()) or 1.0
    trace = dict(type="heatmap", z=output, y=y, colorscale=OUTPUT_COLORSCALE, zmin=-bound,
                 zmax=bound, colorbar=dict(title=dict(text=tr("value")), thickness=14),
                 hovertemplate=(f"{tr('target')} %{{y}}<br>{tr('dimension')} %{{x}}<br>"
                                f"{tr('value')} %{{z:.3f}}<extra></extra>"))
    layout = base_layout(
        tr.plural("Output: {n} number per target token", "Output: {n} numbers per target token",
                  d_model), 140 + 16 * n_tgt, top=50,
        xaxis=dict(title=dict(text=tr("model dimension (0 .. d_model-1)"))),
        yaxis=category_axis((y, y_text), title=tr("target token"), reverse=True,
                            font=tick_font(n_tgt)))
    return go.Figure(data=[trace], layout=layout, _validate=False)
