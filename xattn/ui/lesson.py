"""The Lesson view: the guided steps of ``xattn.lesson``, each a prepared page.

Opening a step (from its link ``?view=Lesson&lesson=3``, or the previous/next buttons) sets
every control to the step's state, before any control is drawn; the step's paragraph, what to
look at and the question come first, with an answer computed from the numbers on screen, and
the step's view below. Leaving the lesson keeps the state, so the class explores from there.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from xattn.classroom import Question
from xattn.corpus import translate
from xattn.lesson import STEPS, Step, Told, missing, verdict
from xattn.literal import md_code
from xattn.pipeline import Settings
from xattn.sources import Attention, random_attention, trained_attention
from xattn.train import TrainConfig
from xattn.ui.class_panels import (
    class_answers,
    class_controls,
    hidden_note,
    prediction_kwargs,
    room_card,
    student_status,
)
from xattn.ui.compute import cached_run, derived
from xattn.ui.link import (
    CLASS,
    HOST,
    IMG,
    LESSON,
    PRESENT,
    REGISTRY,
    ROOM,
    SCALE,
    TR_SRC,
    VIEW,
    parse_label,
)
from xattn.ui.look import FONT_SCALE
from xattn.ui.room import Room, sync_step
from xattn.ui.state import PageState
from xattn.ui.training_runs import obtain

__all__ = ["lesson_setup", "lesson_view"]

# How the page looks, and the class it is in, stay when a step prepares the page.
# Parameters that say where and how the page is shown, not what it computes: a link with only
# these opens a step with the step's own settings (a lecturer's ?class=new, a student's ?room=).
KEEP = {p.key for p in (VIEW, LESSON, PRESENT, IMG, SCALE, ROOM, HOST, CLASS)}


PREDICT = "predict"     # the prediction's widget: a student's own, never in the link
NOT_ASKED = Question("choice", ("no question on this page", "-"))   # a step that asks nothing


def lesson_setup(state: PageState, view: str) -> Step | None:
    """The step to show when the Lesson view is open; a newly opened step sets the controls."""
    if view != "Lesson":
        return None
    before = state.memory.get(LESSON.key, {}).get("shown")
    n = state.value(LESSON, range(1, len(STEPS) + 1),
                    why=f"(the lesson has {len(STEPS)} steps)")
    step = STEPS[n - 1]
    # A step opened now (its link, or a button) sets the controls; a link that also carries
    # settings of its own (a student's exploration, shared) keeps them instead.
    own_settings = before is None and bool(state.from_link - KEEP)
    if n != before:
        st.session_state.pop(PREDICT, None)        # a new step, a new prediction
        if not own_settings:
            prepared = {k: p.default for k, p in REGISTRY.items() if k not in KEEP}
            prepared.update({k: v for k, v in step.state.items() if k != "view"})
            state.force(prepared)
    return step


def _go(n: int) -> None:
    st.session_state[LESSON.key] = n


def navigation(n: int) -> None:
    """Previous, the step picker, Next."""
    names = {k: f"{k}. {s.title}" for k, s in enumerate(STEPS, 1)}
    left, middle, right = st.columns([1, 6, 1], vertical_alignment="bottom")
    left.button("← Previous", key="lesson_prev", disabled=n == 1, on_click=_go, args=(n - 1,),
                width="stretch")
    middle.selectbox("Step", list(names), key=LESSON.key, format_func=names.get,
                     label_visibility="collapsed")
    right.button("Next →", key="lesson_next", disabled=n == len(STEPS), on_click=_go,
                 args=(n + 1,), type="primary", width="stretch")


def prediction(told: Told, *, disabled: bool = False, on_change=None):
    """The student's prediction for this step (one widget keyed ``predict``): a tap on a
    source token or a choice, or a number. Returns it, or None until one is made."""
    q = told.question
    label = f"**Your prediction.** {told.prompt}"
    if q.kind == "number":
        return st.number_input(label, q.low, q.high, value=None, step=10 ** -q.decimals,
                               format=f"%.{q.decimals}f", key=PREDICT, disabled=disabled,
                               placeholder="type a number", on_change=on_change)
    options = q.options()
    shown = q.choices if q.kind == "token" else options
    names = dict(zip(options, shown, strict=True))
    return st.pills(label, options, key=PREDICT, disabled=disabled, on_change=on_change,
                    format_func=lambda o: md_code(names[o]))


def prepared_attention(step: Step) -> Attention:
    """The weights of ``step``'s prepared page (its own settings, everything else default):
    what a class's room asks about before the host opens the step."""
    s = step.state
    if s.get("weights") == "model":
        from xattn.marian import SHIPPED_MODEL
        from xattn.sources import model_attention
        from xattn.ui.models import TOY_PAIR, attention_of, loaded_model

        model = loaded_model(SHIPPED_MODEL)
        return model_attention(attention_of(model, TOY_PAIR[0], None, True), loaded=model)
    if s.get("weights") == "trained":
        bar, curve = st.empty(), st.empty()
        run, _ = obtain(TrainConfig(), bar, curve)
        bar.empty(), curve.empty()
        return trained_attention(run, translate(TR_SRC.default))
    settings = Settings(d_model=s.get("d_model", 32), n_heads=s.get("heads", 4),
                        mask_mode=s.get("mask", "none"), wait_k=s.get("k", 3),
                        padded=tuple(parse_label(p)[0] for p in s.get("pad", ())))
    return random_attention(cached_run(settings), cached_run)


