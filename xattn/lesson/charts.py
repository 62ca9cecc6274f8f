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

__all__ = ["Chart", "CHARTS", "head_chart", "heads_chart", "aer_chart", "named_charts"]


@dataclass(frozen=True, eq=False)
class Chart:
    """One chart of an answer: ``make(font_scale, lang)`` builds its Plotly figure, its words
    in ``lang`` (``xattn.figures.words``; default English); ``alt`` is its text alternative
    (plain text); ``key`` says what it shows (a cache key: the same key, the same figure, for
    the same weights and language)."""

    key: tuple
    alt: str
    make: Callable

    def __repr__(self) -> str:
        return f"Chart{self.key!r}"


def head_chart(a, layer: int, head: int, title: str | None = None) -> Chart:
    """One head's heatmap (``head`` from 0; -1: the heads averaged) on ``layer`` (from 0)."""
    from xattn.figures.frozen import frozen
    from xattn.figures.heads import head_parts
    from xattn.figures.words import chart_words

    weights = a.layer(layer)                                                 # (h, T, S)
    row = weights.mean(0) if head < 0 else weights[head]                     # (T, S)
    where = f"layer {layer + 1}, " if a.n_layers > 1 else ""
    what = "the heads averaged" if head < 0 else f"head {head + 1}"

    def said(lang: str) -> str:
        tr = chart_words(lang)
        what = tr("the heads averaged") if head < 0 else tr("head {h}", h=head + 1)
        return tr("layer {l}, {what}", l=layer + 1, what=what) if a.n_layers > 1 else what

    def make(font_scale: float = 1.0, lang: str = "en"):
        return frozen(*head_parts(row, a.src_tokens, a.tgt_tokens, head=max(head, 0),
                                  mask=a.mask, gold=a.gold, title=title or said(lang),
                                  lang=lang))
    return Chart(("head", layer, head, title),
                 f"Heatmap of {title or where + what}: target tokens (rows) by source tokens "
                 "(columns).", make)


def heads_chart(a, layer: int, head: int = 0) -> Chart:
    """Every head of ``layer`` (from 0), side by side (``head`` is not used)."""
    def make(font_scale: float = 1.0, lang: str = "en"):
        from xattn.figures.heads import per_head_figure
        from xattn.figures.words import chart_words

        tr = chart_words(lang)
        title = tr("Layer {l}: one heatmap per head", l=layer + 1) if a.n_layers > 1 else \
            tr("One heatmap per head")
        return per_head_figure(a.layer(layer), list(a.src_tokens), list(a.tgt_tokens),
                               mask=a.mask, gold=a.gold, max_cols=2, title=title,
                               font_scale=font_scale, lang=lang)
    return Chart(("heads", layer), f"Heatmaps of every head of layer {layer + 1}: target "
                 "tokens (rows) by source tokens (columns).", make)


def _ablation(a, layer: int, head: int) -> Chart | None:
    if a.layers is None or a.layers.ablate is None:
        return None
    def make(font_scale: float = 1.0, lang: str = "en"):
        from xattn.figures.analysis import ablation_figure

        res = a.layers.ablate(layer, ())
        most = int(max(range(a.n_heads), key=lambda h: res.per_head[h]))
        tgt = (a.layers.tokens or (a.src_tokens, a.tgt_tokens))[1]
        return ablation_figure(a.layers.ablate(layer, (most,)), list(tgt), [most + 1],
                               lang=lang)
    return Chart(("ablation", layer), "Bar chart of how much the output changes when the most "
                 "important head is switched off.", make)


def _saturation(a, layer: int, head: int) -> Chart | None:
    if a.recipe is None or a.layers is None:         # random weights only
        return None
    def make(font_scale: float = 1.0, lang: str = "en"):
        from xattn.figures.step import saturation_figure

        return saturation_figure(a.recipe.saturation(), a.layers.d_model // a.n_heads,
                                 lang=lang)
    return Chart(("saturation",), "Line chart: mean normalised entropy against d_head, with "
                 "and without the division by the square root of d_head.", make)


def aer_chart(a, layer: int = 0, head: int = 0, *, scores=None,
              rule: tuple = ("target_argmax", None)) -> Chart | None:
    """Every layer's and head's AER on the held-out sentences (``scores``: already scored
    with the link ``rule``, (method, threshold)); None where the weights cannot run on them."""
    if scores is None and a.heldout is None:
        return None
    def make(font_scale: float = 1.0, lang: str = "en"):
        from xattn.alignlab import score_heads
        from xattn.figures.alignment import aer_figure

        return aer_figure(scores if scores is not None else score_heads(
            a.heldout(False), method=rule[0], threshold=rule[1]), lang=lang)
    return Chart(("aer", *rule), "Heatmap of the alignment error rate of every layer and head; "
                 "lower is better.", make)


def _curves(a, layer: int, head: int) -> Chart | None:
    if a.toy is None or a.toy.timelapse is None:
        return None
    def make(font_scale: float = 1.0, lang: str = "en"):
        from xattn.figures.timelapse import head_curves_figure

        return head_curves_figure(a.toy.timelapse(), lang=lang)
    return Chart(("curves",), "Line chart over the training steps of each head's accuracy on "
                 "moved and repeated words.", make)


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
