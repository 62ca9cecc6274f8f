"""xattn/classroom/kinds.py, controls.py, moodle.py, own.py: every kind of question, each
through everything it decides (its answer stored and read back, its verdict on the truth, the
class's figure, the CSV, Moodle, the phone's control), the registries the pages and phone.js
share, and a new kind that reuses a control, registered as one entry and run through a
lesson file, the CSV, Moodle and the phone."""

from __future__ import annotations

import csv
import io
import json
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

import xattn
from xattn.classroom import Question, Tally, answers_csv
from xattn.classroom import moodle as moodle_mod
from xattn.classroom.controls import CHARTS, CONTROLS, DRAWN, Control, add_control
from xattn.classroom.kinds import KINDS, Key, Kind, add_kind, own_kinds
from xattn.classroom.own import OPTIONS
from xattn.classroom.taps import time_bin_labels
from xattn.figures.classroom import FIGURES, class_alt, class_figure
from xattn.lesson import Lesson, Part, Told, read_lesson
from xattn.lesson.lms import LmsItem, moodle_xml
from xattn.lesson.misconceptions import surprise
from xattn.live.messages import ask_of
from xattn.pipeline import Settings, run
from xattn.sources import random_attention
from xattn.ui.lesson.predict import WIDGETS

PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNgAAAAAgAB"
       "SK+kcQAAAABJRU5ErkJggg==")              # one grey pixel
PARTS = (("head 1", "aligns", ()), ("head 2", "sink", ("aligns",)))
# One question of every built-in kind: (question, an answer, the step's key, Moodle's type)
SAMPLES = {
    "choice": (Question("choice", ("up", "down")), "down", Key("down"), "multichoice"),
    "poll": (Question("poll", ("yes", "no")), "yes", Key(), None),
    "token": (Question("token", ("the", "cat", "the")), 2, Key(2, tokens=("the", "cat", "the")),
              "multichoice"),
    "number": (Question("number", low=0, high=1, decimals=2), 0.25, Key(0.25, tolerance=0.01),
               "numerical"),
    "parts": (Question("parts", ("sink", "aligns"), rows=("head 1", "head 2")),
              ("aligns", "sink"), Key(("aligns", "sink"), parts=PARTS), "cloze"),
    "links": (Question("links", ("le", "chat"), rows=("the", "cat")), ((0, 0), (1, 1)),
              Key(((0, 0), (1, 1))), "matching"),
    "tap": (Question("tap", ("1", "2", "3", "4"), rows=("1", "2", "3"), image=PNG), (1, 2),
            Key((1, 2)), None),
    "head": (Question("head", ("L1 H1", "L1 H2", "L2 H1")), "L2 H1", Key("L2 H1"),
             "multichoice"),
    "tap_time": (Question("tap_time", time_bin_labels(6, 0.1), image=PNG), 3, Key(3), None),
}
# What phone.js reads of each drawing's payload
PHONE_FIELDS = {"pills": {"choices"}, "tokens": {"choices"}, "number": {"low", "high",
                                                                          "decimals"},
                "grid": {"rows", "choices", "labels"}, "links": {"rows", "choices"},
                "tap": {"rows", "choices", "image"}, "strip": {"choices", "image"}}
BUILT_IN = tuple(KINDS)


def _told(q: Question, key: Key) -> Told:
    parts = tuple(Part(name, Question("choice", q.choices), truth, also)
                  for name, truth, also in key.parts)
    return Told({}, "The answer.", "Tap.", q, key.truth, tolerance=key.tolerance,
                tokens=key.tokens, also=key.also, parts=parts, weights=key.weights)


def _counts(q: Question, answer) -> dict:
    counts = {o: 0 for o in q.options()}
    counts.update({e: 1 for e in q.elements(answer)})
    return counts


def _moodle_types(text: str) -> list:
    root = ET.fromstring(text.encode())
    return [q.get("type") for q in root.findall("question") if q.get("type") != "category"]


@pytest.fixture
def registered():
    """Take back whatever a test registers (the tables are the process's)."""
    kinds, controls = dict(KINDS), dict(CONTROLS)
    yield
    for table, was in ((KINDS, kinds), (CONTROLS, controls)):
        for name in set(table) - set(was):
            del table[name]


def test_every_built_in_kind_has_a_sample_here():
    assert set(SAMPLES) == set(BUILT_IN)


