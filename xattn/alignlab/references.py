"""Published alignment results, as data: references to show beside a measurement, never as one.

Every number here comes from another model on another test set (human-annotated De-En,
En-Fr and Ro-En gold, mostly as prepared by lilt/alignment-scripts), in percent AER (lower is
better). A page shows them under ``REFERENCE_LABEL``, apart from what it measured.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["REFERENCE_LABEL", "PublishedAER", "PublishedFinding", "PUBLISHED_AER",
           "PUBLISHED_FINDINGS"]

REFERENCE_LABEL = ("Published results of other models on other test sets, for reference: "
                   "not measured by this page.")


@dataclass(frozen=True)
class PublishedAER:
    """One published alignment error rate.

    Attributes
    ----------
    system : str
        The aligner, and the variant where it matters.
    test_set : str
        The language pair of the human-annotated test set, e.g. "De-En".
    aer : float
        Percent, as published.
    citation : str
        Where the number is printed.
    """

    system: str
    test_set: str
    aer: float
    citation: str


@dataclass(frozen=True)
class PublishedFinding:
    """A published result stated in words (no number of ours to compare it with)."""

    claim: str
    citation: str


_DOU = "Dou and Neubig 2021, Word Alignment by Fine-tuning Embeddings on Parallel Corpora, Table 2"
_LILT = "lilt/alignment-scripts, README (results), AER (precision/recall)"
_TABLE2 = (("SimAlign", 18.8, 7.6, 27.2), ("eflomal", 22.6, 8.2, 25.1),
           ("Zenkel et al. 2020", 16.0, 5.0, 23.4), ("Chen et al. 2020", 15.4, 4.7, 21.2),
           ("awesome-align", 15.3, 4.4, 22.6))
_LILT_ROWS = (("fast_align, De→En", "De-En", 28.4), ("fast_align, En→De", "De-En", 32.0),
              ("fast_align, grow-diag", "De-En", 27.0),
              ("fast_align, grow-diag", "En-Fr", 10.5),
              ("Mgiza (GIZA++), En→Fr", "En-Fr", 8.0), ("Mgiza (GIZA++), Fr→En", "En-Fr", 9.8),
              ("Mgiza (GIZA++), grow-diag", "En-Fr", 5.9),
              ("Mgiza (GIZA++), grow-diag", "Ro-En", 27.9))

PUBLISHED_AER: tuple[PublishedAER, ...] = (
    *(PublishedAER(system, test_set, aer, _DOU) for system, *values in _TABLE2
      for test_set, aer in zip(("De-En", "Fr-En", "Ro-En"), values, strict=True)),
    *(PublishedAER(system, test_set, aer, _LILT) for system, test_set, aer in _LILT_ROWS),
)

PUBLISHED_FINDINGS: tuple[PublishedFinding, ...] = (
    PublishedFinding("In a vanilla 6-layer transformer, the average over the heads of the "
                     "penultimate decoder layer (layer 5 of 6) aligns best of all layers.",
                     "Garg et al. 2019, Jointly Learning to Align and Translate with "
                     "Transformer Models (EMNLP)"),
    PublishedFinding("A target word's alignment is read better at the step where it is the "
                     "decoder's input (step i+1) than where it is produced.",
                     "Chen et al. 2020, Accurate Word Alignment Induction from Neural "
                     "Machine Translation (EMNLP)"),
)
