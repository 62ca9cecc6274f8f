"""The page on a speech or an image model folder: offered from the allow-list, run on the
built-in example or an upload (refused in one line when it is not a short WAV or PNG), the
clip and the image under the heatmaps, and the alignment lab for time."""

from __future__ import annotations

import io
import wave

import numpy as np
import pytest
from apptest_helpers import APP, chart, decode, heads_chart, heatmaps
from streamlit.testing.v1 import AppTest

from xattn.live.compute import clear_caches
from xattn.vision.pngfile import png_bytes


@pytest.fixture
def media_page(whisper_dir, vision_dir, monkeypatch):
    """``open_(folder, **query)``: the page on that folder, the two being the allowed models."""
    monkeypatch.setenv("XATTN_MODELS", f"{whisper_dir},{vision_dir}")
    clear_caches()

    def open_(folder: str, **query) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        for key, value in dict(weights="model", model=folder, **query).items():
            at.query_params[key] = value
        at.run()
        assert not at.exception, at.exception
        assert not at.error, [e.value for e in at.error]
        return at
    return open_


def _wav(seconds: float, rate: int = 8000) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes((0.3 * np.sin(2 * np.pi * 440 * t) * 32767).astype("<i2").tobytes())
    return out.getvalue()


def test_a_whisper_folder_hears_the_built_in_clip(media_page, whisper_dir, vision_dir):
    at = media_page(whisper_dir)
    assert at.selectbox(key="model").options == ["toy-en-fr", "toy-digits", "toy-reader",
                                                 whisper_dir, vision_dir]
    assert not [t for t in at.text_input if t.key in ("src", "tgt")]     # no sentences
    assert not at.toggle                                 # no whole words, no sinks
    fig = heads_chart(at)
    columns = fig["layout"]["xaxis"]["ticktext"]
    assert columns[0] == "0.00s" and len(decode(heatmaps(fig)[0]["z"])[0]) == 83   # 1.65 s
    assert len(at.get("audio")) == 1                    # the play control
    spectrogram = chart(at, "spectrogram")
    assert decode(spectrogram["data"][0]["z"]).shape == (80, 166)
    marks = spectrogram["data"][1]
    assert len(marks["x"]) >= 1 and all(0 <= x <= 1.66 for x in marks["x"])
    assert len(spectrogram["layout"]["shapes"]) == 3    # the three words, outlined
    assert any("transcription (greedy)" in c.value for c in at.caption)


def test_a_link_s_text_settings_are_said_to_do_nothing_on_a_clip(media_page, whisper_dir):
    at = media_page(whisper_dir, src="the cat", words="0")
    said = [w.value for w in at.warning]
    assert len(said) == 1 and "`src`, `words`" in said[0] and "reads a clip" in said[0]


def test_the_alignment_lab_scores_every_head_in_time_and_draws_the_dtw_path(media_page,
                                                                           whisper_dir):
    at = media_page(whisper_dir, view="Alignment")
    timing = chart(at, "timing_chart")
    f1 = decode(timing["data"][0]["z"])
    assert f1.shape == (2, 4) and ((0 <= f1) & (f1 <= 1)).all()
    assert len(timing["layout"]["shapes"]) == 3         # the three best heads, outlined
    dtw = chart(at, "dtw_chart")
    path_x, path_y = decode(dtw["data"][1]["x"]), decode(dtw["data"][1]["y"])
    assert (np.diff(path_x) >= 0).all() and (np.diff(path_y) >= 0).all()
    assert path_x[0] == pytest.approx(0.01) and path_y[0] == 0
    at.multiselect(key="dtw_heads").set_value(["L2 H1"]).run()
    assert not at.exception
    assert len(chart(at, "timing_chart")["layout"]["shapes"]) == 1
    at.multiselect(key="dtw_heads").set_value([]).run()
    assert any("at least one head" in i.value for i in at.info)
    at.radio(key="time_rows").set_value("reads").run()
    assert not at.exception


def test_an_uploaded_wav_is_heard_and_a_bad_one_refused_in_one_line(media_page, whisper_dir):
    at = media_page(whisper_dir)
    at.file_uploader(key="media_upload").set_value(("beep.wav", _wav(1.0), "audio/wav")).run()
    assert not at.exception and not at.error
    fig = heads_chart(at)
    assert len(decode(heatmaps(fig)[0]["z"])[0]) == 50  # 1 s of 20 ms positions
    assert "`beep.wav`" in at.info[0].value
    assert any("silence Whisper pads" in c.value for c in at.caption)
    at.session_state["view"] = "Alignment"
    at.run()
    assert any("built-in clip only" in i.value for i in at.info)
    at.session_state["view"] = "Heads"
    at.file_uploader(key="media_upload").set_value(("long.wav", _wav(3.0), "audio/wav")).run()
    assert not at.exception and not at.error                  # the tiny model's window: 2 s
    assert len(decode(heatmaps(heads_chart(at))[0]["z"])[0]) == 100
    assert any("hears the first 2 s of this 3.0 s clip" in c.value for c in at.caption)
    at.file_uploader(key="media_upload").set_value(("song.wav", b"ID3" + b"\0" * 64,
                                                    "audio/wav")).run()
    assert not at.exception
    assert len(at.error) == 1 and "not a WAV file" in at.error[0].value
    assert "\n" not in at.error[0].value


def test_an_image_folder_reads_the_built_in_word_and_an_upload(media_page, vision_dir):
    at = media_page(vision_dir)
    fig = heads_chart(at)
    assert fig["layout"]["xaxis"]["ticktext"][:2] == ["CLS", "r1c1"]
    assert any(m.value.startswith("**The image**") for m in at.markdown)
    overlays = chart(at, "overlays")                    # the overlays: one picture, as a chart
    assert [t["type"] for t in overlays["data"]] == ["image"] and not at.get("image")
    assert overlays["layout"]["xaxis"]["ticktext"][-2:] == ["head 4", "mean"]   # words, not pixels
    at.session_state["view"] = "Alignment"
    at.run()
    assert any("read the letters" in m.value for m in at.markdown)
    table = at.dataframe[0].value
    assert list(table.columns) == [f"head {h}" for h in range(1, 5)] and len(table) == 2
    image = np.full((40, 100, 3), 255, np.uint8)
    image[10:30, 20:80] = 0
    at.file_uploader(key="media_upload").set_value(("box.png", png_bytes(image),
                                                    "image/png")).run()
    assert not at.exception and not at.error
    assert "`box.png`" in at.info[0].value
    assert any("needs where each character is" in i.value for i in at.info)
    at.file_uploader(key="media_upload").set_value(("photo.png", b"\xff\xd8\xff" + b"\0" * 40,
                                                    "image/png")).run()
    assert len(at.error) == 1 and "not a PNG file" in at.error[0].value


@pytest.mark.parametrize(("name", "said"), [("toy-digits", ("six", "five", "two", "three", "zero")),
                                            ("toy-reader", tuple("QNHIBB"))])
def test_the_shipped_toy_models_are_offered_and_read_their_own_example(media_page, name, said):
    """The two toy models trained here (docs/models.md) need no allow-list entry and no
    download; each reads the example drawn as it was trained on, word for word."""
    at = media_page(name)
    fig = heads_chart(at)
    rows = [str(r) for r in fig["layout"]["yaxis"]["ticktext"]]
    assert tuple(r.split(": ", 1)[-1] for r in rows[:len(said)]) == said, rows
    assert any(" ".join(said) in c.value or "".join(said) in c.value
               for c in [*at.caption, *at.markdown]), "the example's words are said"
