"""xattn/lesson/lms.py: a lesson's questions as Moodle XML, read back here along the paths and
with the defaults Moodle's importer uses (question/format/xml/format.php: a question's name
and text, a multichoice's answers and their fractions, a numerical's answer and tolerance, a
matching question's subquestions), each graded as the page grades it."""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET

import pytest
from test_lessonfile import docs_example

from xattn.lesson import SHIPPED, is_right, read_lesson
from xattn.lesson.lms import LmsItem, moodle_xml
from xattn.ui.link import lesson_setting
from xattn.ui.room.answers import class_step

FORMATS = ("moodle_auto_format", "html", "plain_text", "wiki_like", "markdown")


def items(lesson):
    out = []
    for n, step in enumerate(lesson.steps, 1):
        _, told = class_step(lesson, n, show=False)
        out.append(LmsItem(f"{n}. {step.title}", step.question, told))
    return out


def read_back(text: str) -> list[dict]:
    """The file as Moodle's importer reads it (getpath with its defaults)."""
    root = ET.fromstring(text.encode())
    assert root.tag == "quiz"
    out = []
    for q in root.findall("question"):
        kind = q.get("type")
        if kind == "category":
            assert q.find("category/text").text.startswith("$course$/top/")
            continue
        name = q.find("name/text").text
        assert name and name.strip(), "xmlimportnoname"
        qt = q.find("questiontext")
        assert qt.get("format", "html") in FORMATS and qt.find("text").text.strip()
        got = {"type": kind, "name": name}
        if kind == "multichoice":
            assert (q.findtext("single") or "true") == "true"
            got["answers"] = [(a.find("text").text, float(a.get("fraction", 0)) / 100)
                              for a in q.findall("answer")]
            assert max(f for _, f in got["answers"]) == 1.0
        elif kind == "numerical":
            (a,) = q.findall("answer")
            got["answer"] = float(a.find("text").text)
            got["tolerance"] = float(a.findtext("tolerance") or 0)
            assert float(a.get("fraction")) == 100
        elif kind == "matching":
            subs = q.findall("subquestion")
            assert len(subs) >= 2
            got["pairs"] = [(s.find("text").text, s.find("answer/text").text) for s in subs]
        else:
            pytest.fail(f"unexpected question type {kind}")
        out.append(got)
    return out


def test_the_default_lesson_exports_every_graded_question_with_its_computed_answer():
    text = moodle_xml(SHIPPED.title, items(SHIPPED))
    got = {q["name"]: q for q in read_back(text)}
    assert len(got) == 14                     # every step asks a graded question
    for n, step in enumerate(SHIPPED.steps, 1):
        _, told = class_step(SHIPPED, n, show=False)
        q = got[f"{n}. {step.title}"]
        if q["type"] == "multichoice":
            right = [t for t, f in q["answers"] if f == 1.0]
            options = told.question.options()
            shown = [told.question.choices[o] if told.question.kind == "token" else o
                     for o in options]
            assert [f"<p>{html.escape(str(s))}</p>" for s, o in zip(shown, options, strict=True)
                    if is_right(told, o)] == right
        elif q["type"] == "numerical":
            assert q["answer"] == pytest.approx(told.truth, abs=0.005)
            assert q["tolerance"] == told.tolerance
        else:
            assert q["pairs"]


def test_a_poll_is_left_out_and_a_typed_token_stays_its_characters():
    lesson = read_lesson(docs_example().replace("the old man", "the <b>old</b> man"),
                         "seminar", page=lesson_setting)
    text = moodle_xml(lesson.title, items(lesson))
    assert "a poll, no right answer, left out" in text and "<b>" not in text
    got = read_back(text)
    assert [q["type"] for q in got] == ["multichoice", "multichoice", "numerical"]
    tokens = [t for t, _ in got[0]["answers"]]
    assert "<p>&lt;b&gt;</p>" in tokens and "<p>old</p>" in tokens   # escaped once
