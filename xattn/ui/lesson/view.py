"""The Lesson view: the guided steps of ``xattn.lesson``, each a prepared page.

Opening a step (from its link ``?view=Lesson&lesson=3``, or the previous/next buttons) sets
every control to the step's state, before any control is drawn; the step's paragraph, what to
look at and the question come first, with an answer computed from the numbers on screen, and
the step's view below. Leaving the lesson keeps the state, so the class explores from there.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from xattn.classroom import ClassroomError
from xattn.figures.frozen import narrowed
from xattn.lesson import Lesson, Step, Told, missing, off_plan, verdict
from xattn.lesson.followup import case_step
from xattn.live.answers import answer_charts as step_answer_charts
from xattn.live.compute import derived
from xattn.live.link import (
    CLASS,
    COURSE,
    DEVICE,
    EXPLORE,
    HOST,
    IMG,
    LANG,
    LESSON,
    PRESENT,
    REGISTRY,
    ROOM,
    SCALE,
    VIEW,
)
from xattn.live.versus import class_versus
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext
from xattn.ui.lesson.parts import answer_charts
from xattn.ui.lesson.predict import prediction_widget
from xattn.ui.lesson.versus import show_versus
from xattn.ui.lesson.words import (
    fallback_note,
    lesson_words,
    option_labels,
    step_titles,
    step_words,
)
from xattn.ui.look import FONT_SCALE
from xattn.ui.room.actions import move_class
from xattn.ui.room.card import hidden_note, room_card
from xattn.ui.room.confidence import confidence_table
from xattn.ui.room.homework import homework_panel
from xattn.ui.room.panels import class_answers, class_controls, step_view
from xattn.ui.room.room import Room
from xattn.ui.state import PageState

__all__ = ["lesson_setup", "lesson_view"]

# How the page looks, and the class it is in, stay when a step prepares the page.
# Parameters that say where and how the page is shown, not what it computes: a link with only
# these opens a step with the step's own settings (a lecturer's ?class=new, a student's ?room=).
KEEP = {p.key for p in (VIEW, LESSON, PRESENT, IMG, SCALE, ROOM, HOST, CLASS, EXPLORE,
                         DEVICE, COURSE, LANG)}


PREDICT = "predict"     # the prediction's widget: a student's own, never in the link
REPLAN = "lesson_replan"   # a step whose own settings the page takes again (a button)
OPENED = "_xattn_step_opened"   # session: the step this run opened (its question's settings)
CASE = "_xattn_step_case"       # session: (step, case) the page last showed (a follow-up's)


def lesson_setup(state: PageState, view: str, lesson: Lesson,
                 room: Room | None = None) -> Step | None:
    """The step of ``lesson`` to show when the Lesson view is open; a newly opened step sets
    the controls."""
    if view != "Lesson":
        return None
    before = state.memory.get(LESSON.key, {}).get("shown")
    steps = lesson.steps
    n = state.value(LESSON, range(1, len(steps) + 1),
                    why=ngettext("(the lesson has {n} step)",
                                 "(the lesson has {n} steps)", len(steps)))
    step = steps[n - 1]
    # A step opened now (its link, or a button) sets the controls; a link that also carries
    # settings of its own (a student's exploration, shared) keeps them instead. In a class,
    # only a page reloaded on the room's step keeps its link's settings (the lecturer's
    # changes on it): a class's link opened mid-class carries the settings of the step it
    # was written on, and a new class's link (?class=new&src=...) the lecturer's own, while
    # the class's question is asked of the step's settings, on every screen.
    linked = st.query_params.get(LESSON.key, "1")     # step 1 is the link's default
    own_settings = before is None and bool(state.from_link - KEEP) and (
        room is None or (ROOM.key in state.from_link and linked == str(n)))
    replan = st.session_state.pop(REPLAN, None) == n
    case = room.view.question.case if room is not None and room.view is not None else 0
    step = case_step(step, case)             # a follow-up's round: the step on its new case
    moved = st.session_state.get(CASE, (n, 0)) != (n, case)
    st.session_state[CASE] = (n, case)
    if n != before or replan or moved:
        for key in [k for k in st.session_state if str(k).startswith(PREDICT)]:
            st.session_state.pop(key)              # a new step, new predictions
        if replan or not own_settings:
            prepared = {k: p.default for k, p in REGISTRY.items() if k not in KEEP}
            prepared.update({k: v for k, v in step.state.items() if k != "view"})
            state.force(prepared)
            st.session_state[OPENED] = n
    return step


def _go(n: int, room: Room | None = None, seen: int | None = None) -> None:
    if room is not None:            # in a class the step is the room's: the store moves it
        move_class(room, n, seen)
    else:
        st.session_state[LESSON.key] = n


def _picked(room: Room, key: str, seen: int, drawn: int) -> None:
    # a picker of an earlier screen reports its value again, though nobody changed it
    if st.session_state.get(key, drawn) != drawn:
        move_class(room, st.session_state[key], seen)


def navigation(n: int, lesson: Lesson, room: Room | None = None) -> None:
    """Previous, the step picker, Next (in a class: they move the class).

    In a class the three are keyed by the room's version: each press carries the version of
    the screen it was made on, and a picker still showing the step before (the run that drew
    the class's move cut short) is another widget, whose value nobody changed, so it never
    reaches the server as a change that would move the class back."""
    names = {k: f"{k}. {title}" for k, title in enumerate(step_titles(lesson), 1)}
    # Next gets two parts of eight: "Suivante →" and "التالية ←" fit at 1024 px
    left, middle, right = st.columns([1, 5, 2], vertical_alignment="bottom")
    if room is None:
        keys, seen = ("lesson_prev", LESSON.key, "lesson_next"), None
        middle.selectbox(_("Step"), list(names), key=LESSON.key, format_func=names.get,
                         label_visibility="collapsed")
    else:
        seen = room.view.version if room.view is not None else -1
        keys = (f"lesson_prev_v{seen}", f"lesson_pick_v{seen}", f"lesson_next_v{seen}")
        middle.selectbox(_("Step"), list(names), index=n - 1, key=keys[1],
                         format_func=names.get, label_visibility="collapsed",
                         on_change=_picked, args=(room, keys[1], seen, n))
    # Previous: "→" right to left, where it stands at the right
    left.button(_("←"), key=keys[0], disabled=n == 1, on_click=_go, args=(n - 1, room, seen),
                width="stretch", help=_("The previous step"))
    right.button(_("Next →"), key=keys[2], disabled=n == len(lesson.steps), on_click=_go,
                 args=(n + 1, room, seen), type="primary", width="stretch")


def lesson_view(a: Attention | None, layer: int, state: PageState, step: Step,
                draw: Callable, lesson: Lesson, room: Room | None = None) -> None:
    """`_lesson_view`, the lesson's words in the page's language (``xattn.ui.lesson.words``)."""
    with lesson_words(lesson) as lang:
        _lesson_view(a, layer, state, step, draw, lesson, room, lang)


def _lesson_view(a: Attention | None, layer: int, state: PageState, step: Step,
                 draw: Callable, lesson: Lesson, room: Room | None, lang: str) -> None:
    """The step beside its view: text, question, prediction and answer on the left, the
    step's view (``draw(view, a, layer)``) on the right, so both fit one screen. In a room the
    host drives the room's step and, once it is revealed, sees the answer, the class's answers
    and the step's chart on one screen; a student exploring the full page finds the way back
    to the class's page here."""
    n = int(state.shown(LESSON))              # the step (a follow-up: on its new case)
    step = step_words(lesson, step, n)        # its texts in the page's language
    if room is not None and room.homework and room.host:
        _walk(room, n)                        # the lecturer walks a homework, moving nobody
        navigation(n, lesson)
    elif room is None or room.host:
        navigation(n, lesson, room)
    if room is None:        # alone, the answer follows the page's settings (F6); a room's
        step = step.on_page(_page_settings(state, step))   # stays the class's question
    why_not = missing(step, a) if a is not None else None
    told = (derived(("tell", lesson.digest, a.key, n, layer, step.ask, lang),
                    lambda: step.tell(a, layer))
            if a is not None and not why_not and a.key else
            step.tell(a, layer) if a is not None and not why_not else None)
    text, look, question = step.render(told)
    present = bool(state.shown(PRESENT))
    scale = FONT_SCALE if present else 1.0
    revealed = room is not None and not room.hidden
    left, right = st.columns([2, 3], gap="medium")
    with left:
        heading = "## " + _("Step {n} of {total}: {title}", n=n, total=len(lesson.steps),
                            title=step.title)
        off = off_plan(step, a) if a is not None else None
        st.markdown(heading + (f"\n\n{off}" if off else ""))
        if fallback_note(lesson):
            st.caption(fallback_note(lesson))
        if off and (room is None or room.host):
            st.button(_("Open this step with its own settings"), key="lesson_replan_go",
                      on_click=lambda: st.session_state.__setitem__(REPLAN, n))
        if revealed:                               # the answer first, the text folded
            st.markdown(_("**Question for the class:** {question}", question=question))
        else:
            st.markdown(f"{text}\n\n" + _("**Look at:** {look}", look=look) + "\n\n"
                        + _("**Question for the class:** {question}", question=question))
        if told is not None and told.note:
            st.caption(told.note)
        _left(a, layer, why_not, told, room, scale, option_labels(lesson, n, told))
        if revealed:
            with st.expander(_("About this step")):
                st.markdown(f"{text}\n\n" + _("**Look at:** {look}", look=look))
    with right:
        if room is not None and room.hidden:
            if room.host:                         # the poll screen: join, and the answers
                room_card(room, present)
                class_answers(room, told, a, layer, scale)
            else:
                hidden_note(room)
        elif a is not None:
            if revealed and room.host and told is not None:
                _class_beside_answer(room, told, a, layer, scale, n)
            if told is not None and st.session_state.pop(OPENED, None) == n:
                state.force(told.page)       # the question's own view (its decoder step)
            state.narrow = True
            draw(step.state.get("view", "Heads"), a, layer)


def _page_settings(state: PageState, step: Step) -> dict:
    """The page settings a step's question takes its arguments from, as the page will draw
    them this run: imposed by the step, else the control's value (its widget key)."""
    from xattn.live.link import REGISTRY

    computed = step.computed
    keys = [arg.page for arg in computed.args.values() if arg.page] if computed else []
    return {k: state.forced.get(k, st.session_state.get(REGISTRY[k].key)) for k in keys
            if k in REGISTRY}


def _walk(room: Room, n: int) -> None:
    """A homework's lecturer on step ``n``: the room as this page reads it is that step, its
    answer shown beside every answer to it so far (``xattn.ui.room.panels.step_view``)."""
    room.at = n
    try:
        room.view = step_view(room, room.view)
    except ClassroomError:
        pass                                  # the page says the store is away


def _class_beside_answer(room: Room, told: Told, a: Attention, layer: int, scale: float,
                         n: int) -> None:
    """After the reveal, on the host's page: the class's answers, then the chart that answers
    the step (the one each student sees), then the step's whole view below."""
    if told.question is not None and told.question.of.drawn.versus and room.view is not None:
        show_versus(a, told, room.view.counts, room.view.n_answered, key="host_versus",
                    name=f"xattn-class-{room.code}-step{n}-answer", font_scale=scale,
                    table=False)             # the table is in the answer, on the left
        return
    if told.row is not None and told.question is not None \
            and told.question.of.asked.taps:
        class_answers(room, told, a, layer, scale, compact=True)
        return                            # the class's taps beside the row: the answer itself
    charts = step_answer_charts(a, told, room.view)
    # side by side, both on a projector's first screen; a chart of several heatmaps (step 12's
    # heads) gets twice the width: in an equal column its titles and labels ran together
    cols = st.columns([1] + [2 if _panels(fig) > 1 else 1 for fig, _ in charts])
    with cols[0]:
        class_answers(room, told, a, layer, scale, compact=True, sure=False)
    for k, ((fig, alt), col) in enumerate(zip(charts, cols[1:], strict=True)):
        show_chart(narrowed(fig, width_chars=round(30 / scale), font=round(12 * scale)),
                   key=f"host_answer_chart_{k}", alt=alt, where=col,
                   name=f"xattn-class-{room.code}-step{n}-answer")
    if room.view is not None:             # the "how sure" table under the row, full width: in
        confidence_table(room, room.view)  # a narrow column it ran under the charts beside


def _panels(fig) -> int:
    """How many heatmaps a figure draws side by side or in a grid."""
    return sum(1 for t in fig.to_dict()["data"] if t.get("type") == "heatmap")


def _left(a, layer: int, why_not: str | None, told: Told | None, room: Room | None,
          scale: float = 1.0, shown: list[str] | None = None) -> None:
    """Alone: the prediction, then the answer. A host: the answer once revealed, the class's
    answers beside it, and the class panel. A student exploring: the way back."""
    if a is None:
        st.info(_("The answer appears once the weights above can be computed."))
        return
    if why_not:
        st.info(why_not, icon=":material/info:")
    if room is not None and not room.host:
        st.caption(_("Your prediction is on the homework's page: *Back to the homework*, "
                     "above.") if room.homework else
                   _("Your prediction is on the class's page: *Back to the class*, above."))
        return
    asks = told is not None and told.question is not None
    if room is None:
        said = prediction_widget(told, PREDICT, shown=shown) if asks else None
        if told is not None:
            with st.expander(_("Show the answer (computed from the numbers on screen)")):
                if said is not None:
                    st.markdown(verdict(told, said))
                st.markdown(told.answer)
                if asks and told.question.of.drawn.versus:   # one against the heads
                    show_versus(a, told, dict.fromkeys(said or (), 1), int(said is not None),
                                who="you", key="lesson_versus", name="xattn-lesson-versus",
                                font_scale=scale, table=False)
                    st.markdown(class_versus(a, dict.fromkeys(said or (), 1),
                                             int(said is not None), "you").table)
                answer_charts(told, scale, a)
        return
    if not room.hidden and told is not None:
        st.markdown(_("**The answer.** {answer}", answer=told.answer))
        if told.question is not None and told.question.of.drawn.versus and room.view:
            st.markdown(class_versus(a, room.view.counts, room.view.n_answered).table)
    if room.homework:
        homework_panel(room)
    else:
        class_controls(room)
