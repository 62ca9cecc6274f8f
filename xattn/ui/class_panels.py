"""What a room adds to the page: the host's room card and class panel, the student's
prediction status and result, the "Back to the class" control.

The host's class panel is a fragment that reruns by itself every few seconds ("31 of 42
answered", the distribution of answers) and drives the room: *Reveal*, *Ask again*, *Next
step*, and the answers as CSV (counts only, no ids).
"""

from __future__ import annotations

import base64
import html
from urllib.parse import urlencode

import streamlit as st

from xattn.classroom import ClassroomError, answers_csv, qr_svg
from xattn.figures.classroom import answers_figure, taps_figure
from xattn.lesson import STEPS, Told, verdict
from xattn.literal import md_code
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.link import HOST, ROOM, VIEW
from xattn.ui.room import (
    FOLLOW_EVERY,
    SETTLED,
    SETTLING,
    Room,
    class_store,
    go_to,
    record_answer,
    seen,
)
from xattn.ui.room import follow as follow_class

__all__ = ["room_card", "class_controls", "class_answers", "student_status", "back_button",
           "hidden_note"]

_ERROR = "_xattn_room_error"
_ASKED = "_xattn_room_asked"      # session: (code, step, round) the prediction belongs to


def student_link(code: str) -> str:
    """The link students open: this page's address with only ``room=CODE``."""
    base = (st.context.url or "http://localhost:8501/").split("?")[0]
    return f"{base}?{urlencode({ROOM.key: code})}"


def _rotate(room: Room) -> None:
    try:
        st.session_state[HOST.key] = class_store().rotate_host(room.code, room.host)
    except ClassroomError as err:
        st.session_state[_ERROR] = str(err)


def room_card(room: Room, present: bool) -> None:
    """The host's card: the code, the student link and its QR code, large on a projector
    while the class joins (the room's first step), a strip afterwards so that the question's
    answers fit the same screen; a word on the address bar, which holds the host key, and a
    button for a new key."""
    link = student_link(room.code)
    large = room.view.step == 1
    widths = ([2, 3] if present else [1, 2]) if large else [1, 4]
    qr, words = st.columns(widths, vertical_alignment="center")
    with qr:
        svg = base64.b64encode(qr_svg(link).encode()).decode()
        alt = html.escape(f"QR code of the class link {link}", quote=True)
        width = (200 if present else 160) if large else 96
        st.html(f'<img alt="{alt}" src="data:image/svg+xml;base64,{svg}" '
                f'style="width:100%;max-width:{width}px;image-rendering:pixelated">')
    with words:
        size = ("2.6rem" if present else "2rem") if large else "1.6rem"
        st.html(f'<div style="font-size:1rem">Join the class: code</div><div style="font-size:'
                f'{size};font-weight:700;letter-spacing:0.12em">{room.code}</div>')  # A-Z, 2-9
        st.markdown(f"or open {md_code(link)}")
    with st.expander("Your link holds the host key"):
        st.markdown("The address bar shows your host key (`host=…`): whoever has it can "
                    "drive this class. On a projector, go full screen (F11), or open this "
                    "page on your own device and project a student's page. If the key was "
                    "seen, make a new one: the class and its answers stay, the old link "
                    "stops working.")
        st.button("New host key", key="rotate_host", on_click=_rotate, args=(room,),
                  icon=":material/key:")


def _poll(room: Room):
    try:
        return class_store().room_view(room.code)
    except ClassroomError as err:
        st.error(md_code(str(err)), icon=":material/error:")
        return None


@st.fragment(run_every=FOLLOW_EVERY)
def class_controls(room: Room) -> None:
    """The host's live count ("31 of 42 answered") and the buttons that drive the class:
    *Reveal*, *Ask again*, *Next step*, and the answers as CSV."""
    view = _poll(room)
    if view is None:
        return
    store = class_store()
    revealed = view.phase == "revealed"
    st.metric("Predictions", f"{view.n_answered} of {max(view.n_present, view.n_answered)} "
              "answered", help="Students who opened the class link in the last two minutes, "
                               "and how many of them predicted this step (the last answer of "
                               "each counts).")
    left, right = st.columns(2)
    if not revealed and left.button("Reveal", key="reveal", type="primary",
                                    icon=":material/visibility:", width="stretch"):
        _drive(lambda: store.reveal(room.code, room.host, view.step))
    if revealed and left.button("Ask again", key="ask_again", icon=":material/replay:",
                                width="stretch"):
        _drive(lambda: store.ask_again(room.code, room.host, view.step))
    if view.step < len(STEPS) and right.button("Next step", key="class_next",
                                               icon=":material/arrow_forward:",
                                               width="stretch"):
        go_to(view.step + 1)
        st.rerun(scope="app")
    try:
        csv = answers_csv(store.results(room.code, room.host))
    except ClassroomError:
        csv = ""
    st.download_button("The class's answers (CSV)", csv, f"xattn-class-{room.code}.csv",
                       "text/csv", key="class_csv", on_click="ignore", width="stretch",
                       help="The counts per answer, step and round: no names, no ids.")
    if seen(room) != (view.step, view.phase, view.round):
        st.rerun(scope="app")


