"""In a real browser: clicking a cell of the step-through heatmap drives the step-through.

AppTest cannot click a chart, so this is the test of the click path: Plotly's selection event
on the invisible marker layer -> Streamlit's on_select callback -> the chosen target token.
"""

from __future__ import annotations

import urllib.parse

import numpy as np
import pytest

from devtools.browser import chart, wait_for_app
from xattn.pipeline import Settings, run

pytestmark = pytest.mark.browser

CELL_CENTRE_JS = """
([key, row, col]) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, box = gd.getBoundingClientRect();
  return [box.left + xa._offset + xa.l2p(col), box.top + ya._offset + ya.l2p(row)];
}
"""


def bar_heights(page) -> np.ndarray:
    bar = chart(page, "step_bar")[0]
    return np.asarray(bar["y"], dtype=float)


@pytest.mark.parametrize("row,col", [(4, 2), (7, 0)])
def test_clicking_a_heatmap_cell_steps_through_its_target_token(app, row, col):
    query = urllib.parse.urlencode({"view": "Step through", "step_head": "2"})
    app.page.goto(f"{app.server.url}?{query}")
    wait_for_app(app.page, "traces && traces.length >= 2", key="step_pick")
    r = run(Settings())
    trace = r.module().trace(r.decoder_state, r.encoder_output, r.mask)
    np.testing.assert_allclose(bar_heights(app.page), trace.weights[1, 0], rtol=1e-6)

    x, y = app.page.evaluate(CELL_CENTRE_JS, ["step_pick", row, col])
    label = f"{row}: {r.tgt_tokens[row]}"
    app.page.mouse.click(x, y)
    # The condition is false until the click's rerun (no run count needed, see Page.act).
    wait_for_app(app.page, f"new URLSearchParams(location.search).get('step_tgt') === {label!r}"
                 " && document.querySelector('.st-key-step_pick .js-plotly-plot').layout"
                 f".shapes[0].y0 === {row - 0.5}", after_runs=-1, key="step_pick")

    assert app.query()["step_tgt"] == [label]
    np.testing.assert_allclose(bar_heights(app.page), trace.weights[1, row], rtol=1e-6)
    shapes = app.page.evaluate(
        "document.querySelector('.st-key-step_pick .js-plotly-plot').layout.shapes")
    assert shapes[0]["y0"] == row - 0.5 and shapes[0]["y1"] == row + 0.5   # row outlined
    app.assert_clean()
