"""Each computed question's distractors: the answers the same weights give under a named
misconception (``xattn.lesson.misconceptions``), one function per question.

Every function reads the same `Attention` the question's own ``tell`` read, and the ``Told`` it
returned (the row and head asked about); where it needs what came before the softmax (the
scores, the scores without the mask or the 1/√d_head), it opens the layer's trace, and only
when the trace is of the weights on screen (a model's trace on subword pieces is not). A
softmax keeps the order of its scores, so for a question whose answer is a row's strongest
word, "scores read as weights" and "1/√d_head forgotten" give the answer itself: they are not
computed there. Each reason is said in the context's language (``xattn.words``: the
question's ``tell`` runs inside ``speaking(lang)``); its value stays the question's own, the
same in every language. ``with_distractors`` joins a question's ``tell`` and its distractors: the
COMPUTED table's entries are made with it.
"""

from __future__ import annotations

import functools
from dataclasses import replace

import numpy as np

from xattn.jobs import own_place
from xattn.lesson import switched as S
from xattn.lesson import tell as T
from xattn.lesson._words import target_row, token_name
from xattn.lesson.misconceptions import Distractor, keep
from xattn.metrics import head_statistics
from xattn.trace import masked_softmax
from xattn.words import say

__all__ = ["with_distractors", "FINDERS", "Derived", "derived_of"]


class Derived:
    """A layer's weights read wrongly, each ``(n_heads, n_tgt, n_src)``: by columns
    (``col_share``: each column divided by its sum) and, where the trace is of these weights,
    the scores before the softmax (``scores``), a softmax over the target words
    (``col_softmax``), without the mask (``unmasked``) and without 1/√d_head (``unscaled``;
    None where the division cannot be switched off)."""

    def __init__(self, a, layer: int):
        w = a.layer(layer)                                                    # (h, T, S)
        total = w.sum(axis=-2, keepdims=True)                                 # (h, 1, S)
        self.weights = w
        self.col_share = np.divide(w, total, out=np.zeros_like(w), where=total > 0)
        self.scores = self.col_softmax = self.unmasked = self.unscaled = self.mask = None
        t = _trace(a, layer, True)
        if t is None:
            return
        self.scores, self.mask = t.scaled_scores, t.mask                     # (h, T, S), (T, S)
        # the softmax over the target axis: each column of allowed cells sums to 1
        self.col_softmax = masked_softmax(np.swapaxes(t.scaled_scores, -1, -2),
                                          t.mask.T).swapaxes(-1, -2)         # (h, T, S)
        self.unmasked = masked_softmax(t.scaled_scores)                       # (h, T, S)
        off = _trace(a, layer, False) if a.layers.rescalable else None
        self.unscaled = None if off is None else off.weights


def _trace(a, layer: int, scale: bool):
    """The layer's trace (``scale``: with 1/√d_head) if it is of the weights on screen."""
    if a.layers is None:
        return None
    try:
        t = a.layers.trace(layer, scale)
    except (ValueError, RuntimeError, NotImplementedError):
        return None
    w = a.layer(layer)
    if t.weights.shape != w.shape:
        return None
    if scale and not np.allclose(t.weights, w, atol=1e-4):
        return None
    return t


@functools.lru_cache(maxsize=32)
def _derived_cached(a, layer: int) -> Derived:
    return Derived(a, layer)


def derived_of(a, layer: int) -> Derived:
    """`Derived` of ``a``'s ``layer`` (once per record and layer)."""
    return _derived_cached(a, layer)


def _argmax(row) -> int | None:
    return None if row is None else int(np.argmax(row))


def _at(m, h: int, i: int):
    """Row ``i`` of head ``h`` of ``m`` (h = -1: the heads averaged), or None."""
    if m is None:
        return None
    return m[:, i].mean(0) if h < 0 else m[h, i]


