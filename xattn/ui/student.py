"""A student's page in a class, made for a phone: the step, the question, the choices and a
receipt on the first screen; after the reveal the one chart that answers the question, their
own verdict and the class's answers; the full page one tap away.

A class moves together, so this page is what the server redraws for every student at each
move of the lecturer: it draws no sidebar and no tabs, and its charts are built once per
server process and shared by every student on the step (``xattn.ui.compute.figure``).

The prediction is a fragment: a tap reruns it alone, never the page. Its widget is keyed by
the question (room, step, round, open or closed), so a message the browser sent for an older
question can never be cast into a newer one, and a browser that reconnects to another server
process brings its choice with it (the widget's id is the same in every process): a choice
on screen that the store does not have is sent. What the store did is the receipt below it.
"""

from __future__ import annotations

import math

import streamlit as st

from xattn.classroom import NO_QUESTION, ClassroomError, Question, RoomView
from xattn.classroom.errors import AnswerRefused
from xattn.classroom.outbox import Receipt
from xattn.figures.classroom import class_figure, taps_figure
from xattn.figures.frozen import frozen
from xattn.figures.heads import head_parts
from xattn.lesson import STEPS, Told, verdict
from xattn.literal import md_code
from xattn.ui import push
from xattn.ui.charts import show_chart
from xattn.ui.compute import derived, figure
from xattn.ui.identity import join_screen
from xattn.ui.link import ROOM
from xattn.ui.predict import SHORT, prediction_widget, show_value_of
from xattn.ui.prepared import prepared_attention
from xattn.ui.room import Room, class_store, explore, relay, send_answer
from xattn.ui.state import PageState
from xattn.ui.versus import show_versus

__all__ = ["student_page", "class_step", "countdown", "prediction_widget", "show_value_of",
           "answer_charts", "back_to_class"]


def class_step(n: int):
    """Step ``n``'s prepared weights and what the step tells of them, once per server: the
    room's questions were made from the same (``xattn.ui.prepared.lesson_questions``)."""
    step = STEPS[n - 1]
    a = derived(("class-step", n), lambda: prepared_attention(step))
    told = derived(("class-told", n, a.key), lambda: step.tell(a, step.layer(a.n_layers)))
    return a, told


def student_page(state: PageState, room: Room) -> None:
    """The whole page of a student who follows the class."""
    state.drawn[ROOM.key] = room.code                # the link stays ?room=CODE
    view = room.view
    _header(room)
    if room.student is None:                         # no id yet: this browser gets one
        try:
            join_screen(class_store(), room.code)
        except ClassroomError as err:
            st.warning(md_code(str(err)), icon=":material/cloud_off:")
        return
    if view is None:
        st.info(f"Joining class {room.code}: this page shows the step as soon as the class "
                "store answers.", icon=":material/hourglass_top:")
        return
    n = view.step
    step = STEPS[n - 1]
    a, told = class_step(n)
    text, look, question = step.render(told)
    st.markdown(f"#### {n}. {step.title}\n\n**{question}**")
    asks = told.question is not None and view.question == told.question
    if asks:
        prediction(room, told)
    elif view.question == NO_QUESTION:
        st.caption("Nothing to predict on this step: read, and your teacher shows the rest.")
    if view.phase == "revealed":
        _revealed(room, a, told, asks)
    elif room.closed:
        st.info("Time is up: answers are closed. Your teacher reveals the answer next.",
                icon=":material/timer_off:")
    else:
        st.caption("The answer appears here when your teacher reveals it.")
    if view.phase != "revealed" and not st.session_state.get(_CHARTED):
        _preload_charts()
    with st.expander("About this step", expanded=view.phase == "revealed" and not asks):
        st.markdown(f"{text}\n\n**Look at:** {look}")
    st.button("Explore this step on the full page", key="explore_step",
              icon=":material/open_in_full:", on_click=explore, args=(room, True),
              help="Every control and view; *Back to the class* returns here.")


_CHARTED = "_xattn_student_charted"   # session: this page has drawn a chart (Plotly is loaded)


