"""The class against the heads: each student links the words of a short sentence pair before
seeing any weights; the reveal scores the class's majority alignment, every layer's average and
every head against the gold alignment, in one table.

Everything is scored by the alignment lab (``xattn.alignlab``) over the pair's *words* (special
tokens such as ``</s>`` left out, as the lab leaves them out where the gold links none): a
head's links are its argmax per target word (the lab's default reading), a layer's the argmax
of its heads' average, the class's the links more than half of the students who answered drew
(``xattn.alignlab.class_score``, from the counts the class store keeps).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from xattn.alignlab import GoldLinks, class_score, score_heads, special_positions
from xattn.classroom.question import MAX_WORDS, Question
from xattn.lesson._told import Told
from xattn.lesson._words import token_label
from xattn.literal import md_code
from xattn.words import N_, full_stop, listed, number, say, say_n, sentences

__all__ = ["WordPair", "word_pair", "aligns", "PanelName", "Versus", "versus"]


@dataclass(frozen=True, eq=False)
class WordPair:
    """The pair on screen, words only, and its gold alignment.

    Attributes
    ----------
    rows, cols : tuple of int
        Positions of the target and source words among the weights' tokens (special tokens
        left out).
    tgt_words, src_words : tuple of str
    gold : GoldLinks
        Zero-based ``(src, tgt)`` over the words.
    """

    rows: tuple[int, ...]
    cols: tuple[int, ...]
    tgt_words: tuple[str, ...]
    src_words: tuple[str, ...]
    gold: GoldLinks

    @property
    def truth(self) -> tuple[tuple[int, int], ...]:
        """The gold links as a class draws them: sorted ``(target, source)``."""
        return tuple(sorted((t, s) for s, t in self.gold.sure))

    def weights(self, a) -> np.ndarray:
        """``a``'s weights over the words, shape (n_layers, n_heads, n_tgt_words, n_src_words)."""
        return a.weights[:, :, list(self.rows)][..., list(self.cols)]


def word_pair(a) -> WordPair | None:
    """The words of the pair on ``a`` (an ``xattn.sources.Attention``) and their gold links:
    the weights' own gold (the toy task's trained weights), else the toy corpus's where the
    source words are a sentence of its grammar and the target words its translation. None
    where no gold is known, or a side has more than ``MAX_WORDS`` words (too many to tap)."""
    from xattn.corpus import translate

    rows = tuple(int(i) for i in np.flatnonzero(~special_positions(a.tgt_tokens)))
    cols = tuple(int(j) for j in np.flatnonzero(~special_positions(a.src_tokens)))
    if not rows or not cols or max(len(rows), len(cols)) > MAX_WORDS:
        return None
    tgt = tuple(a.tgt_tokens[i] for i in rows)
    src = tuple(a.src_tokens[j] for j in cols)
    if a.gold is not None:
        gold = np.asarray(a.gold, dtype=bool)[np.ix_(rows, cols)]           # (T_w, S_w)
    else:
        try:
            pair = translate(list(src))
        except ValueError:
            return None
        if tuple(pair.target) != tgt:
            return None
        gold = pair.alignment_matrix()
    if not gold.any():
        return None
    links = frozenset((int(s), int(t)) for t, s in np.argwhere(gold))
    return WordPair(rows, cols, tgt, src, GoldLinks(links, links))


def _question(pair: WordPair) -> Question:
    n = len(pair.tgt_words)
    return Question("links", tuple(token_label(pair.src_words, j) for j in range(len(pair.cols))),
                    rows=tuple(token_label(pair.tgt_words, i) for i in range(n)))


def aligns(a, layer: int) -> Told:
    """The class links the pair's words; the answer scores every layer and head (the class's
    own row is added from its votes by `versus`)."""
    pair = word_pair(a)
    scores = score_heads([(pair.weights(a), pair.gold)])
    n_layers, n_heads = scores.aer.shape
    best = scores.best_layers
    low = float(np.nanmin(scores.layer_aer))
    where = (say("Against the gold alignment, the heads' average scores AER {aer:.2f}",
                 aer=low) if n_layers == 1 else
             say("Against the gold alignment, layer {layer}'s heads, averaged, score AER "
                 "{aer:.2f}", layer=best[0] + 1, aer=low) if len(best) == 1 else
             say("Against the gold alignment, layers {layers} (heads averaged) tie and score "
                 "AER {aer:.2f}", layers=listed(str(k + 1) for k in best), aer=low))
    head = scores.best_heads
    best_head = say("the best single head ({head}) scores {aer:.2f}",
                    head=_head_name(head[0], n_layers), aer=float(np.nanmin(scores.aer)))
    tie = say("({n} heads tie)", n=len(head)) if len(head) > 1 else ""
    text = sentences(
        full_stop(sentences(listed((where, best_head), semicolons=True), tie)),
        say("A head's links are its strongest source word for each target word; the class's "
            "are the links more than half of it drew. AER = 1 − (|A∩S| + |A∩P|) / (|A| + "
            "|S|): 0 is the gold alignment exactly (Och and Ney 2003)."))
    words = {"pair": f"{md_code(' '.join(pair.src_words))} → "
                     f"{md_code(' '.join(pair.tgt_words))}",
             "heads": (say("{layers} layers × {heads} heads", layers=n_layers, heads=n_heads)
                       if n_layers > 1 else say("{heads} heads", heads=n_heads) if n_heads > 1
                       else say("one head")),
             "words": str(len(pair.tgt_words))}
    return Told(words, text,
                say("Tap a target word, then its source word; tap again to undo."),
                _question(pair), pair.truth)


