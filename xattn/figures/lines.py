"""The lines view of cross-attention (as in BertViz and Tensor2Tensor).

Target tokens (queries) stand in the left column and source tokens (keys) in the right one, top
to bottom in sentence order; each (target, source) pair whose weight reaches a threshold is
joined by a line, coloured by head, more opaque the larger the weight.

Cost: one Plotly trace per line would make thousands of traces. Instead the segments of one head
are joined into a single scatter trace, separated by ``None`` (a gap). A scatter trace has one
opacity, so weights are binned: a line's opacity is its weight rounded to the centre of its bin
of width 0.2, i.e. one of `OPACITY_LEVELS` (0.1, 0.3, 0.5, 0.7, 0.9). That gives at most five
line traces per head, plus two traces of token labels.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn._checks import check_heads, check_tokens
from xattn.figures._style import DASHES, OKABE_ITO, axis_labels, base_layout
from xattn.figures.words import ChartWords, chart_words
from xattn.literal import plotly_text
from xattn.metrics import check_weights

__all__ = ["lines_figure", "OPACITY_LEVELS"]

OPACITY_LEVELS = (0.1, 0.3, 0.5, 0.7, 0.9)
_X_TGT, _X_SRC = 0, 1
_ROW_PX = 22


def lines_figure(weights, src_tokens, tgt_tokens, *, heads=None, threshold: float = 0.05,
                 mask=None, lang: str = "en") -> go.Figure:
    """Lines from each target token to the source tokens it attends to, one colour per head.

    Parameters
    ----------
    weights : array_like of shape (n_heads, n_tgt, n_src) or (n_tgt, n_src)
        Attention weights; rows (target queries) sum to 1 over columns (source keys).
    src_tokens : sequence of str, length n_src
        Source tokens (keys), drawn in the right column.
    tgt_tokens : sequence of str, length n_tgt
        Target tokens (queries), drawn in the left column.
    heads : iterable of int, optional
        Heads to draw (default: all), each in ``0..n_heads-1``.
    threshold : float, default 0.05
        Lines with a weight below this are hidden (zero weights are never drawn).
    mask : array_like of bool, shape (n_src,) or (n_tgt, n_src), optional
        True where a source key may be attended; source tokens masked for every target row
        are greyed out.
    lang : str, default "en"
        The language of the chart's words (legend, headers, hover); tokens stay as they are.

    Returns
    -------
    plotly.graph_objects.Figure
        Traces: per drawn head up to five line traces (one per opacity level, strongest first,
        ``legendgroup`` = ``"head h+1"``, numbered from 1 as on screen; a head without any line
        gets one empty trace so it stays in the legend), then the target labels, then the
        source labels. Token ``i`` sits at ``y = i`` on both sides (the y axis runs
        downwards), so repeated tokens keep their own place. Tokens are HTML-escaped.

    Examples
    --------
    >>> import numpy as np
    >>> fig = lines_figure(np.eye(3), ["a", "b", "c"], ["x", "y", "z"])
    >>> [t.name for t in fig.data]
    ['head 1', 'target (queries)', 'source (keys)']
    """
    tr = chart_words(lang)
    p = check_weights(weights, mask)
    w = p.w                                                          # (n_heads, n_tgt, n_src)
    n_heads, n_tgt, n_src = w.shape
    src = check_tokens(src_tokens, n_src, "src_tokens")
    tgt = check_tokens(tgt_tokens, n_tgt, "tgt_tokens")
    shown = tuple(range(n_heads)) if heads is None else check_heads(heads, n_heads, "heads")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating)):
        raise TypeError(f"threshold must be a number in [0, 1]; received "
                        f"{type(threshold).__name__} {threshold!r}.")
    if not 0 <= threshold <= 1:  # also refuses NaN
        raise ValueError(f"threshold must be a number in [0, 1]; received {threshold!r}.")
    drawn = (w > 0) & (w >= threshold) & p.keep                      # (n_heads, n_tgt, n_src)
    traces = [t for h in shown for t in _head_traces(w[h], drawn[h], h, tr)]
    traces += _token_traces(w, p.keep, shown, src, tgt, tr)
    n_rows = max(n_tgt, n_src)
    layout = base_layout(
        None, 110 + _ROW_PX * n_rows,
        xaxis=dict(visible=False, range=[-0.9, 1.9], fixedrange=True),
        yaxis=dict(visible=False, range=[n_rows - 0.5, -0.5], fixedrange=True),
        hovermode="closest", dragmode=False, modebar=dict(remove=["select2d", "lasso2d"]),
        legend=dict(title=dict(text=tr("head (opacity ≈ weight)")), itemsizing="constant"),
        annotations=[_header(_X_TGT, tr("target (queries)")),
                     _header(_X_SRC, tr("source (keys)"))])
    # Unvalidated (see figures._style): validation costs ~5 ms per trace; the tests validate.
    return go.Figure(data=traces, layout=layout, _validate=False)


def _header(x: float, text: str) -> dict:
    return dict(x=x, y=1, xref="x", yref="paper", yanchor="bottom", showarrow=False,
                text=f"<b>{text}</b>", font=dict(size=13))


def _head_traces(w: np.ndarray, drawn: np.ndarray, h: int, tr: ChartWords) -> list[dict]:
    """Line traces of one head: w and drawn are (n_tgt, n_src)."""
    rows, cols = np.nonzero(drawn)                                   # (k,) segment ends
    level = np.minimum((w[rows, cols] * len(OPACITY_LEVELS)).astype(int),
                       len(OPACITY_LEVELS) - 1)                      # (k,) opacity bin
    line = dict(color=OKABE_ITO[h % len(OKABE_ITO)], width=2,
                dash=DASHES[(h // len(OKABE_ITO)) % len(DASHES)])
    base = dict(type="scatter", mode="lines", name=tr("head {h}", h=h + 1),
                legendgroup=f"head {h + 1}",
                line=line, hoverinfo="skip")
    traces = []
    for b in reversed(range(len(OPACITY_LEVELS))):  # strongest first: it carries the legend
        sel = level == b
        if not sel.any():
            continue
        # Object arrays of ints and None: Plotly validates them ~5x faster than lists and
        # still writes plain JSON lists (shorter than base64 floats with NaN gaps).
        y = np.full((int(sel.sum()), 3), None, dtype=object)           # (k, 3): i, j, gap
        y[:, 0], y[:, 1] = rows[sel], cols[sel]
        x = np.full_like(y, None)
        x[:, 0], x[:, 1] = _X_TGT, _X_SRC
        traces.append(dict(base, x=x.reshape(-1), y=y.reshape(-1),
                           opacity=OPACITY_LEVELS[b], showlegend=not traces))
    return traces or [dict(base, x=[], y=[], name=tr("head {h} (no line)", h=h + 1),
                           showlegend=True)]


def _token_traces(w, keep, shown, src: list[str], tgt: list[str],
                  tr: ChartWords) -> list[dict]:
    """Labels of both columns (cut), with the whole token and its strongest link per drawn head
    on hover."""
    n_tgt, n_src = len(tgt), len(src)
    (src_short, tgt_short), (src, tgt) = ((axis_labels(src)[1], axis_labels(tgt)[1]),
                                          ([plotly_text(t) for t in src],
                                           [plotly_text(t) for t in tgt]))
    tgt_hover, src_hover = [], []
    heads = {h: tr("head {h}", h=h + 1) for h in shown}
    for i, tok in enumerate(tgt):
        links = [f"{heads[h]}: → {j}: {src[j]} ({w[h, i, j]:.3f})" if w[h, i].any()
                 else tr("head {h}: no key", h=h + 1) for h in shown
                 for j in [int(w[h, i].argmax())]]
        tgt_hover.append("<br>".join([f"<b>{tr('target (query)')} {i}: {tok}</b>", *links]))
    for j, tok in enumerate(src):
        links = [f"{heads[h]}: ← {i}: {tgt[i]} ({w[h, i, j]:.3f})" if w[h, :, j].any()
                 else tr("head {h}: unused", h=h + 1) for h in shown
                 for i in [int(w[h, :, j].argmax())]]
        src_hover.append("<br>".join([f"<b>{tr('source (key)')} {j}: {tok}</b>", *links]))
    # a source token no target may see: lighter, still 5.1:1 on white (WCAG 1.4.3)
    src_colour = ["#333333" if k else "#6e6e6e" for k in keep.any(axis=0).tolist()]
    label = dict(type="scatter", mode="markers+text", showlegend=False, hoverinfo="text",
                 marker=dict(size=7, color="#888888"), textfont=dict(size=13))
    return [
        dict(label, name=tr("target (queries)"), x=[_X_TGT] * n_tgt, y=list(range(n_tgt)),
             text=tgt_short, hovertext=tgt_hover, textposition="middle left"),
        dict(label, name=tr("source (keys)"), x=[_X_SRC] * n_src, y=list(range(n_src)),
             text=src_short, hovertext=src_hover, textposition="middle right",
             textfont=dict(size=13, color=src_colour)),
    ]
