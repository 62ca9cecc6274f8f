"""A class in a room: the lecturer drives the lesson, the students predict, then see.

``?class=new`` (or *Start a class* in the sidebar) makes a room in the class store
(``xattn.classroom``: SQLite on this machine, or Redis across machines) and puts
``room=CODE`` in the lecturer's link, the host key in the session and, through `claim`, in an
HttpOnly cookie of the browser; students open ``?room=CODE``. The room's step is
the room's: every page in the room shows it, the host's pages included (a laptop and a
projector are two host pages of one class), and only a host's explicit action (a step, *Reveal*,
*Ask again*, a timer) changes it. Until the host reveals a step, the weights stay hidden; after
the reveal each student sees the truth with their own prediction, and the host the class's.

A student's link (``?room=CODE``) opens the phone's own light page (``xattn/server``):
this Streamlit page is the lecturer's, and the full page a student opens from the phone
(*Explore this step on the full page*, ``explore=1``). Both follow the room without polling:
a public component listens to the room's pulse and asks for the page's own rerun
(``xattn/ui/room/follow.py``).

Only "no such room" and "wrong host key" leave a room. A store that does not answer keeps
every page in its room, on the last step it read, with a notice; answers wait in the outbox.
The host key lives only in the lecturer's session and cookie, never in an address or on
screen (another device gets it through a one-time device code, ``xattn/ui/room/devices.py``): a
student's page, link and messages never hold it, and a wrong key is refused without saying
whether the room exists. A key a new one replaced signs its device out: a student's page.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st

from xattn.classroom import (
    NO_QUESTION,
    ClassroomError,
    HostRefused,
    LimitReached,
    RoomEnded,
    RoomNotFound,
    RoomView,
    normalize_code,
)
from xattn.literal import md_code
from xattn.live.link import (
    CLASS,
    COURSE,
    DEVICE,
    EXPLORE,
    HOMEWORK,
    HOST,
    LESSON,
    MAX_HOMEWORK_DAYS,
    ROOM,
    VIEW,
)
from xattn.live.stores import class_store
from xattn.ui.page_assets import page_asset
from xattn.ui.room.follow import follow_room, new_run
from xattn.ui.room.hostkey import NO_TOKEN, Away, host_key, keep_host_key, redeem, still_host
from xattn.ui.room.identity import (
    allowed,
    client_address,
    guesses_allowed,
    host_cookie,
    student_id,
    too_many,
)
from xattn.ui.room.session import FAILED, JOINED, KEYS, LAST, MADE
from xattn.ui.room.typed import back_to_class, join_box
from xattn.ui.state import Notice, PageState

__all__ = ["Room", "room_setup", "class_store", "follow", "join_box", "back_to_class"]


@dataclass
class Room:
    """This session's class: its code, the host key (the lecturer's pages only; None: a
    student exploring the full page), the room as last read, the student id."""

    code: str
    host: str | None
    view: RoomView | None      # None: the store has not answered this session yet
    student: str | None        # None: a browser without its id (the phone's page gives one)
    problem: str | None = None  # the store's words when it did not answer this run
    tally: int = 0             # the room's tally as read before the view (the count drawn)
    now: float = 0.0           # the store's clock at the read
    lesson: object = None      # the lesson it teaches (xattn.lesson.Lesson), once read
    at: int = 1                # a homework: the step this page shows (each walks their own)
    answered: frozenset = frozenset()   # a homework: the steps this student answered

    @property
    def homework(self) -> bool:
        return self.view is not None and self.view.homework

    @property
    def hidden(self) -> bool:
        """The weights stay hidden: the class has not seen this step's answer yet. In a
        homework the lecturer sees every step, and a student the steps they answered (every
        step once it closed)."""
        if self.homework:
            return not (self.host or self.view.phase == "closed" or self.at in self.answered)
        return self.view is None or self.view.phase != "revealed"

    @property
    def closed(self) -> bool:
        """This round's time ran out (on the store's clock as this page last read it)."""
        timer = self.view.timer if self.view is not None else None
        return timer is not None and time.time() >= timer.ends_at

    def __repr__(self) -> str:
        step = self.view.step if self.view is not None else "?"
        return f"Room({self.code}, {'host' if self.host else 'student'}, step {step})"


def room_setup(state: PageState, start) -> Room | None:
    """Read the class from the link (or make one for ``class=new``), before the lesson step is
    chosen: the page then shows the room's step. ``start()`` gives a new room's lesson, its
    questions and one line for each step that cannot run (``xattn.ui.lesson.start.new_class``).
    None when the page is in no room (or says why not)."""
    new_run()                                   # the count's fragments are noted afresh
    new = state.take(CLASS) == "new"
    days = _homework_days(state, new)
    if new and days is not None and not st.session_state.get(MADE):
        _make_room(state, start, days)
    device = state.take(DEVICE)
    code, linked = state.value(ROOM), state.value(HOST)
    state.drawn.pop(HOST.key, None)             # the host key is never in the address bar
    if not code:
        if linked:
            state.notices.append(Notice("link", HostRefused().args[0]))
        return None
    if device:
        redeem(state, code, device)
    key = host_key(code, linked)
    tally = 0
    try:
        store = class_store()
        # a page already in this room guesses nothing (no read of the guess limit per run),
        # nor does the lecturer's own page; the others' guesses count per browser (its
        # token), never per address: a hall's mistyped codes never lock the class out
        if st.session_state.get(JOINED) != code and not key:
            may = guesses_allowed(store)
            if not may:
                _leave(state, NO_TOKEN.format(code=code) if may is None else
                       too_many(store.limits), counted=False)
                return None
        code = normalize_code(code)
        if key:
            key = still_host(state, store, code, key, from_link=bool(linked))
        student = None if key else student_id(store, code)
        # The tally first: an answer that lands between the two reads is then in the view
        # but not in the tally drawn, and the page is asked once more (follow.py).
        pulse = store.pulse([code]).get(code)
        tally = pulse.tally if pulse is not None else 0
        view, problem = store.room_view(code, None if key else student, present=False), None
    except RoomEnded as err:                    # its lecturer ended it: every page leaves
        st.session_state.pop(JOINED, None)
        st.session_state.get(KEYS, {}).pop(code, None)
        _leave(state, str(err), counted=False)
        return None
    except RoomNotFound as err:
        if st.session_state.get(JOINED) == code:   # in it a moment ago: away, not gone
            view, problem = None, Away.MESSAGE
            student = st.session_state.get("_xattn_student", {}).get(code)
        else:
            _leave(state, str(err))
            return None
    except HostRefused as err:                  # the same words whether or not it exists
        st.session_state.get(KEYS, {}).pop(code, None)
        _leave(state, str(err))
        return None
    except ClassroomError as err:               # unavailable, or cannot be opened at all
        view, problem = None, _unavailable(err)
        student = st.session_state.get("_xattn_student", {}).get(code)
    last = st.session_state.get(LAST)
    if view is None and last is not None and last.code == code:
        view = last                                  # the last step read, until it is back
    elif view is not None:
        st.session_state[LAST] = view
    room = Room(code, key or None, view, student, problem=problem, tally=tally,
                now=time.time())
    if room.homework and not key and student:
        room.answered = _answered(code, student)
    if not key:
        state.drawn[EXPLORE.key] = "1"       # a student's page in a room is the full page
    elif host_cookie().get(code) != key or room.homework:
        claim(code, key)                     # this browser's cookie gets the key (a homework:
    _place(state, room)                      # its age again, as the homework moves its end)
    return room


def _homework_days(state: PageState, new: bool) -> int | None:
    """The days a new class is open as homework (0: a live class), from the link's
    ``homework``; None when no class should start (a value out of range: said)."""
    refused = HOMEWORK.key in state.refused
    days = state.take(HOMEWORK)                  # a refused value is said by `take`
    if refused and new:
        state.notices.append(Notice("link", "No class was started: a homework is open 1 to "
                                    f"{MAX_HOMEWORK_DAYS} days; start it again with one of "
                                    "them (`homework=7`: a week)."))
        return None
    if days and not new:
        state.notices.append(Notice("link", f"`homework={days}` starts a homework only with "
                                    "`class=new`: nothing was started."))
    return days


def _answered(code: str, student: str) -> frozenset:
    """The steps a homework's student answered (none while the store does not answer)."""
    try:
        return frozenset(class_store().student_answers(code, student))
    except ClassroomError:
        return frozenset()


