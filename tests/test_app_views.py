"""AppTest for the teaching views: step-through, statistics, ablation, lines, compare, export."""

import io
import json
import re

import numpy as np
import pytest
from apptest_helpers import chart, decode, heatmaps, run_app

from xattn.ablation import ablation
from xattn.metrics import head_statistics
from xattn.pipeline import Settings, run
from xattn.sources import random_attention
from xattn.ui.views.export import export_page

pytestmark = pytest.mark.usefixtures("fresh_cache")

def open_view(view, **query):
    at = run_app({"view": view, **query})
    assert not at.exception, at.exception
    return at


def table(at, index=0) -> dict:
    return at.dataframe[index].value


def table_with(at, column: str):
    """The dataframe that has ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_step_through_shows_the_numbers_of_the_chosen_head_and_token():
    at = open_view("Step through", step_head="3", step_tgt="2: noir")
    r = run(Settings())
    tr = r.module().trace(r.decoder_state, r.encoder_output, r.mask)
    bar = chart(at, "step_bar")["data"][0]
    np.testing.assert_allclose(decode(bar["y"]), tr.weights[2, 2], rtol=1e-6)
    scores = table_with(at, "3. dot product q·k")
    np.testing.assert_allclose(scores["3. dot product q·k"], tr.scores[2, 2].round(3))
    np.testing.assert_allclose(scores["6. softmax weight"], tr.weights[2, 2].round(3))
    pick = chart(at, "step_pick")
    np.testing.assert_allclose(decode(pick["data"][0]["z"]), tr.weights[2], rtol=1e-6)
    assert pick["layout"]["shapes"][0]["y0"] == 1.5  # the chosen row is outlined
    assert any("Entropy of this row" in m.label for m in at.metric)


def test_switching_scaling_off_changes_the_scores_and_the_entropy():
    at = open_view("Step through", d_model="256", heads="2")
    entropy_on = at.metric[0].value
    at.toggle(key="sqrt").set_value(False).run()
    assert not at.exception
    r = run(Settings(d_model=256, n_heads=2))
    tr = r.module().trace(r.decoder_state, r.encoder_output, r.mask, scale=False)
    np.testing.assert_allclose(table_with(at, "4. scaled score")["4. scaled score"],
                               tr.scores[0, 0].round(3))
    assert float(at.metric[0].value.split()[0]) < float(entropy_on.split()[0])


def test_head_statistics_table_equals_the_metrics():
    at = open_view("Head statistics", heads="8")
    stats = head_statistics(run(Settings(n_heads=8)).weights)
    t = table(at)
    assert list(t["head"]) == [f"head {h}" for h in range(1, 9)]
    np.testing.assert_allclose(t["confidence (mean row maximum)"], stats["confidence"].round(3))
    np.testing.assert_allclose(t["monotonicity"], stats["monotonicity"].round(3))
    from xattn.metrics import MEASURES
    for key in MEASURES:                                  # one chart a measure, one bar a head
        np.testing.assert_allclose(decode(chart(at, f"stats_{key}")["data"][0]["y"]),
                                   stats[key], rtol=1e-6)


def test_ablation_reports_each_head_sorted_by_importance_and_the_chosen_set():
    at = open_view("Switch heads off", off=["2", "3"])
    r = run(Settings())
    res = ablation(r.module(), r.decoder_state, r.encoder_output, r.mask, heads_off=(1, 2))
    order = np.argsort(-res.per_head)
    t = table(at)
    assert list(t["head"]) == [f"head {h + 1}" for h in order]     # most important first
    assert list(t["output change when switched off alone"]) == [
        f"{res.per_head[h]:.1%}" for h in order]                    # percent, as the metric
    assert list(t["note"]) == ["most important"] + [""] * 3
    assert at.metric[0].value == f"{res.chosen:.1%}"
    np.testing.assert_allclose(decode(chart(at, "ablation_chart")["data"][0]["y"]),
                               res.per_token, rtol=1e-9)
    at.multiselect(key="off").set_value(["1", "2", "3", "4"]).run()
    assert at.metric[0].value == "100.0%"


def test_lines_view_draws_the_chosen_heads_above_the_threshold():
    at = open_view("Lines", lines_heads=["2"], threshold="0.2")
    lines = [t for t in chart(at, "lines")["data"] if t.get("mode") == "lines"]
    assert {t["legendgroup"] for t in lines} == {"head 2"}
    w = run(Settings()).weights[1]                                   # head 2: (n_tgt, n_src)
    drawn = sorted((y[k], y[k + 1]) for t in lines for y in [t["y"]]
                   for k in range(0, len(y), 3))
    assert drawn == sorted(zip(*np.nonzero(w >= 0.2), strict=True))  # exactly those >= 0.2
    at.slider(key="threshold").set_value(0.4).run()
    lines = [t for t in chart(at, "lines")["data"] if t.get("mode") == "lines"]
    assert sum(len(t["y"]) // 3 for t in lines) == int((w >= 0.4).sum())


def test_compare_changes_one_thing_by_default_another_seed():
    at = open_view("Compare")
    b = [decode(t["z"]) for t in heatmaps(chart(at, "compare_b"))]
    assert len(b) == 4 and at.selectbox(key="cmp").value == "seed"
    np.testing.assert_allclose(b[1], run(Settings(seed=1)).weights[1], rtol=1e-6)
    assert "the seed (0 → 1)" in at.markdown[-1].value and "True" not in at.markdown[-1].value


def test_compare_another_number_of_heads():
    at = open_view("Compare", cmp="heads", cmp_heads="2")
    a = [decode(t["z"]) for t in heatmaps(chart(at, "compare_a"))]
    b = [decode(t["z"]) for t in heatmaps(chart(at, "compare_b"))]
    assert len(a) == 4 and len(b) == 2
    np.testing.assert_allclose(b[1], run(Settings(n_heads=2)).weights[1], rtol=1e-6)
    assert "4 → 2 heads" in at.markdown[-1].value


def test_export_offers_a_standalone_html_download_of_every_figure():
    at = open_view("Export", heads="2", tok="whitespace", src="<s> the $cat$", tgt="le **chat**")
    button = at.get("download_button")[0]
    assert "standalone HTML" in button.proto.label and button.proto.deferred_file_id
    r = run(Settings(n_heads=2, tokenizer="whitespace", src="<s> the $cat$", tgt="le **chat**"))
    page = export_page(random_attention(r))          # what the button's callable returns
    figures = re.findall(r'xattnPlot\("xattn-figure-\d+", (\{.*?\}), \{', page)
    assert len(figures) == 4
    heads = [t for t in json.loads(figures[0])["data"] if t["type"] == "heatmap"]
    np.testing.assert_allclose([decode(t["z"]) for t in heads], r.weights, rtol=1e-6)
    assert "Source tokens: &lt;s&gt; the $cat$" in page and "<s> the" not in page
    assert "MultiHead(<i>Q</i>" in page and "\\begin{aligned}" not in page   # reads as maths


def test_image_format_choice_reaches_the_chart_toolbar():
    at = run_app({"img": "svg"})
    el = at.get_by_key("head_1")
    assert '"format": "svg"' in el.proto.config or '"format":"svg"' in el.proto.config


def test_the_npz_download_uploads_back_as_the_same_weights():
    from xattn.attnfile import load_attention
    from xattn.ui.views.heads import attention_npz

    r = run(Settings(mask_mode="padding", padded=(1,)))
    data = attention_npz(random_attention(r))
    loaded = load_attention(data)                             # what the file source reads
    np.testing.assert_array_equal(loaded.weights[0], r.weights.astype(np.float32))
    assert list(loaded.src_tokens) == r.src_tokens and loaded.src_text == r.settings.src
    extra = np.load(io.BytesIO(data))
    np.testing.assert_array_equal(extra["output"], r.output)
    np.testing.assert_array_equal(extra["mask"], r.mask)
    settings = json.loads(str(extra["settings"]))
    assert Settings(**{**settings, "padded": tuple(settings["padded"])}) == r.settings
