"""A homework on a phone: each student walks the lesson at their own pace, predict, then see.

A homework room (``ClassStore.create_room(..., homework=...)``) has no class step. Its stream
(``xattn.classroom.hub``) carries one small message for every phone of the room
(`homework_room`: the lesson's titles, when the homework closes), and each phone asks for the
step it shows, ``GET /live/CODE/step/N`` (`step_json`, served by ``phone.py``; ``N`` =
``next``: the first step it has not answered yet). The answer is the step's words, question
and control and, once the phone's own answer to that step is saved, the step's answer for it
alone: its verdict, the answer in words and the charts that answer the question (for links,
its own links beside every layer and head), as a live class shows them after the reveal.

What a homework's phone is not shown:

- **the class's answers.** A student answering early would see one or two classmates' answers,
  enough to tell whose in a small class, and the counts would change under a student reading
  them; the lecturer sees them (per step: answered, right, share right). Every student of a
  step is shown the same charts, made once per server process;
- **a step's answer before its own answer**, and nothing changes it afterwards (the store
  keeps a homework's first answer). After the homework closes, every step's answer is shown
  to every student of the class ("You did not answer this step ...");
- with a pre/post check (``check`` in the lesson file), the lesson's steps until the
  pre-check's steps are answered (they measure what the student knew before), and a pre-check
  step's answer until its post-check step is answered (the same question after the lesson).

`refused_before_check` is what the answer route says to an answer sent around the order
(a crafted request): one line, nothing stored.
"""

from __future__ import annotations

import json
import math
import time
from collections import OrderedDict

from xattn._checks import quote
from xattn.classroom import AnswerRefused, RoomView
from xattn.classroom.hub import Message
from xattn.classroom.said import said
from xattn.lesson import Lesson, Told, is_right, verdict
from xattn.lesson.misconceptions import surprise
from xattn.lesson.translated import step_in, words_in
from xattn.markup import to_html
from xattn.words import say, say_n, speaking

__all__ = ["homework_room", "step_message", "step_states", "first_open",
           "refused_before_check", "is_homework", "known", "step_json", "StepRefused",
           "json_number"]

_MODES: OrderedDict = OrderedDict()    # code -> whether it is a homework (a room's mode stays)
_MAX_MODES = 4096


def homework_room(view: RoomView, lesson: Lesson) -> Message:
    """What every phone of a homework room is sent when it moves (it opens, closes, or its
    closing time moves): the room, not a step. Each phone then asks for its own step."""
    room = {"code": view.code, "mode": "homework", "n_steps": view.n_steps,
            "version": view.version, "phase": view.phase, "closes_at": view.closes_at,
            "lesson": lesson.title, "titles": [s.title for s in lesson.steps]}
    body = json.dumps(room, separators=(",", ":"), ensure_ascii=False).encode()
    return Message((view.code, view.version, view.phase, "homework"), body, view.step,
                   view.round, homework=True)


def _told(lesson: Lesson, n: int, language: str | None = None) -> tuple:
    """Step ``n``'s prepared weights and what it tells, in ``language`` (None, None: not
    here)."""
    from xattn.live.answers import class_step
    from xattn.live.prepared import StepUnavailable

    try:
        return class_step(lesson, n, language=language)
    except StepUnavailable:
        return None, None


def _pre(lesson: Lesson) -> dict[int, int]:
    """Each pre-check step (room step) to its post-check step."""
    return dict(lesson.checks())


def step_states(lesson: Lesson, mine: dict, closed: bool) -> list[str]:
    """Each step's state for a student whose answers are ``mine`` (step -> (answer, level)):
    ``right``, ``wrong``, ``answered`` (no right answer: a poll, or weights not made here),
    ``held`` (a pre-check step whose answer waits for its post-check step), ``open``,
    ``read`` (nothing to answer) or ``locked`` (the pre-check comes first)."""
    pre = _pre(lesson)
    waiting = not closed and any(b not in mine for b in pre)
    out = []
    for n, step in enumerate(lesson.steps, 1):
        if n in mine:
            if n in pre and not closed and pre[n] not in mine:
                out.append("held")
                continue
            told = _told(lesson, n)[1]
            graded = told is not None and told.question is not None and told.question.of.graded
            out.append(("right" if is_right(told, mine[n][0]) else "wrong") if graded
                       else "answered")
        elif waiting and n not in pre:
            out.append("locked")
        else:
            out.append("read" if step.ask is None else "open")
    return out


