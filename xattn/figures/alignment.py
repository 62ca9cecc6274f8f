"""The alignment lab's figure: alignment error rate by layer and head (``xattn.alignlab``)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import COLORSCALE, HIGHLIGHT, base_layout
from xattn.figures.words import chart_words

__all__ = ["aer_figure"]


def aer_figure(scores, *, font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """AER of every head and of each layer's average over its heads (last column), lower is
    better; the best layer's average and the best head outlined (every one of them on a tie).

    Parameters
    ----------
    scores : xattn.alignlab.LabScores
    lang : str, default "en"
        The language of the chart's words.
    """
    tr = chart_words(lang)
    n_layers, n_heads = scores.aer.shape
    z = np.column_stack([scores.aer, scores.layer_aer]).astype(np.float32)     # (L, H+1)
    x = [tr("head {h}", h=h + 1) for h in range(n_heads)] + [tr("average")]
    y = [tr("layer {l}", l=layer + 1) for layer in range(n_layers)]
    # No numbers drawn over the cells (their contrast would change with the colour below):
    # hover and the page's table give them.
    heat = dict(type="heatmap", z=z, x=x, y=y, zmin=0, zmax=1,
                colorscale=COLORSCALE, reversescale=True, xgap=2, ygap=2,
                colorbar=dict(title=dict(text="AER"), thickness=12),
                hovertemplate=f"%{{y}}, %{{x}}<br>AER %{{z:.3f}} ({tr('lower is better')})"
                              "<extra></extra>")
    shapes = [dict(type="rect", xref="x", yref="y", x0=n_heads - 0.5, x1=n_heads + 0.5,
                   y0=best - 0.5, y1=best + 0.5, line=dict(color=HIGHLIGHT, width=3))
              for best in scores.best_layers]
    shapes += [dict(type="rect", xref="x", yref="y", x0=head - 0.5, x1=head + 0.5,
                    y0=layer - 0.5, y1=layer + 0.5, line=dict(color=HIGHLIGHT, width=3,
                                                              dash="dot"))
               for layer, head in scores.best_heads]
    # A title short enough for a 390 px phone; the page's caption says over how many pairs.
    layout = base_layout(tr("Alignment error rate (lower is better)"),
                         round((140 + 46 * n_layers) * font_scale),
                         top=round(70 * font_scale), font_scale=font_scale, shapes=shapes,
                         xaxis=dict(side="top", type="category"),
                         yaxis=dict(autorange="reversed", type="category"))
    return go.Figure(data=[heat], layout=layout, _validate=False)
