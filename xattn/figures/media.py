"""Figures of audio and images beside the heatmaps: the spectrogram with each token's moment,
the image under each token's and head's attention, and the alignment lab for time (each head's
timing F1, Whisper's DTW path over the chosen heads).

Tokens are escaped before they reach a label (Plotly reads a few HTML tags); the overlay
mosaic is an RGB array (one picture, not one chart per token and head) shown as one image
trace, its heads' names and tokens the chart's own text (``overlay_figure``), never pixels.
"""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import COLORSCALE, GOLD_COLOUR, HIGHLIGHT, axis_labels, base_layout
from xattn.figures.words import chart_words

__all__ = ["spectrogram_figure", "overlay_mosaic", "overlay_figure", "timing_figure", "dtw_figure",
           "glyph_hits"]


def _words_shapes(words) -> list[dict]:
    """A band over each known word (seconds on x)."""
    return [dict(type="rect", xref="x", yref="paper", x0=w.start, x1=w.end, y0=0, y1=1,
                 fillcolor="rgba(255,255,255,0.12)", line=dict(color=GOLD_COLOUR, width=1))
            for w in words or ()]


def spectrogram_figure(spectrogram: np.ndarray, seconds_per_frame: float, peaks=(),
                       words=None, *, height: int = 260, lang: str = "en") -> go.Figure:
    """The log-mel spectrogram (mel bins × 10 ms frames) with, above it, each token's moment:
    ``peaks`` (token, seconds) where its attention (mean over heads) is highest; ``words``:
    each known word's span, outlined; ``lang``: the language of its words."""
    tr = chart_words(lang)
    n_mels, n_frames = spectrogram.shape
    t = (np.arange(n_frames) + 0.5) * seconds_per_frame
    fig = go.Figure(go.Heatmap(z=np.asarray(spectrogram, np.float32), x=t,
                               y=np.arange(n_mels), colorscale="Greys", reversescale=True,
                               showscale=False, hovertemplate=f"%{{x:.2f}} s, {tr('mel bin')} "
                                                              "%{y}<extra></extra>"))
    if peaks:
        tokens, times = zip(*peaks, strict=True)
        fig.add_trace(go.Scatter(
            x=list(times), y=[n_mels * (1.04 + 0.08 * (k % 3)) for k in range(len(times))],
            mode="markers+text", text=[html.escape(str(s)) for s in tokens],
            textposition="top center", marker=dict(color=HIGHLIGHT, size=8, symbol="triangle-down"),
            hovertemplate=f"%{{text}} {tr('looks most at')} %{{x:.2f}} s<extra></extra>",
            showlegend=False,
            cliponaxis=False))
    fig.update_layout(**base_layout(None, height, top=46,
                                    xaxis=dict(title=tr("time (s)"), range=[0, n_frames *
                                                                             seconds_per_frame]),
                                    yaxis=dict(title=tr("mel bin"), range=[0, n_mels * 1.3],
                                               showgrid=False),
                                    shapes=_words_shapes(words)))
    return fig


def _heat_colour(v: np.ndarray) -> np.ndarray:
    """Weights 0..1 to an orange-red glow (RGB float)."""
    return np.stack([np.ones_like(v), 0.45 * (1 - v), 0.1 * (1 - v)], axis=-1)


def _columns(n_heads: int) -> list:
    """The mosaic's columns: each head (its index), then their mean."""
    return list(range(n_heads)) + ["mean"]


