"""The whole page: the weights (random, trained, a real model or a file), and views in tabs.

Every view draws an ``xattn.sources.Attention``; only the open view's code runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlencode

# Everything the views use is imported with the page, before any session draws a figure:
# Plotly looks pandas up in sys.modules while building a figure, and on a fresh server twelve
# sessions at once found it half imported by another session ("partially initialized module
# 'pandas' has no attribute 'Series'"). Importing it here makes every session wait for the
# whole import instead (Python's import lock).
import pandas  # noqa: F401
import plotly.graph_objects  # noqa: F401
import streamlit as st

from xattn.classroom import ClassroomError
from xattn.lesson import Lesson, Step
from xattn.live.catalog import default_lesson, room_lesson
from xattn.live.link import COURSE, HOST, LESSON, PRESENT, VIEW
from xattn.server import logs as server_logs
from xattn.sources import Attention
from xattn.ui import internals
from xattn.ui.i18n import N_, rtl_style, said_label
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import setup as language_setup
from xattn.ui.lesson.start import lesson_picker, lms_export, new_class, page_lesson, start_panel
from xattn.ui.lesson.view import lesson_setup, lesson_view
from xattn.ui.look import page_style
from xattn.ui.room.card import hidden_note
from xattn.ui.room.room import Room, back_to_class, class_store, follow, join_box, room_setup
from xattn.ui.state import PageState, page_state
from xattn.ui.tabs import take_click, view_tabs
from xattn.ui.views.alignment import alignment_view
from xattn.ui.views.analysis import ablation_view, stats_view
from xattn.ui.views.compare import compare_view
from xattn.ui.views.decode import decode_view
from xattn.ui.views.export import export_view
from xattn.ui.views.heads import heads_view
from xattn.ui.views.lines import lines_view
from xattn.ui.views.step import step_view
from xattn.ui.views.timelapse import training_view
from xattn.ui.weights.controls import display_controls, display_values
from xattn.ui.weights.sources import PAGE_SOURCES, layer_control, weights_source


def install() -> None:
    """What this process's Streamlit needs, once (each call after the first is a cheap
    check): the server log's filters and the one door's changes (``xattn.ui.internals``).
    ``app.py``'s lifespan does it before the first request; a page's run does it again
    where there is no lifespan (AppTest)."""
    server_logs.install()      # no whole session id in the server's log (server_logs.py)
    internals.install()        # closed sessions go; a download made on click outlives runs

# The views that draw the weights: each draws (attention, layer, state).
DRAWS = {
    "Heads": heads_view,
    "Step through": step_view,
    "Head statistics": stats_view,
    "Switch heads off": ablation_view,
    "Lines": lines_view,
    "Compare": compare_view,
    "Decode": decode_view,
    "Alignment": alignment_view,
    "Training": training_view,
    "Export": export_view,
}


@dataclass(frozen=True)
class Tab:
    """What every tab is drawn from (``VIEWS[name](tab)``)."""

    a: Attention | None     # the weights; None until they can be computed
    layer: int              # the layer shown (0 where there are no layers)
    state: PageState
    step: Step | None       # the lesson step a link or the room opened
    room: Room | None       # the class's room, if this page is in one
    lesson: Lesson          # the lesson the page teaches (the room's, in a class)


def _weights_tab(draw: Callable[[Attention, int, PageState], None]) -> Callable[[Tab], None]:
    """A view of the weights as a tab: hidden until a room's reveal, waiting for weights."""

    def tab(t: Tab) -> None:
        if t.room is not None and t.room.hidden:
            hidden_note(t.room)
        elif t.a is None:
            st.info(_("This view appears once the weights above can be computed."))
        else:
            draw(t.a, t.layer, t.state)

    return tab


def _lesson_tab(t: Tab) -> None:
    if t.room is None:
        lesson_picker(t.state, t.lesson)
        lms_export(t.lesson)
    lesson_view(t.a, t.layer, t.state, t.step,
                lambda view, a, layer: DRAWS[view](a, layer, t.state), t.lesson, t.room)


