"""What a room adds to the host's page: the room card (the code, the student link and its QR
code), the class panel that drives the class (*Reveal*, a timer, *Ask again*, *Next step*, the
answers as CSV) and the class's answers, live.

The count and the answers are fragments with keys: when an answer arrives the page's follow
component reruns them alone (``xattn/ui/room/follow.py``), never the whole page. Every
action goes to the store; every page of the room follows it, the host's other pages (a laptop
and a projector) included.
"""

from __future__ import annotations

import dataclasses

import streamlit as st

from xattn.classroom import NO_QUESTION, ClassroomError, RoomView
from xattn.classroom.learning import step_learning
from xattn.figures.class_words import TAPS_ALT, class_alt, taps_head
from xattn.figures.classroom import class_figure, revote_figure, taps_figure
from xattn.figures.frozen import narrowed
from xattn.figures.words import chart_words
from xattn.jobs import LABELS
from xattn.lesson import Told, is_right
from xattn.lesson.followup import cases
from xattn.literal import md_code
from xattn.live.answers import class_step, follow_up, warm_follow_ups
from xattn.live.prepared import StepUnavailable
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext, page_lang
from xattn.ui.lesson.words import lesson_words
from xattn.ui.room.actions import STALE, host_action, open_step
from xattn.ui.room.card import student_link
from xattn.ui.room.class_csv import class_csv_on_click
from xattn.ui.room.confidence import class_switches, confidence_table
from xattn.ui.room.countdown import countdown
from xattn.ui.room.devices import devices_panel, door, end_panel
from xattn.ui.room.follow import LIVE_FRAGMENTS
from xattn.ui.room.language import room_language
from xattn.ui.room.learned import learned_panel, learning_text
from xattn.ui.room.misconceptions import misconception_panel
from xattn.ui.room.room import Room, class_store
from xattn.ui.room.session import HOST_ERROR

__all__ = ["class_controls", "class_answers", "countdown", "step_view", "live_fragment",
           "host_error", "TIMERS"]

TIMERS = (30, 60, 90)                    # seconds a host's countdown may run


def live_fragment(fragment: str) -> None:
    """Note ``fragment`` as drawn: the follow component reruns it when the tally moves."""
    drawn = st.session_state.setdefault(LIVE_FRAGMENTS, [])
    if fragment not in drawn:
        drawn.append(fragment)


def step_view(room: Room, view: RoomView) -> RoomView:
    """A homework's step ``room.at`` as the lecturer's page reads it: its question and every
    answer to it so far, its answer shown (a homework has no class step and no reveal)."""
    t = class_store().tally(room.code, room.at, 1)
    return dataclasses.replace(view, step=room.at, round=1, question=t.question,
                               counts=t.counts, n_answered=t.n_answered or 0,
                               phase="revealed", timer=None, mine=None)


def _read(room: Room, fragment: str):
    """The room now (what the count shows; a homework's step `step_view`), or None if the
    store does not answer (the page's last reading stays on screen). Notes ``fragment`` as
    drawn: the follow component reruns it when the tally moves."""
    live_fragment(fragment)
    try:
        view = class_store().room_view(room.code)
        return step_view(room, view) if view.homework else view
    except ClassroomError as err:
        st.warning(_("The class store does not answer: {error}", error=md_code(str(err))),
                   icon=":material/cloud_off:")
        return None


def host_error() -> None:
    """What the store said to this page's last press, once (a press on a class that had
    moved meanwhile, a refusal)."""
    error = st.session_state.pop(HOST_ERROR, None)
    if error == STALE:
        st.warning(_(STALE), icon=":material/update:")
    elif error:
        st.error(md_code(error), icon=":material/error:")


