"""A room's step as the class sees it: the step's prepared weights and what it tells of them,
and the charts that answer its question, the same on the lecturer's page and on every phone.

A room's questions were made from each step's prepared page (``xattn.live.prepared``), so the
answer is computed from the same weights (`class_step`, once per server process). The charts
that answer a step's question (`answer_charts`) are Plotly figures built once per server and
shared: the host's lesson draws them, and the phone's page (``xattn.live.messages``) gets
the same figures as a few kilobytes of numbers (``xattn.figures.phone``).
"""

from __future__ import annotations

import logging
import threading

from xattn.classroom import RoomView
from xattn.figures.class_words import TAPS_ALT, taps_head
from xattn.figures.classroom import taps_figure
from xattn.figures.words import chart_words
from xattn.lesson import Lesson, Told
from xattn.lesson.followup import case_step, cases, differs, shows_case
from xattn.lesson.translated import step_in, words_in
from xattn.live.compute import derived, figure
from xattn.live.prepared import Shown, StepUnavailable, prepared_attention
from xattn.words import language, speaking

__all__ = ["class_step", "answer_charts", "follow_up", "warm_follow_ups", "MAX_FOLLOW_UPS_WARMED"]

_LOGGER = logging.getLogger(__name__)
_warm_lock = threading.Lock()
_warmed: dict[str, threading.Thread] = {}   # lessons (digests) whose follow-ups are being found
MAX_FOLLOW_UPS_WARMED = 32                 # ... at most: later lessons' are found at the reveal


def class_step(lesson: Lesson, n: int, *, case: int = 0, shown: Shown | None = None,
               language: str | None = None):
    """Step ``n`` of ``lesson`` (on its new case ``case``: a follow-up; 0, the step itself):
    its prepared weights and what the step tells of them, once per server: the room's
    questions were made from the same (``xattn.live.prepared.lesson_questions``).
    ``shown``: how a page's run shows the progress of loading or training them (None: the
    server's own threads, and every page that only reads a step made before).
    ``language``: what the step tells in words of that language (``xattn.words``; default
    the lesson's own), the same numbers and question in every language.
    `StepUnavailable` when the step's weights cannot be made here."""
    step = case_step(lesson.steps[n - 1], case)
    a = derived(("class-step", lesson.digest, n, case),
                lambda: prepared_attention(step, shown=shown))
    language = words_in(lesson, language or lesson.language)

    def tell():
        said = case_step(step_in(lesson, n, language), case)
        with speaking(language):
            return said.tell(a, said.layer(a.n_layers))
    told = derived(("class-told", lesson.digest, n, case, a.key, language), tell)
    return a, told


def answer_charts(a, told: Told, view: RoomView) -> list[tuple]:
    """The charts that answer a step's question on the weights ``a``, as (figure, alt text),
    built once per server: the question's own (``Told.charts``: the head,
    layer, seeds or curves it is about), or, for a token question asked of one row, the
    class's taps beside that row; none for links (drawn with the class's links:
    ``xattn.live.versus``)."""
    if view.question.of.drawn.versus:
        return []
    if told.row is not None and view.question.of.asked.taps:
        i, head = told.row
        weights = a.layer(told.layer if told.layer is not None else 0)      # (h, T, S)
        row = weights[head, i] if head >= 0 else weights[:, i].mean(0)
        names = view.question.choices
        names = names if len(names) == len(a.src_tokens) else a.src_tokens
        named = told.layer if told.layer is not None and a.n_layers > 1 else None
        lang = language()            # the build's (``speaking``)
        return [(taps_figure(names, {int(k): c for k, c in view.counts.items()}, row,
                             target=a.tgt_tokens[i], head=taps_head(named, head, lang),
                             lang=lang), chart_words(lang)(TAPS_ALT))]
    lang = language()                # the build's (``speaking``): a figure per language
    return [(figure(("answer-chart", a.key, lang, *chart.key),
                    lambda chart=chart: chart.make(1.0, lang)), chart.said(lang))
            for chart in told.charts]


def _differs(first, then) -> bool:
    if then.question is None or first.question is None or then.truth is None:
        return False
    if then.question.of.number:
        return abs(float(then.truth) - float(first.truth)) > 2 * first.tolerance
    return then.truth != first.truth and then.truth not in first.also_right


def follow_up(lesson: Lesson, n: int, asked=()) -> tuple[int, str, bool]:
    """The new case of step ``n`` to ask next (not in ``asked``): the first that shows what it
    names and whose right answer differs from the step's own by answer, not by position
    (``xattn.lesson.followup.differs``). Returns (case, what it changed, True); (0, why not,
    False) when there is none: a follow-up exists only where such a case exists."""
    step = lesson.steps[n - 1]
    found = cases(step)
    if not found:
        return 0, ("this step's question is not computed from the weights (the lecturer's own "
                   "question, or none): a follow-up needs one whose answer the page computes"), \
            False
    _, first = class_step(lesson, n)
    for k, case in enumerate(found, 1):
        if k in asked:
            continue
        try:
            _, then = class_step(lesson, n, case=k)
        except StepUnavailable:
            continue
        if shows_case(step, k, then) and differs(first, then):
            return k, case.what, True
    return 0, (f"none of the {len(found)} new cases of this step that can be made here has "
               "another right answer (a token elsewhere is the same answer when it is the same "
               "word), or each was asked already"), False


def warm_follow_ups(lesson: Lesson | None) -> threading.Thread | None:
    """Find every step's follow-up (`follow_up`) of ``lesson`` in a background thread, once
    per lesson per process (the host page's, when it first draws its class panel): the first
    run after a *Reveal* asks whether the step has a follow-up, and a step's cases cost up to
    2 s to compute (the default lesson's step 7: a trained model per case), on the click's
    path and beside the phones this process serves. Returns the thread (the same one for a
    lesson already warming or warmed), or None for no lesson or past
    ``MAX_FOLLOW_UPS_WARMED`` lessons."""
    if lesson is None:
        return None
    with _warm_lock:
        thread = _warmed.get(lesson.digest)
        if thread is None and len(_warmed) < MAX_FOLLOW_UPS_WARMED:
            thread = threading.Thread(target=_warm, args=(lesson,), daemon=True,
                                      name="xattn-warm-follow-ups")
            _warmed[lesson.digest] = thread
            thread.start()
    return thread


def _warm(lesson: Lesson) -> None:
    for n in range(1, len(lesson.steps) + 1):
        try:
            follow_up(lesson, n)
        except StepUnavailable:
            continue
        except Exception:  # noqa: BLE001 - the reveal's own run says what is wrong
            _LOGGER.exception("xattn: step %d's follow-up could not be found ahead", n)
