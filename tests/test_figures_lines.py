"""The lines view, inspected structurally through fig.data and fig.layout."""

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from xattn.attention import MultiHeadCrossAttention
from xattn.figures._style import OKABE_ITO
from xattn.figures.lines import OPACITY_LEVELS, lines_figure

SRC = ["le", "chat", "le", "<s>"]
TGT = ["the", "cat", "</s>"]


@pytest.fixture
def weights():
    mha = MultiHeadCrossAttention(d_model=8, n_heads=4, seed=5)
    rng = np.random.default_rng(5)
    return mha(rng.standard_normal((3, 8)) * 3, rng.standard_normal((4, 8)) * 3)[1]


def line_traces(fig):
    return [t for t in fig.data if t.mode == "lines"]


def segments(trace):
    """(target row, source column) of every segment of one line trace."""
    x, y = list(trace.x), list(trace.y)
    assert x[2::3] == y[2::3] == [None] * (len(x) // 3)  # None separates the segments
    assert x[0::3] == [0] * (len(x) // 3) and x[1::3] == [1] * (len(x) // 3)
    return list(zip(y[0::3], y[1::3], strict=True))


def labels(fig, name):
    return next(t for t in fig.data if t.name == name)


@pytest.mark.parametrize("threshold", [0.0, 0.05, 0.2, 0.5, 1.0])
def test_one_segment_per_weight_at_or_above_threshold(weights, threshold):
    fig = lines_figure(weights, SRC, TGT, threshold=threshold)
    drawn = [(t.legendgroup, s) for t in line_traces(fig) for s in segments(t)]
    expected = [(f"head {h + 1}", (i, j)) for h, i, j in zip(*np.nonzero(
        (weights >= threshold) & (weights > 0)), strict=True)]
    assert sorted(drawn) == sorted(expected)


def test_opacity_is_the_binned_weight(weights):
    fig = lines_figure(weights, SRC, TGT, threshold=0.0)
    for trace in line_traces(fig):
        h = int(trace.legendgroup.split()[1]) - 1
        for i, j in segments(trace):
            assert abs(trace.opacity - weights[h, i, j]) <= 0.1 + 1e-12
        assert trace.opacity in OPACITY_LEVELS
    assert len(line_traces(fig)) <= len(OPACITY_LEVELS) * len(weights)


def test_heads_selection_colours_and_legend(weights):
    fig = lines_figure(weights, SRC, TGT, heads=[2, 0], threshold=0.0)
    groups = {t.legendgroup for t in line_traces(fig)}
    assert groups == {"head 1", "head 3"}  # numbered from 1 on screen
    for trace in line_traces(fig):
        h = int(trace.legendgroup.split()[1]) - 1
        assert trace.line.color == OKABE_ITO[h]
    shown = [t.name for t in line_traces(fig) if t.showlegend]
    assert sorted(shown) == ["head 1", "head 3"]  # one legend entry per head


def test_head_without_lines_stays_in_legend():
    w = np.stack([np.eye(3), np.full((3, 3), 1 / 3)])
    fig = lines_figure(w, ["a", "b", "c"], ["x", "y", "z"], threshold=0.5)
    assert [t.name for t in line_traces(fig)] == ["head 1", "head 2 (no line)"]
    assert len(fig.data[1].x) == 0


def test_many_heads_repeat_colours_with_another_dash():
    w = np.full((9, 1, 2), 0.5)
    fig = lines_figure(w, ["a", "b"], ["x"])
    traces = line_traces(fig)
    assert traces[8].line.color == traces[0].line.color
    assert (traces[0].line.dash, traces[8].line.dash) == ("solid", "dash")


def test_tokens_are_escaped_and_repeated_tokens_keep_their_place(weights):
    fig = lines_figure(weights, SRC, TGT)
    src, tgt = labels(fig, "source (keys)"), labels(fig, "target (queries)")
    assert list(src.text) == ["le", "chat", "le", "&lt;s&gt;"]
    assert list(tgt.text) == ["the", "cat", "&lt;/s&gt;"]
    assert list(src.y) == [0, 1, 2, 3] and set(src.x) == {1}
    assert list(tgt.y) == [0, 1, 2] and set(tgt.x) == {0}
    hover = "".join(src.hovertext) + "".join(tgt.hovertext)
    assert "<s>" not in hover and "</s>" not in hover and "&lt;s&gt;" in hover
    assert src.hovertext[3].startswith("<b>source (key) 3: &lt;s&gt;</b>")


def test_hover_names_the_strongest_link():
    w = np.array([[0.2, 0.8], [0.6, 0.4]])
    fig = lines_figure(w, ["a", "b"], ["x", "y"])
    assert labels(fig, "target (queries)").hovertext[0].endswith("head 1: → 1: b (0.800)")
    assert labels(fig, "source (keys)").hovertext[0].endswith("head 1: ← 1: y (0.600)")


def test_sides_are_labelled_and_template_is_explicit(weights):
    fig = lines_figure(weights, SRC, TGT)
    texts = [a.text for a in fig.layout.annotations]
    assert "<b>target (queries)</b>" in texts and "<b>source (keys)</b>" in texts
    white = pio.templates["plotly_white"]          # its look, without the parts never drawn
    template = fig.layout.template
    for part in ("paper_bgcolor", "plot_bgcolor", "xaxis", "yaxis", "font", "colorway"):
        assert template.layout[part] == white.layout[part], part
    assert template.data.scatter == white.data.scatter
    assert "polar" not in template.to_plotly_json()["layout"] and not template.data.surface
    assert isinstance(fig, go.Figure)
    go.Figure(fig.to_dict())  # everything passes Plotly's validation


def test_masked_keys_get_no_line_and_a_grey_label():
    mask = np.array([True, True, False])
    w = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    fig = lines_figure(w, ["a", "b", "<pad>"], ["x", "y"], mask=mask, threshold=0.0)
    assert sorted(s for t in line_traces(fig) for s in segments(t)) == [(0, 0), (0, 1), (1, 0)]
    colours = labels(fig, "source (keys)").textfont.color
    assert colours[0] == colours[1] != colours[2]


def test_one_head_two_dimensional_and_single_tokens():
    fig = lines_figure(np.ones((1, 1)), ["a"], ["x"])
    assert [segments(t) for t in line_traces(fig)] == [[(0, 0)]]
    assert line_traces(fig)[0].opacity == OPACITY_LEVELS[-1]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(src_tokens=["a", "b"]), r"src_tokens must hold 4 tokens .* received 2"),
        (dict(tgt_tokens="the cat"), r"TypeError: tgt_tokens must be a sequence of str tokens, not one string"),
        (dict(tgt_tokens=[1, 2, 3]), r"TypeError: tgt_tokens must hold str tokens; received int 1"),
        (dict(threshold="0.1"), r"TypeError: threshold must be a number in \[0, 1\]; received str"),
        (dict(heads=[4]), r"each of heads must be an int >= 0 and <= 3; received 4"),
        (dict(threshold=1.5), r"threshold must be a number in \[0, 1\]; received 1.5"),
        (dict(threshold=float("nan")), r"threshold must be a number"),
        (dict(mask=np.ones(3, dtype=bool)), r"mask must have shape \(4,\) or \(3, 4\)"),
    ],
)
def test_bad_arguments(weights, kwargs, match):
    args = dict(weights=weights, src_tokens=SRC, tgt_tokens=TGT) | kwargs
    error = TypeError if match.startswith("TypeError: ") else ValueError
    with pytest.raises(error, match=match.removeprefix("TypeError: ")):
        lines_figure(**args)


def test_bad_weights_shape():
    with pytest.raises(ValueError, match=r"received shape \(3,\)"):
        lines_figure(np.ones(3) / 3, ["a", "b", "c"], ["x"])
