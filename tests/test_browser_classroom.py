"""In a real browser, at the sizes of a classroom: every lesson step from its link, presenter
mode on a 1024x768 projector, a 390x844 phone, and 40-token sentences on the picture's own
colour scale. Sizes and overlaps are read from the drawn page (bounding boxes), not assumed."""

from __future__ import annotations

import numpy as np
import pytest

from devtools.browser import CUT_TEXT_JS, HEADS_DRAWN_JS, decode_z, heatmaps
from xattn.lesson import STEPS
from xattn.pipeline import Settings, run

pytestmark = pytest.mark.browser

# Boxes of every text Plotly drew in the head charts, with the box of the chart around them.
CHART_TEXT_JS = """
() => [...document.querySelectorAll('[class*="st-key-head_"] .js-plotly-plot')].map((gd) => {
  const box = (e) => { const r = e.getBoundingClientRect();
                       return [r.left, r.top, r.right, r.bottom]; };
  return {
    chart: box(gd),
    title: box(gd.querySelector('.gtitle')),
    texts: [...gd.querySelectorAll('svg text')]
      .filter((t) => t.textContent.trim() && t.getBoundingClientRect().width > 0)
      .map((t) => ({text: t.textContent, box: box(t)})),
  };
})
"""


def overlap(a: list[float], b: list[float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def inside(inner: list[float], outer: list[float], slack: float = 1.0) -> bool:
    return (inner[0] >= outer[0] - slack and inner[1] >= outer[1] - slack
            and inner[2] <= outer[2] + slack and inner[3] <= outer[3] + slack)


@pytest.fixture
def sized(window):
    """A tab of the app in a window of the size the test asks for (from conftest's pool)."""
    return window


@pytest.mark.parametrize("n", range(1, len(STEPS) + 1))
def test_every_lesson_step_loads_from_its_link_with_its_question(app, n):
    step = STEPS[n - 1]
    app.open({"view": "Lesson", "lesson": str(n)}, "true")
    page = app.page
    heading = page.get_by_role("heading", name=f"Step {n} of {len(STEPS)}: {step.title}")
    assert heading.is_visible()
    assert page.get_by_text("Question for the class:").is_visible()
    expander = page.locator('[data-testid="stExpander"]', has_text="Show the answer")
    expander.get_by_text("Show the answer").click()
    answer = expander.locator('[data-testid="stExpanderDetails"]')
    answer.wait_for(state="visible")
    assert answer.inner_text().strip()                          # computed, shown
    assert page.locator('[data-testid="stMain"] .js-plotly-plot').count() > 0  # its view
    app.assert_clean()


def test_presenter_mode_shows_the_heatmaps_and_every_tab_on_a_projector(sized):
    app = sized(1024, 768)
    app.open({"present": "1"}, f"traces && traces.length && {HEADS_DRAWN_JS} > 0")
    page = app.page
    assert page.locator('[data-testid="stSidebar"][aria-expanded="true"]').count() == 0
    first = page.locator(".st-key-head_1 .js-plotly-plot").bounding_box()
    assert 0 < first["y"] < 768, f"first heatmap starts at y={first['y']:.0f}, below the fold"
    tabs = page.get_by_role("tab")
    assert tabs.count() >= 9
    for i in range(tabs.count()):
        box = tabs.nth(i).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 1024, tabs.nth(i).inner_text()
        assert box["y"] + box["height"] <= 768, tabs.nth(i).inner_text()
    # the text is larger than the classroom page's
    big = page.evaluate("parseFloat(getComputedStyle(document.documentElement).fontSize)")
    normal = sized(1024, 768)
    normal.open({}, "traces && traces.length")
    small = normal.page.evaluate(
        "parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert big > small
    app.assert_clean()


def test_presenter_mode_body_text_is_19_px(sized):
    """Paragraphs, a control's label (the prediction's question) and an expander's title."""
    app = sized(1024, 768)
    app.open({"present": "1", "view": "Lesson", "lesson": "2"}, "true")
    sizes = app.page.evaluate("""() => {
      const size = (e) => e && parseFloat(getComputedStyle(e).fontSize);
      const main = document.querySelector('[data-testid="stMain"]');
      const para = [...main.querySelectorAll('[data-testid="stMarkdownContainer"] p')]
        .find((p) => p.textContent.startsWith('Question for the class'));
      return {paragraph: size(para),
              label: size(main.querySelector('[data-testid="stWidgetLabel"] p')),
              expander: size(main.querySelector('[data-testid="stExpander"] summary p'))};
    }""")
    assert sizes == {"paragraph": 19, "label": 19, "expander": 19}, sizes
    app.assert_clean()


# Scrolled to a lesson step's heading: where its question, its prediction and its first chart
# end up (px from the top of the window).
STEP_SCREEN_JS = """
() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const heading = [...main.querySelectorAll('h2')].find((e) => e.textContent.startsWith('Step '));
  heading.scrollIntoView({block: 'start'});
  const question = [...main.querySelectorAll('p')]
    .find((p) => p.textContent.startsWith('Question for the class'));
  const charts = [...main.querySelectorAll('.js-plotly-plot')]
    .map((c) => c.getBoundingClientRect()).sort((a, b) => a.top - b.top);
  return {heading: heading.getBoundingClientRect().top,
          question: question.getBoundingClientRect().bottom,
          predict: document.querySelector('.st-key-predict').getBoundingClientRect().bottom,
          chart: charts[0].top, chart_end: charts[0].bottom};
}
"""


@pytest.mark.parametrize("n", range(1, len(STEPS) + 1))
@pytest.mark.parametrize("size", ["1440x900", "1024x768 presenter"])
def test_a_lesson_steps_question_prediction_and_chart_share_one_screen(sized, n, size):
    width, height = (1440, 900) if size == "1440x900" else (1024, 768)
    app = sized(width, height)
    query = {"view": "Lesson", "lesson": str(n)} | ({"present": "1"} if width == 1024 else {})
    app.open(query, "!!document.querySelector('[data-testid=\"stMain\"] .js-plotly-plot')"
                    " && !!document.querySelector('.st-key-predict')")
    box = app.page.evaluate(STEP_SCREEN_JS)
    assert box["heading"] >= -1, box           # scrolled to the step (or to the page's end)
    assert box["question"] <= height and box["predict"] <= height, box
    # the chart beside them: begun on the same screen, with room to read it (or all of it)
    assert box["chart"] <= height - min(200, box["chart_end"] - box["chart"]), box
    app.assert_clean()


@pytest.mark.parametrize("query", [{}, {"heads": "8"}, {"view": "Lesson", "lesson": "5"}])
def test_on_a_phone_head_titles_stay_apart_and_no_text_is_cut(sized, query):
    app = sized(390, 844)
    app.open(query, f"traces && traces.length && {HEADS_DRAWN_JS} > 0")
    page = app.page
    charts = page.evaluate(CHART_TEXT_JS)
    assert len(charts) >= 1
    titles = [c["title"] for c in charts]
    for i, a in enumerate(titles):
        for b in titles[i + 1:]:
            assert not overlap(a, b), f"head titles overlap: {a} {b}"
    for c in charts:
        assert c["chart"][2] <= 390 + 1, f"a chart is wider than the phone: {c['chart']}"
        for t in c["texts"]:
            assert inside(t["box"], c["chart"]), f"{t['text']!r} cut off the chart"
    # the chart toolbar, once shown (on hover), covers no title
    page.locator(".st-key-head_1 .js-plotly-plot").hover()
    bar = page.locator(".st-key-head_1 .modebar-container")
    if bar.count() and bar.bounding_box():
        box = bar.bounding_box()
        rect = [box["x"], box["y"], box["x"] + box["width"], box["y"] + box["height"]]
        assert not overlap(rect, titles[0]), "the chart toolbar covers the head title"
    assert page.evaluate(CUT_TEXT_JS) == []
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    app.assert_clean()


def test_forty_tokens_on_the_pictures_own_scale_span_the_weights(app):
    sentence = " ".join(f"w{i}" for i in range(40))
    app.open({"src": sentence, "tgt": sentence, "heads": "16", "d_model": "64",
              "scale": "max"}, "traces && traces.length")
    weights = run(Settings(src=sentence, tgt=sentence, d_model=64, n_heads=16)).weights
    shown = app.traces()
    drawn = [int(t["name"].split()[-1]) - 1 for t in heatmaps(shown)]
    assert 0 < len(drawn) < 16                                  # a page of heads
    for h, t in zip(drawn, heatmaps(shown), strict=True):
        np.testing.assert_allclose(decode_z(t["z"]), weights[h], rtol=1e-6, atol=1e-7)
    cmax = app.page.evaluate(
        "document.querySelector('.st-key-head_1 .js-plotly-plot')._fullLayout.coloraxis.cmax")
    assert cmax == pytest.approx(float(weights.max()), rel=1e-6)
    assert cmax < 1.0                                           # not the fixed 0..1 scale
    app.assert_clean()
