"""A homework on the lecturer's page: when it closes, *Close now* and *Extend*, and per step how
many students answered and how many of them were right.

A homework room (``ClassStore.create_room(..., homework=...)``) has no class step: each
student walks the lesson on their phone, at their own pace, and sees each step's answer after
their own (``xattn/live/homework.py``). The lecturer's page walks the steps freely without
moving anyone, each step shown with its answer and the class's answers so far; this panel
takes the place of the live class's (no *Reveal*, *Next step*, timer, revote or follow-up).
Every step is judged with its own answer (`xattn.lesson.is_right` on that step's ``Told``,
``xattn.ui.room.learned.judge``), from the store's counts of whole answers
(``ClassStore.answer_counts``): counts only, never a student.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import NamedTuple
from zoneinfo import ZoneInfo

import streamlit as st

from xattn.classroom import ClassroomError
from xattn.lesson import Lesson
from xattn.literal import md_code
from xattn.live.link import MAX_HOMEWORK_DAYS
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext
from xattn.ui.lesson.words import step_titles
from xattn.ui.room.actions import host_action
from xattn.ui.room.card import room_card, student_link
from xattn.ui.room.class_csv import class_csv_on_click
from xattn.ui.room.confidence import class_switches
from xattn.ui.room.devices import devices_panel, end_panel
from xattn.ui.room.language import room_language
from xattn.ui.room.learned import judge, learned_panel
from xattn.ui.room.panels import host_error, live_fragment
from xattn.ui.room.room import Room, class_store

__all__ = ["StepCount", "homework_counts", "homework_table", "homework_panel", "local_time",
           "time_left"]

DAY = 86400.0


class StepCount(NamedTuple):
    """One step of a homework: how many students answered it, how many of them right (None:
    no right answer, a poll or a step that reads), and that share (None: none answered)."""

    step: int
    title: str
    answered: int
    right: int | None

    @property
    def share(self) -> float | None:
        return None if self.right is None or not self.answered else self.right / self.answered


def homework_counts(lesson: Lesson, counts: dict) -> list[StepCount]:
    """Every step of ``lesson`` from ``counts`` (``ClassStore.answer_counts``: (step, round)
    -> whole answer -> students), round 1: a homework asks each step once."""
    out = []
    for n, step in enumerate(lesson.steps, 1):
        given = counts.get((n, 1), {})
        right = judge(lesson, n, 0) if step.ask is not None else None
        out.append(StepCount(n, step.title, sum(given.values()),
                             None if right is None else sum(k for a, k in given.items()
                                                            if right(a))))
    return out


def homework_table(rows: list[StepCount]) -> str:
    """The steps as a small Markdown table (titles literal)."""
    lines = ["| " + " | ".join((_("step"), _("answered"), _("right"), _("share right"))) + " |",
             "|---|---:|---:|---:|"]
    for r in rows:
        right = "–" if r.right is None else str(r.right)
        share = "–" if r.share is None else f"{r.share:.0%}"
        lines.append(f"| {r.step}. {md_code(r.title)} | {r.answered} | {right} | {share} |")
    return "\n".join(lines)


def local_time(t: float) -> str:
    """A time as this page's reader reads it (their browser's time zone, else UTC)."""
    try:
        zone = ZoneInfo(st.context.timezone or "UTC")
    except Exception:  # noqa: BLE001 - no request, or a zone this machine does not know
        zone = UTC
    when = datetime.fromtimestamp(t, zone)
    return f"{when:%a} {when.day} {when:%b %Y, %H:%M} {when.tzname() or ''}".rstrip()


def time_left(seconds: float) -> str:
    """``6 days 3 hours``, ``5 hours``, ``12 minutes``."""
    days, rest = divmod(int(max(0.0, seconds)), int(DAY))
    hours, minutes = rest // 3600, rest % 3600 // 60
    said_hours = ngettext("{n} hour", "{n} hours", hours)
    if days:
        return ngettext("{n} day", "{n} days", days) + " " + said_hours
    if hours:
        return said_hours
    return ngettext("{n} minute", "{n} minutes", max(1, minutes))


def _closing(room: Room, closes: float | None, days: int, seen: int) -> None:
    """A press: the homework closes ``days`` days after ``closes`` (None: after now, or now
    for 0 days), then the page runs. Within the most a homework stays open from now."""
    def act(store) -> None:
        now = time.time()
        seconds = max(0.0, (closes or now) - now) + days * DAY
        store.set_closing(room.code, room.host, min(seconds, store.limits.homework_seconds))
    host_action(act, room, seen)
    st.rerun(scope="app")


@st.fragment(key="homework_panel")
def homework_panel(room: Room) -> None:
    """The host's panel of a homework (its answers live: the follow component reruns it)."""
    host_error()
    live_fragment("homework_panel")
    try:
        store = class_store()
        view = store.room_view(room.code)
        rows = homework_counts(room.lesson, store.answer_counts(room.code, room.host))
    except ClassroomError as err:
        st.warning(_("The class store does not answer: {error}", error=md_code(str(err))),
                   icon=":material/cloud_off:")
        return
    now = time.time()
    closed = view.phase == "closed"
    if closed:
        st.markdown(_("**Homework, closed** on {closed}: every student sees every step's "
                      "answer. Its answers are kept until {kept}, then deleted.",
                      closed=local_time(view.closes_at), kept=local_time(view.expires_at)))
    else:
        st.markdown(_("**Homework, open** until {closes} ({left} left): each student answers "
                      "each step once, at their own pace, and sees its answer after their own.",
                      closes=local_time(view.closes_at), left=time_left(view.closes_at - now)))
    titles = step_titles(room.lesson)                 # in the page's language
    st.container(key="homework_counts").markdown(homework_table(
        [r._replace(title=titles[r.step - 1]) for r in rows]))
    st.caption(_("Each step is judged by its own answer (polls have none). Counts only: no "
                 "name, no id. Your page walks the steps without moving anyone."))
    _window(room, view, now, closed)
    st.caption(_("In a homework there is no *Reveal*, timer, revote (*Ask again*) or "
                 "follow-up: each student sees a step's answer right after their own, and a "
                 "revote or a follow-up needs the class's discussion, in a live class."))
    with st.expander(_("The students' link and QR code")):
        room_card(room, False)
    class_switches(room, view, keys=("class_confidence",))
    room_language(room, view)
    devices_panel(room, student_link(room.code)[0])
    if room.lesson.check:
        learned_panel(room)
    csv_text = class_csv_on_click(room)
    st.download_button(_("The class's answers (CSV)"), csv_text, f"xattn-class-{room.code}.csv",
                       "text/csv", key="class_csv", on_click="ignore", width="stretch",
                       help=_("Counts per answer and step: no names, no ids."))
    end_panel(room, csv_text)


