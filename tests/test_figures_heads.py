"""Per-head, average and output figures, tested without Streamlit: structure, labels, payload."""

import numpy as np
import plotly.io as pio
import pytest
from figure_helpers import SRC, TGT, toy_weights

from xattn.figures import average_figure, output_figure, per_head_figure
from xattn.figures._style import axis_labels
from xattn.pipeline import Settings, run


@pytest.fixture
def weights():
    return toy_weights()


def test_per_head_figure_has_one_heatmap_per_head_on_its_own_axes(weights):
    fig = per_head_figure(weights, SRC, TGT)
    heat = [t for t in fig.data if t.type == "heatmap"]
    assert [t.name for t in heat] == ["head 1", "head 2", "head 3"]
    assert [(t.xaxis, t.yaxis) for t in heat] == [("x", "y"), ("x2", "y2"), ("x3", "y3")]
    for h, t in enumerate(heat):
        assert t.z.dtype == np.float32
        np.testing.assert_allclose(t.z, weights[h], rtol=1e-6)
        assert t.coloraxis == "coloraxis"
    assert fig.layout.coloraxis.cmin == 0 and fig.layout.coloraxis.cmax == 1
    assert fig.layout.yaxis.autorange == "reversed"  # first target token on top
    assert fig.layout.xaxis.title.text == "source (keys)"
    assert fig.layout.yaxis.title.text == "target (queries)"
    assert list(fig.layout.xaxis2.ticktext) == axis_labels(SRC)[1]
    assert fig.layout.yaxis2.showticklabels is False  # labels once per grid row
    assert "weight %{z:.3f}" in heat[0].hovertemplate and "head 1" in heat[0].hovertemplate


def test_masked_cells_get_crosses_and_nothing_else_does(weights):
    mask = np.ones((3, 6), bool)
    mask[:, 5] = False
    mask[2, 0] = False
    fig = per_head_figure(weights, SRC, TGT, mask=mask)
    marks = [t for t in fig.data if t.type == "scatter"]
    assert len(marks) == 3 and marks[1].xaxis == "x2"
    cells = sorted(zip(marks[0].y, marks[0].x, strict=True))
    assert cells == sorted([("0: le", "5: &lt;/s&gt;"), ("1: &lt;b&gt;", "5: &lt;/s&gt;"),
                            ("2: chat", "5: &lt;/s&gt;"), ("2: chat", "0: &lt;s&gt;")])
    assert len([t for t in per_head_figure(weights, SRC, TGT, mask=np.ones(6, bool)).data
                if t.type == "scatter"]) == 0


def test_per_head_figure_refuses_mismatched_tokens(weights):
    with pytest.raises(ValueError, match=r"weights must have shape \(n_heads, 3, 5\) .*received \(3, 3, 6\)"):
        per_head_figure(weights, SRC[:5], TGT)


def test_average_and_output_figures(weights):
    avg = average_figure(weights, SRC, TGT)
    np.testing.assert_allclose(avg.data[0].z, weights.mean(0), rtol=1e-6)
    assert "mean of heads" in avg.data[0].hovertemplate
    out = np.arange(12.0).reshape(3, 4) - 5
    fig = output_figure(out, TGT)
    assert fig.data[0].zmin == -6 and fig.data[0].zmax == 6  # symmetric around 0
    assert list(fig.layout.yaxis.ticktext) == ["le", "&lt;b&gt;", "chat"]


def test_figures_carry_a_template_object_so_they_look_the_same_outside_streamlit(weights):
    spec = pio.to_json(per_head_figure(weights, SRC, TGT))
    assert '"template":{"data"' in spec.replace(" ", "")


def test_sixteen_heads_of_64_tokens_stay_under_500_kb():
    src = " ".join(f"s{i}" for i in range(64))
    r = run(Settings(src=src, tgt=src, d_model=64, n_heads=16))
    fig = per_head_figure(r.weights, r.src_tokens, r.tgt_tokens, mask=r.mask)
    assert len(pio.to_json(fig, validate=False)) < 500_000
