"""Every view on every weights source, every lesson step on every source, and presenter mode.

The views were each written against one source; what broke was where a view met a source it
was not written for (lesson step 3 on trained weights, the overview on a model). One AppTest
session per source clicks through every view and every step, as a student does (the tab, the
Weights choice, *Next*), and checks that each shows its content or its one-line reason, never
an exception. Add a new view, source, model family or lesson step here.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import APP
from streamlit.testing.v1 import AppTest

from devtools.tiny_models import FAMILY_NAMES
from xattn.attention import masked_softmax
from xattn.attnfile import attention_to_bytes
from xattn.lesson import STEPS
from xattn.live.compute import clear_caches
from xattn.sources import SOURCES  # a new source joins the matrix (and needs `page` below)
from xattn.ui.page import VIEWS

# What each view shows when it applies: the key of one of its elements.
CONTENT = {
    "Heads": "head_1", "Step through": "step_pick", "Head statistics": "stats_confidence",
    "Switch heads off": "ablation_chart", "Lines": "lines", "Compare": "compare_b",
    "Export": "dl_html", "Training": "tl_run", "Decode": "decode_top",
    "Alignment": "aer_chart",
}
# ... and what it says when it does not (one line, an st.info)
REASONS = ("not available for these weights", "needs other weights",
           "B cannot be the trained weights here", "belongs to the toy task's trained weights",
           "Decode needs a model that runs here in NumPy", "Upload a gold file")


def file_bytes(n_layers: int = 2, n_heads: int = 3) -> bytes:
    src, tgt = ["le", "chat", "noir", "</s>"], ["the", "black", "cat"]
    scores = np.random.default_rng(0).standard_normal((n_layers, n_heads, len(tgt), len(src)))
    return attention_to_bytes(masked_softmax(scores).astype(np.float32), src, tgt, model="m")


@pytest.fixture
def page(request, monkeypatch):
    """An AppTest session on one source, as a student would choose it in the sidebar."""
    clear_caches()

    def open_(source: str, query: dict | None = None) -> AppTest:
        if source == "model":
            request.getfixturevalue("tiny_model")     # the server's one allowed model
        at = AppTest.from_file(APP, default_timeout=120)
        for key, value in (query or {}).items():
            at.query_params[key] = value
        at.run()
        if source != "random":
            at.radio(key="weights").set_value(source).run()
        if source == "file":
            at.file_uploader(key="upload").set_value(("weights.npz", file_bytes(),
                                                      "application/zip")).run()
        assert not at.exception, (source, at.exception)
        return at
    return open_


def infos(at: AppTest) -> str:
    return " ".join(i.value for i in at.info)


def assert_shows(at: AppTest, view: str, where: str) -> None:
    assert not at.exception, (where, at.exception)
    key = CONTENT.get(view)
    if key is None:
        return
    try:
        at.get_by_key(key)
    except KeyError:
        assert any(reason in infos(at) for reason in REASONS), (where, infos(at))


@pytest.mark.parametrize("source", SOURCES)
def test_every_view_shows_its_content_or_says_why_not(page, source):
    at = page(source)
    for view in VIEWS:
        if view == "Lesson":
            continue                   # a lesson step prepares its own weights: see below
        at.session_state["view"] = view
        at.run()
        assert_shows(at, view, f"{source} / {view}")
        if view == "How to read this":
            assert any("Rows and columns" in m.value for m in at.markdown)


@pytest.mark.parametrize("family", FAMILY_NAMES)
def test_every_view_on_every_model_family(family, family_dirs, monkeypatch):
    """The model source on a folder of each family the NumPy models run (Marian: above)."""
    folder = str(family_dirs(family))
    monkeypatch.setenv("XATTN_MODELS", folder)
    clear_caches()
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in dict(weights="model", model=folder, src="the red cat sees the dog",
                           tgt="le chat rouge voit le chien").items():
        at.query_params[key] = value
    at.run()
    assert not at.exception and not at.error, (family, at.exception, at.error)
    for view in VIEWS:
        if view == "Lesson":
            continue
        at.session_state["view"] = view
        at.run()
        assert not at.error, (family, view, [e.value for e in at.error])
        assert_shows(at, view, f"{family} / {view}")


# What the Alignment view shows on audio (the lab for time) and on an image (the glyph score).
MEDIA_CONTENT = {"audio": {"Alignment": "timing_chart", "Heads": "spectrogram"},
                 "image": {"Alignment": None}}


@pytest.mark.parametrize("kind", ["audio", "image"])
def test_every_view_on_a_speech_and_an_image_model(kind, whisper_dir, vision_dir, monkeypatch):
    """The model source on a Whisper folder (a clip) and a VisionEncoderDecoder folder (an
    image), each on its built-in example: every view shows its content or says why not."""
    folder = whisper_dir if kind == "audio" else vision_dir
    monkeypatch.setenv("XATTN_MODELS", folder)
    clear_caches()
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["weights"], at.query_params["model"] = "model", folder
    at.run()
    assert not at.exception and not at.error, (kind, at.exception, at.error)
    for view in VIEWS:
        if view == "Lesson":
            continue
        at.session_state["view"] = view
        at.run()
        where = f"{kind} / {view}"
        assert not at.exception and not at.error, (where, at.exception,
                                                   [e.value for e in at.error])
        own = MEDIA_CONTENT[kind]
        if view in own:
            if own[view] is not None:
                at.get_by_key(own[view])
            else:
                assert at.dataframe, where            # the glyph score's table
        else:
            assert_shows(at, view, where)


@pytest.mark.parametrize("source", SOURCES)
def test_every_lesson_step_works_on_every_source(page, source, request):
    """A step opened, then the Weights switched to ``source`` (the crash of lesson step 3 on
    trained weights): the step's text, then its answer or one line on what it needs."""
    if source == "model":
        request.getfixturevalue("tiny_model")         # the server's one allowed model
    for n, step in enumerate(STEPS, 1):
        at = page("random", {"view": "Lesson", "lesson": str(n)})
        if source != "random":
            at.radio(key="weights").set_value(source).run()
            if source == "file":
                at.file_uploader(key="upload").set_value(("w.npz", file_bytes(),
                                                          "application/zip")).run()
        where = f"step {n} on {source}"
        assert not at.exception, (where, at.exception)
        assert any(f"Step {n} of {len(STEPS)}" in m.value for m in at.markdown), where
        answers = [e for e in at.expander if e.label.startswith("Show the answer")]
        assert answers or "needs other weights" in infos(at), (where, infos(at))
        if answers:
            assert "".join(m.value for m in answers[0].markdown).strip(), where
        assert_shows(at, step.state.get("view", "Heads"), where)