def first_open(states: list[str]) -> int:
    """The step a phone opens on: the first it may answer and has not, else the last."""
    return next((k for k, s in enumerate(states, 1) if s == "open"), len(states))


def refused_before_check(lesson: Lesson, step: int, mine: dict) -> AnswerRefused | None:
    """Why an answer to ``step`` is refused before the pre-check is done (None: it is not)."""
    pre = _pre(lesson)
    if not pre or step in pre or all(b in mine for b in pre):
        return None
    return AnswerRefused(f"answer the check before the lesson first "
                         f"(step{'s' if len(pre) > 1 else ''} {_listed(sorted(pre))}): it "
                         "says what you knew before the lesson.").saying(
        said("why.hw.check", steps=", ".join(map(str, sorted(pre)))))


def _listed(steps: list[int], and_: str = " and ") -> str:
    """``1, 2 and 3``; ``and_`` is the last joint (``say(" and ")`` in the context's language:
    `_said_steps`; English for the log)."""
    return ", ".join(map(str, steps[:-1])) + (and_ if len(steps) > 1 else "") + str(steps[-1])


def _said_steps(steps: list[int]) -> str:
    return _listed(steps, say(" and "))


def _charts(lesson: Lesson, n: int, a, told: Told, answer,
            language: str = "en") -> tuple[list, str | None]:
    """The charts that answer step ``n`` (once per server process and language), and for
    links the student's own links beside every layer and head (per answer) with its line
    (HTML)."""
    from xattn.figures.class_words import VERSUS_ALT_YOURS
    from xattn.figures.phone import phone_chart
    from xattn.figures.words import chart_words
    from xattn.live.compute import derived, figure
    from xattn.live.versus import class_versus, versus_chart

    if told.question is not None and told.question.of.drawn.versus:
        counts = dict.fromkeys(answer or (), 1)
        v = class_versus(a, counts, int(answer is not None), "you")
        fig = versus_chart(a, told, v, counts, who="you", lang=language)
        alt = chart_words(language)(VERSUS_ALT_YOURS)
        return [phone_chart(fig, alt=alt)], to_html(v.line) + to_html(v.table)

    def make() -> list:
        return [phone_chart(figure(("answer-chart", a.key, language, *chart.key),
                                   lambda chart=chart: chart.make(1.0, language)),
                            alt=chart.said(language)) for chart in told.charts]
    return derived(("homework-charts", lesson.digest, n, a.key, language), make), None


def step_message(view: RoomView, lesson: Lesson, n: int, mine: dict,
                 language: str | None = None) -> dict:
    """What a phone shows of step ``n`` of homework ``view`` for a student whose answers are
    ``mine`` (step -> (answer, level)): ``{"room": ..., "me": ...}``, shaped as a live room's
    frame (``xattn.live.messages``) with the homework's own: ``steps`` (each step's
    state for this student, `step_states`) and ``line`` (what the step waits for). The
    lesson's words in ``language`` where the lesson has it (``lang`` says which), and the
    homework's own lines too."""
    language = words_in(lesson, language or lesson.language)
    with speaking(language):          # the homework's own lines in the lesson's words' language
        return _step_message(view, lesson, n, mine, language)


