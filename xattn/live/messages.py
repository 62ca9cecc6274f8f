"""What a phone is sent when its class moves: one message per room per move, as JSON.

`room_message` turns a read of the room (a ``RoomView``) into a ``xattn.classroom.hub.Message``:
the step's heading, its question and the prediction control it asks for, the step's words
(folded on the phone), the timer, and after the reveal the answer in words, the class's
answers and the chart that answers the question. Everything comes from the same place as on
the lecturer's page: the step's prepared weights and what the step tells of them
(``xattn.live.answers.class_step``), the same figures (``answer_charts``, ``class_figure``,
the versus chart of step 14) turned into a phone's chart specs (``xattn.figures.phone``).
Where the room asks how sure each answer is, the control carries the levels to tap
(``xattn.classroom.confidence``); where it shows a revote the round before (the host's
switch), the asking round carries that round's chart of the class's answers.
Markdown becomes HTML here (``xattn.markup``): the phone shows it as the server made it, and
everything else (a token, a choice, a label) as text, never as markup.

What is the same for every room on a step (the words, the question, the charts of the
weights) is made once per server process (`step_part`); what depends on the room (its
counts, timer and phase) once per move.
"""

from __future__ import annotations

import json
import math
import threading
from collections import OrderedDict
from dataclasses import replace

# Whole before any figure is built in a thread (see xattn/ui/page.py: Plotly looks pandas up
# in sys.modules while building a figure).
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401

from xattn.classroom import NO_QUESTION, Question, RoomView, Tally
from xattn.classroom.confidence import LABELS as LEVEL_LABELS
from xattn.classroom.confidence import LEVELS
from xattn.classroom.hub import Message
from xattn.figures.class_words import binned_words, class_alt, earlier_title
from xattn.figures.classroom import class_figure
from xattn.figures.phone import phone_chart
from xattn.figures.words import chart_words
from xattn.jobs import LABELS
from xattn.lesson import Lesson, Told, verdict
from xattn.lesson.followup import case_step
from xattn.lesson.misconceptions import surprise
from xattn.lesson.translated import labels_in, step_in, words_in
from xattn.live.answers import answer_charts, class_step
from xattn.live.compute import derived
from xattn.live.prepared import StepUnavailable
from xattn.live.versus import ALT as VERSUS_ALT
from xattn.live.versus import class_versus, versus_chart
from xattn.markup import to_html
from xattn.words import language, say, speaking

__all__ = ["room_message", "ask_of", "earlier_chart", "plain", "warm", "step_part", "labelled",
           "label_of", "label_text"]


def plain(value):
    """An answer as JSON holds it: tuples as lists, the rest as is."""
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    return value


def ask_of(told: Told, question: Question, confidence: bool = False,
           shown: list[str] | None = None) -> dict:
    """The prediction control a phone draws for ``question`` (the step's own): its kind, the
    kind's control (``xattn.classroom.kinds``), what it offers and the prompt (HTML); with
    ``confidence``, the levels of how sure a student is (``[level, label]``, most sure
    first); ``shown``, the options as the phone's language says them (their values, sent
    back, stay the lesson's). Labels are text: the phone never reads them as HTML."""
    ask = {**question.of.payload(question),
           "prompt": to_html(say("**Your prediction.** {prompt}", prompt=told.prompt))}
    if shown is not None and len(shown) == len(ask.get("choices", ())):
        ask["shown"] = shown
    if confidence:
        ask["levels"] = [[level, LEVEL_LABELS[level]] for level in LEVELS]
    return ask


def label_text(label) -> str:
    """An option's label as one text: a label is a str, or its pieces ``[words, token, words,
    token, ...]`` (the phone draws each token as one, untranslated: `Told.shown`)."""
    return "".join(label) if isinstance(label, (list, tuple)) else label


def label_of(choices, shown: list | None) -> dict:
    """Each value of ``choices`` and the text of its label in ``shown`` ({} without labels)."""
    return {c: label_text(s) for c, s in zip(choices, shown, strict=True)} if shown else {}


def labelled(told: Told, shown: list | None) -> Told:
    """``told`` with its choice question's options as the phone shows them (``shown``: its
    language's labels), so that a verdict names the option the student tapped in the words it
    read: the truth, ties and misconceptions' answers mapped the same way."""
    question = told.question
    if not shown or question is None or question.kind not in ("choice", "poll"):
        return told
    said = label_of(question.choices, shown)
    return replace(told, question=replace(question, choices=tuple(said.values())),
                   truth=said.get(told.truth, told.truth),
                   also=tuple(said.get(a, a) for a in told.also),
                   distractors=tuple(replace(d, value=said.get(d.value, d.value))
                                     for d in told.distractors))


def _choices_said(question: Question) -> list[str] | None:
    """A computed choice question's options in the context's language (the catalog's, where
    an option is a msgid: *It goes down*), or None when they read the same."""
    if question.kind not in ("choice", "poll"):
        return None
    said = [say(c) for c in question.choices]
    return None if said == list(question.choices) else said