def one_head(a, layer, told, **_):
    i, h = told.row
    d, n_src = derived_of(a, layer), len(a.src_tokens)
    return [Distractor("heads", _argmax(_at(d.weights, -1, i)),
                       say("averaged the heads instead of reading head {head}", head=h + 1)),
            Distractor("swapped", _argmax(_at(d.col_share, h, i))),
            Distractor("axis", _argmax(_at(d.col_softmax, h, i))),
            Distractor("mask", _argmax(_at(d.unmasked, h, i))),
            Distractor("diagonal", int(own_place(len(a.tgt_tokens), n_src)[i]))]


def rows_sum(a, layer, told, *, target: str = "noir", head: int = 2):
    i, _ = target_row(a, target)
    h, _ = T.asked_head(a, head)
    d = derived_of(a, layer)
    col = i if i < len(a.src_tokens) else None
    row_scores = None if d.scores is None else float(d.scores[h, i][d.mask[i]].sum())
    return [Distractor("swapped", None if col is None else float(d.weights[h, :, col].sum()),
                       say("added up the column of {column} instead of the row of {row}",
                           column=token_name(a.src_tokens, col),
                           row=token_name(a.tgt_tokens, i)) if col is not None else ""),
            Distractor("scores", row_scores, say("added up the scores before the softmax")),
            Distractor("axis", None if d.col_softmax is None else float(
                d.col_softmax[h, i].sum()))]


def padding(a, layer, told, *, target: str = "chat"):
    masked = [j for j in range(len(a.src_tokens)) if not a.mask[:, j].any()]
    if not masked:
        return []
    j, (i, _) = masked[0], target_row(a, target)
    d = derived_of(a, layer)
    return [Distractor("mask", None if d.unmasked is None else float(d.unmasked[0, i, j]),
                       say("gave the masked token the weight it had without the mask")),
            Distractor("scores", None if d.scores is None else float(d.scores[0, i, j]),
                       say("read the masked token's score as its weight"))]


def _first(src, m: int) -> str:
    """A wait-k choice, as ``tell.wait_k`` words it."""
    return f"the first {m}: {' '.join(src[:m])}" if m < len(src) else f"all {len(src)}"


def wait_k(a, layer, told, **_):
    src = a.src_tokens
    return [Distractor("mask", _first(src, len(src)),
                       say("ignored the wait-k mask: every target token sees the whole "
                           "source")),
            Distractor("diagonal", _first(src, 1),
                       say("took position for alignment: the first target token sees only "
                           "the first source token"))]


def seed(a, layer, told, *, seed: int = 0):
    now, other = (a.recipe.variant(s, a.n_heads).layer(layer).mean(0) for s in (seed, seed + 1))
    moved, total = int((now.argmax(-1) != other.argmax(-1)).sum()), now.shape[0]
    pick = T.SEED_CHOICES[0 if moved == 0 else 1 if moved <= total / 2 else 2]
    return [Distractor("heads", pick, say("compared the heads averaged instead of each "
                                          "head's rows"))]


def trained(a, layer, told, **_):
    i, _ = told.row
    d = derived_of(a, layer)
    return [Distractor("heads", _argmax(d.weights[0, i]),
                       say("read head 1 alone instead of the heads averaged")),
            Distractor("swapped", _argmax(_at(d.col_share, -1, i))),
            Distractor("axis", _argmax(_at(d.col_softmax, -1, i))),
            Distractor("diagonal", int(own_place(len(a.tgt_tokens), len(a.src_tokens))[i]))]


def training(a, layer, told, **_):
    b = a.toy.untrained()
    conf = [float(np.nanmean(head_statistics(x.layer(layer)[:1], x.mask)["confidence"]))
            for x in (a, b)]
    pick = T.TRAINING_CHOICES[2 if abs(conf[0] - conf[1]) < 0.05 else 0 if conf[0] > conf[1]
                              else 1]
    return [Distractor("heads", pick, say("compared head 1 alone (the pictures) instead of "
                                          "every head"))]


