"""Step-through figures: the clickable head, one row's weights, the saturation curve."""

import numpy as np
import pytest
from figure_helpers import SRC, TGT, toy_weights

from xattn.figures import clickable_head_figure, saturation_figure, weights_bar_figure


@pytest.fixture
def weights():
    return toy_weights()


def test_clickable_head_figure_has_a_click_layer_with_cell_coordinates(weights):
    fig = clickable_head_figure(weights[1], SRC, TGT, head=1, selected=2)
    heat, click = fig.data[:2]
    assert heat.type == "heatmap" and click.type == "scatter"
    assert len(click.customdata) == 18 and list(click.customdata[7]) == [1, 1]
    assert click.x[7] == "1: the" and click.y[7] == "1: &lt;b&gt;"
    assert click.marker.opacity == 0 and click.hoverinfo != "skip"
    assert fig.layout.shapes[0].y0 == 1.5 and fig.layout.shapes[0].y1 == 2.5
    assert "head 2" in click.hovertemplate


def test_weights_bar_figure_marks_masked_tokens():
    allowed = np.array([True, True, False, True, True, True])
    fig = weights_bar_figure(np.array([0.1, 0.2, 0, 0.3, 0.2, 0.2]), SRC, allowed=allowed,
                             query='<a href="https://example.com">Click</a>', head=1)
    assert list(fig.data[0].text) == ["0.100", "0.200", "masked", "0.300", "0.200", "0.200"]
    # the query token is shown literally in the title, never as a link (cut to a tick's length)
    assert fig.layout.title.text.startswith("Weights of &lt;a href=")
    assert "<a" not in fig.layout.title.text and fig.layout.title.text.endswith("(head 2)")
    assert fig.data[0].marker.color[2] != fig.data[0].marker.color[0]


def test_saturation_figure_draws_both_curves():
    curve = {"d_head": np.array([1, 2, 4]), "scaled": np.array([0.9, 0.9, 0.9]),
             "unscaled": np.array([0.9, 0.6, 0.3])}
    fig = saturation_figure(curve, 4)
    assert [t.name for t in fig.data] == ["divided by sqrt(d_head)", "not scaled"]
    assert fig.layout.xaxis.type == "log"