def step_part(lesson: Lesson, n: int, case: int = 0, language: str | None = None) -> dict:
    """What every room on step ``n`` of ``lesson`` (on its new case ``case``: a follow-up)
    shows alike in ``language`` (default: the lesson's own; a language the lesson lacks
    gives its own: ``xattn.lesson.translated.words_in``), once per server process."""
    language = words_in(lesson, language or lesson.language)

    def make() -> dict:
        step = case_step(step_in(lesson, n, language), case)
        a, told = class_step(lesson, n, case=case, language=language)
        text, look, question = step.render(told)
        with speaking(language):
            about = say("{text}\n\n**Look at:** {look}", text=text, look=look)
        return {"title": step.title, "question": to_html(question), "about": to_html(about),
                "note": to_html(told.note) if told.note else None,
                "answer_text": to_html(told.answer), "lang": language,
                "shown": labels_in(lesson, n, language) or _told_shown(told)}
    return derived(("phone-step", lesson.digest, n, case, language), make)


def _told_shown(told: Told) -> list[str] | None:
    """A computed choice's options as its ``Told`` says them in its language (*tête 2* for
    the value *head 2*), or None when they read as their values."""
    q = told.question
    if not told.shown or q is None or [label_text(s) for s in told.shown] == list(q.choices):
        return None
    return [list(s) if isinstance(s, tuple) else s for s in told.shown]


def _charts(a, told: Told, view: RoomView, asks: bool) -> tuple[list, str | None]:
    """The phone's charts after the reveal (the class's answers first, where they are a chart
    of their own) and, for links, the line comparing the class with the heads (HTML, in the
    context's language), the charts' words in it too (``xattn.figures.words``)."""
    charts, line = [], None
    if asks and view.question.of.drawn.versus:     # the class beside every layer and head
        v = class_versus(a, view.counts, view.n_answered)
        fig = versus_chart(a, told, v, view.counts, lang=language())
        charts.append(phone_chart(fig, alt=chart_words(language())(VERSUS_ALT)))
        line = to_html(v.line) + to_html(v.table)
    if asks and (told.row is None or not told.question.of.asked.taps) \
            and not view.question.of.drawn.versus:
        question, counts, truth, also = view.question, view.counts, told.truth, told.also_right
        lang = language()
        alt = class_alt(question, revealed=True, lang=lang)
        if question.of.number and len([n for n in counts.values() if n]) > MAX_BARS:
            question, counts, truth, also = _binned(view.question, counts, truth, also)
            alt += binned_words(BINS, lang).alt
        fig = class_figure(question, counts, view.n_answered, truth=truth, also=also,
                           labels=LABELS, weights=told.weights if question.of.image
                           and told.weights else None, lang=lang)
        spec = phone_chart(fig, alt=alt)
        if question is not view.question:
            spec["title"] += binned_words(BINS, lang).title
        charts.append(spec)
    for fig, alt in answer_charts(a, told, view):
        charts.append(phone_chart(fig, alt=alt))
    return charts, line


MAX_BARS = 24     # distinct numbers a phone's bar chart shows one bar each; more are binned
BINS = 20


