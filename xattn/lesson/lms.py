"""A lesson's questions for a learning management system: Moodle XML, each with the answer the
page computed from its step's own weights.

Each computed or own question becomes the Moodle question type that grades it the same way:
a choice or a token (one of several) a ``multichoice`` with the right answer (and any tie) at
100 %, a number a ``numerical`` with its tolerance, each head's job an embedded-answers
(``cloze``) question with one menu per head offering every job and accepting its job and its
close calls at 100 % (a ``match`` offers only the answers of its rows and accepts one per
row), a word alignment a ``match`` (a target word to the source word it translates) whose
menu offers every source word. The question's text is the step's question with its «fields»
filled (`step_item`), and a question about one head, the heads averaged or each head's job
carries those weights as SVG heatmaps (``xattn.figures.svg``: Plotly's static export needs
kaleido, not installed here), embedded in the file as Moodle does (``@@PLUGINFILE@@``). A
question about something else (a training curve, two seeds) carries no picture: its
text says what to open on the page. A poll has no
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

from xattn.classroom.moodle import Moodle
from xattn.markup import to_html

__all__ = ["LmsFigure", "LmsItem", "moodle_xml", "step_item", "weight_figures"]


class LmsFigure(NamedTuple):
    """A picture a question carries: its file name in the question, the SVG, its alt text."""

    name: str
    svg: str
    alt: str


class LmsItem(NamedTuple):
    """One step for the export: its name, its words (Markdown, «fields» filled), what it told
    of its own weights (``xattn.lesson.Told``) and the pictures it needs."""

    name: str
    text: str
    told: object
    figures: tuple = ()


def _which(told, a) -> list[tuple[int, int]]:
    """The (layer, head) pictures a question needs (head -1: the heads averaged), never
    only the head or layer that is its answer."""
    choices = told.question.choices if told.question is not None else ()
    if any(c.key[0] == "head" and c.key[3] is not None for c in told.charts):
        return []                          # compares with weights made elsewhere (a seed)
    if choices and all(str(c).startswith("layer ") for c in choices):
        return [(lay, -1) for lay in range(a.n_layers)]
    if told.layer is None:
        return []
    if told.parts or (choices and all(str(c).startswith("head ") for c in choices)):
        return [(told.layer, h) for h in range(min(a.n_heads, len(told.parts) or a.n_heads))]
    return [] if told.head is None else [(told.layer, told.head)]


def weight_figures(n: int, told, a) -> tuple[LmsFigure, ...]:
    """The weights step ``n``'s question is about, as SVG heatmaps: every head (or layer)
    when the question asks which one, each head for a job question, else its head or the
    heads averaged; none for a question about something else or about weights the step
    makes elsewhere (another seed, the random start)."""
    from xattn.figures.svg import weights_svg

    out = []
    for layer, h in _which(told, a):
        w = a.layer(layer)                                           # (n_heads, T, S)
        where = f"layer {layer + 1}, " if a.n_layers > 1 else ""
        title = where + ("all heads averaged" if h == -1 else f"head {h + 1}")
        alt = (f"Heatmap of the attention weights of {title}: target tokens down, source "
               "tokens across, each cell's weight written in it.")
        name = f"step{n}-layer{layer + 1}-" + ("mean" if h == -1 else f"head{h + 1}")
        out.append(LmsFigure(name + ".svg", weights_svg(w.mean(axis=0) if h == -1 else w[h],
                                                        a.tgt_tokens, a.src_tokens, title),
                             alt))
    return tuple(out)


def step_item(n: int, step, told, a=None) -> LmsItem:
    """Step ``n`` (an ``xattn.lesson.Step``) for the export: its question with its «fields»
    filled from ``told``, and the weights it is about when ``a`` (its Attention) is given."""
    _, _, question = step.render(told)
    return LmsItem(f"{n}. {step.title}", question, told,
                   weight_figures(n, told, a) if a is not None and told is not None else ())


def _text(parent, tag: str, text: str, fmt: str | None = None) -> ET.Element:
    el = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    ET.SubElement(el, "text").text = text
    return el


def _images(item: LmsItem) -> str:
    import html

    return "".join(f'<p><img src="@@PLUGINFILE@@/{f.name}" alt="{html.escape(f.alt)}"></p>'
                   for f in item.figures)


def _head(root, kind: str, item: LmsItem, more: str = "") -> ET.Element:
    import base64

    q = ET.SubElement(root, "question", {"type": kind})
    _text(q, "name", item.name)
    text = _text(q, "questiontext", to_html(item.text) + to_html(item.told.prompt)
                 + _images(item) + more, "html")
    for f in item.figures:
        ET.SubElement(text, "file", {"name": f.name, "path": "/", "encoding": "base64"}
                      ).text = base64.b64encode(f.svg.encode()).decode()
    _text(q, "generalfeedback", to_html(item.told.answer), "html")
    ET.SubElement(q, "defaultgrade").text = "1"
    ET.SubElement(q, "penalty").text = "0"
    return q


def _answer(q, text: str, fraction: float, fmt: str = "html") -> ET.Element:
    a = ET.SubElement(q, "answer", {"fraction": f"{fraction:g}", "format": fmt})
    ET.SubElement(a, "text").text = text
    return a


def _plain_html(text: str) -> str:
    import html

    return f"<p>{html.escape(text)}</p>"


def _multichoice(root, item: LmsItem, m: Moodle) -> None:
    x = _head(root, "multichoice", item)
    ET.SubElement(x, "single").text = "true"
    ET.SubElement(x, "shuffleanswers").text = "false"
    ET.SubElement(x, "answernumbering").text = "abc"
    for text, fraction in m.answers:
        _answer(x, _plain_html(text), fraction)


def _numerical(root, item: LmsItem, m: Moodle) -> None:
    x = _head(root, "numerical", item)
    (text, tolerance), = m.answers
    a = _answer(x, text, 100, "moodle_auto_format")
    ET.SubElement(a, "tolerance").text = f"{tolerance:g}"


def _match(root, item: LmsItem, m: Moodle) -> None:
    """A matching question; every offered text not the answer of a row is added as an
    extra answer (a subquestion with no text: Moodle's way to offer a choice no row has)."""
    x = _head(root, "matching", item)
    ET.SubElement(x, "shuffleanswers").text = "true"
    for left, right in m.answers:
        sub = _text(x, "subquestion", _plain_html(left), "html")
        a = ET.SubElement(sub, "answer")
        ET.SubElement(a, "text").text = right
    for extra in dict.fromkeys(o for o in m.offered if o not in {r for _, r in m.answers}):
        sub = _text(x, "subquestion", "", "html")
        a = ET.SubElement(sub, "answer")
        ET.SubElement(a, "text").text = extra


def _cloze_escape(text: str) -> str:
    """An answer inside an embedded-answers field: Moodle's special characters escaped."""
    for c in "\\}#~/\"":
        text = text.replace(c, "\\" + c)
    return text


def _cloze(root, item: LmsItem, m: Moodle) -> None:
    """Each part (a head) a menu of every choice: its truth marked right (=), its close calls
    at 100 % too, as the page accepts them."""
    import html

    menus = []
    for name, right, answers in m.answers:
        options = "~".join(("=" if c == right else "%100%" if f == 100 else "")
                           + _cloze_escape(c) for c, f in answers)
        menus.append(f"<p>{html.escape(name)}: {{1:MULTICHOICE:{options}}}</p>")
    _head(root, "cloze", item, "".join(menus))


_WRITERS = {"multichoice": _multichoice, "numerical": _numerical, "matching": _match,
            "cloze": _cloze}


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
        elif (m := q.of.moodle(q, item.told.key)) is not None:   # the kind's own Moodle
            _WRITERS[m.type](root, item, m)
        else:
            why = ("a poll, no right answer" if not q.of.graded else
                   f"a {q.kind} question Moodle cannot grade as this page does")
            root.append(ET.Comment(f" {_safe(item.name)}: {why}, left out "))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def _safe(text: str) -> str:
    """Text for an XML comment: no ``--`` (which would end it)."""
    return text.replace("--", "- -")
