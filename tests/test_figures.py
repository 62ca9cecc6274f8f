"""Figure builders, tested without Streamlit: structure, labels, escaping, payload."""

import numpy as np
import plotly.io as pio
import pytest

from xattn.analysisfigures import ablation_figure, statistics_figure
from xattn.figures import average_figure, axis_labels, output_figure, per_head_figure
from xattn.metrics import ablation, head_statistics
from xattn.pipeline import Settings, run
from xattn.stepfigures import clickable_head_figure, saturation_figure, weights_bar_figure

SRC = ["<s>", "the", "cat", "&", "the", "</s>"]
TGT = ["le", "<b>", "chat"]


@pytest.fixture
def weights():
    rng = np.random.default_rng(0)
    w = rng.random((3, len(TGT), len(SRC)))
    return w / w.sum(-1, keepdims=True)


def test_axis_labels_are_unique_and_escaped():
    cats, ticks = axis_labels(SRC)
    assert cats == ["0: &lt;s&gt;", "1: the", "2: cat", "3: &amp;", "4: the", "5: &lt;/s&gt;"]
    assert ticks[1] == ticks[4] == "the" and ticks[0] == "&lt;s&gt;"


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
                             title="t")
    assert list(fig.data[0].text) == ["0.100", "0.200", "masked", "0.300", "0.200", "0.200"]
    assert fig.data[0].marker.color[2] != fig.data[0].marker.color[0]


def test_saturation_figure_draws_both_curves():
    curve = {"d_head": np.array([1, 2, 4]), "scaled": np.array([0.9, 0.9, 0.9]),
             "unscaled": np.array([0.9, 0.6, 0.3])}
    fig = saturation_figure(curve, 4)
    assert [t.name for t in fig.data] == ["divided by sqrt(d_head)", "not scaled"]
    assert fig.layout.xaxis.type == "log"


def test_statistics_and_ablation_figures():
    r = run(Settings())
    stats = head_statistics(r.weights, r.mask)
    fig = statistics_figure(stats, {"confidence": "confidence", "monotonicity": "mono"})
    assert len(fig.data) == 2 and list(fig.data[0].x) == [f"head {h}" for h in range(1, 5)]
    np.testing.assert_allclose(fig.data[0].y, stats["confidence"])
    res = ablation(r.module(), r.decoder_state, r.encoder_output, r.mask, heads_off=(0, 2))
    fig = ablation_figure(res, r.tgt_tokens, [1, 3])
    np.testing.assert_allclose(fig.data[0].y, res.per_token)
    assert "heads 1, 3 off" in fig.layout.title.text
