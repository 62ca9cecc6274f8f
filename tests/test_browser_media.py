"""In Chromium at 1440×900: a speech model's page (the heatmaps over time, the play control,
the spectrogram) and an image model's page (the overlays), drawn inside the window, with a
screenshot of each kept in test-artifacts/."""

from __future__ import annotations

import pytest

from devtools.browser import ARTIFACTS, Page, StreamlitServer, chart, coloured_share

pytestmark = pytest.mark.browser

WIDE_JS = "document.documentElement.scrollWidth"


@pytest.fixture(scope="module")
def media_server(whisper_dir, vision_dir):
    with StreamlitServer(log=ARTIFACTS / "browser-media-server.log",
                         env={"XATTN_MODELS": f"{whisper_dir},{vision_dir}"}) as srv:
        yield srv


def _element_box(page, selector: str) -> dict:
    return page.page.locator(selector).first.bounding_box()


def test_audio_and_image_pages_at_1440_px(chromium, media_server, whisper_dir, vision_dir):
    context = chromium.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = Page(context, media_server)
        page.open({"weights": "model", "model": whisper_dir},
                  "traces && traces.length && !!document.querySelector("
                  "'.st-key-spectrogram .js-plotly-plot') && !!document.querySelector('audio')")
        spectrogram = chart(page.page, "spectrogram")
        assert [t["type"] for t in spectrogram] == ["heatmap", "scatter"]
        assert page.page.evaluate(WIDE_JS) <= 1440           # nothing wider than the window
        for selector in (".st-key-spectrogram .js-plotly-plot", "audio"):
            box = _element_box(page, selector)
            assert box["width"] > 200 and box["x"] + box["width"] <= 1440, (selector, box)
        shot = page.page.screenshot(full_page=True)
        (ARTIFACTS / "media-audio-1440.png").write_bytes(shot)
        assert coloured_share(shot) > 0.02                   # the heatmaps are drawn
        page.assert_clean()

        page.open({"weights": "model", "model": vision_dir},
                  "traces && traces.length && !!document.querySelector("
                  "'.st-key-overlays .js-plotly-plot image')")
        overlays = chart(page.page, "overlays")               # one picture, its words the chart's
        assert [t["type"] for t in overlays] == ["image"]
        img = page.page.locator(".st-key-overlays .js-plotly-plot").first
        img.scroll_into_view_if_needed()
        assert page.page.locator(".st-key-overlays .xtick text").first.text_content() == "head 1"
        box = img.bounding_box()
        assert box["width"] > 300 and box["x"] + box["width"] <= 1440
        assert page.page.evaluate(WIDE_JS) <= 1440
        shot = page.page.screenshot(full_page=True)
        (ARTIFACTS / "media-image-1440.png").write_bytes(shot)
        page.assert_clean()
    finally:
        context.close()