@pytest.mark.parametrize("name", BUILT_IN)
def test_an_answer_is_stored_and_read_back_as_it_was(name):
    q, answer, _, _ = SAMPLES[name]
    text = q.encode(answer)
    assert isinstance(text, str) and q.decode(text) == answer
    assert q.encode(q.decode(text)) == text                    # one answer, one stored text


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_truth_is_judged_right_and_said_so_except_in_a_poll(name):
    q, answer, key, _ = SAMPLES[name]
    truth = answer if key.truth is None else key.truth
    said = q.of.verdict(q, key, truth)
    if q.of.graded:
        assert q.of.right(q, key, truth) and "Right" in said or "right" in said, said
    else:
        assert not q.of.right(q, key, truth) and "no right answer" in said


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_class_figure_carries_the_kinds_title_and_its_truth_outlined(name):
    q, answer, key, _ = SAMPLES[name]
    fig = class_figure(q, _counts(q, answer), 1, truth=key.truth,
                       also=tuple(p[2] for p in key.parts))
    assert fig.layout.title.text.startswith(q.of.chart_title)
    marked = key.truth is not None
    outlined = any("right" in t for t in fig.data[0].text) if fig.data[0].type == "bar" \
        else len(fig.data) > 1                                 # bars say it, grids outline it
    assert outlined == marked
    alt = class_alt(q, revealed=True)
    assert alt.startswith(q.of.drawn.alt) and alt.endswith(q.of.drawn.outlined) == marked


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_csv_has_a_row_for_each_element_of_the_answer_in_the_kinds_words(name):
    q, answer, _, _ = SAMPLES[name]
    rows = list(csv.DictReader(io.StringIO(answers_csv([Tally(1, 1, q, _counts(q, answer))]))))
    assert rows and {r["kind"] for r in rows} == {name}
    counted = {r["answer"] for r in rows if r["count"] == "1"}
    assert counted == {str(q.of.named(q, e)[1]) for e in q.elements(answer)}


@pytest.mark.parametrize("name", BUILT_IN)
def test_moodle_grades_it_as_the_page_does_or_leaves_it_out(name):
    q, _, key, kind = SAMPLES[name]
    text = moodle_xml("kinds", [LmsItem("1. One", "Which?", _told(q, key))])
    assert _moodle_types(text) == ([kind] if kind else [])
    if kind is None:                  # a comment says why: no right answer, or not gradable
        assert ("a poll, no right answer, left out" if not q.of.graded else
                f"a {name} question Moodle cannot grade as this page does, left out") in text


@pytest.mark.parametrize("name", BUILT_IN)
def test_the_phone_is_sent_the_kinds_control_and_what_its_drawing_reads(name):
    q, _, key, _ = SAMPLES[name]
    ask = ask_of(_told(q, key), q, confidence=True)
    assert ask["kind"] == name and ask["control"] == q.of.asked.draws
    assert PHONE_FIELDS[ask["control"]] <= set(ask) and ask["levels"]
    json.dumps(ask)                                            # JSON, as the stream sends it


# A wrong answer of each graded kind, how far off it is (Kind.off), and a new case's truth
# that differs from the sample's (Kind.differs) beside one that does not
WRONG = {"choice": ("up", 1.0, "up", "down"),
         "token": (1, 0.4, 1, 0),                   # position 0 is "the" again: no new word
         "number": (0.3, 0.2, 0.5, 0.255),          # within twice the tolerance: the same
         "parts": (("sink", "sink"), 0.5, ("sink", "sink"), ("aligns", "sink")),
         "links": (((0, 1), (1, 1)), 0.5, ((0, 1),), ((0, 0), (1, 1))),
         "tap": ((1, 0), 0.5, (2, 0), (2, 3)),      # 2 patches off of 4; 1 apart: the same
         "head": ("L1 H1", 1.0, "L1 H1", "L2 H1"),
         "tap_time": (0, 0.5, 1, 4)}                # 3 bins off of 6; 2 apart: another


@pytest.mark.parametrize("name", [k for k in BUILT_IN if KINDS[k].graded])
def test_a_wrong_answer_is_as_far_off_as_its_kind_measures_and_a_new_truth_differs(name):
    q, _, key, _ = SAMPLES[name]
    key = key._replace(weights=(0.2, 0.3, 0.5)) if name == "token" else key
    wrong, off, other, same = WRONG[name]
    assert q.of.off(q, key, wrong) == pytest.approx(off)
    assert surprise(_told(q, key), wrong) == pytest.approx(1 + off)
    if name == "parts":
        parts = tuple((n, t, ()) for n, t in zip(q.rows, other, strict=True))
        other, same = key._replace(truth=other, parts=parts), key
    else:
        other, same = key._replace(truth=other), key._replace(truth=same)
    assert q.of.differs(q, key, q, other) and not q.of.differs(q, key, q, same)