@pytest.mark.parametrize("source", SOURCES)
def test_presenter_mode_on_every_source(page, source):
    at = page(source, {"present": "1"})
    for view in ("Heads", "Step through", "Compare"):
        at.session_state["view"] = view
        at.run()
        assert_shows(at, view, f"presenter, {source} / {view}")


# --- the phone's page: every lesson step, in every phase ----------------------------------------

def _lessons():
    """The shipped lessons that run on the model shipped with xattn, and the docs' example
    (the lecturer's own question and a poll)."""
    from test_lessonfile import docs_example

    from xattn.lesson import read_lesson, shipped_lessons
    from xattn.live.link import lesson_setting

    found = {k: v for k, v in shipped_lessons().items()
             if all(s.state.get("model", "toy-en-fr") == "toy-en-fr" for s in v.steps)}
    found["seminar"] = read_lesson(docs_example(), "seminar", page=lesson_setting)
    return found


LESSONS = _lessons()


@pytest.mark.parametrize("name, n", [(name, n) for name, lesson in LESSONS.items()
                                     for n in range(1, len(lesson.steps) + 1)])
def test_every_step_is_a_phones_message_in_every_phase(name, n):
    """A room's phone gets every step of every lesson asking, closed and revealed, with the
    prediction control the step's question asks for, a verdict for each answer it accepts,
    and the chart that answers it: one message under 10 kB (the phone's own view of the
    lesson; its weights are always the step's own, so it has no weights source of its own)."""
    import json

    from xattn.classroom import NO_QUESTION, RoomView
    from xattn.live.answers import class_step
    from xattn.live.messages import room_message

    lesson = LESSONS[name]
    _, told = class_step(lesson, n)
    question = told.question or NO_QUESTION
    counts = dict.fromkeys(question.options(), 1)
    for phase in ("asking", "closed", "revealed"):
        view = RoomView("HJK23M", n, len(lesson.steps), phase, 1, question, counts, 3, 3,
                        version=2)
        msg = room_message(view, lesson)
        room = json.loads(msg.room)
        assert len(msg.room) <= 10_000, (n, phase, len(msg.room))
        assert room["step"] == n and room["phase"] == phase
        assert room["title"] == lesson.steps[n - 1].title
        assert (room["ask"] is None) == (told.question is None)
        if room["ask"] is not None:
            assert room["ask"]["kind"] == question.kind
            assert room["ask"]["control"] == question.of.control
        assert ("answer" in room) == (phase == "revealed")
        if phase == "revealed":
            assert room["answer"]["charts"] and all(c["alt"] for c in room["answer"]["charts"])
            if told.question is not None:
                samples = question.options()[:6] if question.of.control in ("pills", "tokens") \
                    else [question.low, question.high] if question.kind == "number" else []
                for value in samples:
                    said = msg.personal(question.encode(value))
                    assert said["verdict"].startswith("<p>") and "**" not in said["verdict"]
                assert msg.personal(None)["verdict"].startswith("<p>You did not predict")
