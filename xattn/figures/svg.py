"""A heatmap of attention weights as a small SVG picture, with no image library.

Plotly's static export needs kaleido (and a browser), which a server here does not have; a
file for a learning management system (``xattn.lesson.lms``) still needs the weights its
question is about. This draws one head's weights (or the heads averaged) as coloured cells
on the page's scale (viridis, 0 to 1), each cell carrying its value to two decimals, with the
target tokens down the left and the source tokens along the top: what the heatmap on the
page shows, readable without colour.
"""

from __future__ import annotations

import html

import numpy as np
from plotly.colors import sample_colorscale

__all__ = ["weights_svg"]

CELL = 34          # px, one cell: room for "0.00" at 10 px
FONT = 11          # px, token labels
MAX_LABEL = 14     # characters of a token shown before "…"


def _label(token: str) -> str:
    token = str(token)
    return html.escape(token if len(token) <= MAX_LABEL else token[:MAX_LABEL - 1] + "…")


def weights_svg(weights, tgt_tokens, src_tokens, title: str) -> str:
    """One head's weights as an SVG heatmap (text).

    Parameters
    ----------
    weights : array_like of shape (n_tgt, n_src)
        Rows are target tokens (queries), columns source tokens (keys); values in [0, 1].
    tgt_tokens, src_tokens : sequence of str
        ``n_tgt`` and ``n_src`` labels.
    title : str
        Plain text above the cells (escaped here).

    Returns
    -------
    str
        A standalone ``<svg>`` document: one ``<rect>`` and one ``<text>`` value per cell.

    Examples
    --------
    >>> svg = weights_svg([[0.25, 0.75]], ["chat"], ["the", "cat"], "head 1")
    >>> svg.count("<rect"), ">0.75<" in svg
    (2, True)
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape != (len(tgt_tokens), len(src_tokens)):
        raise ValueError(f"weights must have shape (n_tgt, n_src) = ({len(tgt_tokens)}, "
                         f"{len(src_tokens)}); received {w.shape}.")
    n_tgt, n_src = w.shape
    left = FONT * 0.62 * min(MAX_LABEL, max(len(str(t)) for t in tgt_tokens)) + 10
    top = FONT * 0.62 * min(MAX_LABEL, max(len(str(t)) for t in src_tokens)) * 0.72 + 34
    width, height = left + n_src * CELL + 10, top + n_tgt * CELL + 10
    colours = sample_colorscale("Viridis", np.clip(w, 0, 1).ravel().tolist())
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
           f'height="{height:.0f}" font-family="sans-serif" role="img">',
           f"<title>{html.escape(title)}</title>",
           f'<text x="4" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>']
    for j, token in enumerate(src_tokens):                       # source along the top
        x = left + (j + 0.5) * CELL
        out.append(f'<text x="{x:.1f}" y="{top - 6:.1f}" font-size="{FONT}" '
                   f'transform="rotate(-45 {x:.1f} {top - 6:.1f})">{_label(token)}</text>')
    for i, token in enumerate(tgt_tokens):                       # target down the left
        y = top + (i + 0.5) * CELL + FONT / 3
        out.append(f'<text x="{left - 6:.1f}" y="{y:.1f}" font-size="{FONT}" '
                   f'text-anchor="end">{_label(token)}</text>')
        for j in range(n_src):
            x, value = left + j * CELL, float(w[i, j])
            ink = "black" if value > 0.6 else "white"          # viridis is light at the top
            out.append(f'<rect x="{x:.1f}" y="{top + i * CELL:.1f}" width="{CELL}" '
                       f'height="{CELL}" fill="{colours[i * n_src + j]}"/>'
                       f'<text x="{x + CELL / 2:.1f}" y="{y:.1f}" font-size="10" '
                       f'text-anchor="middle" fill="{ink}">{value:.2f}</text>')
    out.append("</svg>")
    return "".join(out)