def lesson_questions() -> list[Question]:
    """The question of every step on its prepared page, for a new room."""
    slot = st.empty()            # loading a model or training draws here: cleared after
    with slot.container(), st.spinner("Starting the class…"):
        questions = [step.tell(prepared_attention(step), 0).question or NOT_ASKED
                     for step in STEPS]
    slot.empty()
    return questions


def lesson_view(a: Attention | None, layer: int, state: PageState, step: Step,
                draw: Callable, room: Room | None = None) -> None:
    """The step beside its view: text, question, prediction and answer on the left, the
    step's view (``draw(view, a, layer)``) on the right, so both fit one screen. In a room the
    host drives the room's step, a student follows it, and the weights wait for the reveal."""
    n = STEPS.index(step) + 1
    if room is None or room.host:
        navigation(n)
    why_not = missing(step, a) if a is not None else None
    told = (derived(("tell", a.key, n, layer), lambda: step.tell(a, layer))
            if a is not None and not why_not and a.key else
            step.tell(a, layer) if a is not None and not why_not else None)
    if room is not None:
        room = sync_step(room, n, told.question if told is not None else None)
    text, look, question = step.render(told)
    present = bool(state.shown(PRESENT))
    scale = FONT_SCALE if present else 1.0
    left, right = st.columns([2, 3], gap="medium")
    with left:
        st.markdown(f"## Step {n} of {len(STEPS)}: {step.title}\n\n{text}\n\n"
                    f"**Look at:** {look}\n\n**Question for the class:** {question}")
        if told is not None and told.note:
            st.caption(told.note)
        _left(a, layer, why_not, told, room)
    with right:
        if room is not None and room.hidden:
            if room.host:                         # the poll screen: join, and the answers
                room_card(room, present)
                class_answers(room, told, a, layer, scale)
            else:
                hidden_note(room)
        elif a is not None:
            state.narrow = True
            draw(step.state.get("view", "Heads"), a, layer)
            if room is not None:
                class_answers(room, told, a, layer, scale)


def _left(a, layer: int, why_not: str | None, told: Told | None, room: Room | None) -> None:
    """The prediction, then the answer: at once when alone, after the reveal in a room."""
    if a is None:
        st.info("The answer appears once the weights above can be computed.")
        return
    if why_not:
        st.info(why_not, icon=":material/info:")
    asks = told is not None and told.question is not None
    said = prediction(told, **prediction_kwargs(room)) if asks and not (
        room is not None and room.host) else None
    if room is not None and room.host:
        class_controls(room)
    elif room is not None:
        student_status(room, told)
    if told is None or (room is not None and room.hidden):
        return
    with st.expander("Show the answer (computed from the numbers on screen)",
                     expanded=room is not None):
        if said is not None and room is None:
            st.markdown(verdict(told, said))
        st.markdown(told.answer)
