"""A class in a room: the lecturer drives the lesson, the students predict, then see.

``?class=new`` (or *Start a class* in the sidebar) makes a room in the class store
(``xattn.classroom``: SQLite on this machine, or Redis across machines) and puts
``room=CODE&host=KEY`` in the lecturer's link; students open ``?room=CODE``. The host's lesson
step is the room's step; a student's page follows it within a few seconds (a small fragment
polls the room, and reruns the page only when the step, the phase or the round changed), unless
the student left the lesson to explore. Until the host reveals a step, every page in the room
shows the sentences and the question but not the weights; after the reveal, each student sees
the truth with their own prediction marked, and the host sees the class's answers.

The host key lives only in the lecturer's link and session: a student's page, link and
messages never hold it, and a wrong key is refused without saying whether the room exists.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass

import streamlit as st

from xattn.classroom import (
    AnswerRefused,
    ClassroomError,
    ClassStore,
    HostRefused,
    Question,
    RoomNotFound,
    RoomView,
    new_student_id,
    normalize_code,
    open_store,
)
from xattn.literal import md_code, show_value
from xattn.ui.link import CLASS, HOST, LESSON, ROOM, VIEW
from xattn.ui.state import Notice, PageState

__all__ = ["Room", "room_setup", "FOLLOW_EVERY", "class_store"]

FOLLOW_EVERY = 2.0              # seconds between a page's polls of its room
ANSWER_EVERY = 0.5              # seconds: a student's answers reach the store at most this often
_SID = "_xattn_student"         # session: this browser session's random student id
_GOTO = "_xattn_room_goto"      # session: the step the host moved the class to, for the next run
_MADE = "_xattn_room_made"      # session: the room this session made (one per session)
SETTLING = "_xattn_room_settling"   # session: ((code, step, round), fresh): a prediction closed
SETTLED = "_xattn_room_settled"     # ... until a later poll: then reopened by a full run
_JOINED = "_xattn_room_joined"  # session: the room this session has already drawn
_FAILED = "_xattn_room_failed"  # session: the link's class could not be joined
_PENDING = "_xattn_answer_pending"  # session: (code, step, round, value) not yet in the store
_SENT = "_xattn_answer_sent"    # session: ((code, step, round), _clock()) of its last write
_clock = time.monotonic


@st.cache_resource(show_spinner=False)
def _stores(redis_url: str | None, path: str | None) -> ClassStore:
    return open_store()


def class_store() -> ClassStore:
    """The server's class store, one per configuration (``XATTN_REDIS_URL`` or
    ``XATTN_CLASS_STORE``), shared by every session of the process."""
    return _stores(os.environ.get("XATTN_REDIS_URL"), os.environ.get("XATTN_CLASS_STORE"))


@dataclass
class Room:
    """This session's class: its code, the host key (the lecturer's session only), the last
    poll of the room, the student id, and whether the page follows the class's step."""

    code: str
    host: str | None
    view: RoomView
    student: str
    following: bool

    @property
    def hidden(self) -> bool:
        """The weights stay hidden: the class is still predicting this step."""
        return self.view.phase == "asking"

    def __repr__(self) -> str:
        return f"Room({self.code}, {'host' if self.host else 'student'}, step {self.view.step})"


def student_id() -> str:
    """This browser's id in a class: no name, no address, nothing about the student.

    It is made from Streamlit's XSRF cookie, a random token the browser keeps for its session
    and sends to every server process (hashed, so the token itself goes nowhere): a student
    whose server process died and who reconnects to another one is still the same student,
    not a second answer. Without the cookie (XSRF protection off, a test client), a random id
    kept in the session."""
    known = st.session_state.get(_SID)
    if known is None:
        token = _browser_token()
        known = (f"b{hashlib.sha256(b'xattn student|' + token).hexdigest()[:31]}" if token
                 else new_student_id())
        st.session_state[_SID] = known
    return known


def _browser_token() -> bytes | None:
    """The random token inside Streamlit's XSRF cookie (Tornado's "2|mask|token^mask|time"
    form: the mask changes with every page load, the token does not), or None."""
    try:
        raw = st.context.cookies.get("_streamlit_xsrf") or ""
    except Exception:  # noqa: BLE001 - no request (a bare script run): no cookie
        return None
    parts = raw.split("|")
    if len(parts) != 4 or parts[0] != "2":
        return None
    try:
        mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return None
    if not mask or len(masked) < 16:
        return None
    return bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked))


def room_setup(state: PageState, questions) -> Room | None:
    """Read the class from the link (or make one for ``class=new``), before the lesson step is
    chosen; the page then follows the room's step. ``questions()`` gives the lesson's
    questions for a new room. None when the page is in no room (or says why not)."""
    if state.take(CLASS) == "new" and not st.session_state.get(_MADE):
        _make_room(state, questions)
    code, key = state.value(ROOM), state.value(HOST)
    if not code:
        if key:
            state.notices.append(Notice("link", HostRefused().args[0]))
            state.drawn.pop(HOST.key, None)
        return None
    store = class_store()
    try:
        code = normalize_code(code)
        if key:
            store.check_host(code, key)
        view = store.room_view(code, None if key else student_id())
    except HostRefused as err:          # the same words whether or not the room exists
        _leave(state, str(err))
        return None
    except (RoomNotFound, ClassroomError) as err:
        _leave(state, str(err))
        return None
    # A page that just joined follows the class; later, it follows while the Lesson is open
    # (a student on another tab explores, until *Back to the class*).
    arrived = st.session_state.get(_JOINED) != code
    st.session_state[_JOINED] = code
    goto = st.session_state.pop(_GOTO, None)
    following = arrived or goto is not None or st.session_state.get(VIEW.key) == "Lesson"
    if following and (goto or not key):
        state.force({LESSON.key: goto or view.step, VIEW.key: "Lesson"})
    elif arrived:
        state.force({LESSON.key: view.step, VIEW.key: "Lesson"})
    return Room(code, key or None, view, student_id(), following)


