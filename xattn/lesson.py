"""A guided lesson: eight steps from one head to why scores are divided by sqrt(d_head).

Each `Step` puts the page in a prepared state (its URL parameters: sentences, weights, heads,
mask, view), says one short paragraph, names one thing to look at and asks the class one
question. Its answer is computed from the numbers the page shows (the step's `Attention`),
never written by hand, so it stays true whatever the sentences or the seed.

Each step declares what it ``needs`` of the weights (a seed to change, a mask to lift,
projections to switch heads off, ...). Weights that cannot give it (a file has no projections,
trained weights no seed) get one line saying what the step shows instead (`missing`), never an
error.

Answers are Markdown in which every token is a code span (``xattn.literal.md_code``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from xattn.literal import md_code
from xattn.metrics import entropy
from xattn.sources import Attention

__all__ = ["Step", "STEPS", "NEEDS", "missing"]

# What a step may need of the weights: (has it?, what the step shows instead, in one line).
NEEDS: dict[str, tuple[Callable[[Attention], bool], str]] = {
    "mask": (lambda a: a.mask is not None,
             "these weights do not say which cells were masked (a file), so the answer cannot "
             "name them: choose *Weights: random* in the sidebar."),
    "unmasked": (lambda a: a.unmasked is not None,
                 "only random weights take a mask you choose: choose *Weights: random* and "
                 "*Masking: padding* in the sidebar, and mask a source token."),
    "variant": (lambda a: a.variant is not None,
                "only random weights come from a seed you can change (trained weights are "
                "trained from theirs: compare training seeds in the sidebar): choose "
                "*Weights: random*."),
    "gold": (lambda a: a.gold is not None,
             "only the toy task's trained weights come with a gold alignment: choose "
             "*Weights: trained*."),
    "ablate": (lambda a: a.ablate is not None,
               "switching heads off needs the heads' outputs and W_O, which these weights do "
               "not have: choose *Weights: random* or *trained*."),
    "rescale": (lambda a: a.trace is not None and a.rescalable,
                "these weights' division by √d_head cannot be switched off here: choose "
                "*Weights: random*."),
}


@dataclass(frozen=True)
class Step:
    """One step of the lesson.

    Attributes
    ----------
    title : str
    state : dict of str to value
        URL parameters of the prepared page (the rest at their defaults); ``view`` is the view
        drawn under the step.
    text, look, question : str
        Markdown: one paragraph, one thing to look at, one question for the class.
    answer : callable (Attention, layer) -> str
        The answer, computed from the weights on screen (Markdown).
    needs : tuple of str
        Keys of `NEEDS`: what ``answer`` needs of the weights.
    """

    title: str
    state: dict = field(default_factory=dict)
    text: str = ""
    look: str = ""
    question: str = ""
    answer: Callable[[Attention, int], str] = lambda a, layer: ""
    needs: tuple[str, ...] = ()


def missing(step: Step, a: Attention) -> str | None:
    """Why ``a`` cannot give what ``step`` needs (Markdown, one line), or None."""
    for need in step.needs:
        has, why = NEEDS[need]
        if not has(a):
            return f"This step's answer needs other weights: {why}"
    return None


def _row(a: Attention, token: str, occurrence: int = 0) -> int:
    """The target position of ``token`` (its ``occurrence``-th time), or the first row."""
    rows = [i for i, t in enumerate(a.tgt_tokens) if t == token]
    return rows[min(occurrence, len(rows) - 1)] if rows else 0


def _strongest(a: Attention, layer: int, head: int, i: int) -> str:
    row = a.layer(layer)[head, i]
    j = int(np.argmax(row))
    return f"{md_code(a.src_tokens[j])} ({row[j]:.3f})"


def _one_head(a: Attention, layer: int) -> str:
    i = _row(a, "chat")
    return (f"{md_code(a.tgt_tokens[i])} looks most at {_strongest(a, layer, 0, i)}."
            + (f" {a.caveat}" if a.caveat else ""))


def _rows_sum(a: Attention, layer: int) -> str:
    i, head = _row(a, "noir"), min(1, a.n_heads - 1)
    row = a.layer(layer)[head, i]
    terms = " + ".join(f"{w:.3f}" for w in row)
    return (f"Head {head + 1}, row {md_code(a.tgt_tokens[i])}: {terms} = **{row.sum():.3f}**. "
            "The softmax divides every exp(score) by the row's total, so each target token "
            "shares exactly one unit of attention among the source tokens.")


def _padding(a: Attention, layer: int) -> str:
    free = a.unmasked().layer(layer)                                       # (h, T, S)
    masked = [j for j in range(len(a.src_tokens)) if not a.mask[:, j].any()]
    if not masked:
        return "No source token is masked here: pick one under *Masking*."
    j, i = masked[0], _row(a, "chat")
    before, after = free[0, i], a.layer(layer)[0, i]
    k = int(np.argmax(after))
    return (f"{md_code(a.src_tokens[j])} gets **{after[j]:.3f}** from every target token. Its "
            f"share went to the others, in proportion: in head 1, {md_code(a.tgt_tokens[i])} "
            f"gave it {before[j]:.3f}; {md_code(a.src_tokens[k])} went from {before[k]:.3f} "
            f"to {after[k]:.3f} (= {before[k]:.3f} / (1 − {before[j]:.3f})).")


def _wait_k(a: Attention, layer: int) -> str:
    first = [t for t, m in zip(a.src_tokens, a.mask[0], strict=True) if m]
    last = [t for t, m in zip(a.src_tokens, a.mask[-1], strict=True) if m]
    return (f"The first target token {md_code(a.tgt_tokens[0])} may see "
            f"{', '.join(map(md_code, first))} ({len(first)} tokens); the last one, "
            f"{md_code(a.tgt_tokens[-1])}, sees {len(last)} of {len(a.src_tokens)}. Each step "
            "of the translation may look one source token further, like an interpreter who "
            "starts speaking before the sentence ends.")


def _seed(a: Attention, layer: int) -> str:
    seed = a.seed + 1
    other = a.variant(seed, a.n_heads).layer(layer)                         # (h, T, S)
    now = a.layer(layer)
    moved = int((now.argmax(-1) != other.argmax(-1)).sum())
    total = now.shape[0] * now.shape[1]
    return (f"With seed {seed} instead of {a.seed}, **{moved} of {total}** "
            "rows (all heads) put their strongest weight on another source token. The "
            "patterns of random weights come from the seed, not from language.")


def _trained(a: Attention, layer: int) -> str:
    lines = []
    rows = [i for i, t in enumerate(a.tgt_tokens) if t == "le"]
    if not rows:
        return ("This French sentence has no *le*: type one with two *the*s, such as "
                "`the cat sees the dog`, to ask the question.")
    for h in range(a.n_heads):
        picks = [f"{md_code(a.tgt_tokens[i])} ({i}) → {md_code(a.src_tokens[j])} ({j})"
                 for i in rows for j in [int(np.argmax(a.layer(layer)[h, i]))]]
        lines.append(f"- Head {h + 1}: " + "; ".join(picks))
    gold = a.gold
    exact = [i for i in rows if gold is not None and gold[i, int(np.argmax(
        a.layer(layer).mean(0)[i]))]]
    return ("\n".join(lines) + f"\n\nAveraged over heads, {len(exact)} of {len(rows)} *le* "
            "find their own *the*: only position can tell two *the*s apart, and some heads "
            "learned to use it.")


def _ablation(a: Attention, layer: int) -> str:
    res = a.ablate(layer, ())
    order = np.argsort(-res.per_head)
    most, least = int(order[0]), int(order[-1])
    return (f"Head {most + 1}: switching it off changes the output by "
            f"**{res.per_head[most]:.1%}**; head {least + 1} matters least "
            f"({res.per_head[least]:.1%}). Many heads can go with little loss (Michel, Levy and "
            "Neubig 2019), but not every one.")


def _sqrt(a: Attention, layer: int) -> str:
    on, off = a.trace(layer, True), a.trace(layer, False)
    allowed = on.mask[0]
    h_on, h_off = (float(entropy(t.weights[0, :1], allowed)[0]) for t in (on, off))
    d_head = on.q.shape[-1]
    return (f"Head 1, target token {md_code(a.tgt_tokens[0])}: entropy **{h_on:.3f}** nats "
            f"divided by √{d_head}, **{h_off:.3f}** without (the most possible: "
            f"{np.log(allowed.sum()):.3f}). Undivided, dot products of {d_head}-dimensional "
            "vectors are large, the softmax saturates and one source token takes nearly all "
            "the weight.")


STEPS: tuple[Step, ...] = (
    Step("One head and the formula", {"heads": 1, "view": "Heads"},
         "Each **row** is a target token (the decoder's query); each **column** a source token "
         "(the encoder's key). A cell says how much that target token looks at that source "
         "token: $\\mathrm{softmax}(q_i \\cdot k_j / \\sqrt{d_\\text{head}})$.",
         "The row of *chat* in the heatmap.",
         "Which source word does *chat* look at most, and with what weight?", _one_head),
    Step("Every row sums to 1", {"view": "Heads"},
         "With four heads, each head has its own projections and its own heatmap. The softmax "
         "turns a row of scores into weights that share one unit of attention.",
         "Hover the cells of one row: the weight is shown to three decimals.",
         "Add up the row of *noir* in head 2. What do you get, and why?", _rows_sum),
    Step("Masking: hide a source token", {"mask": "padding", "pad": ("6: mat",),
                                         "view": "Heads"},
         "A padding mask (the `-∞` in M) hides source tokens, e.g. the filler of a batch. A "
         "hidden token gets weight exactly 0, marked with a grey cross.",
         "The column of *mat*, and the other cells of each row.",
         "What weight does *mat* get now, and where did its share go?", _padding,
         needs=("mask", "unmasked")),
    Step("Masking: wait-k", {"mask": "wait-k", "k": 2, "view": "Heads"},
         "Simultaneous translation starts before the sentence ends: with *wait-k*, target "
         "token *i* sees only the first *i + k* source tokens.",
         "The staircase of grey crosses, top right.",
         "Which source tokens may the first target token see? And the last one?", _wait_k,
         needs=("mask",)),
    Step("Many heads, random weights", {"heads": 8, "view": "Heads"},
         "Eight heads: eight different patterns. But nothing here was trained: the projection "
         "matrices come from the seed.",
         "The eight heatmaps; then change the seed in the sidebar.",
         "Change the seed from 0 to 1. Do the patterns stay?", _seed, needs=("variant",)),
    Step("Trained heads align words", {"weights": "trained", "view": "Heads"},
         "The same module trained on a toy English→French task: each French word must find the "
         "English word it translates (◻ marks it). French moves the adjective after the "
         "noun, and *le* appears twice.",
         "The two rows of *le* and the ◻ gold marks.",
         "Which English word does each *le* look at, in each head?", _trained,
         needs=("gold",)),
    Step("Switch heads off: which matter?", {"weights": "trained",
                                            "view": "Switch heads off"},
         "Multiply one head's output by 0 before $W^O$ and measure how much the output "
         "changes: a head whose removal changes little was not needed.",
         "The table, sorted by importance.",
         "Which head's removal changes the output most, and which least?", _ablation,
         needs=("ablate",)),
    Step("Why divide by √d_head?", {"d_model": 256, "heads": 2, "view": "Step through"},
         "Each head works in d_head = d_model / h dimensions; here 128. Dot products of such "
         "vectors grow like √d_head, so the scores are divided by it before the softmax.",
         "The *Entropy of this row*, with *Divide scores by √d_head* on and off.",
         "Switch the division off and on. How does the entropy of the first row change?", _sqrt,
         needs=("rescale",)),
)
