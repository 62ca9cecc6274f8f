"""A class on an image and a clip in Chromium (the example lesson
docs/examples/image-and-clip.toml on the tiny folders). "Tap where the model reads the third
letter": three touch phones tap patches of the image on their light page (the grid over the
image, controls.js), each receipt names its patch, the lecturer's page draws the taps'
heatmap over the image, and after the reveal it draws the model's attention beside them and
each phone shows its verdict and the chart with the model's peak outlined. Then, two steps
on, "tap when the model hears the word": the same phones tap moments of the clip's time strip
(bins over its spectrogram, each read out in seconds), the lecturer's page draws the taps'
strip, and after the reveal the head's attention over the same time bins above it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from devtools.browser import ARTIFACTS, Host, Phone, StreamlitServer, chart, decode_z

EXAMPLE = Path(__file__).parents[1] / "docs" / "examples" / "image-and-clip.toml"
DEADLINE_MS = 120_000          # a loaded 2-core machine: generous, never a speed limit


@pytest.fixture(scope="module")
def media_class(whisper_dir, vision_dir, tmp_path_factory):
    """A server with the two tiny folders on its list and the example lesson as ``media``."""
    folder = tmp_path_factory.mktemp("media-class")
    lessons = folder / "lessons"
    lessons.mkdir()
    (lessons / "media.toml").write_text(EXAMPLE.read_text().replace(
        '"toy-reader"', json.dumps(vision_dir)).replace('"toy-digits"', json.dumps(whisper_dir)))
    store = folder / "classes.sqlite3"
    env = {"XATTN_MODELS": f"{whisper_dir},{vision_dir}", "XATTN_LESSONS": str(lessons),
           "XATTN_CLASS_STORE": str(store), "XATTN_REDIS_URL": "", "XATTN_PUBLIC_URL": ""}
    with StreamlitServer(log=ARTIFACTS / "browser-media-class-server.log", env=env) as server:
        yield server, store


def test_three_phones_tap_where_the_model_reads_a_letter_then_when_it_hears_a_word(
        chromium, media_class):
    from xattn.classroom import SQLiteStore

    server, path = media_class
    store = SQLiteStore(path)
    host = Host(chromium, server.url, timeout_ms=DEADLINE_MS, store=store)
    phones = []
    try:
        code, _ = host.start("class=new&course=media")
        truth = store.room_view(code)
        assert truth.question.kind == "tap"
        n_rows, n_cols = len(truth.question.rows), len(truth.question.choices)
        taps = ((0, 0), (0, 1), (n_rows - 1, n_cols - 1))
        for k, tap in enumerate(taps):
            phone = Phone(chromium, f"phone{k}", timeout_ms=DEADLINE_MS).open(
                host.student_url, ready="document.querySelector('#controls .patch')")
            phones.append(phone)
            grid = phone.page.locator("#controls .tap-grid")
            assert grid.evaluate("(g) => getComputedStyle(g).backgroundImage").startswith(
                'url("data:image/png')
            phone.page.locator(f'#controls [data-key="patch-{tap[0]}-{tap[1]}"]').tap()
            phone.wait_receipt("saved", f"Saved: row {tap[0] + 1}, column {tap[1] + 1}.")
        host.counted(3, 3)
        host.idle("document.querySelector('.st-key-class_answers .js-plotly-plot')")
        traces = chart(host.page, "class_answers")
        z = decode_z(traces[0]["z"])                             # row 1 first, on top
        for tap in taps:
            assert z[tap] == pytest.approx(1 / 3, abs=1e-3)
        assert host.page.locator(".st-key-class_answers image").count() >= 1   # over the image
        host.reveal()
        host.idle("document.querySelectorAll('.st-key-class_answers image').length >= 2")
        traces = chart(host.page, "class_answers")
        beside = [t for t in traces if t["type"] == "heatmap"]
        assert len(beside) == 2                                  # the taps, the model's
        assert np.nanmax(decode_z(beside[1]["z"])) == pytest.approx(1.0)
        host.page.locator(".st-key-class_answers").screenshot(
            path=str(ARTIFACTS / "media-class-host.png"))
        for phone in phones:
            phone.on_step(1, revealed=True)
            said = phone.state()["verdict"]
            assert said.startswith(("Right", "Not this time")) and "peak" in said, said
            assert not phone.page_errors, phone.page_errors
        phones[0].page.screenshot(path=str(ARTIFACTS / "media-class-phone.png"), full_page=True)
        _tap_times(host, phones, store, code)
    finally:
        for phone in phones:
            phone.close()
        host.close()


def _tap_times(host, phones, store, code) -> None:
    """Step 3: each phone taps a time bin of the clip's strip; the lecturer's page draws the
    taps' strip, then the head's attention above it; each phone its verdict."""
    host.next(2)
    host.next(3)
    q = store.room_view(code).question
    assert q.kind == "tap_time"
    n_bins = len(q.choices)
    taps = (0, 1, n_bins - 1)
    for phone, b in zip(phones, taps, strict=True):
        phone.on_step(3, open_=True)
        strip = phone.page.locator("#controls .time-strip")
        assert strip.evaluate("(g) => getComputedStyle(g).backgroundImage").startswith(
            'url("data:image/png')
        assert phone.page.locator("#controls .time-strip button").count() == n_bins
        widths = phone.page.locator("#controls .time-strip button").evaluate_all(
            "(bs) => bs.map((b) => b.getBoundingClientRect().width)")
        assert min(widths) >= 23.5, widths              # a target (WCAG 2.5.8): it scrolls
        button = phone.page.locator(f'#controls [data-key="bin-{b}"]')
        assert button.get_attribute("aria-label") == f"at {q.choices[b]}"      # in seconds
        button.tap()
        phone.wait_receipt("saved", f"Saved: at {q.choices[b]}.")
    host.counted(3, 3)
    host.idle("document.querySelector('.st-key-class_answers .js-plotly-plot')")
    traces = [t for t in chart(host.page, "class_answers") if t["type"] == "heatmap"]
    assert len(traces) == 1                                      # the class's strip alone
    z = decode_z(traces[0]["z"])[0]
    assert [z[b] for b in taps] == pytest.approx([1 / 3] * 3, abs=1e-3)
    host.reveal()
    host.idle("(document.querySelector('.st-key-class_answers .js-plotly-plot') || {}).data "
              "&& document.querySelector('.st-key-class_answers .js-plotly-plot').data"
              ".filter((t) => t.type === 'heatmap').length >= 2")
    traces = [t for t in chart(host.page, "class_answers") if t["type"] == "heatmap"]
    assert host.page.evaluate(                                   # the head's over the class's
        "document.querySelector('.st-key-class_answers .js-plotly-plot').data"
        ".filter((t) => t.type === 'heatmap').map((t) => t.yaxis)") == ["y2", "y"]
    assert np.nanmax(decode_z(traces[0]["z"])) == pytest.approx(1.0)
    host.page.locator(".st-key-class_answers").screenshot(
        path=str(ARTIFACTS / "media-class-host-time.png"))
    for phone in phones:
        phone.on_step(3, revealed=True)
        said = phone.state()["verdict"]
        assert said.startswith(("Right", "Not this time")) and "peak's moment" in said, said
        assert not phone.page_errors, phone.page_errors
    phones[0].page.screenshot(path=str(ARTIFACTS / "media-class-phone-time.png"),
                              full_page=True)