def overlay_mosaic(image: np.ndarray, boxes, weights: np.ndarray, rows, *,
                   tile_height: int = 96, pad: int = 4) -> np.ndarray:
    """One picture, words left out (`overlay_figure` says them): for each output token in
    ``rows`` (a row of tiles) and each head plus their mean (a column), the image with that
    row's attention painted over each patch's box.

    ``weights`` (n_heads, n_tgt, n_src); ``boxes``: each column's (x0, y0, x1, y1) in
    ``image`` (None: CLS and distillation, not drawn). Each tile is scaled to its own
    maximum, so a head that looks at one patch shows it brightest. Returns uint8 RGB of shape
    (len(rows) * (tile_height + pad), (n_heads + 1) * (tile_width + pad), 3)."""
    from PIL import Image

    h, w = np.asarray(image).shape[:2]
    scale = tile_height / h
    tw = max(1, int(round(w * scale)))
    small = np.asarray(Image.fromarray(np.asarray(image, np.uint8)).resize((tw, tile_height)),
                       np.float32) / 255
    grey = small.mean(axis=2, keepdims=True) * np.ones(3)          # (tile_height, tw, 3)
    heads = _columns(weights.shape[0])
    out = np.ones((len(rows) * (tile_height + pad), len(heads) * (tw + pad), 3), np.float32)
    for r, row in enumerate(rows):
        for c, head in enumerate(heads):
            v = weights[:, row].mean(axis=0) if head == "mean" else weights[head, row]
            top = v.max()
            heat = np.zeros((tile_height, tw))
            for j, box in enumerate(boxes):
                if box is None:
                    continue
                x0, y0, x1, y1 = (int(round(b * scale)) for b in box)
                heat[y0:y1, x0:x1] = v[j] / top if top > 0 else 0
            alpha = 0.75 * heat[..., None]
            tile = grey * (1 - alpha) + _heat_colour(heat) * alpha
            y, x = r * (tile_height + pad), c * (tw + pad)
            out[y:y + tile_height, x:x + tw] = tile
    return (out * 255).astype(np.uint8)


def _png_uri(rgb: np.ndarray) -> str:
    import base64
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(rgb).save(buf, format="PNG")      # optimize=True: 2 % smaller, 4x slower
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def overlay_figure(image: np.ndarray, boxes, weights: np.ndarray, tgt_tokens, rows, *,
                   tile_height: int = 96, lang: str = "en") -> go.Figure:
    """`overlay_mosaic` as a chart: the picture (one PNG image trace), each column named
    above it ("head 1" … "mean", in ``lang``) and each row by its token (left, as it is,
    escaped), so the words are the page's text (any script) and never the picture's pixels.

    Returns a figure whose ``data[0]`` is the image trace; ``layout.xaxis.ticktext`` the
    columns' names and ``layout.yaxis.ticktext`` the rows' tokens."""
    tr = chart_words(lang)
    pad = 4
    mosaic = overlay_mosaic(image, boxes, weights, rows, tile_height=tile_height, pad=pad)
    height, width = mosaic.shape[:2]
    n_cols = weights.shape[0] + 1
    tw = width // n_cols - pad
    names = [tr("mean") if c == "mean" else tr("head {h}", h=c + 1)
             for c in _columns(weights.shape[0])]
    _, tokens = axis_labels([str(tgt_tokens[r]) for r in rows])
    fig = go.Figure(go.Image(source=_png_uri(mosaic), hoverinfo="skip"))
    fig.update_layout(**base_layout(
        None, height + 40, top=30,
        xaxis=dict(side="top", tickvals=[c * (tw + pad) + tw / 2 for c in range(n_cols)],
                   ticktext=names, showgrid=False, zeroline=False),
        yaxis=dict(tickvals=[r * (tile_height + pad) + tile_height / 2 for r in range(len(rows))],
                   ticktext=tokens, showgrid=False, zeroline=False)))
    return fig


