"""A lesson on an image and a clip (docs/examples/image-and-clip.toml on the tiny folders):
the file checked when read (a question on an image asks an image model's page), each
question's truth recomputed here from the weights, and a room on the image step: three
phones tap patches, the lecturer's page draws the taps over the image, the reveal shows the
model's attention beside them, each phone its verdict; the CSV names the patches and Moodle
leaves the tap out with a comment. The same on the clip's step: three phones tap moments of
its time strip, the lecturer's page draws the taps' strip, then the head's attention over
the same time bins above it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from phone_helpers import Phone
from test_app_room import class_file, count, page  # noqa: F401

from xattn.lesson import LessonError, read_lesson
from xattn.live.link import lesson_setting

EXAMPLE = Path(__file__).parents[1] / "docs" / "examples" / "image-and-clip.toml"
pytestmark = pytest.mark.usefixtures("fresh_cache")


@pytest.fixture
def media_lesson(whisper_dir, vision_dir, monkeypatch, tmp_path) -> str:
    """The example lesson's text on the tiny folders, both on the server's list and the
    lesson in the server's folder (``course=media``)."""
    monkeypatch.setenv("XATTN_MODELS", f"{whisper_dir},{vision_dir}")
    text = EXAMPLE.read_text().replace('"toy-reader"', json.dumps(vision_dir)).replace(
        '"toy-digits"', json.dumps(whisper_dir))
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "media.toml").write_text(text)
    monkeypatch.setenv("XATTN_LESSONS", str(folder))
    return text


def test_a_question_on_an_image_asks_an_image_models_page_when_the_file_is_read(
        media_lesson, whisper_dir, vision_dir):
    lesson = read_lesson(media_lesson, "media", page=lesson_setting)
    assert [s.ask.computed for s in lesson.steps] == ["tap_letter", "timing_head", "tap_time"]
    swapped = media_lesson.replace(json.dumps(whisper_dir), json.dumps(vision_dir))
    with pytest.raises(LessonError, match=r"step 2, `page.model`: expected a speech "
                                          r"\(Whisper\) folder .* an image model"):
        read_lesson(swapped, "media", page=lesson_setting)
    with pytest.raises(LessonError, match=r"step 3, `page.model`: expected a speech"):
        read_lesson(swapped, "media", page=lesson_setting)
    plain = media_lesson.replace(f"weights = \"model\"\nmodel = {json.dumps(vision_dir)}", "")
    with pytest.raises(LessonError, match=r"step 1, `page.model`: expected weights = \"model\""
                                          r" and model = an image"):
        read_lesson(plain, "media", page=lesson_setting)


def test_each_truth_is_the_weights_own(media_lesson):
    from xattn.live.answers import class_step
    from xattn.speech.alignment import head_timing

    lesson = read_lesson(media_lesson, "media", page=lesson_setting)
    a, told = class_step(lesson, 1)
    w = a.layer(a.n_layers - 1)[:, 2, 1:].mean(0).reshape(a.media.grid)   # token 3, no CLS
    assert told.truth == tuple(np.unravel_index(np.argmax(w), w.shape))
    q = told.question
    assert (len(q.rows), len(q.choices)) == a.media.grid
    assert q.image.startswith("data:image/png;base64,") and len(q.to_json()) < 4000
    np.testing.assert_allclose(told.weights, w.ravel(), atol=1e-6)
    a, told = class_step(lesson, 2)
    f1 = head_timing(a.weights, 0.02, a.media.words, rows=a.media.text_rows)[:, :, 1]
    best = {f"L{lyr + 1} H{h + 1}" for lyr, h in zip(*np.nonzero(f1 == f1.max()),
                                                       strict=True)}
    assert {told.truth, *told.also} == best and told.question.kind == "head"
    assert len(told.question.choices) == a.n_layers * a.n_heads
    a, told = class_step(lesson, 3)              # layer 2 head 2's peak on the third word
    row = a.weights[1, 1, a.media.text_rows[2]]         # (n_src,): the tone clip's 1.66 s
    assert len(row) == 83 and told.question.kind == "tap_time"    # 17 bins of 5 positions
    assert told.question.choices[:2] == ("0.00–0.10 s", "0.10–0.20 s")
    assert told.question.choices[-1] == "1.60–1.70 s"             # the last one runs past
    assert len(told.question.choices) == 17 and told.truth == int(np.argmax(row)) // 5
    np.testing.assert_allclose(told.weights, [row[5 * b:5 * b + 5].max() for b in range(17)],
                               atol=1e-6)
    assert told.question.image.startswith("data:image/png;base64,")
    assert len(told.question.to_json()) < 3000