def _preload_charts() -> None:
    """An empty chart, 1 px high and hidden from screen readers, drawn while the class
    predicts until the page has shown a chart: the browser then fetches and starts Plotly's
    code before the first reveal (seconds on a phone) instead of after it, when the answer's
    chart is waited for."""
    empty = {"data": [{"type": "scatter", "x": [0], "y": [0], "mode": "markers",
                       "marker": {"opacity": 0}, "hoverinfo": "skip"}],
             "layout": {"height": 10, "margin": {"l": 0, "r": 0, "t": 0, "b": 0},
                        "xaxis": {"visible": False}, "yaxis": {"visible": False}}}
    with st.container(key="chart_preload", height=1, border=False):
        show_chart(empty, key="preload_chart", name="xattn-preload", toolbar=False,
                   alt="(empty)")


def _header(room: Room) -> None:
    view = room.view
    where = f"step {view.step} of {view.n_steps}" if view is not None else "joining"
    caption = f"xattn · class **{room.code}** · {where}"
    if view is not None and view.timer is not None and view.phase == "asking":
        left, right = st.columns([3, 2], vertical_alignment="center")
        left.caption(caption)
        with right:
            countdown(view.timer.ends_at)
    else:                       # one element, not three: every phone redraws it at each step
        st.caption(caption)
    if room.problem:
        st.warning(room.problem, icon=":material/cloud_off:")


def countdown(ends_at: float) -> None:
    """A countdown to ``ends_at`` (seconds since the epoch, the store's clock) that the
    browser updates every quarter second: no rerun of the page. Constant HTML and numbers
    only."""
    import time

    left = max(0.0, ends_at - time.time())
    ident = f"xattn-countdown-{int(ends_at * 1000)}"
    st.html(
        f'<div role="timer" aria-live="off" style="font-size:1.35rem;font-weight:700;'
        f'text-align:right;font-variant-numeric:tabular-nums" id="{ident}" '
        f'data-left="{left:.3f}">⏱ {_clock(left)}</div>'
        "<script>(()=>{const el=document.getElementById(" + repr(ident) + ");"
        "if(!el)return;const end=Date.now()+1000*parseFloat(el.dataset.left);"
        "const tick=()=>{const s=Math.max(0,Math.ceil((end-Date.now())/1000));"
        "el.textContent='⏱ '+Math.floor(s/60)+':'+String(s%60).padStart(2,'0');"
        "if(s>0)setTimeout(tick,250);else el.textContent='⏱ time is up';};tick();})()"
        "</script>", unsafe_allow_javascript=True)


def _clock(seconds: float) -> str:
    s = math.ceil(seconds)
    return f"{s // 60}:{s % 60:02d}"


@st.fragment
def prediction(room: Room, told: Told) -> None:
    """The student's prediction and its receipt; a tap reruns this alone."""
    view = room.view
    open_ = view.phase == "asking" and not room.closed
    key = f"predict-{room.code}-{view.step}-{view.round}-{'open' if open_ else 'shut'}"
    # Open: the browser's own choice stands (a reconnect brings it); shut: what the store has.
    value = prediction_widget(told, key, default=view.mine, disabled=not open_)
    receipt = _receipt(room, told.question, value, open_)
    _show_receipt(receipt, told.question, view, open_)
    if push.available():
        try:
            relay().drew_receipt(push.session_id() or "", room.code, room.student, receipt,
                                 push.fragment_id(), (view.step, view.round))
        except Exception:  # noqa: BLE001 - a store that cannot be opened: nothing to redraw
            pass


def _receipt(room: Room, q: Question, value, open_: bool) -> Receipt | None:
    view = room.view
    try:
        known = relay().receipt(room.code, room.student)
    except Exception:  # noqa: BLE001 - the store cannot be opened at all
        known = None
    if known is not None and (known.step, known.round) != (view.step, view.round):
        known = None                                 # a receipt of an earlier question
    if value is None:
        return known
    try:
        canonical = q.decode(q.encode(value))
    except AnswerRefused as err:
        return Receipt(view.step, view.round, value, "refused", str(err))
    if known is not None:                            # the latest answer this server sent
        if known.value == canonical or known.value == value:
            return known
    elif canonical == view.mine:                     # as the store had it at this run
        return Receipt(view.step, view.round, canonical, "saved")
    if not open_:
        return known
    return send_answer(room, q, value)