def _make_room(state: PageState, questions) -> None:
    try:
        code, key = class_store().create_room(questions())
    except ClassroomError as err:
        state.notices.append(Notice("link", f"No class could be started: {md_code(str(err))}"))
        return
    st.session_state[_MADE] = code
    state.force({ROOM.key: code, HOST.key: key, VIEW.key: "Lesson", LESSON.key: 1})


def _leave(state: PageState, why: str) -> None:
    """Out of the room: say why (the store's words, literally) and keep nothing of it; the
    page then offers a box for the code (`join_box`, on the page itself: a phone's sidebar is
    folded)."""
    state.notices.append(Notice("link", f"{md_code(why)} Type the class code below to join."))
    for p in (ROOM, HOST):
        state.drawn.pop(p.key, None)
        st.session_state.pop(p.key, None)
    st.session_state[_FAILED] = True


def start_button() -> None:
    """*Start a class* (sidebar): a room for this page's lesson, with this session as host."""
    if st.session_state.get(ROOM.key):
        return
    if st.sidebar.button("Start a class", key="start_class", icon=":material/groups:",
                         help="Students join with a code or a QR code, predict each step's "
                              "answer on their phones, and see the numbers when you reveal "
                              "them."):
        st.query_params.clear()
        st.query_params[CLASS.key] = "new"
        st.session_state.pop("_xattn_seen", None)   # the link is read again: class=new
        st.rerun()


def join_box() -> None:
    """A box to type a class code: on the page when the link's class could not be joined,
    in the sidebar otherwise."""
    where = st.container() if st.session_state.get(_FAILED) else st.sidebar
    code = where.text_input("Join a class: its code", key="join", max_chars=12,
                            placeholder="e.g. HJK23M")
    if not code:
        return
    try:
        code = normalize_code(code)
    except RoomNotFound:
        where.error(f"{show_value(code, 20)} is not a class code: six letters and digits, "
                    "as your teacher shows them.", icon=":material/error:")
        return
    st.session_state.pop(_FAILED, None)
    st.query_params.clear()
    st.query_params[ROOM.key] = code
    st.session_state.pop("join")
    st.session_state.pop("_xattn_seen", None)
    st.rerun()


def sync_step(room: Room, step: int, question: Question | None) -> Room:
    """The host's page is the room's step: move the class there, and ask this step's
    question as the page shows it (a new round when the host changed the sentence)."""
    if room.host is None:
        return room
    store = class_store()
    try:
        if room.view.step != step:
            store.set_step(room.code, room.host, step)
        view = store.room_view(room.code)
        if question is not None and view.question != question and view.n_answered == 0:
            store.ask_again(room.code, room.host, step, question)
        room.view = store.room_view(room.code)
    except ClassroomError as err:
        st.error(md_code(str(err)), icon=":material/error:")
    return room


def record_answer(room: Room, value) -> None:
    """A student's prediction, into the room (the last one before the reveal counts)."""
    if value is None:
        return
    st.session_state[_PENDING] = (room.code, room.view.step, room.view.round, value)
    send_answer(room.student)


def send_answer(student: str, *, late: bool = False) -> None:
    """Write this session's latest prediction to the store, at most once per ``ANSWER_EVERY``.

    A student who taps a hundred times in a second costs the shared store a few writes, not a
    hundred: a pick made sooner after another to the same question waits in the session, and
    the page's next poll (``follow``, every ``FOLLOW_EVERY`` seconds) or next pick sends the
    latest one; the first answer to a new step or round goes at once. The last answer wins
    either way; a pick that waits is the student's own page's, never another student's. A
    ``late`` one (from the poll) that the store refuses because the question closed meanwhile
    is dropped quietly, as a tap on a closed question would be."""
    pending = st.session_state.get(_PENDING)
    if pending is None:
        return
    code, step, round_, value = pending
    now, (asked, sent) = _clock(), st.session_state.get(_SENT, (None, 0.0))
    if asked == (code, step, round_) and now - sent < ANSWER_EVERY:
        return                          # a new question's first answer never waits
    st.session_state[_SENT] = ((code, step, round_), now)
    del st.session_state[_PENDING]
    try:
        class_store().answer(code, step, student, value)
    except ClassroomError as err:
        if not (late and isinstance(err, AnswerRefused)):
            st.session_state["_xattn_room_error"] = str(err)


def go_to(step: int) -> None:
    """The host moves the class to ``step`` on the next full run."""
    st.session_state[_GOTO] = step


def seen(room: Room) -> tuple:
    return room.view.step, room.view.phase, room.view.round


@st.fragment(run_every=FOLLOW_EVERY)
def follow(code: str, student: str, drawn: tuple) -> None:
    """A student's poll: rerun the whole page only when the class moved on (another step, the
    reveal, a new round); otherwise this fragment alone runs and draws nothing."""
    send_answer(student, late=True)
    try:
        view = class_store().room_view(code, student)
    except ClassroomError:
        return
    if (view.step, view.phase, view.round) != drawn:
        st.rerun(scope="app")
    settling = st.session_state.get(SETTLING)
    if settling is not None:
        if settling[1]:                 # the run that closed the prediction: not yet
            st.session_state[SETTLING] = (settling[0], False)
        elif st.session_state.get("predict") == view.mine:
            # a message that left the browser after it showed the new question (a stale
            # one still carries the old pick): reopen the prediction
            del st.session_state[SETTLING]
            st.session_state[SETTLED] = settling[0]
            st.rerun(scope="app")
