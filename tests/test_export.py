"""Export: the weights as CSV, standalone HTML, and toolbar download settings."""

import csv
import io
import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.offline import get_plotlyjs

from xattn.export import IMAGE_FORMATS, standalone_html, toolbar_config, weights_csv
from xattn.figures import lines_figure
from xattn.pipeline import Settings, run


@pytest.fixture(scope="module")
def bundle():
    return get_plotlyjs()


@pytest.fixture(scope="module")
def page():
    w = np.full((2, 2, 3), 1 / 3)
    figures = [
        ("Lines <b>view</b>", lines_figure(w, ["le", "</script>", "<s>"], ["the", "cat"])),
        ("Heatmap & co", go.Figure(go.Heatmap(z=w[0]), layout=dict(template="plotly_white",
                                                                   title="a </script> title"))),
        ("Bars", go.Figure(go.Bar(y=[1, 2]))),
    ]
    return standalone_html(figures, title="Le chat <3 / the cat",
                           description="First paragraph.\n\nSecond <i>one</i>.")


def figure_calls(page):
    """(div id, figure JSON, config JSON) of every xattnPlot call."""
    return re.findall(r'<script>xattnPlot\("([^"]+)", (\{.*?\}), (\{.*?\})\);</script>', page)


def test_page_opens_offline(page, bundle):
    assert page.count(bundle) == 1
    ours = page.replace(bundle, "")  # the bundle itself mentions URLs (e.g. for map data)
    assert not re.search(r"<script[^>]+src=", ours)  # no external script at all
    assert "http" not in ours
    assert page.count("plotly.js v") == 1
    assert page.startswith("<!DOCTYPE html>") and '<meta charset="utf-8">' in page


def test_every_figure_has_its_div_and_call(page):
    calls = figure_calls(page)
    assert [c[0] for c in calls] == ["xattn-figure-0", "xattn-figure-1", "xattn-figure-2"]
    for div_id, fig_json, _ in calls:
        assert f'<div id="{div_id}" class="xattn-figure"></div>' in page
        fig = json.loads(fig_json)
        assert fig["data"] and "layout" in fig


def test_text_is_escaped(page):
    assert "<title>Le chat &lt;3 / the cat</title>" in page
    assert "<h1>Le chat &lt;3 / the cat</h1>" in page
    assert "<h2>Lines &lt;b&gt;view&lt;/b&gt;</h2>" in page
    assert "<h2>Heatmap &amp; co</h2>" in page
    assert "<p>First paragraph.</p>" in page and "<p>Second &lt;i&gt;one&lt;/i&gt;.</p>" in page
    # Only our own tags close scripts: tokens and titles inside figure JSON are escaped.
    assert page.count("</script>") == page.count("<script")
    for _, fig_json, _ in figure_calls(page):
        assert "<" not in fig_json and ">" not in fig_json


def test_figures_survive_the_round_trip(page):
    fig = json.loads(figure_calls(page)[0][1])
    tokens = next(t for t in fig["data"] if t.get("name") == "source (keys)")["text"]
    assert tokens == ["le", "&lt;/script&gt;", "&lt;s&gt;"]
    assert json.loads(figure_calls(page)[1][1])["layout"]["title"]["text"] == "a </script> title"


def test_each_figure_downloads_png_and_svg_with_a_meaningful_name(page):
    for (_, _, config_json), name in zip(figure_calls(page), ["Lines-b-view-b", "Heatmap-co",
                                                             "Bars"], strict=True):
        config = json.loads(config_json)
        assert config["toImageButtonOptions"] == {
            "format": "png", "filename": f"Le-chat-3-the-cat-{name}", "scale": 2}
        assert config["displaylogo"] is False and config["showSendToCloud"] is False
    assert 'format: "svg"' in page and "Plotly.downloadImage" in page


