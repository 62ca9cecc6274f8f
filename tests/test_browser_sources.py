"""In a real browser: an uploaded attention file is drawn as it is, layer by layer, and a
click on the layers x heads overview opens that layer and head."""

from __future__ import annotations

import numpy as np
import pytest

from devtools.browser import BANNER, chart, decode_z, heatmaps, wait_for_app
from xattn.attention import masked_softmax
from xattn.attnfile import save_attention

pytestmark = pytest.mark.browser

CANNOT_BE_SHOWN = """[...document.querySelectorAll('[data-testid="stAlert"]')]
                     .some((e) => e.innerText.includes('cannot be shown'))"""
PANEL_JS = """
([row, col]) => {
  const gd = document.querySelector('.st-key-overview_pick .js-plotly-plot');
  const trace = gd._fullData[gd._fullData.length - 1];      // the invisible click layer
  const k = trace.customdata.findIndex((c) => c[0] === row && c[1] === col);
  const xa = gd._fullLayout.xaxis999, ya = gd._fullLayout.yaxis999;
  const box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(trace.x[k]), box.top + ya._offset + ya.l2p(trace.y[k])];
}
"""


@pytest.fixture
def attention_file(tmp_path):
    rng = np.random.default_rng(7)
    w = masked_softmax(rng.standard_normal((3, 2, 4, 5)) * 2).astype(np.float32)  # (L, H, T, S)
    path = tmp_path / "three-layers.npz"
    save_attention(path, w, ["<s>", "le", "chat", "noir", "</s>"], ["the", "black", "cat", "."],
                   model="some/model")
    return path, w


def test_an_uploaded_file_is_drawn_layer_by_layer_and_the_overview_opens_a_head(
        app, attention_file):
    path, w = attention_file
    app.open({"weights": "file"}, "true")
    upload = app.page.locator(".st-key-upload input[type=file]")
    app.act(lambda: upload.set_input_files(str(path)),
            "traces && traces.filter((t) => t.type === 'heatmap').length === 2", "upload")
    shown = [decode_z(t["z"]) for t in heatmaps(app.traces())]
    np.testing.assert_allclose(shown, w[1], rtol=1e-6)       # layer 2 of 3 by default
    banner = app.page.locator(BANNER).inner_text()
    assert "some/model" in banner and "three-layers.npz" in banner and "Layer 2 of 3" in banner
    # a click on layer 3, head 2 of the overview opens them
    x, y = app.page.evaluate(PANEL_JS, [3, 2])
    app.act(lambda: app.page.mouse.click(x, y),
            "!!document.querySelector('.st-key-focus_head .js-plotly-plot')", "click")
    wait_for_app(app.page, "traces && traces.length")
    big = decode_z(heatmaps(chart(app.page, "focus_head"))[0]["z"])
    np.testing.assert_allclose(big, w[2, 1], rtol=1e-6)
    np.testing.assert_allclose([decode_z(t["z"]) for t in heatmaps(app.traces())], w[2],
                               rtol=1e-6)
    assert app.query()["layer"] == ["3"] and app.query()["focus"] == ["2"]
    app.assert_clean()


def test_a_file_that_is_not_attention_says_what_is_wrong(app, tmp_path):
    bad = tmp_path / "bad.npz"
    np.savez(bad, cross_attention=np.full((2, 3), 0.7))
    app.open({"weights": "file"}, "true")
    upload = app.page.locator(".st-key-upload input[type=file]")
    app.act(lambda: upload.set_input_files(str(bad)), CANNOT_BE_SHOWN, "upload")
    text = " ".join(app.page.locator('[data-testid="stAlert"], [data-testid="stCode"]')
                    .all_inner_texts())
    assert "bad.npz" in text and "src_tokens" in text
    app.assert_clean()