@st.fragment(run_every=FOLLOW_EVERY)
def class_answers(room: Room, told: Told | None, a: Attention, layer: int,
                  font_scale: float = 1.0) -> None:
    """The class's predictions as a bar chart, live; after the reveal the right answer is
    outlined and, for a tapped word, the class's expected attention is put beside the row of
    weights."""
    view = _poll(room) if room.host else room.view
    if view is None:
        return
    revealed = view.phase == "revealed"
    truth = told.truth if told is not None and revealed else None
    show_chart(answers_figure(view.question, view.counts, truth=truth, font_scale=font_scale),
               key="class_answers",
               name=f"xattn-class-{room.code}-step{view.step}",
               alt="Bar chart of the class's predictions, one bar per answer.")
    if revealed and told is not None and view.question.kind == "token":
        _taps(a, layer, view, told)


def _drive(action) -> None:
    try:
        action()
    except ClassroomError as err:
        st.session_state[_ERROR] = str(err)
    st.rerun(scope="app")


def _taps(a: Attention, layer: int, view, told: Told) -> None:
    """Where the class expected the target token to look, beside where head 1 looks."""
    if told.row is None:
        return
    i, head = told.row
    weights = a.layer(layer)
    row = weights[head, i] if head >= 0 else weights[:, i].mean(0)
    names = view.question.choices                # repeated words with their position
    names = names if len(names) == len(a.src_tokens) else a.src_tokens
    show_chart(taps_figure(names, {int(k): n for k, n in view.counts.items()}, row,
                           target=a.tgt_tokens[i],
                           head=f"head {head + 1}" if head >= 0 else "all heads"),
               key="class_taps", name=f"xattn-class-{view.code}-expected",
               alt="Two rows of colour: the share of students who tapped each source token, "
                   "and the row of attention weights.")


def student_status(room: Room, told: Told | None) -> None:
    """A student's side of the step: the prediction's status, then (revealed) the truth with
    their own prediction marked and the class's answers. Ends with the poll that follows the
    class."""
    error = st.session_state.pop(_ERROR, None)
    if error:
        st.warning(md_code(error), icon=":material/warning:")
    mine = room.view.mine
    if room.view.phase == "asking":
        st.caption("Your prediction is in: change it until your teacher reveals the answer."
                   if mine is not None else
                   f"Class {room.code}: predict, then your teacher reveals the numbers.")
    elif told is not None and told.question is not None:
        st.markdown(verdict(told, mine) if mine is not None else
                    "You did not predict this step: here is the answer.")
    follow_class(room.code, room.student, seen(room))


def prediction_kwargs(room: Room | None) -> dict:
    """The prediction widget's settings in a room: its answer goes to the class, and it is
    closed once the host revealed the step."""
    if room is None or room.host:
        return {}
    asked = (room.code, room.view.step, room.view.round)
    if st.session_state.get(_ASKED) != asked:     # a new step or round: a new prediction
        st.session_state[_ASKED] = asked
        if st.session_state.get("predict") not in (None, room.view.mine):
            # The browser still shows the last pick until this run reaches it, and a message
            # it sends meanwhile (its poll) reports that pick as a change: the old answer
            # would be cast into the new question. Streamlit runs no callback for a widget
            # its last run drew disabled, so the prediction stays closed until a later poll
            # of the page (``follow``) shows the browser has the new question, and reopens it.
            st.session_state[SETTLING] = (asked, True)
        st.session_state["predict"] = room.view.mine
    elif room.view.mine is not None and st.session_state.get("predict") is None:
        st.session_state["predict"] = room.view.mine
    closed = st.session_state.get(SETTLING, (None,))[0] == asked
    if closed or st.session_state.pop(SETTLED, None) == asked:
        st.session_state["predict"] = room.view.mine   # whatever a stale message set
    return dict(disabled=closed or room.view.phase != "asking",
                on_change=lambda: record_answer(room, st.session_state.get("predict")))


def back_button(room: Room) -> None:
    """Back to the class's step, for a student (or host) exploring another tab."""
    st.button("Back to the class", key="back_to_class", icon=":material/groups:",
              on_click=lambda: st.session_state.__setitem__(VIEW.key, "Lesson"),
              help=f"Class {room.code} is on step {room.view.step}.")


def hidden_note(room: Room) -> None:
    """What a page in a room shows instead of the weights before the reveal."""
    who = "you reveal" if room.host else "your teacher reveals"
    st.info(f"The weights of step {room.view.step} are hidden until {who} them: predict "
            "first, then see.", icon=":material/visibility_off:")
