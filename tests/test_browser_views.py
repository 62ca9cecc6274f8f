"""Decode, Alignment and Training in a real browser, on their default weights, at the sizes of a
classroom: a 1440x900 desktop, a 1024x768 projector in presenter mode and a 390x844 phone.

Each page must finish without an exception, draw its charts (the main chart's plot area is
coloured on screen: viridis has no greys, and a figure whose JSON is right can still show a
white box) and, on the phone, keep every text on the screen.
"""

from __future__ import annotations

import urllib.parse

import pytest

from devtools.browser import ARTIFACTS, CUT_TEXT_JS, Page, coloured_share, wait_for_app

pytestmark = pytest.mark.browser

FIRST_LOAD_MS = 300_000   # a cold server loads the model or trains the toy weights first

# view: (its link, its main chart, every chart it draws)
VIEWS = {
    "Decode": ({"weights": "model", "view": "Decode"}, "decode_rows",
               ("decode_rows", "decode_top", "decode_so_far")),
    "Alignment": ({"weights": "model", "view": "Alignment"}, "aer_chart", ("aer_chart",)),
    "Training": ({"weights": "trained", "view": "Training"}, "head_1",
                 ("head_1", "tl_run", "tl_heads")),
}
# size: (width, height, extra link parameters, a phone)
SIZES = {
    "1440x900": (1440, 900, {}, False),
    "1024x768-present": (1024, 768, {"present": "1"}, False),
    "390x844-phone": (390, 844, {}, True),
}


# Every text Plotly drew in the main column's charts that leaves its chart (an SVG clips it
# there) or the screen.
CHART_TEXT_OFF_JS = """
() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].flatMap((gd) => {
  const c = gd.getBoundingClientRect();
  const right = Math.min(c.right, window.innerWidth), left = Math.max(c.left, 0);
  return [...gd.querySelectorAll('svg text')]
    .filter((t) => t.textContent.trim())
    .filter((t) => { const r = t.getBoundingClientRect();
                     return r.width > 0 && (r.right > right + 1 || r.left < left - 1); })
    .map((t) => t.textContent.slice(0, 60));
})
"""

# In the main column's charts: a legend over an axis title, or an axis title (the second y
# axis's too) not wholly inside its chart.
CHART_TITLES_HIDDEN_JS = """
() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].flatMap((gd) => {
  const keyed = gd.closest('[class*="st-key-"]');
  const key = keyed ? [...keyed.classList].find((c) => c.startsWith('st-key-')) : 'a chart';
  const c = gd.getBoundingClientRect();
  const meet = (a, b) => a.left < b.right - 1 && b.left < a.right - 1 && a.top < b.bottom - 1
                         && b.top < a.bottom - 1;
  const titles = [...gd.querySelectorAll('.xtitle, .ytitle, .y2title')]
    .filter((t) => t.textContent.trim() && t.getBoundingClientRect().width > 0);
  const out = titles.filter((t) => { const r = t.getBoundingClientRect();
    return r.left < c.left - 1 || r.right > c.right + 1 || r.top < c.top - 1
           || r.bottom > c.bottom + 1; })
    .map((t) => `${key}: '${t.textContent}' leaves the chart`);
  const legends = [...gd.querySelectorAll('.legend')].filter((l) =>
    l.getBoundingClientRect().width > 0);
  const covered = legends.flatMap((l) => titles.filter((t) =>
      meet(l.getBoundingClientRect(), t.getBoundingClientRect()))
    .map((t) => `${key}: the legend covers '${t.textContent}'`));
  return [...out, ...covered];
})
"""


def url(tab: Page, query: dict) -> str:
    return tab.server.url + "?" + urllib.parse.urlencode(query)


def drawn(keys) -> str:
    """JS: Plotly has drawn every chart of ``keys`` (its SVG is in the page)."""
    return " && ".join(f"!!document.querySelector('.st-key-{k} .js-plotly-plot .main-svg')"
                       for k in keys)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("view", list(VIEWS))