@pytest.mark.parametrize(
    "name, expected",
    [
        ("heads", "heads"),
        ("Head 3: le chat / the cat", "Head-3-le-chat-the-cat"),
        ("attention_über_alles.png", "attention_uber_alles"),
        ("../../etc/passwd", "etc-passwd"),
        ("a" * 200, "a" * 80),
        ("<>:\"|?*", "xattn-figure"),
        ("", "xattn-figure"),
        ("猫", "xattn-figure"),
    ],
)
def test_toolbar_filename_is_sanitised(name, expected):
    assert toolbar_config(name)["toImageButtonOptions"]["filename"] == expected


@pytest.mark.parametrize("fmt", IMAGE_FORMATS)
def test_toolbar_config_structure(fmt):
    config = toolbar_config("x", fmt)
    assert config == {"toImageButtonOptions": {"format": fmt, "filename": "x", "scale": 2},
                      "displaylogo": False, "showSendToCloud": False}
    json.dumps(config)  # st.plotly_chart sends it as JSON


def test_bad_format():
    with pytest.raises(ValueError, match=r"fmt must be one of \('png', 'svg'.*received 'pdf'"):
        toolbar_config("x", "pdf")


@pytest.mark.parametrize(
    "figures, match",
    [
        ([], r"at least one \(heading, figure\) pair; received an empty list"),
        (None, r"list of \(heading, figure\) pairs; received NoneType"),
        ([go.Figure()], r"figures\[0\] must be a \(str, plotly.graph_objects.Figure\) pair; "
                        r"received Figure"),
        ([("ok", go.Figure()), ("bad", {"data": []})], r"figures\[1\] .* received tuple "
                                                        r"\(str, dict\)"),
    ],
)
def test_bad_figures(figures, match):
    with pytest.raises(ValueError, match=match):
        standalone_html(figures, title="t")


def test_bad_title():
    with pytest.raises(ValueError, match=r"title and description must be str; received None"):
        standalone_html([("a", go.Figure())], title=None)


# ---------------------------------------------------------------- CSV
def test_weights_csv_is_long_format_and_quotes_awkward_tokens():
    r = run(Settings(src='a, "b" <s>', tgt="x y", n_heads=2, tokenizer="whitespace"))
    rows = list(csv.DictReader(io.StringIO(weights_csv(r.weights, r.src_tokens,
                                                       r.tgt_tokens), newline="")))
    assert list(rows[0]) == ["head", "tgt_pos", "tgt_token", "src_pos", "src_token", "weight"]
    assert len(rows) == 2 * 2 * 3
    assert [row["src_token"] for row in rows[:3]] == ["a,", '"b"', "<s>"]
    assert rows[0]["head"] == "1" and rows[-1]["head"] == "2"
    for row in rows:
        w = r.weights[int(row["head"]) - 1, int(row["tgt_pos"]), int(row["src_pos"])]
        assert float(row["weight"]) == pytest.approx(w, rel=1e-5)


def test_csv_cells_a_spreadsheet_would_run_are_prefixed_and_the_rest_kept():
    tokens = ['=HYPERLINK("http://x.example","y")', "+1", "-1", "@SUM(1)", "\tx", "\rx", "a=b",
              "né"]
    w = np.full((1, 1, len(tokens)), 1 / len(tokens))
    rows = list(csv.DictReader(io.StringIO(weights_csv(w, tokens, ["=1+1"]), newline="")))
    assert [r["src_token"] for r in rows] == ["'" + t for t in tokens[:6]] + ["a=b", "né"]
    assert rows[0]["tgt_token"] == "'=1+1"


def test_csv_of_layers_has_a_layer_column():
    w = np.full((2, 1, 1, 2), 0.5)
    rows = list(csv.DictReader(io.StringIO(weights_csv(w, ["a", "b"], ["x"]))))
    assert list(rows[0]) == ["layer", "head", "tgt_pos", "tgt_token", "src_pos", "src_token",
                             "weight"]
    assert [r["layer"] for r in rows] == ["1", "1", "2", "2"]
    with pytest.raises(ValueError, match=r"shape \(\[n_layers,\] n_heads, 1, 2\)"):
        weights_csv(np.ones((2, 2)), ["a", "b"], ["x"])
