"""How sure the class was, on the lecturer's page: the room's two switches and, after the
reveal, the class's answers by right and wrong and by how sure (``xattn.classroom.confidence``).

- *Ask how sure* (off by default): each phone shows *sure / think so / guess* under its
  answer, and each answer carries the tap.
- *Show the round before during a revote* (off by default: the class sees its earlier votes
  with the reveal only): a revote's phones show how the class answered the round before
  while they vote again (Brooks and Koretsky 2011: seeing it sways students to the
  consensus, right or wrong).

Both are the room's (``ClassStore.set_options``): every host device and every phone of every
server process follows them, and a change moves the room's version (every page redraws).
"""

from __future__ import annotations

import streamlit as st

from xattn.classroom import ClassroomError
from xattn.classroom.confidence import LABELS, LEVELS, ConfidenceSplit, split
from xattn.literal import md_code
from xattn.ui.i18n import N_
from xattn.ui.i18n import gettext as _
from xattn.ui.room.learned import judge
from xattn.ui.room.room import Room, class_store
from xattn.ui.room.session import HOST_ERROR

__all__ = ["class_switches", "confidence_table", "confidence_text", "SWITCHES"]

# widget key -> (the room's switch, label, help)
SWITCHES = {
    "class_confidence": (
        "confidence", N_("Ask how sure (sure / think so / guess)"),
        N_("Each phone shows three taps under its answer; after the reveal you see who was "
           "right and sure, right but guessing, and wrong and sure: the misconception to "
           "discuss. An answer without a tap still counts.")),
    "class_histogram": (
        "histogram_before", N_("Show the round before during a revote"),
        N_("Off: the class sees how it voted only with the reveal. On: while the class votes "
           "again, each phone shows the earlier round's answers. Seeing them sways students "
           "towards the majority, right or wrong (Brooks and Koretsky 2011).")),
}
# the levels' labels (``xattn.classroom.confidence.LABELS``) in the catalogs
_LEVEL_LABELS = (N_("sure"), N_("think so"), N_("guess"), N_("not said"))


def _switch(room: Room, key: str, name: str) -> None:
    try:
        class_store().set_options(room.code, room.host, **{name: bool(st.session_state[key])})
    except ClassroomError as err:
        st.session_state[HOST_ERROR] = str(err)
    st.rerun(scope="app")


def class_switches(room: Room, view, keys=tuple(SWITCHES)) -> None:
    """The room's switches (those of ``keys``: a homework has no revote) as toggles, each
    showing what the store holds (another host device may have changed it)."""
    for key, (name, label, help_text) in SWITCHES.items():
        if key not in keys:
            continue
        st.session_state[key] = bool(getattr(view, name))
        st.toggle(_(label), key=key, help=_(help_text), on_change=_switch,
                  args=(room, key, name))


def confidence_text(s: ConfidenceSplit) -> str:
    """The class's answers by right and wrong and by how sure, as a small Markdown table and
    the three numbers to read: right and sure, right but guessing, wrong and sure."""
    levels = [*LEVELS, None]
    rows = [(True, _("right")), (False, _("wrong"))] if s.graded else [(None, _("answered"))]
    table = ["| | " + " | ".join(_(LABELS[v] if v else "not said") for v in levels) + " |",
             "|---|" + "---:|" * len(levels)]
    table += [f"| {name} | " + " | ".join(str(s.count(right, v)) for v in levels) + " |"
              for right, name in rows]
    if not s.graded:
        return "\n".join(table)
    return "\n".join(table) + "\n\n" + _(
        "**{right_sure} right and sure** · **{right_guessing} right but guessing** · "
        "**{wrong_sure} wrong and sure**", right_sure=s.right_sure,
        right_guessing=s.right_guessing, wrong_sure=s.wrong_sure) + (
        _(": the misconception to discuss first.") if s.wrong_sure else ".")


def confidence_table(room: Room, view) -> None:
    """After the reveal: how sure the class was of this round's answers, each judged by its
    own round's truth (a follow-up's by its new case's)."""
    if view.phase != "revealed" or room.lesson is None or room.host is None:
        return
    try:
        counts = class_store().confidence(room.code, room.host, view.step, view.round)
    except ClassroomError as err:
        st.warning(md_code(str(err)), icon=":material/cloud_off:")
        return
    if not any(level for _, level in counts):
        if view.confidence:
            st.caption(_("Nobody said how sure they were in this round."))
        return
    st.markdown(confidence_text(split(counts, judge(room.lesson, view.step,
                                                    view.question.case))))