def _window(room: Room, view, now: float, closed: bool) -> None:
    """*Close now*, and *Extend* (or open again) by a number of days, within the most a
    homework stays open from now (``Limits.homework_seconds``)."""
    most = class_store().limits.homework_seconds
    left = 0.0 if closed else view.closes_at - now
    room_for = min(MAX_HOMEWORK_DAYS, int((most - left) // DAY))
    seen = view.version
    if not closed:
        with st.popover(_("Close now"), icon=":material/lock_clock:", width="stretch"):
            st.markdown(_("Students can no longer answer, and every student sees every step's "
                          "answer. You can open it again afterwards."))
            st.button(_("Close the homework now"), key="homework_close", type="primary",
                      width="stretch", on_click=_closing, args=(room, None, 0, seen))
    if room_for < 1:
        st.caption(_("It is open for the most a homework can be ({days} days from now).",
                     days=format(most / DAY, "g")))
        return
    cols = st.columns([2, 3], vertical_alignment="bottom")
    days = cols[0].number_input(_("Days"), 1, room_for, min(7, room_for), key="homework_more",
                                help=_("At most {more} more: a homework stays open at most "
                                       "{days} days from now.", more=room_for,
                                       days=format(most / DAY, "g")))
    label = (ngettext("Open it again for {n} day", "Open it again for {n} days", int(days))
             if closed else ngettext("Extend by {n} day", "Extend by {n} days", int(days)))
    cols[1].button(label, key="homework_extend", icon=":material/more_time:", width="stretch",
                   on_click=_closing, args=(room, None if closed else view.closes_at,
                                            int(days), seen))