@pytest.mark.parametrize("fn", sorted(moodle_mod.MOODLE))
@pytest.mark.parametrize("name", BUILT_IN)
def test_any_kind_may_name_any_moodle_type_and_the_export_never_crashes(name, fn, registered):
    """Issue 43: reusing an `lms` value crashed the Moodle export."""
    q, answer, key, _ = SAMPLES[name]
    odd = replace(q, kind=add_kind(replace(q.of, name="odd", moodle=moodle_mod.MOODLE[fn])).name)
    for k in (key, Key(), Key(answer), Key("nonsense", also=(object(),)), Key(float("nan")),
              Key(((9, 9),)), Key(parts=(("x",),))):
        got = moodle_mod.MOODLE[fn](q, k)
        assert got is None or isinstance(got, moodle_mod.Moodle)
        told = Told({}, "The answer.", "Tap.", odd, k.truth, tolerance=k.tolerance, also=k.also)
        ET.fromstring(moodle_xml("x", [LmsItem("1. x", "t", told)]).encode())


# --- the registries the pages, phone.js and the figures share ---------------------------------
def _phone_controls() -> set:
    """The names of phone.js's CONTROLS table, wherever under xattn/ the phone's JS lives."""
    found = set()
    for path in Path(xattn.__file__).parent.rglob("*.js"):
        for table in re.findall(r"const CONTROLS = \{(.*?)\n\s*\};", path.read_text(), re.S):
            found |= set(re.findall(r"^\s*(\w+):", table, re.M))
    return found


def test_the_host_page_and_phone_js_draw_the_same_controls_as_the_registry():
    assert _phone_controls() == set(DRAWN) == set(WIDGETS)
    assert {c.draws for c in CONTROLS.values()} <= set(DRAWN)
    assert set(FIGURES) == set(CHARTS)                         # every chart has its figure


def test_a_control_no_page_can_draw_is_refused_at_registration():
    with pytest.raises(ValueError, match="draws 'dial', which neither page can draw"):
        add_control(Control("dial", "turns a dial", lambda q: {}, draws="dial"))
    with pytest.raises(ValueError, match="a control named 'pills' exists already"):
        add_control(Control("pills", "taps", lambda q: {}))
    with pytest.raises(TypeError, match="add_control takes a Control; received str"):
        add_control("pills")
    assert "dial" not in CONTROLS


def test_a_kind_with_an_unknown_control_or_chart_or_a_missing_function_is_refused():
    base = KINDS["choice"]
    with pytest.raises(ValueError, match="control must be one of .*received 'dial'"):
        add_kind(replace(base, name="dialled", control="dial"))
    with pytest.raises(ValueError, match="chart must be one of .*received 'pie'"):
        add_kind(replace(base, name="pied", chart="pie"))
    with pytest.raises(ValueError, match="a kind named 'choice' exists already"):
        add_kind(base)
    with pytest.raises(TypeError, match=r"needs a function for each of \['verdict'\]"):
        add_kind(replace(base, name="mute", verdict=None))
    with pytest.raises(ValueError, match="a word of letters"):
        add_kind(replace(base, name="two words"))
    assert set(KINDS) == set(BUILT_IN)


def test_a_new_control_drawn_as_pills_gets_a_figure_and_a_phone_control(registered):
    add_control(Control("scale", "taps a step of a scale", lambda q: {"choices": list(
        q.choices), "ends": [q.choices[0], q.choices[-1]]}, draws="pills"))
    add_kind(replace(KINDS["poll"], name="likert", control="scale", choices=(3, 7)))
    q = Question("likert", ("no", "maybe", "yes"))
    ask = ask_of(_told(q, Key()), q)
    assert ask["control"] == "pills" and ask["ends"] == ["no", "yes"]
    fig = class_figure(q, {"no": 2, "yes": 1}, 3)
    assert list(fig.data[0].y) == [2, 0, 1]


LESSON = '''title = "Ratings"
[[step]]
title = "How strong?"
text = "Rate the strongest weight."
look = "The brightest cell."
ask = "How strong is it?"
[step.question]
kind = "rating"
prompt = "Rate it from 1 to 5."
options = ["1", "2", "3", "4", "5"]
answer = "4"
'''