_claim = st.components.v2.component("xattn_claim", js=page_asset("claim.js"))


def claim(code: str, key: str) -> None:
    """Hand ``key`` to this browser as room ``code``'s HttpOnly cookie (``POST
    /live/CODE/host``): the page reloaded, or opened again at ``/?room=CODE``, is the
    lecturer's again, and no address bar ever held the key."""
    _claim(key="xattn_claim", height=0, data={"url": f"live/{code}/host", "key": key,
                                              "code": code})


def _unavailable(err: ClassroomError) -> str:
    if isinstance(err, (LimitReached, Away)):
        return str(err)
    return (f"The class store is not answering ({md_code(str(err))}). This page stays in the "
            "class and shows its step as soon as the store is back.")


def _place(state: PageState, room: Room) -> None:
    """Put the page on the room's step: the Lesson view when the page arrives in the room,
    and always the room's step (a host page too: only a host's action moves the class)."""
    arrived = st.session_state.get(JOINED) != room.code
    st.session_state[JOINED] = room.code
    forced = {}
    if room.view is not None and not room.homework:   # a homework: each page walks its own
        forced[LESSON.key] = room.view.step
    if arrived:
        forced[VIEW.key] = "Lesson"
    state.force(forced)


def _make_room(state: PageState, start, days: int = 0) -> None:
    """A new room teaching ``start()``'s lesson (a homework open ``days`` days; 0: a live
    class), this session its host."""
    lesson, questions, problems = start()
    if problems:
        state.notices.append(Notice("link", (
            f"No class was started: the lesson {md_code(lesson.title)} cannot run on this "
            "server. Mend it and start again:\n\n" + "\n".join(f"- {p}" for p in problems))))
        return
    try:
        store = class_store()
        # peeked, and counted once a class started: a lecturer who presses again while the
        # store is full (a class makes space within a minute) is not counted for each press
        if not allowed(store, "new_rooms", peek=True):
            limit, window = store.limits.new_rooms
            state.notices.append(Notice("link", (
                f"No class could be started: more than {limit} classes were started from your "
                f"network in the last {window / 3600:g} hours, the most this server takes. "
                "Use a class you started, or wait.")))
            return
        code, key = store.create_room(questions, lesson.to_json(),
                                      homework=days * 86400.0 if days else None,
                                      by=client_address())
        allowed(store, "new_rooms")
        from xattn.ui.room.language import set_new_room_language  # (it imports this module)

        set_new_room_language(store, code, key)
        if not days and questions[0] == NO_QUESTION:     # a first step the class reads
            store.reveal(code, key, 1)
    except (ClassroomError, ValueError) as err:
        state.notices.append(Notice("link", f"No class could be started: {md_code(str(err))}"))
        return
    st.session_state[MADE] = code
    keep_host_key(code, key)
    state.force({ROOM.key: code, VIEW.key: "Lesson", LESSON.key: 1, COURSE.key: ""})


