"""What the student sees of the layers x heads overview: coloured thumbnails, not a white box.

Its figure's JSON was right while the screen was blank (the click-catching subplot painted a
white plot background over every thumbnail), so these tests look at pixels: a screenshot of
the overview must be largely coloured (viridis has no greys), for a file and a model.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from devtools.browser import ARTIFACTS, Page, StreamlitServer, coloured_share
from xattn.attention import masked_softmax
from xattn.attnfile import save_attention
from xattn.figures.overview import PANEL_PX

pytestmark = pytest.mark.browser

OVERVIEW = ".st-key-overview_pick .js-plotly-plot"
DRAWN = f"!!document.querySelector('{OVERVIEW} .heatmaplayer image, {OVERVIEW} .hm image')"


def assert_thumbnails_drawn(page, n_layers: int, n_heads: int, name: str) -> None:
    box = page.locator(OVERVIEW)
    box.scroll_into_view_if_needed()
    png = box.screenshot()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / f"overview-{name}.png").write_bytes(png)
    size = box.bounding_box()
    panels = n_layers * n_heads * PANEL_PX ** 2 / (size["width"] * size["height"])
    share = coloured_share(png)
    # The thumbnails cover `panels` of the box; nearly all of it must be coloured.
    assert share > 0.8 * panels, (name, share, panels)


def test_the_overview_of_a_file_is_coloured_on_screen(app, tmp_path):
    w = masked_softmax(np.random.default_rng(3).standard_normal((3, 2, 4, 5)) * 2)
    path = tmp_path / "three-layers.npz"
    save_attention(path, w.astype(np.float32), ["a", "b", "c", "d", "e"], ["w", "x", "y", "z"])
    app.open({"weights": "file"}, "true")
    upload = app.page.locator(".st-key-upload input[type=file]")
    app.act(lambda: upload.set_input_files(str(path)), DRAWN, "upload")
    assert_thumbnails_drawn(app.page, 3, 2, "file")
    app.assert_clean()


@pytest.fixture(scope="module")
def model_server(tiny_dir, server):
    """The app with the tiny model as its one allowed model (its own server process)."""
    from xattn.torch_models import MODELS_ENV

    before = os.environ.get(MODELS_ENV)
    os.environ[MODELS_ENV] = tiny_dir
    try:
        srv = StreamlitServer(log=ARTIFACTS / "browser-overview-model-server.log").start()
    finally:
        if before is None:
            os.environ.pop(MODELS_ENV)
        else:
            os.environ[MODELS_ENV] = before
    yield srv
    srv.stop()


def test_the_overview_of_a_model_is_coloured_on_screen(browser, model_server):
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    try:
        page = Page(context, model_server)
        page.open({"weights": "model"}, DRAWN)
        assert_thumbnails_drawn(page.page, 2, 4, "model")
        page.assert_clean()
    finally:
        context.close()