def _reading_tab(t: Tab) -> None:
    st.markdown("\n\n".join(_(paragraph) for paragraph in HOW_TO_READ))


VIEWS: dict[str, Callable[[Tab], None]] = {   # the tabs in order, each drawn from a Tab
    "Lesson": _lesson_tab,
    **{name: _weights_tab(draw) for name, draw in DRAWS.items()},
    "How to read this": _reading_tab,
}

# The reading guide, a paragraph a message (translated where drawn: `_reading_tab`)
HOW_TO_READ = (
    N_("**Rows and columns.** Each heatmap is one head. A row is a *target* token (the decoder's"
       " query: the word being produced); a column is a *source* token (the encoder's key: a "
       "word of the sentence being translated). The colour of a cell is how much that target "
       "token looks at that source token. Every row sums to 1: attention shares one unit of "
       '"looking" among the source tokens.'),
    N_("**What a head outputs.** Each target token receives the weighted average of the source "
       "tokens' *value* vectors, using its row of weights. The heads' results are put side by "
       "side and mixed by $W^O$ into the output: one vector of `d_model` numbers per target "
       "token."),
    N_("**Masking.** A masked source token may not be looked at: its weight is exactly 0 (marked"
       " with a grey cross) and the rest of the row shares the whole unit. Padding masks hide "
       "filler tokens of a batch; *wait-k* lets target token *i* see only the first *i + k* "
       "source tokens, as a simultaneous interpreter who must speak before the sentence ends; a "
       "*local window* allows only source tokens near the diagonal. If every source token is "
       "masked for a target token, that row has nothing to attend to: its weights and output are"
       " all zero."),
    N_("**Where the weights come from** (sidebar, *Weights*). *Random*: nothing was trained; the"
       " token vectors come from a hash of each word and the projection matrices from the seed, "
       "so change the seed and every pattern changes, and any resemblance to a word alignment is"
       " chance (or spelling, in the n-gram embedder, or position, with positional encoding). "
       "*Trained*: the same module trained on a toy English→French task, where each French word "
       "must find the English word it translates; ◻ marks the gold word. *Model*: a real "
       "translation model (opus-mt); row *i* is the step that *produces* target token *i* (its "
       "query is the previous token), and much of the weight parks on `</s>` and punctuation "
       '("attention sinks"). *File*: weights from any model, uploaded. *Compare* puts random and'
       " trained (or two layers) side by side."),
    N_("**Attention is not explanation.** Even in a trained model, a high weight says where a "
       "head looked, not why the model produced its output: values can be small, other heads and"
       " layers mix the result, and different weights can give the same output (Jain and Wallace"
       " 2019; Wiegreffe and Pinter 2019). Read the pictures as *what the mechanism does*, not "
       "as reasons."),
)


def main() -> None:
    install()          # a no-op once done (app.py's lifespan did it before the first request)
    st.set_page_config(page_title="xattn · multi-head cross-attention", page_icon="🔍",
                       layout="wide")
    state = page_state()
    try:
        _page(state)
    finally:
        state.write_url()   # also after an interrupted run: the link follows the controls
        # a restarted process: rerun at once (xattn/ui/internals/reconnect.py); it draws
        # nothing
        internals.rerun_on_reconnect()


def _page(state: PageState) -> None:
    language_setup(state)                # the page's language, before any label is drawn
    take_click()                         # a tab clicked: its view, by its English name
    linked = state.forced.get(COURSE.key, "")          # ?class=new&course=NAME
    room = room_setup(state, lambda: new_class(state, linked))   # a room sets the step
    try:
        _full_page(state, room)
    finally:
        if room is not None:
            follow(room)                            # it reruns itself when the class moves