def _head_name(lh: tuple[int, int], n_layers: int) -> str:
    return (say("layer {layer}, head {head}", layer=lh[0] + 1, head=lh[1] + 1) if n_layers > 1
            else say("head {head}", head=lh[1] + 1))


class PanelName(NamedTuple):
    """Whose weights a panel of the versus chart shows; the chart says it in its language
    (``xattn.figures.aligns.panel_title``: "L2 head 2", "C2 tête 2")."""

    layer: int | None           # 1-based; None where the model has one layer
    head: int | None            # 1-based; None for the layer's heads averaged


@dataclass(frozen=True, eq=False)
class Versus:
    """The class (or one person) beside every layer and head, for the reveal.

    Attributes
    ----------
    table : str
        Markdown: AER, precision and recall of the class, each layer's average and each head.
    line : str
        Markdown, one line: "the class 0.04 · layer 2 0.10 · best head 0.18".
    shares : ndarray of float64, shape (n_tgt_words, n_src_words)
        Each link's share of the class.
    panels : tuple of (PanelName, ndarray of shape (n_tgt_words, n_src_words))
        Each layer's average and each head's weights over the words, with their layer and
        head (`PanelName`), said short in the chart's language ("L2
        mean", "L2 head 2"; "C2 tête 2" in French).
    gold : ndarray of bool, shape (n_tgt_words, n_src_words)
    aer : float
        The class's AER (NaN when nobody answered).
    """

    table: str
    line: str
    shares: np.ndarray
    panels: tuple
    gold: np.ndarray
    aer: float


def _rate(x: float, digits: int = 2) -> str:
    return "–" if np.isnan(x) else number(float(x), f".{digits}f")


WHO = (N_("the class"), N_("you"))      # who a `versus` scores, said in the context's language


def versus(a, counts: dict, n_voters: int, who: str = "the class") -> Versus:
    """``who``'s majority alignment (from the class store's counts of each ``(target,
    source)`` link and the number of students who answered) beside every layer and head of
    ``a`` on the step's pair, its table and line in the context's language
    (``xattn.words.speaking``; ``who`` one of `WHO`, said in it)."""
    pair = word_pair(a)
    n_tgt, n_src = len(pair.rows), len(pair.cols)
    mine = class_score(counts, n_voters, pair.gold, n_tgt, n_src)
    w = pair.weights(a)                                                     # (L, H, T, S)
    scores = score_heads([(w, pair.gold)])
    n_layers, n_heads = scores.aer.shape
    nothing = float("nan")                  # no links yet: no score, never "AER 1.000"
    said = say(who)
    named = [(f"**{said}**" + (" " + say_n("(links drawn by more than half of {n})",
                                           "(links drawn by more than half of {n})", n_voters)
                               if n_voters > 1 else "" if n_voters else
                               " " + say("(no links yet)")),
              *((mine.aer, mine.precision, mine.recall) if n_voters else (nothing,) * 3))]
    named += [(say("layer {layer} (heads averaged)", layer=k + 1) if n_layers > 1
               else say("the heads averaged"),
               scores.layer_aer[k], scores.layer_precision[k], scores.layer_recall[k])
              for k in range(n_layers)]
    named += [(_head_name((k, h), n_layers), scores.aer[k, h], scores.precision[k, h],
               scores.recall[k, h]) for k in range(n_layers) for h in range(n_heads)]
    heads = "| | AER | " + say("precision") + " | " + say("recall") + " |"
    table = "\n".join([heads, "|---|---|---|---|"] + [
        f"| {name} | {_rate(e, 3)} | {_rate(p)} | {_rate(r)} |" for name, e, p, r in named])
    best_layer = scores.best_layers[0] if scores.best_layers else 0
    best_head = scores.best_heads[0] if scores.best_heads else (0, 0)
    line = " · ".join([
        say("{who} {aer}", who=said, aer=_rate(mine.aer)) if n_voters
        else say("{who}: no links yet", who=said),
        (say("layer {layer} {aer}", layer=best_layer + 1,
             aer=_rate(scores.layer_aer[best_layer])) if n_layers > 1 else
         say("the heads averaged {aer}", aer=_rate(scores.layer_aer[best_layer]))),
        say("best head {aer} ({head})", aer=_rate(scores.aer[best_head]),
            head=_head_name(best_head, n_layers))])
    one = n_layers == 1                     # a single layer's panels say no layer
    panels = tuple((PanelName(None if one else k + 1, None), w[k].mean(axis=0))
                   for k in range(n_layers))
    panels += tuple((PanelName(None if one else k + 1, h + 1), w[k, h])
                    for k in range(n_layers) for h in range(n_heads))
    gold, _ = pair.gold.matrices(n_tgt, n_src)
    return Versus(table, say("AER (lower is better): {line}.", line=line), mine.shares, panels,
                  gold, mine.aer if n_voters else nothing)
