"""A lesson's questions for a learning management system: Moodle XML, each with the answer the
page computed from its step's own weights.

Each computed or own question becomes the Moodle question type that grades it the same way:
a choice or a token (one of several) a ``multichoice`` with the right answer (and any tie) at
100 %, a number a ``numerical`` with its tolerance, each head's job or a word alignment a
``match`` (a head to its job, a target word to the source word it translates). A poll has no
right answer and a step that asks nothing has no question: both are left out, and the file
says so in a comment. The step's words come as HTML made by ``xattn.markup`` (every token a
user typed stays the characters it is); the answer's words are the general feedback.

The format is Moodle's own (docs.moodle.org: Moodle XML format), as its importer reads it
(``question/format/xml/format.php``): ``tests/test_lms.py`` reads a file back with the same
paths and defaults.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from typing import NamedTuple

from xattn.markup import to_html

__all__ = ["LmsItem", "moodle_xml"]


class LmsItem(NamedTuple):
    """One step for the export: its name, its words (Markdown) and what it told of its own
    weights (``xattn.lesson.Told``)."""

    name: str
    text: str
    told: object


def _text(parent, tag: str, text: str, fmt: str | None = None) -> ET.Element:
    el = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(el, "text").text = text
    return el


def _head(root, kind: str, item: LmsItem) -> ET.Element:
    q = ET.SubElement(root, "question", {"type": kind})
    _text(q, "name", item.name)
    _text(q, "questiontext", to_html(item.text) + to_html(item.told.prompt), "html")
    _text(q, "generalfeedback", to_html(item.told.answer), "html")
    ET.SubElement(q, "defaultgrade").text = "1"
    ET.SubElement(q, "penalty").text = "0"
    return q


def _answer(q, text: str, fraction: float, fmt: str = "html") -> ET.Element:
    a = ET.SubElement(q, "answer", {"fraction": f"{fraction:g}", "format": fmt})
    ET.SubElement(a, "text").text = text
    return a


def _multichoice(root, item: LmsItem) -> None:
    told, q = item.told, item.told.question
    options = q.options()
    right = {told.truth, *told.also}
    x = _head(root, "multichoice", item)
    ET.SubElement(x, "single").text = "true"
    ET.SubElement(x, "shuffleanswers").text = "false"
    ET.SubElement(x, "answernumbering").text = "abc"
    for o in options:
        _answer(x, _plain_html(q.of.shown(q, o)), 100 if o in right else 0)


def _plain_html(text: str) -> str:
    import html

    return f"<p>{html.escape(text)}</p>"


def _numerical(root, item: LmsItem) -> None:
    told = item.told
    x = _head(root, "numerical", item)
    a = _answer(x, f"{float(told.truth):.{told.question.decimals}f}", 100, "moodle_auto_format")
    ET.SubElement(a, "tolerance").text = f"{told.tolerance:g}"


def _match(root, item: LmsItem, pairs: Sequence[tuple[str, str]]) -> None:
    x = _head(root, "matching", item)
    ET.SubElement(x, "shuffleanswers").text = "true"
    for left, right in pairs:
        sub = _text(x, "subquestion", _plain_html(left), "html")
        a = ET.SubElement(sub, "answer")
        ET.SubElement(a, "text").text = right


def _pairs(told) -> list[tuple[str, str]] | None:
    """A matching question's pairs: each part and its right choice, or each target word with
    exactly one gold source word; None when fewer than two (Moodle needs two)."""
    q, gold = told.question, {}
    if told.parts:
        pairs = [(p.name, p.truth) for p in told.parts]
        return pairs if len(pairs) >= 2 else None
    for t, s in told.truth:
        gold.setdefault(t, []).append(s)
    pairs = [(q.rows[t], q.choices[s[0]]) for t, s in sorted(gold.items()) if len(s) == 1]
    return pairs if len(pairs) >= 2 else None


def moodle_xml(title: str, items: Sequence[LmsItem]) -> str:
    """The questions of ``items`` as one Moodle XML file (UTF-8 text), in a category named
    ``title``; steps with no right answer are comments."""
    root = ET.Element("quiz")
    cat = ET.SubElement(root, "question", {"type": "category"})
    _text(cat, "category", f"$course$/top/{title}")
    for item in items:
        q = item.told.question
        if q is None:
            root.append(ET.Comment(f" {_safe(item.name)}: asks nothing, left out "))
        elif q.of.lms == "multichoice":
            _multichoice(root, item)
        elif q.of.lms == "numerical":
            _numerical(root, item)
        elif q.of.lms == "matching" and _pairs(item.told):
            _match(root, item, _pairs(item.told))
        else:
            why = ("a poll, no right answer" if not q.of.graded else
                   f"a {q.kind} question Moodle cannot grade as this page does")
            root.append(ET.Comment(f" {_safe(item.name)}: {why}, left out "))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _safe(text: str) -> str:
    """Text for an XML comment: no ``--`` (which would end it)."""
    return text.replace("--", "- -")
