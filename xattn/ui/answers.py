"""A room's step as the class sees it: the step's prepared weights and what it tells of them,
and the charts that answer its question, the same on the lecturer's page and on every phone.

A room's questions were made from each step's prepared page (``xattn.ui.prepared``), so the
answer is computed from the same weights (`class_step`, once per server process). The charts
that answer a step's question (`answer_charts`) are Plotly figures built once per server and
shared: the host's lesson draws them, and the phone's page (``xattn.ui.server.messages``) gets
the same figures as a few kilobytes of numbers (``xattn.figures.phone``).
"""

from __future__ import annotations

from xattn.classroom import RoomView
from xattn.figures.classroom import taps_figure
from xattn.figures.frozen import frozen
from xattn.figures.heads import head_parts
from xattn.lesson import STEPS, Told
from xattn.ui.compute import derived, figure
from xattn.ui.prepared import prepared_attention

__all__ = ["class_step", "answer_charts", "ANSWERS_ALT", "GRADED_ALT", "also_right"]


def class_step(n: int, *, show: bool = True):
    """Step ``n``'s prepared weights and what the step tells of them, once per server: the
    room's questions were made from the same (``xattn.ui.prepared.lesson_questions``).
    ``show``: a page's run shows the progress of loading or training them (False outside a
    page's run: the server's own threads)."""
    step = STEPS[n - 1]
    a = derived(("class-step", n), lambda: prepared_attention(step, show=show))
    told = derived(("class-told", n, a.key), lambda: step.tell(a, step.layer(a.n_layers)))
    return a, told


ANSWERS_ALT = {"bars": "Bar chart of the class's predictions, one bar per answer.",
               "grid": "Grid of the class's labels: one row per head, one column per job, "
                       "each cell the students who chose it.",
               "links": "Heatmap of the class's alignment: one row per target word, one "
                        "column per source word, each cell the share of students who linked "
                        "them."}
GRADED_ALT = {"bars": " The right answer is outlined.", "grid": " The right job is outlined.",
              "links": " The gold links are outlined."}


def also_right(told: Told) -> tuple:
    """What is just as right: a tie's answers, or each part's close calls."""
    return tuple(p.also for p in told.parts) if told.parts else told.also


def answer_charts(n: int, a, told: Told, view: RoomView) -> list[tuple]:
    """The chart that answers step ``n``'s question (two, side by side, where the question
    compares two pictures), as (figure, alt text), built once per server for the step's
    prepared weights; empty when there is none to draw."""
    kind = STEPS[n - 1].state.get("view", "Heads")
    if view.question.of.chart == "links":           # drawn with the class's links: show_versus
        return []
    if told.charts:                                  # the step draws its own answer
        return [(figure(("answer-chart", n, a.key, k), lambda make=make: make(1.0)),
                 "Bar chart comparing attention weights with the measured effect of masking "
                 "each source word or switching each head off.")
                for k, make in enumerate(told.charts)]
    if told.row is not None and view.question.of.control == "tokens":
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