def _show_receipt(receipt: Receipt | None, q: Question, view: RoomView, open_: bool) -> None:
    until = ("your teacher reveals the answer" if view.timer is None
             else "time is up or your teacher reveals the answer")
    if receipt is None:
        if open_:
            st.caption("Tap your answer: it is saved for the class at once.")
        elif view.mine is not None:
            st.caption(f"Your answer: {show_value_of(q, view.mine)}.")
        return
    shown = show_value_of(q, receipt.value)
    if receipt.state == "saved":
        more = f" You can change it until {until}." if open_ else ""
        st.success(f"Saved: {shown}.{more}", icon=":material/check_circle:")
    elif receipt.state == "sending":
        st.info(f"Sending {shown} to the class…", icon=":material/sync:")
    elif receipt.state == "retrying":
        st.warning(f"Not saved yet: the class store does not answer ({md_code(receipt.why)}). "
                   f"Your answer {shown} is kept on the server and sent again every few "
                   "seconds: keep this page open.", icon=":material/cloud_sync:")
    else:
        had = (f" The class has your earlier answer {show_value_of(q, view.mine)}."
               if view.mine is not None and view.mine != receipt.value else "")
        st.error(f"Not saved: {md_code(receipt.why)} Your tap on {shown} did not reach the "
                 f"class.{had}", icon=":material/error:")


def _revealed(room: Room, a, told: Told, asks: bool) -> None:
    view = room.view
    if asks:
        st.markdown(verdict(told, view.mine) if view.mine is not None else
                    "You did not predict this step: here is the answer.")
    if asks and view.question.kind == "links":      # the class beside every layer and head
        show_versus(a, told, view.counts, view.n_answered, key="answer_chart_0",
                    name=f"xattn-class-{room.code}-step{view.step}")
    charts = answer_charts(view.step, a, told, view)
    for (fig, alt), col in zip(charts, st.columns(len(charts)) if charts else [], strict=True):
        show_chart(fig, key=f"answer_chart_{charts.index((fig, alt))}", where=col,
                   name=f"xattn-class-{room.code}-step{view.step}", alt=alt)
    if asks and (told.row is None or told.question.kind != "token") \
            and view.question.kind != "links":
        show_chart(class_figure(view.question, view.counts, view.n_answered, truth=told.truth,
                                also=_also(told), labels=SHORT),
                   key="class_answers", name=f"xattn-class-{room.code}-answers",
                   alt=_ANSWERS_ALT.get(view.question.kind, _ANSWERS_ALT["choice"]))
    with st.expander("The answer, in words"):
        st.markdown(told.answer)
    if charts or asks:          # a chart is on the page: Plotly's code is loaded
        st.session_state[_CHARTED] = True


_ANSWERS_ALT = {"choice": "Bar chart of the class's predictions, one bar per answer; the "
                          "right answer outlined.",
                "parts": "Grid of the class's labels: one row per head, one column per job, "
                         "each cell the students who chose it; the right job outlined."}


def _also(told: Told) -> tuple:
    """What is just as right: a tie's answers, or each part's close calls."""
    return tuple(p.also for p in told.parts) if told.question.kind == "parts" else told.also