def _binned(question: Question, counts: dict, truth, also) -> tuple:
    """A number question's counts in `BINS` equal ranges from ``low`` to ``high`` (a phone
    cannot show 600 bars), as a choice question of the ranges; the truth's range marked."""
    width = (question.high - question.low) / BINS
    labels = [f"{question.low + k * width:.{question.decimals}f}–"
              f"{question.low + (k + 1) * width:.{question.decimals}f}" for k in range(BINS)]

    def bin_of(value: float) -> str:
        return labels[min(BINS - 1, max(0, int((float(value) - question.low) // width)))]
    binned = dict.fromkeys(labels, 0)
    for value, n in counts.items():
        binned[bin_of(value)] += int(n)
    truth = None if truth is None else bin_of(truth)
    return (Question("choice", tuple(labels)), binned, truth,
            tuple(bin_of(a) for a in also if a is not None))


def earlier_chart(earlier: Tally) -> dict:
    """A phone's chart of how the class answered round ``earlier`` (no answer marked: it
    shows the class's votes, not the truth), for a revote's phones to see while they vote."""
    question, counts, n = earlier.question, earlier.counts, earlier.n_answered or 0
    lang = language()               # the build's (``speaking``)
    alt, ranges = class_alt(question, lang=lang), ""
    if question.of.number and len([k for k in counts.values() if k]) > MAX_BARS:
        question, counts, _, _ = _binned(question, counts, None, ())
        alt += binned_words(BINS, lang).alt
        ranges = binned_words(BINS, lang).title
    spec = phone_chart(class_figure(question, counts, n, labels=LABELS, lang=lang), alt=alt)
    spec["title"] = earlier_title(earlier.round, n, lang) + ranges
    return spec


def room_message(view: RoomView, lesson: Lesson, earlier: Tally | None = None,
                 language: str | None = None) -> Message:
    """The message every phone of ``view``'s room that reads ``language`` is sent for this
    state of the room (whose lesson is ``lesson``): the lesson's words in that language, or
    in its own when it lacks it (the message's ``lang`` says which). ``earlier``: the round
    before this one, when the room shows it to a revote's phones before the reveal
    (``RoomView.histogram_before``): the asking round's message carries its chart, if it
    asked the same question."""
    n, case = view.step, view.question.case
    language = words_in(lesson, language or lesson.language)
    with speaking(language):
        return _room_message(view, lesson, earlier, language, n, case)


def _room_message(view, lesson, earlier, language, n, case) -> Message:
    try:
        a, told = class_step(lesson, n, case=case, language=language)
        part = step_part(lesson, n, case, language)
    except StepUnavailable as err:                # the step says why, in one line
        a, told = None, Told({}, say("This step cannot be shown here: {why}", why=str(err)))
        part = {"title": step_in(lesson, n, language).title, "question": "", "about": "",
                "note": None, "answer_text": to_html(told.answer), "shown": None}
    asks = told.question is not None and view.question == told.question
    room = {"code": view.code, "step": n, "n_steps": view.n_steps, "round": view.round,
            "phase": view.phase, "version": view.version,
            "timer": None if view.timer is None else {
                "seconds": view.timer.seconds, "ends_at": view.timer.ends_at,
                "reveal": view.timer.reveal},
            "title": part["title"], "question": part["question"], "about": part["about"],
            "note": part["note"],
            "ask": ask_of(told, view.question, view.confidence,
                          part["shown"] or _choices_said(view.question)) if asks else None,
            "reads": view.question == NO_QUESTION, "lang": language}
    if asks and earlier is not None and view.phase != "revealed" \
            and earlier.question == view.question and earlier.round == view.round - 1:
        room["earlier"] = {"round": earlier.round, "chart": earlier_chart(earlier)}
    if view.phase == "revealed":
        charts, line = _charts(a, told, view, asks) if a is not None else ([], None)
        room["answer"] = {"text": part["answer_text"], "charts": charts, "versus": line,
                          "n_answered": view.n_answered}
    body = json.dumps(room, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=_number).encode()
    question = view.question if asks else None
    revealed = view.phase == "revealed"
    shown = room["ask"].get("shown") if asks and room["ask"] else None
    judged = labelled(told, shown)
    label = label_of(view.question.choices, shown)

    def judge(text: str | None) -> dict:
        """What the reveal tells the answer ``text`` (None: no answer): its verdict (HTML) and
        the steps to revisit, the same for every room on this step in this language."""
        mine = None if text is None else view.question.decode(text)
        with speaking(language):
            said = to_html(verdict(judged, label.get(mine, mine) if label else mine)
                           if mine is not None else
                           say("You did not predict this step: here is the answer."))
        return {"verdict": said, "surprise": surprise(told, mine)}

    def judged_once(text: str | None) -> dict:
        return _judged((lesson.digest, n, case, language, view.question, text),
                       lambda: judge(text))

    def personal(text: str | None) -> dict:
        mine = None if text is None or question is None else question.decode(text)
        out = {"mine": plain(mine)}
        if revealed and question is not None:
            out.update(judged_once(text))
        return out

    return Message((view.code, view.version, view.phase, n, view.round), body, n, view.round,
                   question, personal, bool(asks and view.confidence), language=language,
                   ahead=judged_once if asks and not revealed else None)


MAX_JUDGED = 8192     # verdicts kept (about 1 kB each): 500 phones' answers to 16 steps
_judged_lock = threading.Lock()
_judged_kept: OrderedDict = OrderedDict()


def _judged(key: tuple, make) -> dict:
    """``make()``, the verdict of one answer on one step in one language (``key``), made once
    per process: while a step asks, the hub makes the verdict of each answer its phones send
    (``Message.ahead``), so that the reveal finds it made."""
    with _judged_lock:
        made = _judged_kept.get(key)
        if made is not None:
            _judged_kept.move_to_end(key)
            return made
    made = make()
    with _judged_lock:
        _judged_kept[key] = made
        while len(_judged_kept) > MAX_JUDGED:
            _judged_kept.popitem(last=False)
    return made


def warm(lesson: Lesson, language: str | None = None) -> None:
    """Make every step's words and answer charts of ``lesson`` now, in ``language`` (default:
    the lesson's own), as a process that sees a room of it first does for each language its
    phones read: a move to a step this process has not shown then costs a message, not a
    model's load nor a step told again in that language."""
    for n in range(1, len(lesson.steps) + 1):
        try:
            step_part(lesson, n, 0, language)
            a, told = class_step(lesson, n, language=language)
        except StepUnavailable:
            continue
        question = told.question or NO_QUESTION
        answer_charts(a, told, RoomView("WARMUP", n, len(lesson.steps), "revealed", 1,
                                        question))


def _number(value):
    """NumPy numbers as JSON numbers (NaN as null)."""
    v = float(value)
    return v if math.isfinite(v) else None