def glyph_hits(weights: np.ndarray, boxes, char_boxes, rows) -> np.ndarray:
    """For each layer and head (``weights`` (L, H, T, S)), the share of characters whose
    token's attention peak (over the patches) falls on a patch that overlaps the character's
    box: character k is read by row ``rows[k]``. Returns (L, H)."""
    patches = [j for j, b in enumerate(boxes) if b is not None]
    overlaps = np.array([[not (b[2] <= c[0] or c[2] <= b[0] or b[3] <= c[1] or c[3] <= b[1])
                          for c in char_boxes] for b in (boxes[j] for j in patches)])  # (P, K)
    w = np.asarray(weights)[..., patches]                                # (L, H, T, P)
    k = min(len(rows), len(char_boxes))
    peaks = np.argmax(w[:, :, list(rows[:k])], axis=-1)                  # (L, H, k)
    return overlaps[peaks, np.arange(k)].mean(axis=-1) if k else np.zeros(w.shape[:2])


def timing_figure(scores: np.ndarray, tolerances, *, chosen=(), height: int = 260,
                  lang: str = "en") -> go.Figure:
    """Timing F1 of every head (layers × heads) at the last tolerance, both in the hover;
    ``chosen`` (layer, head) pairs outlined; ``lang``: the language of its words."""
    tr = chart_words(lang)
    n_layers, n_heads = scores.shape[:2]
    text = [[" / ".join(f"{v:.2f}" for v in scores[i, h]) for h in range(n_heads)]
            for i in range(n_layers)]
    ms = " / ".join(f"{t * 1000:.0f} ms" for t in tolerances)
    fig = go.Figure(go.Heatmap(
        z=scores[..., -1], x=np.arange(1, n_heads + 1), y=np.arange(1, n_layers + 1),
        zmin=0, zmax=1, colorscale=COLORSCALE, text=text, texttemplate="%{text}",
        colorbar=dict(title=f"F1 {tolerances[-1] * 1000:.0f} ms", thickness=12),
        hovertemplate=(f"{tr('layer')} %{{y}}, {tr('head')} %{{x}}: {tr('timing F1')} "
                       f"%{{text}} ({ms})<extra></extra>")))
    for layer, head in chosen:
        fig.add_shape(type="rect", x0=head + 0.5, x1=head + 1.5, y0=layer + 0.5, y1=layer + 1.5,
                      line=dict(color=GOLD_COLOUR, width=3))
    fig.update_layout(**base_layout(None, max(height, 60 + 40 * n_layers),
                                    xaxis=dict(title=tr("head"), dtick=1),
                                    yaxis=dict(title=tr("decoder layer"), dtick=1,
                                               autorange="reversed")))
    return fig


def dtw_figure(matrix: np.ndarray, tokens, positions, tgt_tokens, seconds: float,
               words=None, *, height: int = 320, lang: str = "en") -> go.Figure:
    """The matrix DTW ran on (tokens × positions, normalised and filtered, mean over the
    chosen heads) with the path drawn over it, and each known word's span (``lang``: the
    language of its words)."""
    tr = chart_words(lang)
    n_tok, n_src = matrix.shape
    t = (np.arange(n_src) + 0.5) * seconds
    labels = [html.escape(str(s)) for s in tgt_tokens]
    fig = go.Figure(go.Heatmap(z=matrix, x=t, y=np.arange(n_tok), colorscale=COLORSCALE,
                               colorbar=dict(title="z", thickness=12),
                               hovertemplate=f"%{{x:.2f}} s, {tr('token')} %{{y}}: %{{z:.2f}}"
                                             "<extra></extra>"))
    fig.add_trace(go.Scatter(x=(np.asarray(positions) + 0.5) * seconds, y=np.asarray(tokens),
                             mode="lines", line=dict(color=HIGHLIGHT, width=3),
                             name=tr("DTW path"), hoverinfo="skip"))
    fig.update_layout(**base_layout(None, max(height, 80 + 18 * n_tok),
                                    xaxis=dict(title=tr("time (s)"), range=[0, n_src * seconds]),
                                    yaxis=dict(tickvals=list(range(n_tok)), ticktext=labels,
                                               autorange="reversed"),
                                    shapes=_words_shapes(words),
                                    legend=dict(orientation="h", y=1.02, yanchor="bottom")))
    return fig