def _full_page(state: PageState, room: Room | None) -> None:
    if room is None:
        st.title(_("Multi-head cross-attention, head by head"))
        st.container(key="subtitle").caption(_(
            "How a decoder (the target sentence) looks up the encoder's output (the source "
            "sentence). Type two sentences; every control is in the link, so a shared URL "
            "shows the same picture."))
    # *Start a class* at the top of the sidebar (issue 44: it sat 1,678 px down it), drawn
    # at the foot of the run, once the page's lesson is known
    class_box = st.sidebar.container(key="class_box") if room is None else None
    notice_area = st.container()   # filled once the controls are drawn
    row = st.container(horizontal=True, vertical_alignment="center")   # wraps on a phone
    if room is None:
        banner = row.container(key="banner")
    else:       # a class: the step's answer, the class's answers and its chart on one screen
        what = _("homework") if room.homework else _("class")
        row.caption(_("xattn · multi-head cross-attention · {what} **{code}**", what=what,
                      code=room.code)
                    + ((_(" · you drive this homework") if room.homework else
                        _(" · you drive this class")) if room.host else ""), width="stretch")
        folded = st.expander(_("The weights and the sentences (the class sees the step's "
                               "own)"))
        banner = folded.container(key="banner")
    lesson = _lesson(state, room)
    step = lesson_setup(state, state.value(VIEW), lesson, room)   # a new step sets controls
    display_values(state)                     # presenter mode, before anything is drawn
    if room is not None:                      # a homework: the step this page walked to
        room.at = int(st.session_state.get(LESSON.key) or 1)
    if room is None:
        a, source = weights_source(state)
    else:
        with folded:
            a, source = weights_source(state)
    layer = layer_control(state, a) if a is not None else 0
    display_controls(state)                  # the page's language among them
    if room is None:                                # at the top of the sidebar
        start_panel(lesson, class_box)
        join_box(class_box)
    present = bool(state.shown(PRESENT))
    page_style(present)
    rtl_style()
    if present:
        st.set_page_config(initial_sidebar_state="collapsed")
    if a is not None:
        banner.info(said_label(a, layer), icon=PAGE_SOURCES[source].icon)
    _views(state, a, layer, step, room, lesson)
    with row:
        if room is not None and not room.host:
            back_to_class(room)
        share(state)
    if room is not None and room.problem:
        notice_area.warning(room.problem, icon=":material/cloud_off:")
    _notices(state, notice_area)


def _notices(state: PageState, where=None) -> None:
    """The page's notices, in ``where`` (else a container made only when there is one: a
    student's page is redrawn for a whole class at every step, element by element)."""
    notices = state.finish()
    if not notices:
        return
    with where if where is not None else st.container():
        for notice in notices:
            if notice.kind == "link":
                st.warning(notice.text, icon=":material/link:")
            else:
                st.info(notice.text, icon=":material/sync:")


def share(state: PageState) -> None:
    """The full link of this view, with a copy button (the link holds every control)."""
    base = (st.context.url or "http://localhost:8501/").split("?")[0]
    # Never the host key: a lecturer's shared link is a student's link.
    query = urlencode({k: v for k, v in state.url().items() if k != HOST.key}, doseq=True)
    popover = st.popover(_("Share this view"), icon=":material/link:", key="share",
                         on_change="rerun")
    if popover.open:       # drawn when opened: the code block's script is not on the first screen
        with popover:
            st.code(base + (f"?{query}" if query else ""), language=None, wrap_lines=True)
            st.caption(_("The copy button is at the right of the link. Everyone who opens it "
                         "sees this view with the same numbers; add present=1 for presenter "
                         "mode."))


def _lesson(state: PageState, room: Room | None) -> Lesson:
    """The lesson the page teaches: its class's (kept in the class store, read once per
    process; while the store does not answer, the last one this session read), else the
    link's (``course``)."""
    if room is None:
        return page_lesson(state)
    memory = st.session_state.setdefault("_xattn_room_lessons", {})
    try:
        memory[room.code] = room_lesson(class_store(), room.code)
    except ClassroomError:
        pass                       # the page already says the store is away (room.problem)
    room.lesson = memory.get(room.code) or default_lesson()
    return room.lesson


def _views(state: PageState, a, layer: int, step, room: Room | None, lesson: Lesson) -> None:
    tabs = view_tabs(list(VIEWS), state.shown(VIEW))
    drawn = Tab(a, layer, state, step, room, lesson)
    for tab, view in zip(tabs, VIEWS.values(), strict=True):
        if tab.open:
            with tab:
                view(drawn)
