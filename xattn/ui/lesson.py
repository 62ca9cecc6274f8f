"""The Lesson view: the guided steps of ``xattn.lesson``, each a prepared page.

Opening a step (from its link ``?view=Lesson&lesson=3``, or the previous/next buttons) sets
every control to the step's state, before any control is drawn; the step's paragraph, what to
look at and the question come first, with an answer computed from the numbers on screen, and
the step's view below. Leaving the lesson keeps the state, so the class explores from there.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from xattn.lesson import STEPS, Step, missing
from xattn.sources import Attention
from xattn.ui.link import IMG, LESSON, PRESENT, REGISTRY, SCALE, VIEW
from xattn.ui.state import PageState

__all__ = ["lesson_setup", "lesson_view"]

KEEP = {p.key for p in (VIEW, LESSON, PRESENT, IMG, SCALE)}   # how the page looks stays


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
    if n != before and not own_settings:
        prepared = {k: p.default for k, p in REGISTRY.items() if k not in KEEP}
        prepared.update({k: v for k, v in step.state.items() if k != "view"})
        state.force(prepared)
    return step


def _go(n: int) -> None:
    st.session_state[LESSON.key] = n


def lesson_view(a: Attention | None, layer: int, state: PageState, step: Step,
                draw: Callable) -> None:
    """The step's text, question and answer, then its view (``draw(view, a, layer)``)."""
    n = STEPS.index(step) + 1
    names = {k: f"{k}. {s.title}" for k, s in enumerate(STEPS, 1)}
    left, middle, right = st.columns([1, 6, 1], vertical_alignment="bottom")
    left.button("← Previous", key="lesson_prev", disabled=n == 1, on_click=_go, args=(n - 1,),
                width="stretch")
    middle.selectbox("Step", list(names), key=LESSON.key, format_func=names.get,
                     label_visibility="collapsed")
    right.button("Next →", key="lesson_next", disabled=n == len(STEPS), on_click=_go,
                 args=(n + 1,), type="primary", width="stretch")
    st.markdown(f"## Step {n} of {len(STEPS)}: {step.title}\n\n{step.text}\n\n"
                f"**Look at:** {step.look}\n\n**Question for the class:** {step.question}")
    why_not = missing(step, a) if a is not None else None
    if a is None:
        st.info("The answer appears once the weights above can be computed.")
    elif why_not:
        st.info(why_not, icon=":material/info:")
    else:
        with st.expander("Show the answer (computed from the numbers on screen)"):
            st.markdown(step.answer(a, layer))
    st.caption("Every control is free: change the sentences or the settings and the answer "
               "follows. Another tab leaves the lesson and keeps this state.")
    st.divider()
    if a is not None:
        draw(step.state.get("view", "Heads"), a, layer)