def test_three_phones_tap_the_image_and_the_host_sees_their_heatmap_then_the_models(
        media_lesson):
    from xattn.classroom import answers_csv
    from xattn.lesson.lms import LmsItem, moodle_xml
    from xattn.live.answers import class_step
    from xattn.live.stores import class_store

    host = page(**{"class": "new", "course": "media"})
    code = host.session_state["room"]
    key = host.session_state["_xattn_host_keys"][code]
    truth = class_step(read_lesson(media_lesson, "media", page=lesson_setting), 1)[1].truth
    n_rows, n_cols = 4, 4
    near = (truth[0], (truth[1] + 1) % n_cols if truth[1] + 1 < n_cols else truth[1] - 1)
    far = ((truth[0] + 2) % n_rows, truth[1])
    phones = [Phone(code) for _ in range(3)]
    for p, tap in zip(phones, (truth, near, far), strict=True):
        ask = p.message()["room"]["ask"]
        assert ask["control"] == "tap" and ask["image"].startswith("data:image/png")
        assert p.answer(list(tap)) == tap
    assert count(host) == "3 of 3 answered"
    fig = json.loads(host.get_by_key("class_answers").proto.spec)
    assert fig["layout"]["images"][0]["source"].startswith("data:image/png")
    z = np.array(fig["data"][0]["z"])                       # row 1 first, on top
    assert z[truth] == pytest.approx(1 / 3) and z.sum() == pytest.approx(1)
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    fig = json.loads(host.get_by_key("class_answers").proto.spec)
    assert len(fig["layout"]["images"]) == 2                 # the taps, the model's beside
    assert [d["xaxis"] for d in fig["data"] if d["type"] == "heatmap"] == ["x", "x2"]
    verdicts = [p.message()["me"]["verdict"] for p in phones]
    assert "<strong>Right</strong>: you tapped the peak" in verdicts[0]
    assert "within one patch counts" in verdicts[1]
    assert "<strong>Not this time</strong>" in verdicts[2] and "2 patches" in verdicts[2]
    chart = phones[0].message()["room"]["answer"]["charts"][0]
    assert [mk for mk in chart["panels"][0]["marks"] if mk[2] == "outline"]
    rows = answers_csv(class_store().results(code, key)).splitlines()
    assert sum(f"row {tap[0] + 1}, column {tap[1] + 1}" in r for r in rows
               for tap in (truth, near, far)) == 3
    _, told = class_step(read_lesson(media_lesson, "media", page=lesson_setting), 1)
    xml = moodle_xml("media", [LmsItem("1. Tap", "Where?", told)])
    assert "a tap question Moodle cannot grade as this page does, left out" in xml