@st.fragment(key="class_controls")
def class_controls(room: Room) -> None:
    """The host's live count ("31 of 42 answered") and the buttons that drive the class."""
    host_error()
    view = _read(room, "class_controls")
    if view is None:
        return
    warm_follow_ups(room.lesson)         # each step's follow-up found before its reveal asks
    closed = view.phase == "closed"
    st.metric(_("Predictions"), _("{answered} of {present} answered", answered=view.n_answered,
                                  present=max(view.n_present, view.n_answered)),
              help=_("Students whose page is open, and how many of them predicted this step "
                     "(the last answer of each counts)."))
    if view.late and not view.homework:
        st.caption(ngettext("{n} of these voters joined after the question opened. Voters "
                            "made by a script join at once; a class in the room before does "
                            "not: lock the room (below) once your class is in.",
                            "{n} of these voters joined after the question opened. Voters "
                            "made by a script join at once; a class in the room before does "
                            "not: lock the room (below) once your class is in.", view.late))
    if view.timer is not None and view.phase == "asking":
        countdown(view.timer.ends_at)
    elif closed:
        st.caption(_("Time is up: answers are closed."))
    code, key, step, seen = room.code, room.host, view.step, view.version
    left, right = st.columns(2)
    pre = room.lesson is not None and room.lesson.steps[step - 1].check == "pre"
    reads = view.question == NO_QUESTION
    if pre:
        left.caption(_("A check before the lesson: its answer is revealed after the same "
                       "question at the end."))
    elif reads:
        left.caption(_("A step the class reads: nothing to predict, so no *Reveal*; the "
                       "phones show its weights."))
    elif view.phase != "revealed":
        left.button(_("Reveal"), key="reveal", type="primary", icon=":material/visibility:",
                    width="stretch", on_click=_act,
                    args=(lambda s: s.reveal(code, key, step), room, seen))
    else:
        left.button(_("Ask again"), key="ask_again", icon=":material/replay:", width="stretch",
                    help=_("A new round of this step: the class votes again (after "
                           "discussing), and both rounds are shown side by side."), on_click=_act,
                    args=(lambda s: s.ask_again(code, key, step), room, seen))
    if view.step < view.n_steps:                 # the room's own lesson
        right.button(_("Next step"), key="class_next", icon=":material/arrow_forward:",
                     width="stretch", on_click=_act,
                     args=(lambda s: open_step(s, room, step + 1), room, seen))
    if view.phase == "revealed" and room.lesson is not None and _has_follow_up(room, step):
        st.button(_("Ask a follow-up: a new case"), key="follow_up", icon=":material/alt_route:",
                  width="stretch", on_click=_act, args=(_follow_up(room, step), room, seen),
                  help=_("The same question on a new case (another seed, sentence pair, head "
                         "or layer), its answer computed as this step's is; the first case "
                         "whose answer differs from this one. Did the class understand, or "
                         "follow its neighbours?"))
    if view.phase == "asking" and not reads:
        _timer_controls(room, view)
    door(room, view)
    class_switches(room, view)
    room_language(room, view)
    devices_panel(room, student_link(code)[0])
    if room.lesson is not None:
        learned_panel(room)
    csv_text = class_csv_on_click(room)
    st.download_button(_("The class's answers (CSV)"), csv_text, f"xattn-class-{code}.csv",
                       "text/csv", key="class_csv", on_click="ignore", width="stretch",
                       help=_("Counts per answer, step and round, each round's timer, and how "
                              "many changed to each answer in a revote: no names, no ids."))
    end_panel(room, csv_text)
    if (view.version, view.phase) != (room.view.version, room.view.phase):
        st.rerun(scope="app")                        # another host page moved the class


def _timer_controls(room: Room, view) -> None:
    cols = st.columns([3, 2], vertical_alignment="center")
    seconds = cols[0].segmented_control(_("Timer"), TIMERS, key="timer_seconds",
                                        format_func={s: _("{s} s", s=s) for s in TIMERS}.get,
                                        default=60,
                                        help=_("A countdown on every screen; at zero the "
                                               "question closes to answers."))
    reveal = cols[1].toggle(_("Reveal at zero"), key="timer_reveal")
    label = _("Restart the timer") if view.timer is not None else _("Start the timer")
    code, key, step = room.code, room.host, view.step

    def start(store) -> None:       # the choices as they are at the press
        chosen = st.session_state.get("timer_seconds") or seconds
        store.start_timer(code, key, step, float(chosen),
                          bool(st.session_state.get("timer_reveal", reveal)))
    st.button(label, key="timer_start", icon=":material/timer:", width="stretch",
              disabled=seconds is None, on_click=_act, args=(start, room, view.version))


def _has_follow_up(room: Room, step: int) -> bool:
    """Whether step ``step`` has a new case with another answer (issue 44, G2): the button is
    offered only then. The cases are computed once per server (``class_step``)."""
    if not cases(room.lesson.steps[step - 1]):
        return False
    try:
        return follow_up(room.lesson, step)[0] > 0
    except StepUnavailable:
        return False


