"""End to end: `streamlit run app.py` driven by headless Chromium through the page's own controls.

One server for the whole module, one browser, a fresh browser context (cookies, storage) per
test. Every wait is on Streamlit's "script finished" state plus a condition on the drawn chart,
never a fixed sleep. A failing test leaves a screenshot and the page's HTML in test-artifacts/.

Skipped, with the reason printed, where Chromium or playwright is missing; failed instead when
XATTN_REQUIRE_BROWSER=1 (set by .ci/run), so CI cannot silently skip them.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from devtools.browser import (
    NOTICES,
    Page,
    heatmaps,
    tick_texts,
)
from xattn.figures._style import TICK_CHARS, axis_labels
from xattn.pipeline import Settings, run

pytestmark = pytest.mark.browser


def test_chromium_starts_and_renders_a_page(browser):
    """The browser every test here uses: fails in CI (XATTN_REQUIRE_BROWSER=1) and skips
    elsewhere when Chromium is missing (the fixture decides)."""
    page = browser.new_page()
    page.set_content("<p id='x'>cross-attention</p>")
    assert page.inner_text("#x") == "cross-attention"
    assert browser.version.split(".")[0].isdigit()
    page.close()


def heads_are(n: int) -> str:
    return f"traces && traces.filter((t) => t.type === 'heatmap').length === {n}"


def assert_equal_to_library(zs: list[np.ndarray], settings: Settings) -> None:
    expected = run(settings).weights
    assert len(zs) == settings.n_heads
    for h, z in enumerate(zs):
        np.testing.assert_allclose(z, expected[h], rtol=1e-6, atol=1e-7)


# --- tests -----------------------------------------------------------------------------------

def test_default_page_draws_one_heatmap_per_head_without_errors(app):
    app.open()
    traces = app.traces()
    assert [t["name"] for t in heatmaps(traces)] == ["head 1", "head 2", "head 3", "head 4"]
    assert [t["type"] for t in traces] == ["heatmap"] * 4          # nothing masked: no crosses
    assert_equal_to_library(app.zs(), Settings())
    drawn = app.page.locator('[class*="st-key-head_"] g.hm image').count()
    assert drawn == 4, f"{drawn} heatmap images drawn in the SVG"
    assert tick_texts(app.page, "x") == ["the", "black", "cat", "sat", "on", "the", "mat"]
    assert tick_texts(app.page, "y")[:3] == ["le", "chat", "noir"]
    app.assert_clean()


def test_controls_change_the_drawing_and_the_url_reproduces_it_in_a_fresh_page(app):
    app.open()
    default = app.zs()

    # heads: the select_slider is a slider; the keyboard moves it one option (4 -> 8)
    thumb = app.page.locator(".st-key-heads input[type=range]")
    app.act(lambda: thumb.press("ArrowRight"), heads_are(8), "heads")
    assert app.query().get("heads") == ["8"]
    assert_equal_to_library(app.zs(), Settings(n_heads=8))

    # mask: the "padding" radio, then source token "6: mat" in the multiselect
    app.act(lambda: app.page.locator(".st-key-mask").get_by_text("padding", exact=True).click(),
            "!!document.querySelector('.st-key-pad input')", "mask radio")
    assert len(app.zs()) == 8

    def mask_mat():
        app.page.locator(".st-key-pad input").click()
        app.page.keyboard.type("6: mat")
        app.page.keyboard.press("Enter")
    app.act(mask_mat, heads_are(8) + " && traces.some((t) => t.type === 'scatter')", "pad")
    zs = app.zs()
    for z in zs:
        assert np.all(z[:, 6] == 0), "the masked column is not 0"
        assert np.all(z[:, :6] > 0)
        np.testing.assert_allclose(z.sum(axis=1), 1, atol=1e-5)
    assert_equal_to_library(zs, Settings(n_heads=8, mask_mode="padding", padded=(6,)))
    marks = [t for t in app.traces() if t["type"] == "scatter"]
    assert len(marks) == 8 and all(set(m["x"]) == {"6: mat"} for m in marks)
    assert not np.array_equal(zs[0], default[0])

    # the URL follows the controls ...
    url = app.page.url
    assert app.query() == {"heads": ["8"], "mask": ["padding"], "pad": ["6: mat"]}, url
    app.assert_clean()

    # ... and reproduces the same figures exactly in a fresh page (a new tab: a new session
    # whose only input is the URL; same browser context, so a failure screenshots it too)
    other = Page(app.page.context, app.server)
    other.open(url=url, condition=heads_are(8))
    assert other.traces() == app.traces()                        # names, x, y, z: all equal
    assert [z.tolist() for z in other.zs()] == [z.tolist() for z in zs]
    assert other.page.locator(NOTICES).count() == 0   # no URL notices
    other.assert_clean()
    app.timings += [(f"fresh {label}", took) for label, took in other.timings]


def cut_tick(token: str) -> str:
    return token if len(token) <= TICK_CHARS else token[: TICK_CHARS - 1] + "…"


XSS = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"
EMOJI = "\N{CAT FACE}"


@pytest.mark.parametrize("typed,query,src_ticks,tgt_ticks", [
    # words tokenizer, typed into the text inputs: tags are kept whole, <script> and </script>
    # are separate tokens around "alert ( 1 )"
    ({"src": f"{XSS} <s> the cat {EMOJI} the </s>", "tgt": f"{SCRIPT} le chat"}, {},
     [XSS, "<s>", "the", "cat", EMOJI, "the", "</s>"],
     ["<script>", "alert", "(", "1", ")", "</script>", "le", "chat"]),
    # whitespace tokenizer, from the URL: the whole <script>...</script> is one token
    ({}, {"tok": "whitespace", "src": f"<s> the {EMOJI} the </s>", "tgt": f"{SCRIPT} le le"},
     ["<s>", "the", EMOJI, "the", "</s>"], [SCRIPT, "le", "le"]),
], ids=["words-typed", "whitespace-url"])
def test_html_like_tokens_emoji_and_repeated_words_are_shown_literally(app, typed, query,
                                                                       src_ticks, tgt_ticks):
    categories = {"x": axis_labels(src_ticks)[0], "y": axis_labels(tgt_ticks)[0]}
    app.open(query)
    for key, text in typed.items():
        field = app.page.locator(f".st-key-{key} input")
        axis = "x" if key == "src" else "y"

        def type_it(field=field, text=text):
            field.fill(text)
            field.press("Enter")
        wanted = json.dumps(categories[axis], ensure_ascii=False, separators=(",", ":"))
        app.act(type_it, f"traces && JSON.stringify(traces[0].{axis}) === {json.dumps(wanted)}",
                key)
    first = heatmaps(app.traces())[0]
    assert first["x"] == categories["x"] and first["y"] == categories["y"]   # escaped, unique
    # what the student sees: the SVG tick labels hold the literal tokens, each in its own place
    # (a token longer than a tick label is cut; the hover shows it whole)
    assert tick_texts(app.page, "x") == [cut_tick(t) for t in src_ticks]
    assert tick_texts(app.page, "y") == [cut_tick(t) for t in tgt_ticks]
    # nothing was interpreted as markup: no injected element, no alert
    injected = app.page.evaluate(
        "document.querySelectorAll('img[src=\"x\"], .js-plotly-plot script').length")
    assert injected == 0
    app.assert_clean()


def test_a_choice_another_control_makes_invalid_is_kept_and_comes_back(app):
    app.open({"heads": "16"}, heads_are(16))
    d_model = app.page.locator(".st-key-d_model input[type=range]")
    app.act(lambda: d_model.press("ArrowLeft"), heads_are(12), "d_model 24")  # 16 ∤ 24: nearest
    assert app.query()["heads"] == ["12"] and app.query()["d_model"] == ["24"], app.page.url
    notice = app.page.locator(NOTICES).all_inner_texts()
    assert len(notice) == 1 and "16" in notice[0] and "showing 12 until it is" in notice[0]
    app.act(lambda: d_model.press("ArrowRight"), heads_are(16), "d_model 32")  # 16 is back
    assert app.query().get("heads") == ["16"], app.page.url
    assert app.page.locator(NOTICES).count() == 0
