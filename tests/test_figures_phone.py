"""xattn.figures.phone: the phone's chart is the lecturer's figure, as numbers: the same
values, labels as typed, the same outlined and masked cells."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from xattn.classroom import Question
from xattn.figures.alignment import aer_figure
from xattn.figures.classroom import class_figure, taps_figure
from xattn.figures.frozen import frozen
from xattn.figures.heads import head_parts
from xattn.figures.phone import DIGITS, phone_chart, values

RNG = np.random.default_rng(0)


def head(weights, src, tgt, **kw):
    return frozen(*head_parts(weights, src, tgt, head=1, **kw))


def test_a_heads_heatmap_keeps_its_weights_labels_and_marks():
    w = RNG.dirichlet(np.ones(4), size=3).astype(np.float32)            # (n_tgt, n_src)
    mask = np.ones((3, 4), bool)
    mask[:, 2] = False
    gold = np.zeros((3, 4), bool)
    gold[1, 3] = True
    src, tgt = ["<b>x</b>", "the", "the", "$y$"], ["le", "**z**", "%{x}"]
    spec = phone_chart(head(w, src, tgt, mask=mask, gold=gold), alt="Heatmap of head 2.")
    (panel,) = spec["panels"]
    assert panel["kind"] == "heat" and spec["title"] == "head 2"
    assert panel["x"] == src and panel["y"] == tgt                       # literal, repeats kept
    np.testing.assert_allclose(panel["z"], np.round(w, DIGITS), atol=10 ** -DIGITS)
    assert sorted(m for m in panel["marks"] if m[2] == "masked") == [[i, 2, "masked"]
                                                                     for i in range(3)]
    assert [m for m in panel["marks"] if m[2] == "outline"] == [[1, 3, "outline"]]
    assert (panel["zmin"], panel["zmax"], panel["reverse"]) == (0.0, 1.0, False)
    assert spec["alt"] == "Heatmap of head 2."


def test_the_class_answers_are_bars_with_their_counts_and_labels():
    q = Question("token", ("the (0)", "cat", "the (2)"))
    fig = class_figure(q, {0: 3, 1: 5, 2: 0}, 8, truth=1)
    (panel,) = phone_chart(fig, alt="Bars.")["panels"]
    assert panel["kind"] == "bars" and panel["x"] == ["the (0)", "cat", "the (2)"]
    assert panel["series"][0]["y"] == [3.0, 5.0, 0.0]


def test_the_taps_beside_the_weights_are_two_rows_of_one_heatmap():
    row = np.array([0.1, 0.7, 0.2])
    fig = taps_figure(["a", "b", "c"], {0: 1, 1: 3, 2: 0}, row, target="le", head="head 1")
    (panel,) = phone_chart(fig, alt="Two rows.")["panels"]
    np.testing.assert_allclose(panel["z"], [[0.25, 0.75, 0.0], [0.1, 0.7, 0.2]], atol=1e-3)
    assert panel["x"] == ["a", "b", "c"] and len(panel["y"]) == 2


def test_an_aer_heatmap_is_reversed_and_outlines_the_best():
    class Scores:
        aer = np.array([[0.4, 0.2], [0.1, 0.9]])
        layer_aer = np.array([0.3, 0.5])
        best_layers = (0,)
        best_heads = ((1, 0),)
    (panel,) = phone_chart(aer_figure(Scores()), alt="AER.")["panels"]
    assert panel["reverse"] is True
    np.testing.assert_allclose(panel["z"], [[0.4, 0.2, 0.3], [0.1, 0.9, 0.5]])
    assert sorted(panel["marks"]) == [[0, 2, "outline"], [1, 0, "outline"]]
    assert panel["x"] == ["head 1", "head 2", "average"]


def test_lines_keep_every_series_and_a_log_axis():
    fig = go.Figure([go.Scatter(x=[1, 2, 4], y=[0.9, 0.8, 0.7], name="scaled", mode="lines"),
                     go.Scatter(x=[1, 2, 4], y=[0.9, 0.5, 0.1], name="not",
                                line=dict(dash="dash"))],
                    layout=dict(title=dict(text="Entropy"), xaxis=dict(type="log")))
    (panel,) = phone_chart(fig, alt="Lines.")["panels"]
    assert panel["kind"] == "lines" and panel["log"] is True
    assert [s["name"] for s in panel["series"]] == ["scaled", "not"]
    assert [s["dash"] for s in panel["series"]] == [False, True]
    assert panel["series"][1]["y"] == [0.9, 0.5, 0.1]


def test_nan_becomes_null_and_the_spec_is_json():
    fig = go.Figure(go.Bar(x=["a", "b"], y=[np.nan, 2.0]))
    spec = phone_chart(fig, alt="Bars.")
    assert spec["panels"][0]["series"][0]["y"] == [None, 2.0]
    json.dumps(spec, allow_nan=False)


def test_a_chart_needs_a_text_alternative():
    with pytest.raises(ValueError, match="text alternative"):
        phone_chart(go.Figure(), alt=" ")


def test_typed_arrays_decode():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    spec = frozen([dict(type="heatmap", z=arr)], {}).to_dict()["data"][0]["z"]
    np.testing.assert_array_equal(values(spec), arr)