def test_a_new_kind_reusing_a_control_is_one_entry_from_lesson_file_to_phone(registered):
    """Issue 43: a lecturer's own kind reusing a control took 6 files; here it is one."""
    add_kind(replace(KINDS["choice"], name="rating", about="one step of a scale of five",
                     choices=(5, 5), distinct=True, own=OPTIONS,
                     verdict=lambda q, key, a: f"**{'Right' if a == key.truth else 'Off'}**: "
                                               f"you rated {a}, the page {key.truth}."))
    assert "rating" in own_kinds()
    lesson = read_lesson(LESSON, "ratings")                     # the lesson file
    own = lesson.steps[0].ask.own
    assert (own.kind, own.options, own.answer) == ("rating", ("1", "2", "3", "4", "5"), "4")
    assert Lesson.from_json(lesson.to_json()).to_json() == lesson.to_json()   # written back
    told = own.tell(random_attention(run(Settings())), 0)
    q = told.question
    assert q.kind == "rating" and q.decode(q.encode("4")) == "4"
    assert q.of.verdict(q, told.key, "3") == "**Off**: you rated 3, the page 4."
    rows = list(csv.DictReader(io.StringIO(answers_csv([Tally(1, 1, q, {"4": 2, "3": 1})]))))
    assert {(r["kind"], r["index"], r["answer"], r["count"]) for r in rows} == {
        ("rating", "3", "4", "2"), ("rating", "2", "3", "1")}
    text = moodle_xml("ratings", [LmsItem("1. How strong?", "How strong is it?", told)])
    answers = [(a.find("text").text, a.get("fraction"))
               for a in ET.fromstring(text.encode()).iter("answer")]
    assert _moodle_types(text) == ["multichoice"] and ("<p>4</p>", "100") in answers
    ask = ask_of(told, q)
    assert ask["kind"] == "rating" and ask["control"] == "pills" and len(ask["choices"]) == 5
    fig = class_figure(q, {"4": 2, "3": 1}, 3, truth="4")
    assert fig.layout.title.text.startswith("The class's predictions (3 answers)")


def test_a_lesson_file_asks_only_what_the_new_kinds_question_takes(registered):
    add_kind(replace(KINDS["choice"], name="rating", choices=(5, 5), own=OPTIONS))
    four = LESSON.replace('"4", "5"]', '"4"]')
    with pytest.raises(ValueError, match=r"`question.options`: expected what a rating question "
                                         r"takes \(a rating question needs 5 to 5 choices"):
        read_lesson(four, "ratings")
    with pytest.raises(ValueError, match="unknown key 'low'"):
        read_lesson(LESSON + "low = 1\n", "ratings")
    with pytest.raises(ValueError, match="`question.kind`: expected one of choice, poll, "
                                         "number, rating, found 'token'"):
        read_lesson(LESSON.replace('kind = "rating"', 'kind = "token"'), "ratings")


def test_a_kind_names_its_own_title_over_its_charts(registered):
    add_kind(replace(KINDS["poll"], name="mood", title="How the class feels"))
    q = Question("mood", ("fine", "tired"))
    assert class_figure(q, {"fine": 1}, 1).layout.title.text.startswith(
        "How the class feels (1 answer)")
    assert isinstance(q.of, Kind) and q.of.alt() == CHARTS["bars"].alt