def _leave(state: PageState, why: str, *, counted: bool = True) -> None:
    """Out of the room: say why (the store's words, literally) and keep nothing of it; the
    page then offers a box for the code (`join_box`, on the page itself: a phone's sidebar is
    folded). A code that opens no class counts against the client's failed joins."""
    if counted:
        try:
            guesses_allowed(class_store(), count=True)
        except ClassroomError:
            pass
    state.notices.append(Notice("link", f"{md_code(why)} Type the class code below to join."))
    for p in (ROOM, HOST):
        state.drawn.pop(p.key, None)
        st.session_state.pop(p.key, None)
    st.session_state[FAILED] = True


def follow(room: Room) -> None:
    """Keep this page in step with its room (call once per full run): it reruns itself when
    the room moves, and its count when someone answers (``xattn/ui/room/follow.py``)."""
    view = room.view
    version = view.version if view is not None else -1
    ends_at = view.timer.ends_at if view is not None and view.timer is not None else None
    closed = room.closed
    if room.homework:                     # the page redraws when the homework closes (a
        soon = view.closes_at - room.now < 86400    # browser's timeout holds < 24.8 days)
        ends_at, closed = view.closes_at if soon else None, view.phase == "closed"
    follow_room(room.code, version, room.tally, ends_at, closed, room.now)
