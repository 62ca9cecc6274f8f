"""Lesson steps 12 and 13 on a 390x844 touch phone: each head's job picked with one thumb (a
tap picks, a second tap takes it back), the word whose masking matters tapped, the answers'
charts inside the screen and no text cut. (Every step at 1440x900 and in presenter mode is in
tests/test_browser_classroom.py.)"""

from __future__ import annotations

import pytest
from test_browser_views import CHART_TEXT_OFF_JS

from devtools.browser import CUT_TEXT_JS, Page, wait_for_app

pytestmark = pytest.mark.browser

PHONE = dict(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
DRAWN = "!!document.querySelector('[data-testid=\"stMain\"] .js-plotly-plot .main-svg')"
FIRST_LOAD_MS = 300_000   # a cold server loads the model and scores its held-out sentences


def open_step(tab: Page, n: int) -> None:
    tab.page.goto(f"{tab.server.url}?view=Lesson&lesson={n}")
    wait_for_app(tab.page, DRAWN, timeout=FIRST_LOAD_MS)


@pytest.fixture
def phone(browser, server):
    context = browser.new_context(**PHONE)
    yield Page(context, server)
    context.close()


def pill(tab: Page, key: str, label: str):
    return tab.page.locator(f".st-key-{key}").get_by_role("radio", name=label, exact=True)


def checked(key: str, label: str, on: bool = True) -> str:
    """JS: the pill ``label`` of ``key`` is (or is not) chosen on the screen. The browser
    lights it at once, so this says the tap was taken, not that its run ended: what the run
    draws is awaited by `answer_says` (a quick run may never show a running state)."""
    return (f"[...document.querySelectorAll('.st-key-{key} [role=radio]')].some((b) => "
            f"b.innerText.trim() === {label!r} && b.getAttribute('aria-checked') === "
            f"{'true' if on else 'false'!r})")


def answer_says(tab: Page, text: str, start: bool = False) -> str:
    """Wait until the open answer's text holds ``text`` (or starts with it): a tap's pill is
    lit at once in the browser, its run's verdict comes with the run; the text then."""
    test = "startsWith" if start else "includes"
    tab.page.wait_for_function(
        "([t, how]) => [...document.querySelectorAll('[data-testid=\"stExpanderDetails\"]')]"
        ".some((d) => d.innerText[how](t))", arg=[text, test], polling=100)
    return tab.page.locator('[data-testid="stExpanderDetails"]', has_text=text).inner_text()


def open_answer(tab: Page):
    box = tab.page.locator('[data-testid="stExpander"]', has_text="Show the answer")
    box.get_by_text("Show the answer").tap()
    details = box.locator('[data-testid="stExpanderDetails"]')
    details.wait_for(state="visible")
    return details


def assert_fits(tab: Page) -> None:
    page = tab.page
    assert page.evaluate(CUT_TEXT_JS) == [], "text leaves the phone's screen"
    assert page.evaluate(CHART_TEXT_OFF_JS) == [], "chart text leaves its chart"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_label_heads_by_touch_on_a_phone(phone):
    open_step(phone, 12)
    for k in range(4):                                       # one row of four pills a head
        row = phone.page.locator(f".st-key-predict_part_{k} button")
        assert row.count() == 4
        tops = {round(row.nth(i).bounding_box()["y"]) for i in range(4)}
        assert len(tops) == 1, f"head {k + 1}'s choices wrap onto {len(tops)} lines"
    sink = pill(phone, "predict_part_3", "sink")
    phone.act(lambda: sink.tap(), checked("predict_part_3", "sink"), "tap sink")
    assert sink.get_attribute("aria-checked") == "true"
    spread = pill(phone, "predict_part_0", "spread")
    phone.act(lambda: spread.tap(), checked("predict_part_0", "spread"), "tap spread")
    phone.act(lambda: spread.tap(), checked("predict_part_0", "spread", on=False),
              "tap it again")                                # taken back
    assert spread.get_attribute("aria-checked") == "false"
    open_answer(phone)
    answer_says(phone, "1 of 1 right")                       # head 4 of layer 2: a sink
    assert_fits(phone)
    phone.assert_clean()


def test_tap_the_word_that_matters_and_read_both_charts_on_a_phone(phone):
    open_step(phone, 13)
    cat = pill(phone, "predict", "cat")
    phone.act(lambda: cat.tap(), checked("predict", "cat"), "tap cat")
    open_answer(phone)
    text = answer_says(phone, "Right: cat.", start=True)
    assert "They disagree" in text
    for k in range(2):
        chart = phone.page.locator(f".st-key-lesson_answer_chart_{k} .js-plotly-plot")
        chart.wait_for(state="visible")
        box = chart.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["height"] > 200
    assert_fits(phone)
    phone.assert_clean()


def test_the_alignment_step_fits_a_phone(phone):
    """Step 10 draws the Alignment view in the lesson's column: its controls' labels too."""
    open_step(phone, 10)
    assert_fits(phone)
    phone.assert_clean()