def _follow_up(room: Room, step: int):
    """The follow-up's action: the next new case of ``step`` (a round of its own)."""
    lesson, code, key = room.lesson, room.code, room.host

    def ask(store) -> None:
        asked = {t.question.case for t in store.results(code, key) if t.step == step}
        try:
            case, what, differs = follow_up(lesson, step, asked)
            told = class_step(lesson, step, case=case)[1] if case else None
        except StepUnavailable as err:
            raise ClassroomError(f"No follow-up: {err}") from None
        if told is None:
            raise ClassroomError(f"No follow-up: {what}")
        store.ask_again(code, key, step, told.question)
        st.session_state[FOLLOW_NOTE] = (
            f"A follow-up on a new case: {md_code(what)}."
            + ("" if differs else " Its right answer is the same as the step's own: this "
                                  "question's answer does not change with the case."))
    return ask


FOLLOW_NOTE = "_xattn_follow_note"   # session: what the follow-up just asked changed


def _act(action, room: Room, seen: int) -> None:
    """A host's button (a callback): ``action(store)`` if the class is as the page drew it
    (version ``seen``), then the whole page runs (the class panel is a fragment)."""
    host_action(action, room, seen)
    st.rerun(scope="app")


@st.fragment(key="class_answers")
def class_answers(room: Room, told: Told | None, a: Attention | None, layer: int,
                  font_scale: float = 1.0, compact: bool = False, sure: bool = True) -> None:
    """The class's predictions as a bar chart, live; after the reveal the right answer is
    outlined, a revote shows the rounds side by side with how many moved to the right answer,
    and a tapped word's row is put beside the class's taps. ``sure``: the "how sure" table
    below them (False: the caller draws it, full width, below a row of narrow columns). The
    lesson's words in the page's language, also when the fragment reruns alone."""
    with lesson_words(room.lesson):
        _class_answers(room, told, a, layer, font_scale, compact, sure)


def _class_answers(room: Room, told: Told | None, a: Attention | None, layer: int,
                   font_scale: float, compact: bool, sure: bool) -> None:
    view = _read(room, "class_answers")
    if view is None:
        return
    if view.question == NO_QUESTION:
        st.caption(_("The class has nothing to predict on this step: the phones show its "
                     "weights."))
        return
    revealed = view.phase == "revealed"
    truth = told.truth if told is not None and revealed else None
    taps = (revealed and told is not None and a is not None and told.row is not None
            and view.question.of.asked.taps)
    if revealed and view.round > 1 and told is not None:
        _revote(room, view, told, font_scale, compact)
    elif not (taps and compact):      # the taps' chart holds the class's shares, compactly
        fig = class_figure(
            view.question, view.counts, view.n_answered, truth=truth, labels=LABELS,
            also=_also(told) if truth is not None else (), font_scale=font_scale,
            weights=_beside(view, told, truth), lang=page_lang())
        if compact and view.question.of.one_answer:
            fig.update_layout(height=230, margin=dict(b=4))   # a narrow column beside the answer
        if compact:
            fig = narrowed(fig, width_chars=round(30 / font_scale), font=round(12 * font_scale))
        show_chart(fig, key="class_answers", name=f"xattn-class-{room.code}-step{view.step}",
                   alt=class_alt(view.question, lang=page_lang()))
    if taps:
        _taps(a, layer, view, told)
    misconception_panel(room, view, font_scale, compact)   # after the reveal: why wrong
    if sure:
        confidence_table(room, view)       # after the reveal: who was sure, right or wrong


def _beside(view, told, truth):
    """The model's weights drawn beside the class's taps on an image, once the truth is
    shown (a tap question's ``Told.weights``); None for every other question."""
    if truth is None or told is None or not view.question.of.image or not told.weights:
        return None
    return told.weights


def _round_tells(room: Room, step: int, questions) -> list:
    """What each round's question tells (the step's own, or a follow-up's case)."""
    tells = []
    for q in questions:
        try:
            tells.append(class_step(room.lesson, step, case=q.case)[1])
        except StepUnavailable:
            tells.append(None)
    return tells


def _judge(told):
    if told is None or told.question is None or not told.question.of.graded:
        return None
    return lambda answer: is_right(told, answer)