def answer_charts(n: int, a, told: Told, view: RoomView) -> list[tuple]:
    """The chart that answers step ``n``'s question (two, side by side, where the question
    compares two pictures), as (figure, alt text), built once per server for the step's
    prepared weights; empty when there is none to draw."""
    kind = STEPS[n - 1].state.get("view", "Heads")
    if view.question.kind == "links":               # drawn with the class's links: show_versus
        return []
    if told.charts:                                  # the step draws its own answer
        return [(figure(("answer-chart", n, a.key, k), lambda make=make: make(1.0)),
                 "Bar chart comparing attention weights with the measured effect of masking "
                 "each source word or switching each head off.")
                for k, make in enumerate(told.charts)]
    if told.row is not None and view.question.kind == "token":
        i, head = told.row
        weights = a.layer(0)
        row = weights[head, i] if head >= 0 else weights[:, i].mean(0)
        names = view.question.choices
        names = names if len(names) == len(a.src_tokens) else a.src_tokens
        return [(taps_figure(names, {int(k): c for k, c in view.counts.items()}, row,
                             target=a.tgt_tokens[i],
                             head=f"head {head + 1}" if head >= 0 else "all heads"),
                 "Two rows of colour: the share of the class that tapped each source word, "
                 "and the row of attention weights.")]
    if n == 5 and a.recipe is not None:                  # the same head at two seeds
        seed = a.recipe.seed
        other = a.recipe.variant(seed + 1, a.n_heads)
        return [(figure(("answer-chart", n, b.key, k), lambda b=b, t=t: _head_chart(b, 0, t)),
                 f"Heatmap of head 1 with {t}.")
                for k, (b, t) in enumerate(((a, f"seed {seed}"), (other, f"seed {seed + 1}")))]
    if kind == "Compare" and a.toy is not None and a.toy.untrained is not None:
        pair = ((a, "A: trained, head 1"), (a.toy.untrained(), "B: the random start, head 1"))
        return [(figure(("answer-chart", n, b.key, k), lambda b=b, t=t: _head_chart(b, 0, t)),
                 f"Heatmap of {t}.") for k, (b, t) in enumerate(pair)]
    make = _CHARTS.get(kind)
    if make is None:
        return []
    head = told.row[1] if told.row is not None and told.row[1] >= 0 else 0
    return [(figure(("answer-chart", n, a.key, head), lambda: make(a, head)), _ALTS[kind])]


def _head_chart(a, head: int = 0, title: str | None = None):
    return frozen(*head_parts(a.layer(0)[head], a.src_tokens, a.tgt_tokens, head=head,
                              mask=a.mask, gold=a.gold, title=title))


def _ablation_chart(a, _head: int):
    from xattn.figures.analysis import ablation_figure

    res = a.layers.ablate(0, ())
    most = int(max(range(a.n_heads), key=lambda h: res.per_head[h]))
    tgt = (a.layers.tokens or (a.src_tokens, a.tgt_tokens))[1]
    return ablation_figure(a.layers.ablate(0, (most,)), list(tgt), [most + 1])


def _saturation_chart(a, _head: int):
    from xattn.figures.step import saturation_figure

    return saturation_figure(a.recipe.saturation(), a.layers.d_model // a.n_heads)


def _aer_chart(a, _head: int):
    from xattn.alignlab import score_heads
    from xattn.figures.alignment import aer_figure

    return aer_figure(derived(("aer-lesson", a.key), lambda: score_heads(a.heldout(False))))


def _curves_chart(a, _head: int):
    from xattn.figures.timelapse import head_curves_figure

    return head_curves_figure(a.toy.timelapse())


_CHARTS = {"Heads": _head_chart, "Switch heads off": _ablation_chart,
           "Step through": _saturation_chart, "Alignment": _aer_chart,
           "Training": _curves_chart}
_ALTS = {"Heads": "Heatmap of the head the question is about: target tokens (rows) by source "
                  "tokens (columns).",
         "Switch heads off": "Bar chart of how much the output changes when the most "
                             "important head is switched off.",
         "Step through": "Line chart: mean normalised entropy against d_head, with and without "
                         "the division by the square root of d_head.",
         "Alignment": "Heatmap of the alignment error rate of every layer and head; lower is "
                      "better.",
         "Training": "Line chart over the training steps of each head's accuracy on moved and "
                     "repeated words."}


def back_to_class(room: Room) -> None:
    """On the full page: the way back to the class's page."""
    st.button("Back to the class", key="back_to_class", icon=":material/groups:",
              on_click=explore, args=(room, False),
              help=f"Class {room.code} is on step "
                   f"{room.view.step if room.view is not None else '?'}.")


