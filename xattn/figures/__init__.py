"""Plotly figure builders, one module per view: heads, step, analysis, lines, training.

Every builder returns a ``plotly.graph_objects.Figure`` without showing it; the shared look
(template, colour scales, token axes) is in ``_style``.
"""

from xattn.figures._style import COLOR_STOPS
from xattn.figures.analysis import ablation_figure, measure_figure
from xattn.figures.heads import (
    average_figure,
    gold_marks,
    head_figure,
    head_height,
    mask_marks,
    output_figure,
    per_head_figure,
)
from xattn.figures.lines import lines_figure
from xattn.figures.overview import overview_figure
from xattn.figures.step import clickable_head_figure, saturation_figure, weights_bar_figure
from xattn.figures.training import loss_figure

__all__ = ["COLOR_STOPS", "ablation_figure", "average_figure", "clickable_head_figure",
           "gold_marks", "head_figure", "head_height",
           "lines_figure", "loss_figure", "mask_marks", "output_figure", "overview_figure",
           "per_head_figure",
           "measure_figure", "saturation_figure", "weights_bar_figure"]