def _step_message(view: RoomView, lesson: Lesson, n: int, mine: dict, language: str) -> dict:
    from xattn.live.messages import ask_of, label_of, labelled, plain, step_part

    closed = view.phase == "closed"
    states = step_states(lesson, mine, closed)
    state, step = states[n - 1], step_in(lesson, n, language)
    room = {"code": view.code, "mode": "homework", "step": n, "n_steps": view.n_steps,
            "round": 1, "version": view.version, "closes_at": view.closes_at,
            "closed": closed, "timer": None, "title": step.title, "lesson": lesson.title,
            "titles": [step_in(lesson, k, language).title
                       for k in range(1, len(lesson.steps) + 1)], "steps": states,
            "reads": step.ask is None, "question": "", "about": "", "note": None, "ask": None,
            "lang": language}
    answer, level = mine.get(n, (None, None))
    me = {"mine": plain(answer), "level": level}
    if state == "locked":
        pre = sorted(_pre(lesson))
        room.update(phase="locked", line=say_n(
            "First answer the check before the lesson (step {steps}): it says what you knew "
            "before the lesson, so this step's words and question come after it.",
            "First answer the check before the lesson (steps {steps}): it says what you knew "
            "before the lesson, so this step's words and question come after it.",
            len(pre), steps=_said_steps(pre)))
        return {"room": room, "me": me}
    a, told = _told(lesson, n, language)
    if told is None:
        room.update(phase="revealed" if closed or n in mine else "asking",
                    line=say("This step cannot be shown on this server."))
        room["answer"] = {"text": to_html(say("This step's weights cannot be made on this "
                                              "server.")), "charts": [], "versus": None}
        return {"room": room, "me": me}
    part = step_part(lesson, n, language=language)
    room.update(title=part["title"], question=part["question"], about=part["about"],
                note=part["note"])
    if told.question is not None:
        room["ask"] = ask_of(told, told.question, view.confidence, part["shown"])
    if state == "held":
        post = _pre(lesson)[n]
        room.update(phase="held", line=say(
            "Saved. This step's answer is shown after the lesson, with the same question "
            "(step {step}): answer it then, and compare.", step=post))
        return {"room": room, "me": me}
    if state == "open" and not closed:
        room.update(phase="asking", line=say(
            "Choose your answer, then send it: you see this step's answer at once, and your "
            "answer cannot change afterwards."))
        return {"room": room, "me": me}
    charts, line = _charts(lesson, n, a, told, answer, language)
    room.update(phase="revealed", answer={"text": part["answer_text"], "charts": charts,
                                          "versus": line, "n_answered": None})
    if told.question is not None:
        shown = (room["ask"] or {}).get("shown")
        said = None if answer is None else verdict(labelled(told, shown), label_of(
            told.question.choices, shown).get(answer, answer))
        me["verdict"] = to_html(said if said is not None else say(
            "**You did not answer this step before the homework closed**: here is the "
            "answer."))
        me["surprise"] = surprise(told, answer)       # the phone's steps to revisit
    room["line"] = "" if not closed else say("The homework is closed: every step's answer is "
                                             "shown.")
    return {"room": room, "me": me}


# --- whether a room is a homework (its mode never changes) -------------------------------------

def known(code: str) -> bool | None:
    """Whether this process knows room ``code`` is a homework (None: not known yet)."""
    return _MODES.get(code)


def is_homework(store, code: str) -> bool:
    """Whether room ``code`` is a homework (read once per process: a room keeps its mode);
    `ClassroomError` when the store cannot say."""
    known = _MODES.get(code)
    if known is None:
        known = store.room_view(code).homework
        _MODES[code] = known
        while len(_MODES) > _MAX_MODES:
            _MODES.popitem(last=False)
    return known


class StepRefused(ValueError):
    """A step a phone cannot be shown; ``status``: the HTTP status that says why."""

    def __init__(self, why: str, status: int):
        super().__init__(why)
        self.status = status


def step_json(store, code: str, asked: str, student: str | None,
              language: str | None = None) -> dict:
    """Step ``asked`` (a number, or ``next``) of homework ``code`` as ``student`` sees it
    (None: a browser that has not joined yet), in ``language`` where the lesson has it, as
    JSON data; `StepRefused`."""
    from xattn.live.catalog import room_lesson

    view = store.room_view(code)
    if not view.homework:
        raise StepRefused(f"Class {code} is a live class: its phones show the step its "
                          "lecturer shows, not a step of their own.", 409)
    lesson = room_lesson(store, code)
    if len(lesson.steps) != view.n_steps:          # a stored lesson this server cannot read
        raise StepRefused(f"This server cannot show class {code}'s lesson.", 409)
    mine = store.student_answers(code, student) if student else {}
    if asked == "next":
        n = first_open(step_states(lesson, mine, view.phase == "closed"))
    elif asked.isascii() and asked.isdigit() and 1 <= int(asked) <= view.n_steps:
        n = int(asked)
    else:
        raise StepRefused(f"A step of this homework is a number from 1 to {view.n_steps} "
                          f"(or next); received {quote(asked[:40])}.", 400)
    return {"now": round(time.time(), 3), **step_message(view, lesson, n, mine, language)}


def json_number(value):
    """NumPy numbers as JSON numbers (NaN as null)."""
    v = float(value)
    return v if math.isfinite(v) else None
