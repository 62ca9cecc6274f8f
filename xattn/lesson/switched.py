"""The lesson's questions that switch part of the mechanism off and measure what changes: one
head (`ablation`: ``Layers.ablate``) and the division of the scores by √d_head (`sqrt`:
``Layers.trace``). Like ``xattn.lesson.tell``, each reads only the `Attention` it is given.
"""

from __future__ import annotations

import numpy as np

from xattn.classroom.question import Question
from xattn.lesson._told import Told
from xattn.lesson._words import head_choices, heads_said, token_name
from xattn.lesson.charts import named_charts
from xattn.metrics import entropy
from xattn.words import N_, say, say_n, sentences

__all__ = ["ablation", "sqrt", "SQRT_CHOICES", "LITTLE", "SATURATED"]

LITTLE = 0.05          # a relative change of the output this small: the head could go


def ablation(a, layer: int) -> Told:
    res = a.layers.ablate(layer, ())
    order = np.argsort(-np.nan_to_num(res.per_head, nan=-1.0), kind="stable")
    most, least = int(order[0]), int(order[-1])
    choices, shown = head_choices(a.n_heads)
    small = [h for h in range(a.n_heads) if res.per_head[h] < LITTLE]
    could = (say_n("{n} head of {total} changes it by less than {little:.0%} and could go "
                   "unnoticed here.", "{n} heads of {total} change it by less than "
                   "{little:.0%} and could go unnoticed here.", len(small), total=a.n_heads,
                   little=LITTLE) if small else
             say("Every head changes it by at least {least:.1%}: none could go unnoticed "
                 "here.", least=float(res.per_head[least])))
    change = say("Head {most}: switching it off changes the attention output by "
                 "**{change:.1%}** (‖ΔY‖ / ‖Y‖, the relative change of the output); head "
                 "{least} changes it least ({small:.1%}).", most=most + 1,
                 change=float(res.per_head[most]), least=least + 1,
                 small=float(res.per_head[least]))
    return Told({"heads": heads_said(a.n_heads)},
                sentences(change, could,
                          say("In trained translation models many heads can be pruned with "
                              "little loss of quality (Michel, Levy and Neubig 2019); a change "
                              "of the output is not a loss of quality, which this page does not "
                              "measure.")),
                say("Which head's removal will change the output most?"),
                Question("choice", choices) if a.n_heads > 1 else None, choices[most],
                layer=layer, head=most, charts=named_charts("ablation", a, layer, most),
                shown=shown)


SQRT_CHOICES = (N_("It goes down"), N_("It goes up"), N_("It stays the same"))
SATURATED = 0.9       # a row's largest weight from which one token takes "nearly all" of it


def _sqrt_why(truth: str, d_head: int, top_on: float, top_off: float) -> str:
    """What the numbers on screen say, for the answer they give."""
    if truth == SQRT_CHOICES[1]:
        return say("Scores multiplied by √d_head can only sharpen a softmax, never spread it: "
                   "a rise this small is rounding.")
    if truth == SQRT_CHOICES[2]:
        return say("Here the row hardly changes: its scores are close together, or √{d_head} "
                   "is close to 1.", d_head=d_head)
    if top_off >= SATURATED:
        return say("Undivided, the scores of {d_head}-dimensional vectors are √{d_head} times "
                   "larger, so the softmax is sharper: the row's largest weight goes from "
                   "{on:.3f} to {off:.3f}. The softmax saturates: one source token takes "
                   "nearly all the weight.", d_head=d_head, on=top_on, off=top_off)
    return say("Undivided, the scores of {d_head}-dimensional vectors are √{d_head} times "
               "larger, so the softmax is sharper: the row's largest weight goes from {on:.3f} "
               "to {off:.3f}: the weight gathers on fewer source tokens, but no one token "
               "takes nearly all of it.", d_head=d_head, on=top_on, off=top_off)


def sqrt(a, layer: int) -> Told:
    on, off = a.layers.trace(layer, True), a.layers.trace(layer, False)
    allowed = on.mask[0]
    h_on, h_off = (float(entropy(t.weights[0, :1], allowed)[0]) for t in (on, off))
    top_on, top_off = (float(t.weights[0, 0].max()) for t in (on, off))
    d_head = on.q.shape[-1]
    truth = SQRT_CHOICES[2 if abs(h_on - h_off) < 1e-3 else 0 if h_off < h_on else 1]
    entropies = say("Head 1, target token {target}: with the scores divided by √{d_head}, the "
                    "row's entropy is **{on:.3f}** nats; with the scores undivided, "
                    "**{off:.3f}** nats (the most possible: {most:.3f}).",
                    target=token_name(a.tgt_tokens, 0), d_head=d_head, on=h_on, off=h_off,
                    most=float(np.log(allowed.sum())))
    return Told({"d_head": str(d_head)},
                sentences(entropies, _sqrt_why(truth, d_head, top_on, top_off)),
                say("Switch the division off: what happens to the entropy of the first row?"),
                Question("choice", SQRT_CHOICES), truth, layer=layer, head=0,
                charts=named_charts("saturation", a, layer, 0))