def _revote(room: Room, view, told: Told, font_scale: float, compact: bool = False) -> None:
    """A round after the first: every round's share right, the potential learners and where
    they went (``xattn.classroom.learning``), and this round beside the one before (a
    revote) or on its own (a follow-up: another question)."""
    try:
        store = class_store()
        tallies = [t for t in store.results(room.code, room.host) if t.step == view.step]
        questions, seqs = store.trajectories(room.code, room.host, view.step)
    except ClassroomError as err:
        st.warning(md_code(str(err)), icon=":material/cloud_off:")
        return
    if room.lesson is None or not questions:
        return
    learned = step_learning(seqs, [q.case for q in questions],
                            [_judge(t) for t in _round_tells(room, view.step, questions)])
    note = st.session_state.pop(FOLLOW_NOTE, None)
    if note and view.question.case:
        st.caption(note)
    first = next(t for t in tallies if t.round == view.round - 1)
    if first.question == view.question:                      # a revote: who moved
        st.markdown(_moved(store, room, view, told))
    st.markdown(learning_text(learned))
    if first.question != view.question or not view.question.of.one_answer:
        fig = class_figure(
            view.question, view.counts, view.n_answered, truth=told.truth, also=_also(told),
            labels=LABELS, font_scale=font_scale, weights=_beside(view, told, told.truth),
            lang=page_lang())
        if compact:
            fig = narrowed(fig, width_chars=round(30 / font_scale), font=round(12 * font_scale))
        show_chart(fig, key="class_revote",
                   alt=class_alt(view.question, revealed=True, lang=page_lang()),
                   name=f"xattn-class-{room.code}-step{view.step}-round{view.round}")
        return
    fig = revote_figure(view.question, first.counts, view.counts, truth=told.truth,
                        rounds=(view.round - 1, view.round), font_scale=font_scale,
                        lang=page_lang())
    if compact:
        fig.update_layout(height=260, margin=dict(b=4))
        fig = narrowed(fig, width_chars=round(30 / font_scale), font=round(12 * font_scale))
    show_chart(fig, key="class_revote",
               name=f"xattn-class-{room.code}-step{view.step}-revote",
               alt="Grouped bar chart: the class's predictions in the earlier and the later "
                   "round, per answer; the right answer outlined.")


def _moved(store, room: Room, view, told: Told) -> str:
    """Peer instruction's line after a revote: how many moved to the right answer."""
    moved = store.changes(room.code, room.host, view.step, view.round - 1, view.round)

    def right(answer) -> bool:
        return is_right(told, answer)
    # Only students who voted in both rounds moved (issue 44, G7): one who answers only now
    # did not change their mind, and is said apart.
    to_right = sum(n for (a, b), n in moved.items() if a is not None and b is not None
                   and right(b) and not right(a))
    away = sum(n for (a, b), n in moved.items() if a is not None and right(a)
               and b is not None and not right(b))
    late = sum(n for (a, b), n in moved.items() if a is None and b is not None)
    # Whole answers (a parts answer right in every part, links the gold exactly), counted
    # from each student's pair of answers: the counts of parts and links are per element.
    rounds = [[a for (a, _), n in moved.items() if a is not None for _ in range(n)],
              [b for (_, b), n in moved.items() if b is not None for _ in range(n)]]
    share = [sum(map(right, r)) / max(1, len(r)) for r in rounds]
    said = dict(to_right=to_right, what=view.question.of.drawn.whole, round=view.round,
                away=away, before=f"{share[0]:.0%}", n_before=len(rounds[0]),
                last=view.round - 1, now=f"{share[1]:.0%}", n_now=len(rounds[1]), late=late)
    return (_("**{to_right} moved to {what}** in round {round}", **said)
            + (_(", {away} away from it", **said) if away else "")
            + _(" (of those who answered both rounds): right {before} of {n_before} in round "
                "{last}, {now} of {n_now} now", **said)
            + (_("; {late} answered only now", **said) if late else "") + ".")


def _also(told: Told | None) -> tuple:
    """What is just as right: a tie's answers, or each part's close calls."""
    return () if told is None else told.also_right


def _taps(a: Attention, layer: int, view, told: Told) -> None:
    """Where the class expected the target token to look, beside where the head looks: the
    layer the answer is about (``told.layer``: step 13's is layer 2 whatever layer the page
    shows; issue 44), as the phones draw it (``xattn.live.answers.answer_charts``)."""
    if told.row is None:
        return
    i, head = told.row
    about = told.layer if told.layer is not None else layer
    weights = a.layer(about)                                      # (n_heads, T, S)
    row = weights[head, i] if head >= 0 else weights[:, i].mean(0)
    names = view.question.choices                # repeated words with their position
    names = names if len(names) == len(a.src_tokens) else a.src_tokens
    named = about if told.layer is not None and a.n_layers > 1 else None
    lang = page_lang()
    show_chart(taps_figure(names, {int(k): n for k, n in view.counts.items()}, row,
                           target=a.tgt_tokens[i], head=taps_head(named, head, lang),
                           lang=lang),
               key="class_taps", name=f"xattn-class-{view.code}-expected",
               alt=chart_words(lang)(TAPS_ALT))
