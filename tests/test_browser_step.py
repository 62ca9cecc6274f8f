"""In a real browser: clicking a cell of the step-through heatmap drives the step-through.

AppTest cannot click a chart, so this is the test of the click path: Plotly's selection event
on the invisible marker layer -> Streamlit's on_select callback -> the chosen target token.
On a touch phone, one tap on a cell must do the same (issue 17, item 7).
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


# What the chart reports for each tap: "click" for Plotly's click event, the point's customdata
# for a selection. Plotly selects before it emits the click, so once "click" is in the list,
# every selection this tap made is in it too. Registered once per chart element (a redrawn
# chart may be a new element).
WATCH_TAPS_JS = """
(key) => {
  const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  window.__taps = [];
  if (gd.__xattnWatched) return;
  gd.__xattnWatched = true;
  gd.on('plotly_click', () => window.__taps.push('click'));
  gd.on('plotly_selected', (e) => window.__taps.push(
      e && e.points && e.points.length ? e.points.map((p) => p.customdata) : null));
}
"""


@pytest.fixture
def phone(window):
    """A tab on a touch phone (390 x 844): taps are touch events, and no mouse moves."""
    return window(390, 844, phone=True)


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


def test_one_tap_on_a_phone_steps_through_the_tapped_cell(phone):
    """One tap picks the cell (Plotly used to select the point of the previous hover, and a
    finger gives none: the first tap only showed the label, the next picked the cell tapped
    before it). Two cells in a row: the second tap must pick the second cell, not the first."""
    page = phone.page
    query = urllib.parse.urlencode({"view": "Step through", "step_head": "2"})
    page.goto(f"{phone.server.url}?{query}")
    wait_for_app(page, "traces && traces.length >= 2", key="step_pick")
    assert page.evaluate("matchMedia('(pointer: coarse)').matches")        # a touch screen
    r = run(Settings())
    trace = r.module().trace(r.decoder_state, r.encoder_output, r.mask)
    for row, col in [(4, 2), (7, 0)]:
        page.locator(".st-key-step_pick").scroll_into_view_if_needed()
        page.evaluate(WATCH_TAPS_JS, "step_pick")
        x, y = page.evaluate(CELL_CENTRE_JS, ["step_pick", row, col])
        page.touchscreen.tap(x, y)
        page.wait_for_function("window.__taps.includes('click')")          # the tap arrived
        assert [row, col] in [p for t in page.evaluate("window.__taps") if isinstance(t, list)
                              for p in t], \
            f"one tap on cell {(row, col)} did not select it: {page.evaluate('window.__taps')}"

        tgt, src = f"{row}: {r.tgt_tokens[row]}", f"{col}: {r.src_tokens[col]}"
        wait_for_app(page, f"new URLSearchParams(location.search).get('step_tgt') === {tgt!r}"
                     " && document.querySelector('.st-key-step_pick .js-plotly-plot').layout"
                     f".shapes[0].y0 === {row - 0.5}", after_runs=-1, key="step_pick")
        assert phone.query()["step_tgt"] == [tgt] and phone.query()["step_src"] == [src]
        assert page.locator(".st-key-step_tgt input").input_value() == tgt   # the pickers
        assert page.locator(".st-key-step_src input").input_value() == src
        np.testing.assert_allclose(bar_heights(page), trace.weights[1, row], rtol=1e-6)
        shapes = page.evaluate(
            "document.querySelector('.st-key-step_pick .js-plotly-plot').layout.shapes")
        assert (shapes[1]["x0"], shapes[1]["x1"]) == (col - 0.5, col + 0.5)  # cell outlined
    phone.assert_clean()
