"""The class charts' own words in a language (``xattn.figures.words``): the kinds' chart
titles and text alternatives written in ``xattn/classroom`` (said here, listed for the
catalogs), a chart's title with its count of answers, the words of a revote's earlier
round, of numbers counted in ranges, and of the class's taps beside a head's row."""

from __future__ import annotations

from typing import NamedTuple

from xattn.figures.words import N_, chart_words

__all__ = ["CLASS_WORDS", "TAPS_ALT", "VERSUS_ALT", "VERSUS_ALT_YOURS", "Binned",
           "binned_words", "class_alt", "counted_title", "earlier_title", "taps_head"]

# the class charts' words written in xattn/classroom (``controls.CHARTS``: each chart's title,
# text alternative and its outline's sentence; a kind's own title), said here in a language
# (tests/test_chart_words.py checks that each is in this table)
CLASS_WORDS = (
    N_("The class's predictions"), N_("The class's labels"), N_("The class's links"),
    N_("The class's taps"), N_("The class's taps over time"), N_("The class's heads"),
    N_("Bar chart of the class's predictions, one bar per answer."),
    N_("Grid of the class's labels: one row per head, one column per job, each cell the "
       "students who chose it."),
    N_("Heatmap of the class's alignment: one row per target word, one column per source "
       "word, each cell the share of students who linked them."),
    N_("Heatmap of the class's taps over the image: one cell per patch, each cell the share "
       "of students who tapped it."),
    N_("Strip of the class's taps over the clip's time: one cell per time bin, each cell "
       "the share of students who tapped it; once the truth is shown, the model's "
       "attention over the same bins above it."),
    N_(" The right answer is outlined."), N_(" The right job is outlined."),
    N_(" The gold links are outlined."),
    N_(" The patch of the model's attention peak is outlined."),
    N_(" The bin of the model's attention peak is outlined."),
)


class Binned(NamedTuple):
    """What a chart of numbers counted in ranges adds to its title and its alt text."""

    title: str
    alt: str


def binned_words(bins: int, lang: str = "en") -> Binned:
    """The words of a number question's chart whose answers are counted in ``bins`` equal
    ranges (a phone cannot show 600 bars), in ``lang``."""
    tr = chart_words(lang)
    return Binned(tr(", counted in {bins} ranges", bins=bins),
                  tr(" The answers are counted in {bins} equal ranges of the scale.", bins=bins))


def earlier_title(rnd: int, n: int, lang: str = "en") -> str:
    """The title of the chart of an earlier round that a revote's phones see, in ``lang``."""
    return chart_words(lang).plural("Round {r}: how the class answered ({n} answer)",
                                    "Round {r}: how the class answered ({n} answers)", n, r=rnd)


TAPS_ALT = N_("Two rows of colour: the share of the class that tapped each source word, and "
              "the row of attention weights.")


# the versus chart's text alternative: the class's links beside the heads (a live room), a
# student's own (a homework)
VERSUS_ALT = N_("Small heatmaps over the sentence pair's words: the class's links (each link's "
                "share of the class), then each layer's average and each head's weights; gold "
                "links outlined.")
VERSUS_ALT_YOURS = N_("Small heatmaps over the sentence pair's words: your links, then each "
                      "layer's average and each head's weights; gold links outlined.")


def taps_head(layer: int | None, head: int, lang: str = "en") -> str:
    """Which head a taps chart's row of weights is (``head`` from 0, -1: every head averaged;
    ``layer`` from 0, None: not named), in ``lang``."""
    tr = chart_words(lang)
    what = tr("head {h}", h=head + 1) if head >= 0 else tr("all heads")
    return what if layer is None else tr("layer {l}, {what}", l=layer + 1, what=what)


def counted_title(question, n: int, tr) -> str:
    """A class chart's title with its count of answers, in ``tr``'s language."""
    return tr.plural("{title} ({n} answer)", "{title} ({n} answers)", n,
                     title=tr(question.of.chart_title))


def class_alt(question, *, revealed: bool = False, lang: str = "en") -> str:
    """The text alternative of `class_figure`'s chart of ``question`` (its kind's: its truth
    outlined once ``revealed``, where the question has one), in ``lang``."""
    tr, chart = chart_words(lang), question.of.drawn
    said = tr(chart.alt)
    if revealed and question.of.graded:
        said += tr(chart.outlined)
    return said