def _diagonal_share(w) -> np.ndarray:
    """Each head's mean weight on the source word in each target word's own place."""
    n_tgt, n_src = w.shape[-2:]
    return w[..., np.arange(n_tgt), own_place(n_tgt, n_src)].mean(-1)        # (h,)


def ablation(a, layer, told, **_):
    choices = told.question.choices
    h = int(np.argmax(_diagonal_share(a.layer(layer))))
    return [Distractor("diagonal", choices[h], say("took the head that follows word order "
                                                   "(the diagonal) for the one the output "
                                                   "needs most"))]


def sqrt(a, layer, told, **_):
    down, up, same = S.SQRT_CHOICES
    on, off = a.layers.trace(layer, True), a.layers.trace(layer, False)
    flipped = {down: up, up: down}.get(told.truth)
    kept = int(np.argmax(on.scaled_scores[0, 0])) == int(np.argmax(off.scaled_scores[0, 0]))
    return [Distractor("unscaled", flipped, say("thought the 1/√d_head scaling sharpens the "
                                                "weights: it spreads them")),
            Distractor("scores", same if kept else None, say("read the scores as weights: the "
                                                             "largest score stays the "
                                                             "largest"))]


def layers(a, layer, told, *, links: str = "target_argmax", link_min: float = 0.3):
    from xattn.alignlab import score_heads

    scores = score_heads(a.heldout(False), method=links,
                         threshold=link_min if links == "threshold" else None)
    choices = told.question.choices
    best = scores.best_heads[0][0] if scores.best_heads else None
    diag = int(np.argmax([_diagonal_share(a.layer(k).mean(0, keepdims=True))[0]
                          for k in range(a.n_layers)]))
    return [Distractor("heads", None if best is None else choices[best],
                       say("picked the layer of the best single head instead of the heads "
                           "averaged")),
            Distractor("diagonal", choices[diag], say("picked the layer whose heads follow "
                                                      "word order (the diagonal) most"))]


def explanation(a, layer, told, **_):
    i, _ = told.row
    n_src = len(told.question.choices)
    w = a.layer(told.layer)
    looked = _argmax(w[:, i].mean(0)) if w.shape[-1] == n_src else None
    return [Distractor("effect", looked, say("took the word the heads, averaged, look at "
                                             "most for the word the output needs most")),
            Distractor("diagonal", int(own_place(len(a.tgt_tokens), n_src)[i]))]


FINDERS = {"strongest_source": one_head, "row_sum": rows_sum, "masked_share": padding,
           "wait_k": wait_k, "seed_change": seed, "repeated_word": trained,
           "trained_vs_random": training, "head_off": ablation, "divide_by_sqrt": sqrt,
           "best_layer": layers, "masking_effect": explanation}
"""The questions with distractors, by ``COMPUTED`` name. Not here: "first_to_learn" (which
head learns first: none of the named misreadings of a heatmap gives another head),
"head_jobs" (parts) and "align_words" (links): an answer of several parts is judged part by
part."""


def _row_weights(a, told) -> tuple:
    """A token question's row of weights (its chart's), one per token; () otherwise."""
    if told.row is None or told.question is None or not told.question.of.asked.taps:
        return ()
    i, h = told.row
    w = a.layer(told.layer if told.layer is not None else 0)
    row = w[:, i].mean(0) if h < 0 else w[h, i]
    if len(row) != len(told.question.choices):
        return ()
    return tuple(round(float(x), 4) for x in row)


def with_distractors(tell, find):
    """``tell`` (a computed question) whose ``Told`` carries the distractors ``find`` gives
    on the same weights (`keep`: the ones a student could give, each once) and a token
    question's row of weights."""
    @functools.wraps(tell)
    def told_with(a, layer: int, **args):
        if a.heldout is not None:        # the held-out sentences run once for both
            a = replace(a, heldout=functools.lru_cache(maxsize=4)(a.heldout))
        told = tell(a, layer, **args)
        if told.question is None or told.truth is None:
            return told
        return replace(told, distractors=keep(told, find(a, layer, told, **args)),
                       weights=_row_weights(a, told))
    return told_with
