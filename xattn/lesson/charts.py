"""The charts that answer a step's question: the head, layer or curve the question is about.

A step's question (``xattn.lesson.Told``) carries its answer's charts: each a `Chart`, a
figure made on demand with a text alternative. The computed questions choose theirs (the head
a question asks about, on the layer it asks about; the two seeds compared; the head switched
off), and a lesson file may name one of `CHARTS` for a step (its own question's, or another
than the computed question's). The lecturer's page, the projector and every phone draw the
same figures (``xattn.live.answers``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xattn.words import say

__all__ = ["Chart", "CHARTS", "head_chart", "heads_chart", "aer_chart", "named_charts"]


@dataclass(frozen=True, eq=False)
class Chart:
    """One chart of an answer: ``make(font_scale)`` builds its Plotly figure; ``alt`` is its
    text alternative (plain text, in the language the step is told in: ``xattn.words``);
    ``key`` says what it shows (a cache key: the same key, the same figure, for the same
    weights)."""

    key: tuple
    alt: str
    make: Callable

    def __repr__(self) -> str:
        return f"Chart{self.key!r}"


def head_chart(a, layer: int, head: int, title: str | None = None) -> Chart:
    """One head's heatmap (``head`` from 0; -1: the heads averaged) on ``layer`` (from 0)."""
    from xattn.figures.frozen import frozen
    from xattn.figures.heads import head_parts

    weights = a.layer(layer)                                                 # (h, T, S)
    row = weights.mean(0) if head < 0 else weights[head]                     # (T, S)
    where = f"layer {layer + 1}, " if a.n_layers > 1 else ""
    what = "the heads averaged" if head < 0 else f"head {head + 1}"

    def make(font_scale: float = 1.0):
        return frozen(*head_parts(row, a.src_tokens, a.tgt_tokens, head=max(head, 0),
                                  mask=a.mask, gold=a.gold, title=title or f"{where}{what}"))
    said = title or (
        (say("layer {layer}, the heads averaged", layer=layer + 1) if where else
         say("the heads averaged")) if head < 0 else
        say("layer {layer}, head {head}", layer=layer + 1, head=head + 1) if where else
        say("head {head}", head=head + 1))
    return Chart(("head", layer, head, title),
                 say("Heatmap of {what}: target tokens (rows) by source tokens (columns).",
                     what=said), make)


def heads_chart(a, layer: int, head: int = 0) -> Chart:
    """Every head of ``layer`` (from 0), side by side (``head`` is not used)."""
    def make(font_scale: float = 1.0):
        from xattn.figures.heads import per_head_figure

        where = f"Layer {layer + 1}: " if a.n_layers > 1 else ""
        return per_head_figure(a.layer(layer), list(a.src_tokens), list(a.tgt_tokens),
                               mask=a.mask, gold=a.gold, max_cols=2,
                               title=f"{where}one heatmap per head", font_scale=font_scale)
    return Chart(("heads", layer), say("Heatmaps of every head of layer {layer}: target "
                                       "tokens (rows) by source tokens (columns).",
                                       layer=layer + 1), make)


def _ablation(a, layer: int, head: int) -> Chart | None:
    if a.layers is None or a.layers.ablate is None:
        return None
    def make(font_scale: float = 1.0):
        from xattn.figures.analysis import ablation_figure

        res = a.layers.ablate(layer, ())
        most = int(max(range(a.n_heads), key=lambda h: res.per_head[h]))
        tgt = (a.layers.tokens or (a.src_tokens, a.tgt_tokens))[1]
        return ablation_figure(a.layers.ablate(layer, (most,)), list(tgt), [most + 1])
    return Chart(("ablation", layer), say("Bar chart of how much the output changes when the "
                                          "most important head is switched off."), make)


def _saturation(a, layer: int, head: int) -> Chart | None:
    if a.recipe is None or a.layers is None:         # random weights only
        return None
    def make(font_scale: float = 1.0):
        from xattn.figures.step import saturation_figure

        return saturation_figure(a.recipe.saturation(), a.layers.d_model // a.n_heads)
    return Chart(("saturation",), say("Line chart: mean normalised entropy against d_head, "
                                      "with and without the division by the square root of "
                                      "d_head."), make)


def aer_chart(a, layer: int = 0, head: int = 0, *, scores=None,
              rule: tuple = ("target_argmax", None)) -> Chart | None:
    """Every layer's and head's AER on the held-out sentences (``scores``: already scored
    with the link ``rule``, (method, threshold)); None where the weights cannot run on them."""
    if scores is None and a.heldout is None:
        return None
    def make(font_scale: float = 1.0):
        from xattn.alignlab import score_heads
        from xattn.figures.alignment import aer_figure

        return aer_figure(scores if scores is not None else score_heads(
            a.heldout(False), method=rule[0], threshold=rule[1]))
    return Chart(("aer", *rule), say("Heatmap of the alignment error rate of every layer and "
                                     "head; lower is better."), make)


def _curves(a, layer: int, head: int) -> Chart | None:
    if a.toy is None or a.toy.timelapse is None:
        return None
    def make(font_scale: float = 1.0):
        from xattn.figures.timelapse import head_curves_figure

        return head_curves_figure(a.toy.timelapse())
    return Chart(("curves",), say("Line chart over the training steps of each head's "
                                  "accuracy on moved and repeated words."), make)


# What a lesson file may name as a step's chart (``chart = "head"``), and what each needs.
CHARTS: dict[str, tuple[Callable, str]] = {
    "head": (head_chart, "the head the question is about (its ``head`` and ``layer``)"),
    "heads": (heads_chart, "every head of the layer the question is about"),
    "ablation": (_ablation, "how much the output changes with the most important head off "
                            "(random or trained weights)"),
    "saturation": (_saturation, "entropy against d_head, divided by √d_head and not (random "
                                "weights)"),
    "aer": (aer_chart, "every layer's and head's alignment error rate on held-out sentences "
                  "(the shipped model, or trained weights)"),
    "curves": (_curves, "each head's accuracy over training (trained weights)"),
    "none": (None, "no chart: the answer's words alone"),
}


def named_charts(name: str, a, layer: int, head: int) -> tuple[Chart, ...]:
    """The chart ``name`` (a key of `CHARTS`) of ``a`` on ``layer`` and ``head`` (from 0;
    -1: the heads averaged), or none (``"none"``, or weights that cannot give it)."""
    make = CHARTS[name][0]
    chart = None if make is None else make(a, layer, head)
    return () if chart is None else (chart,)