def test_three_phones_tap_moments_of_the_clip_and_the_host_sees_their_strip_under_the_head(
        media_lesson):
    from xattn.classroom import answers_csv
    from xattn.lesson.lms import LmsItem, moodle_xml
    from xattn.live.answers import class_step
    from xattn.live.stores import class_store

    host = page(**{"class": "new", "course": "media"})
    code = host.session_state["room"]
    key = host.session_state["_xattn_host_keys"][code]
    for _ in range(2):
        host.button(key="class_next").click().run()
    assert not host.exception, host.exception
    told = class_step(read_lesson(media_lesson, "media", page=lesson_setting), 3)[1]
    truth, n_bins = told.truth, len(told.question.choices)
    near = truth + 1 if truth + 1 < n_bins else truth - 1
    far = (truth + 3) % n_bins if truth < n_bins - 3 else truth - 3
    phones = [Phone(code) for _ in range(3)]
    for p, tap in zip(phones, (truth, near, far), strict=True):
        ask = p.message()["room"]["ask"]
        assert ask["kind"] == "tap_time" and ask["control"] == "strip"
        assert ask["image"].startswith("data:image/png") and len(ask["choices"]) == n_bins
        assert p.answer(tap) == tap
    assert len(json.dumps(phones[0].message()["room"]).encode()) <= 10_000   # the move's
    assert count(host) == "3 of 3 answered"
    fig = json.loads(host.get_by_key("class_answers").proto.spec)
    assert [d["yaxis"] for d in fig["data"]] == ["y"]            # the class's strip alone
    z = np.array(fig["data"][0]["z"])[0]
    assert z[truth] == pytest.approx(1 / 3) and z.sum() == pytest.approx(1)
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    fig = json.loads(host.get_by_key("class_answers").proto.spec)
    strips = [d for d in fig["data"] if d["type"] == "heatmap"]
    assert [d["yaxis"] for d in strips] == ["y2", "y"]           # the head's over the class's
    assert fig["layout"]["xaxis2"]["matches"] == "x"             # one time axis
    model = np.array(strips[0]["z"])[0]
    assert int(np.argmax(model)) == truth and model.max() == pytest.approx(1.0)
    verdicts = [p.message()["me"]["verdict"] for p in phones]
    assert "<strong>Right</strong>: you tapped the peak's moment" in verdicts[0]
    assert "within one time bin counts" in verdicts[1]
    assert "<strong>Not this time</strong>" in verdicts[2] and "3 time bins" in verdicts[2]
    chart = phones[0].message()["room"]["answer"]["charts"][0]
    assert [p["y"] for p in chart["panels"]] == [["the model"], ["the class"]]
    assert [0, truth, "outline"] in chart["panels"][1]["marks"]
    rows = answers_csv(class_store().results(code, key)).splitlines()
    assert sum(told.question.choices[tap] in r for r in rows for tap in (truth, near, far)) == 3
    xml = moodle_xml("media", [LmsItem("3. Tap", "When?", told)])
    assert "a tap_time question Moodle cannot grade as this page does, left out" in xml


def test_on_the_shipped_toy_digits_each_words_peak_bin_is_where_the_word_is_said():
    """The question on the shipped toy speech model (its words' times known to the sample):
    layer 2 head 2's peak for each word it wrote lies in a bin that overlaps that word."""
    from xattn.lesson.media import tap_time
    from xattn.live.models import example_attention
    from xattn.media import load_media

    a = example_attention(load_media("toy-digits"), "audio", "toy-digits")
    words = a.media.words
    assert [a.tgt_tokens[i] for i in a.media.text_rows] == [w.word for w in words]
    for k, said in enumerate(words, start=1):
        told = tap_time(a, 1, word=k, head=2)
        start, end = (float(t) for t in told.question.choices[told.truth][:-2].split("–"))
        assert start < said.end and said.start < end, (k, said, start, end)
        assert f"from {said.start:.2f} to {said.end:.2f} s" in told.answer
    assert "the question asks about the last" in tap_time(a, 1, word=9).note


def test_alone_on_the_clip_step_a_student_picks_a_time_bin_under_the_spectrogram(media_lesson):
    from xattn.live.answers import class_step

    told = class_step(read_lesson(media_lesson, "media", page=lesson_setting), 3)[1]
    at = page(view="Lesson", course="media", lesson="3")
    shown = [i for im in at.get("image") for i in im.proto.imgs]
    assert any(i.caption.startswith("The clip's spectrogram") and i.url.startswith(
        "data:image/png") for i in shown)
    strip = at.pills(key="predict_bin")
    assert list(strip.options) == list(told.question.choices)      # each bin in seconds
    strip.set_value(told.truth).run()
    assert not at.exception, at.exception
    assert any("you tapped the peak's moment" in m.value for m in at.markdown)
