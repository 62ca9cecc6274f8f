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
    the same weights and language); ``alt_in(lang)``, where given, says the text
    alternative in a language (`said`)."""

    key: tuple
    alt: str
    make: Callable
    alt_in: Callable[[str], str] | None = None

    def said(self, lang: str = "en") -> str:
        """The text alternative in ``lang`` (``alt`` where the chart has no other)."""
        return self.alt if self.alt_in is None else self.alt_in(lang)

    def __repr__(self) -> str:
        return f"Chart{self.key!r}"


def _chart(key: tuple, make: Callable, alt_in: Callable[[str], str]) -> Chart:
    """A chart whose text alternative is said in a language by ``alt_in`` (its English is
    ``alt``)."""
    return Chart(key, alt_in("en"), make, alt_in)


def _tr(lang: str):
    from xattn.figures.words import chart_words

    return chart_words(lang)


def head_chart(a, layer: int, head: int, title: str | None = None) -> Chart:
    """One head's heatmap (``head`` from 0; -1: the heads averaged) on ``layer`` (from 0)."""
    from xattn.figures.frozen import frozen
    from xattn.figures.heads import head_parts
    from xattn.figures.words import chart_words

    weights = a.layer(layer)                                                 # (h, T, S)
    row = weights.mean(0) if head < 0 else weights[head]                     # (T, S)
    def said(lang: str) -> str:
        tr = chart_words(lang)
        what = tr("the heads averaged") if head < 0 else tr("head {h}", h=head + 1)
        return tr("layer {l}, {what}", l=layer + 1, what=what) if a.n_layers > 1 else what

    def make(font_scale: float = 1.0, lang: str = "en"):
        return frozen(*head_parts(row, a.src_tokens, a.tgt_tokens, head=max(head, 0),
                                  mask=a.mask, gold=a.gold, title=title or said(lang),
                                  lang=lang))
    return _chart(("head", layer, head, title), make, lambda lang: _tr(lang)(
        "Heatmap of {what}: target tokens (rows) by source tokens (columns).",
        what=title or said(lang)))


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
    return _chart(("heads", layer), make, lambda lang: _tr(lang)(
        "Heatmaps of every head of layer {l}: target tokens (rows) by source tokens (columns).",
        l=layer + 1))


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
    return _chart(("ablation", layer), make, lambda lang: _tr(lang)(
        "Bar chart of how much the output changes when the most important head is switched "
        "off."))


def _saturation(a, layer: int, head: int) -> Chart | None:
    if a.recipe is None or a.layers is None:         # random weights only
        return None
    def make(font_scale: float = 1.0, lang: str = "en"):
        from xattn.figures.step import saturation_figure

        return saturation_figure(a.recipe.saturation(), a.layers.d_model // a.n_heads,
                                 lang=lang)
    return _chart(("saturation",), make, lambda lang: _tr(lang)(
        "Line chart: mean normalised entropy against d_head, with and without the division by "
        "the square root of d_head."))


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
    return _chart(("aer", *rule), make, lambda lang: _tr(lang)(
        "Heatmap of the alignment error rate of every layer and head; lower is better."))


def _curves(a, layer: int, head: int) -> Chart | None:
    if a.toy is None or a.toy.timelapse is None:
        return None
    def make(font_scale: float = 1.0, lang: str = "en"):
        from xattn.figures.timelapse import head_curves_figure

        return head_curves_figure(a.toy.timelapse(), lang=lang)
    return _chart(("curves",), make, lambda lang: _tr(lang)(
        "Line chart over the training steps of each head's accuracy on moved and repeated "
        "words."))


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
