"""A room's step as the class sees it: the step's prepared weights and what it tells of them,
and the charts that answer its question, the same on the lecturer's page and on every phone.

A room's questions were made from each step's prepared page (``xattn.ui.lesson.prepared``), so the
answer is computed from the same weights (`class_step`, once per server process). The charts
that answer a step's question (`answer_charts`) are Plotly figures built once per server and
shared: the host's lesson draws them, and the phone's page (``xattn.ui.server.messages``) gets
the same figures as a few kilobytes of numbers (``xattn.figures.phone``).
"""

from __future__ import annotations

from xattn.classroom import RoomView
from xattn.figures.classroom import taps_figure
from xattn.lesson import Lesson, Told
from xattn.ui.compute import derived, figure
from xattn.ui.lesson.prepared import prepared_attention

__all__ = ["class_step", "answer_charts"]


def class_step(lesson: Lesson, n: int, *, show: bool = True):
    """Step ``n`` of ``lesson``: its prepared weights and what the step tells of them, once
    per server: the room's questions were made from the same
    (``xattn.ui.lesson.prepared.lesson_questions``). ``show``: a page's run shows the progress of
    loading or training them (False outside a page's run: the server's own threads).
    `StepUnavailable` when the step's weights cannot be made here."""
    step = lesson.steps[n - 1]
    a = derived(("class-step", lesson.digest, n), lambda: prepared_attention(step, show=show))
    told = derived(("class-told", lesson.digest, n, a.key),
                   lambda: step.tell(a, step.layer(a.n_layers)))
    return a, told


def answer_charts(a, told: Told, view: RoomView) -> list[tuple]:
    """The charts that answer a step's question on the weights ``a``, as (figure, alt text),
    built once per server: the question's own (``Told.charts``: the head,
    layer, seeds or curves it is about), or, for a token question asked of one row, the
    class's taps beside that row; none for links (drawn with the class's links:
    ``xattn.ui.lesson.versus``)."""
    if view.question.of.chart == "links":
        return []
    if told.row is not None and view.question.of.control == "tokens":
        i, head = told.row
        weights = a.layer(told.layer if told.layer is not None else 0)      # (h, T, S)
        row = weights[head, i] if head >= 0 else weights[:, i].mean(0)
        names = view.question.choices
        names = names if len(names) == len(a.src_tokens) else a.src_tokens
        where = f"layer {told.layer + 1}, " if told.layer is not None and a.n_layers > 1 \
            else ""
        return [(taps_figure(names, {int(k): c for k, c in view.counts.items()}, row,
                             target=a.tgt_tokens[i],
                             head=where + (f"head {head + 1}" if head >= 0 else "all heads")),
                 "Two rows of colour: the share of the class that tapped each source word, "
                 "and the row of attention weights.")]
    return [(figure(("answer-chart", a.key, *chart.key), lambda chart=chart: chart.make(1.0)),
             chart.alt) for chart in told.charts]
