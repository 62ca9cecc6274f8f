"""The Alignment view's and the toy task's gold statistics in the page's language (issue 45):
the best-layer line, the per-head sentences, the tables' heads and the published findings,
in French and Arabic from the ``app`` catalog, with the same numbers as English; the page's
marked messages are the library modules' own English words."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xattn import alignment
from xattn.alignlab import (
    METHOD_DESCRIPTIONS,
    PUBLISHED_FINDINGS,
    REFERENCE_LABEL,
    read_gold,
    score_heads,
)
from xattn.ui import i18n
from xattn.ui.views import alignment as view
from xattn.ui.weights import trained as toy


@pytest.fixture
def speak(monkeypatch):
    """Set the page's language of `_`, `ngettext` and the views' numbers."""
    def to(lang: str) -> None:
        for module in (i18n, view, toy):
            monkeypatch.setattr(module, "page_lang", lambda lang=lang: lang)
    return to


def tied(layers: int = 2):
    """Two layers whose heads tie (head 1 of layer 1 and head 2 of layer 2 right), and a
    third all wrong when ``layers`` is 3."""
    gold = read_gold("1-1 2-2\n", format="pharaoh", first_index=1, order="src-tgt")
    eye = np.eye(2)
    w = np.stack([np.stack([eye, eye[::-1]]), np.stack([eye[::-1], eye])])   # (2, 2, 2, 2)
    if layers == 3:
        w = np.concatenate([w, np.stack([eye[::-1]] * 2)[None]])
    return score_heads([(w, gold.pairs[0])])


def best_one():
    gold = read_gold("1-1 2-2\n", format="pharaoh", first_index=1, order="src-tgt")
    eye = np.eye(2)
    w = np.stack([np.stack([eye, eye[::-1]]), np.stack([eye[::-1], eye[::-1]])])
    return score_heads([(w, gold.pairs[0])])


@pytest.mark.parametrize(("lang", "starts", "ties", "heads"), [
    ("en", "**No best layer: all 2 tie**", "2 heads tie for best (AER 0.000)",
     "layer 1, head 1 and layer 2, head 2."),
    ("fr", "**Aucune meilleure couche\u00a0: les 2 sont à égalité**",
     "2 têtes sont à égalité pour la meilleure place (AER 0,000)\u00a0:",
     "couche 1, tête 1 et couche 2, tête 2."),
    ("ar", "**لا توجد طبقة فضلى: تتعادل الطبقتان**", "يتعادل رأسان على الأفضل (AER 0.000)",
     "الطبقة 1، الرأس 1 والطبقة 2، الرأس 2."),
])
def test_the_best_layer_line_is_said_in_the_pages_language(speak, lang, starts, ties, heads):
    speak(lang)
    text = view.best_text(tied())
    assert text.startswith(starts) and ties in text and text.endswith(heads), text
    three = view.best_text(tied(3))
    assert three.startswith(i18n.gettext("**Best layers, tied: {layers}** of {n} (each average: "
                                         "{rates})", layers=view._and(["1", "2"]), n=3,
                                         rates="")[:20])
    one = view.best_text(best_one())
    assert one.startswith(i18n.gettext("**Best layer: {layer}** of {n} (its heads' average: "
                                       "{rates})", layer=1, n=2, rates="")[:18]), one


def test_the_best_layer_line_has_the_same_numbers_in_every_language(speak):
    scores = tied(3)
    said = {}
    for lang in ("en", "fr", "de", "es", "zh", "ar"):
        speak(lang)
        said[lang] = view.best_text(scores)
    digits = {lang: "".join(c for c in t if c.isdigit()) for lang, t in said.items()}
    assert said["en"] == ("**Best layers, tied: 1 and 2** of 3 (each average: AER 0.500, "
                          "precision 0.50, recall 0.50) · 2 heads tie for best (AER 0.000): "
                          "layer 1, head 1 and layer 2, head 2.")
    assert digits["fr"] == digits["en"] == digits["de"] == digits["es"]
    assert "0,500" in said["fr"] and "0,50" in said["de"] and "AER 0.500، الدقة 0.50" in said["ar"]
    assert "。" in said["zh"] and "AER 0.500" in said["zh"]


def heldout(word, moved, repeated):
    t = {"head": np.array([0, 1]), "word_accuracy": np.array([word, 0.3]),
         "moved_accuracy": np.array([moved, 0.2]), "repeated_accuracy": np.array([repeated, 0.2])}
    return alignment.GoldScores(word=0.5, exact=0.5, n_gold=2, pair_by_head={},
                                heldout_by_head=t,
                                untrained_by_head={"word_accuracy": np.array([0.25, math.nan])},
                                sentences=[], n_heldout=256)


@pytest.mark.parametrize(("lang", "first", "verdict", "nan"), [
    ("en", "**Head 1** puts 93% of its argmaxes on the gold word (untrained: 25%); 95% on",
     "It aligns by meaning", "(untrained: n/a)"),
    ("fr", "**Tête 1**\u00a0: 93\u00a0% de ses argmax tombent sur le mot de référence "
           "(non entraînée\u00a0: 25\u00a0%)\u00a0; 95\u00a0% sur", "Elle aligne par le sens",
     "(non entraînée\u00a0: n.d.)"),
    ("ar", "**الرأس 1** يضع 93", "يحاذي بالمعنى", "(دون تدريب: غير متاح)"),
])
def test_each_heads_sentence_is_said_in_the_pages_language(speak, lang, first, verdict, nan):
    speak(lang)
    lines = toy.head_lines(heldout(0.93, 0.95, 0.4))
    assert lines[0].startswith(first) and verdict in lines[0], lines[0]
    assert nan in lines[1] and i18n.gettext(toy.VERDICT_WORDS["little"]) in lines[1]
    if lang == "en":       # the page's English is the library's
        assert lines == alignment.head_sentences(heldout(0.93, 0.95, 0.4).heldout_by_head,
                                                 {"word_accuracy": [0.25, math.nan]})


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_the_toy_tasks_tables_are_headed_in_the_pages_language(speak, lang):
    speak(lang)
    config = toy._column_config(toy.HELDOUT_COLUMNS)
    labels = {k: c["label"] for k, c in config.items()}
    assert labels["head"] == i18n.translated("head", lang) != "head"
    assert labels["moved_accuracy"] == i18n.translated("swapped words", lang) != "swapped words"
    assert config["word_accuracy"]["help"] == i18n.translated(
        alignment.ALIGNMENT_MEASURES["word_accuracy"], lang)
    pair = toy._column_config(toy.PAIR_COLUMNS, narrow=True)
    assert pair["confidence"]["label"] == i18n.translated("confidence", lang) != "confidence"
    lexicon = toy.lexicon_table(("noun",))
    assert list(lexicon) == [i18n.translated(h, lang) for h in toy.LEXICON_HEADS]
    english = next(iter(lexicon.values()))
    assert "cat" in english                                # the model's words stay as they are
    assert all(c.startswith(i18n.translated("noun", lang)) for c in lexicon[list(lexicon)[2]])


def test_the_pages_marked_words_are_the_libraries_own():
    from xattn.corpus import LEXICON
    from xattn.metrics import MEASURES

    assert view.FINDING_WORDS == tuple(f.claim for f in PUBLISHED_FINDINGS)
    assert view.REFERENCE_WORDS == REFERENCE_LABEL
    assert view.METHOD_HELP == METHOD_DESCRIPTIONS
    assert toy.GOLD_MEASURE_WORDS == alignment.ALIGNMENT_MEASURES
    assert toy.VERDICT_WORDS == alignment.VERDICTS
    assert {k: MEASURES[k].short for k in toy.SHORT_WORDS} == toy.SHORT_WORDS
    assert {e.category for e in LEXICON} <= set(toy.CATEGORY_WORDS)
    for lang in ("fr", "ar"):
        for claim in view.FINDING_WORDS + (REFERENCE_LABEL,):
            assert i18n.translated(claim, lang) != claim