def test_the_view_draws_its_charts_at_a_classroom_size(window, view, size):
    query, main, keys = VIEWS[view]
    width, height, extra, phone = SIZES[size]
    tab = window(width, height, phone)
    page = tab.page
    page.goto(url(tab, query | extra))
    wait_for_app(page, drawn(keys), timeout=FIRST_LOAD_MS)
    tab.assert_clean()                                        # no stException, no JS errors
    assert page.get_by_role("tab", name=view, selected=True).count() == 1

    # The main chart's plot area on screen: mostly coloured, not a white or grey box.
    chart = page.locator(f".st-key-{main} .js-plotly-plot")
    chart.scroll_into_view_if_needed()
    area = chart.locator("rect.nsewdrag").first
    png = area.screenshot()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"views-{view}-{size}.png").write_bytes(png)
    share = coloured_share(png)
    assert share > 0.8, f"{view} at {size}: only {share:.0%} of {main}'s plot area is coloured"
    for key in keys:                                          # every chart has a size
        box = page.locator(f".st-key-{key} .js-plotly-plot").bounding_box()
        assert box and box["width"] > 100 and box["height"] > 100, (key, box)
        assert box["x"] >= -1 and box["x"] + box["width"] <= width + 1, (key, box)
    assert page.evaluate(CHART_TITLES_HIDDEN_JS) == [], f"{view} at {size}: a title is hidden"

    if phone:
        page.screenshot(path=str(ARTIFACTS / f"views-{view}-{size}-screen.png"))
        assert page.evaluate(CUT_TEXT_JS) == [], f"{view}: text leaves the phone's screen"
        assert page.evaluate("document.documentElement.scrollWidth") <= width


@pytest.mark.parametrize("view", list(VIEWS))
def test_on_a_phone_no_chart_text_leaves_its_chart(window, view):
    query, _, keys = VIEWS[view]
    width, height, _, phone = SIZES["390x844-phone"]
    tab = window(width, height, phone)
    tab.page.goto(url(tab, query))
    wait_for_app(tab.page, drawn(keys), timeout=FIRST_LOAD_MS)
    tab.assert_clean()
    assert tab.page.evaluate(CHART_TEXT_OFF_JS) == [], f"{view}: chart text is cut"
    # Training's line charts: legends below the plot, clear of the x axis titles; the loss
    # chart's right axis title ("words aligned") whole.
    assert tab.page.evaluate(CHART_TITLES_HIDDEN_JS) == [], f"{view}: a chart title is hidden"


# The main column's charts, top to bottom: where each starts and ends, and its smallest text.
CHARTS_JS = """
() => [...document.querySelectorAll('[data-testid="stMain"] .js-plotly-plot')].map((gd) => {
  const r = gd.getBoundingClientRect();
  const keyed = gd.closest('[class*="st-key-"]');
  const sizes = [...gd.querySelectorAll('svg text')]
    .filter((t) => t.textContent.trim() && t.getBoundingClientRect().width > 0)
    .map((t) => parseFloat(getComputedStyle(t).fontSize));
  return {key: keyed ? [...keyed.classList].find((c) => c.startsWith('st-key-')) : '',
          top: r.top, bottom: r.bottom, smallest: Math.min(...sizes)};
}).sort((a, b) => a.top - b.top)
"""


@pytest.mark.parametrize("view", list(VIEWS))
def test_presenter_mode_shows_the_first_chart_on_the_first_screen(window, view):
    """A 1024x768 projector, presenter mode: the view's first chart begins on the first screen
    with room to read it (200 px of it, or all of it), and no chart text is under 14 px."""
    query, _, keys = VIEWS[view]
    tab = window(1024, 768, False)
    tab.page.goto(url(tab, query | {"present": "1"}))
    wait_for_app(tab.page, drawn(keys), timeout=FIRST_LOAD_MS)
    tab.assert_clean()
    charts = tab.page.evaluate(CHARTS_JS)
    first = charts[0]
    room = min(200, first["bottom"] - first["top"])
    assert 0 <= first["top"] <= 768 - room, f"{view}: the first chart starts at {first}"
    small = [(c["key"], c["smallest"]) for c in charts if c["smallest"] < 14]
    assert not small, f"{view}: chart text under 14 px in presenter mode: {small}"