def test_the_docs_examples_of_a_new_kind_and_a_new_control_run(registered):
    """docs/kinds.md's two snippets, as written there."""
    page = (Path(__file__).parent.parent / "docs" / "kinds.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, re.S)
    assert len(blocks) == 2
    for code in blocks:
        exec(compile(code, "docs/kinds.md", "exec"), {})
    assert "rating" in KINDS and CONTROLS["scale"].draws == "pills"


def _phone_with(chromium, ask: dict):
    """The phone's page (``page_html``) in Chromium, its stream one frame asking ``ask``: no
    server, every request answered here."""
    from xattn.server.phone import page_html

    frame = {"now": 0, "me": {"mine": None}, "room": {
        "code": "KINDS", "step": 1, "n_steps": 2, "round": 1, "version": 1, "phase": "asking",
        "title": "One", "question": "<p>Which?</p>", "about": "", "ask": ask}}
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.route("**/live/KINDS/events", lambda route: route.fulfill(
        status=200, headers={"content-type": "text/event-stream"},
        body=f"retry: 600000\ndata: {json.dumps(frame)}\n\n"))
    page.route("http://phone.test/?room=KINDS", lambda route: route.fulfill(
        status=200, content_type="text/html", body=page_html({"code": "KINDS"})))
    page.goto("http://phone.test/?room=KINDS")
    page.wait_for_function("document.getElementById('controls').children.length > 0",
                           timeout=60_000)
    return context, page


@pytest.mark.parametrize("name", BUILT_IN)
def test_phone_js_draws_every_kinds_control_from_its_payload(chromium, name):
    q, _, key, _ = SAMPLES[name]
    context, page = _phone_with(chromium, ask_of(_told(q, key), q))
    try:
        assert page.locator("#controls [role=alert]").count() == 0
        assert page.locator("#controls button, #controls input").count() >= 2
    finally:
        context.close()


@pytest.mark.parametrize("control", ["dial", "constructor"])    # not the table's prototype's
def test_a_phone_sent_a_control_it_cannot_draw_says_so_instead_of_a_blank(chromium, control):
    """Issue 43: a kind with a new control left the phone silently without one."""
    context, page = _phone_with(chromium, {"kind": "dial", "control": control,
                                           "prompt": "<p>Turn it.</p>"})
    try:
        said = page.locator("#controls [role=alert]").inner_text()
        assert f"cannot show this question's control ({control})" in said
    finally:
        context.close()


def test_a_tap_is_right_within_one_patch_and_only_a_tap_question_takes_an_image():
    q, _, key, _ = SAMPLES["tap"]
    assert [q.of.right(q, key, t) for t in ((0, 1), (2, 3), (1, 0), (0, 0))] == \
        [True, True, False, False]                      # a diagonal neighbour; two apart
    assert q.encode([2, 3]) == "2-3"
    for bad in ((3, 0), (0, 4), (True, 0), "1-2", (1,)):
        assert q.of.encode(q, bad) is None, bad
    with pytest.raises(ValueError, match="only tap and tap_time questions take an image"):
        Question("choice", ("up", "down"), image=PNG)
    with pytest.raises(ValueError, match="data: URL"):
        Question("tap", ("1",), rows=("1",), image="https://example.com/cat.png")


def test_a_tap_on_time_is_right_within_one_bin_and_said_in_seconds():
    q, _, key, _ = SAMPLES["tap_time"]
    assert q.choices[:2] == ("0.00–0.10 s", "0.10–0.20 s")
    assert [q.of.right(q, key, b) for b in (3, 2, 4, 1, 5, 0)] == \
        [True, True, True, False, False, False]
    assert q.encode(5) == "5" and q.decode("5") == 5 and q.elements(5) == (5,)
    assert q.of.verdict(q, key, 3).startswith("**Right**: you tapped the peak's moment "
                                              "(0.30–0.40 s)")
    assert "within one time bin counts" in q.of.verdict(q, key, 4)
    assert q.of.verdict(q, key, 0) == ("**Not this time**: you tapped 0.00–0.10 s, 3 time bins "
                                       "from the peak's moment (0.30–0.40 s).")
    for bad in (6, -1, True, 2.0, "3", None, (3,)):
        with pytest.raises(ValueError, match=r"this step takes a time bin from 0 to 5 \(0 is "
                                             r"0.00–0.10 s, 5 is 0.50–0.60 s\); received"):
            q.encode(bad)
    with pytest.raises(ValueError, match="a tap_time question needs 2 to 40 choices"):
        Question("tap_time", time_bin_labels(41, 0.05))


def test_a_tap_on_time_is_drawn_under_the_models_attention_on_one_time_axis():
    from xattn.figures.phone import phone_chart

    q, _, key, _ = SAMPLES["tap_time"]
    fig = class_figure(q, {0: 1, 3: 2}, 3, truth=3, weights=(0.1, 0.2, 0.1, 0.8, 0.4, 0.0))
    model, peak, taps, mark = fig.data
    assert (model.yaxis, taps.yaxis) == ("y2", "y")              # the model's strip on top
    assert fig.layout.yaxis2.domain[0] > fig.layout.yaxis.domain[1]
    assert fig.layout.xaxis2.matches == "x"                    # one time axis
    assert list(fig.layout.xaxis.ticktext) == ["0.00", "0.10", "0.20", "0.30", "0.40", "0.50"]
    assert fig.layout.xaxis.title.text.startswith("time (s)")
    assert list(taps.z[0]) == pytest.approx([1 / 3, 0, 0, 2 / 3, 0, 0])
    assert max(model.z[0]) == pytest.approx(1.0) and (peak.x, mark.x) == ((3,), (3,))
    spec = phone_chart(fig, alt=q.of.alt(revealed=True))
    assert [p["y"] for p in spec["panels"]] == [["the model"], ["the class"]]
    assert spec["panels"][1]["marks"] == [[0, 3, "outline"]]
    assert "time bin" in spec["alt"] and spec["alt"].endswith("outlined.")
    alone = class_figure(q, {0: 1}, 1)                         # before the reveal: the class's
    assert len(alone.data) == 1 and alone.data[0].yaxis == "y"
