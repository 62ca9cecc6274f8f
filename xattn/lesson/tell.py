"""What each step tells about the weights on screen: its words, answer and prediction.

One function per step, each reading only the `Attention` it is given (and the callables its
record offers: ``unmasked``, ``variant``, ``untrained``, ``ablate``, ``trace``), never a
number written by hand.
"""

from __future__ import annotations

import numpy as np

from xattn.classroom.question import Question
from xattn.lesson._told import Told
from xattn.lesson._words import number_word, target_row, token_label, token_name
from xattn.metrics import entropy, head_statistics
from xattn.sources import Attention

__all__ = ["one_head", "rows_sum", "padding", "wait_k", "seed", "trained", "training",
           "ablation", "sqrt", "layers", "learning"]


def _tokens(tokens) -> Question:
    """A token question over ``tokens`` (a repeated word named with its position)."""
    return Question("token", tuple(token_label(tokens, j) for j in range(len(tokens))))


def _heads(n: int) -> str:
    return f"{number_word(n)} head{'s' if n != 1 else ''}"


def one_head(a: Attention, layer: int) -> Told:
    i, note = target_row(a, "chat")
    row = a.layer(layer)[0, i]
    j = int(np.argmax(row))
    target, src = token_name(a.tgt_tokens, i), a.src_tokens
    alone = a.n_heads == 1
    if not alone:                       # a link of its own: more heads than the step's one
        note = " ".join(filter(None, (note, f"This page shows {_heads(a.n_heads)}: the step "
                                            "asks about head 1, the first heatmap.")))
    return Told({"target": target, "heatmap": "the heatmap" if alone else "head 1's heatmap",
                 "head": "the head" if alone else "head 1"},
                ("" if alone else "In head 1, ") + f"{target} looks most at "
                f"{token_name(src, j)} ({row[j]:.3f})."
                + (f" {a.meta.caveat}" if a.meta.caveat else ""),
                f"Tap the source word {target} will look at most in head 1.", _tokens(src), j,
                note, tokens=tuple(src), row=(i, 0))


def rows_sum(a: Attention, layer: int) -> Told:
    i, note = target_row(a, "noir")
    head = min(1, a.n_heads - 1)
    row = a.layer(layer)[head, i]
    shown = [round(float(w), 3) for w in row]
    terms = " + ".join(f"{w:.3f}" for w in shown)
    target = token_name(a.tgt_tokens, i)
    rounding = "" if abs(sum(shown) - 1) < 5e-4 else (
        f" The three-decimal numbers shown add up to {sum(shown):.3f}, not exactly 1: each is "
        "rounded, the weights themselves add up to 1.")
    return Told({"target": target, "head": f"head {head + 1}", "heads": _heads(a.n_heads)},
                f"Head {head + 1}, row {target}: {terms} = **{row.sum():.3f}**. The softmax "
                "divides every exp(score) by the row's total, so each target token shares "
                "exactly one unit of attention among the source tokens." + rounding,
                f"What does the row of {target} in head {head + 1} add up to?",
                Question("number", low=0, high=10, decimals=2), float(row.sum()), note)


def padding(a: Attention, layer: int) -> Told:
    masked = [j for j in range(len(a.src_tokens)) if not a.mask[:, j].any()]
    if not masked:
        return Told({"masked": "a masked token (none on this page yet)"},
                    "No source token is masked here: choose *Masking: padding* in the sidebar "
                    "and mask a source token; the answer follows the numbers then.",
                    note="No source token is masked on this page.")
    free = a.recipe.unmasked().layer(layer)                                       # (h, T, S)
    j = masked[0]
    i, _ = target_row(a, "chat")
    before, after = free[0, i], a.layer(layer)[0, i]
    k = int(np.argmax(after))
    name, src = token_name(a.src_tokens, j), a.src_tokens
    return Told({"masked": name},
                f"{name} gets **{after[j]:.3f}** from every target token. Its share went to "
                f"the others, in proportion: in head 1, {token_name(a.tgt_tokens, i)} gave it "
                f"{before[j]:.3f}; {token_name(src, k)} went from {before[k]:.3f} to "
                f"{after[k]:.3f} (= {before[k]:.3f} / (1 − {before[j]:.3f})).",
                f"What weight does {name} get now, from each target token?",
                Question("number", low=0, high=1, decimals=2), float(after[j]))


def wait_k(a: Attention, layer: int) -> Told:
    src, n = a.src_tokens, len(a.src_tokens)
    seen = [int(a.mask[i].sum()) for i in (0, -1)]
    counts = sorted({m for m in (1, 2, 3, seen[0], n) if 1 <= m <= n})
    choices = tuple(f"the first {m}: {' '.join(src[:m])}" if m < n else f"all {n}"
                    for m in counts)
    first = [token_name(src, j) for j in range(n) if a.mask[0, j]]
    return Told({},
                f"The first target token {token_name(a.tgt_tokens, 0)} may see "
                f"{', '.join(first) or 'nothing'} ({seen[0]} tokens); the last one, "
                f"{token_name(a.tgt_tokens, len(a.tgt_tokens) - 1)}, sees {seen[1]} of {n}. "
                "Each step of the translation may look one source token further, like an "
                "interpreter who starts speaking before the sentence ends.",
                "Which source tokens may the first target token see?",
                Question("choice", choices) if len(choices) > 1 else None,
                choices[counts.index(seen[0])] if seen[0] in counts else None)


SEED_CHOICES = ("They stay the same", "Some rows change", "Most rows change")


def seed(a: Attention, layer: int) -> Told:
    seed = a.recipe.seed
    other_seed = seed + 1
    other = a.recipe.variant(other_seed, a.n_heads).layer(layer)                   # (h, T, S)
    now = a.layer(layer)
    moved = int((now.argmax(-1) != other.argmax(-1)).sum())
    total = now.shape[0] * now.shape[1]
    truth = SEED_CHOICES[0 if moved == 0 else 1 if moved <= total / 2 else 2]
    return Told({"seed": str(seed), "next": str(other_seed), "heads": _heads(a.n_heads)},
                f"With seed {other_seed} instead of {seed}, **{moved} of {total}** rows (all "
                "heads) put their strongest weight on another source token. The patterns of "
                "random weights come from the seed, not from language.",
                f"With seed {other_seed} instead of {seed}, do the strongest weights stay?",
                Question("choice", SEED_CHOICES), truth)


def trained(a: Attention, layer: int) -> Told:
    rows = [i for i, t in enumerate(a.tgt_tokens) if t == "le"]
    if not rows:
        return Told({"target": "*le*"}, "This French sentence has no *le*: type one with two "
                    "*the*s, such as `the cat sees the dog`, to ask the question.",
                    note="There is no *le* in this French sentence.")
    weights = a.layer(layer)
    tgt, src = a.tgt_tokens, a.src_tokens
    lines = [f"- Head {h + 1}: " + "; ".join(
        f"{token_name(tgt, i)} → {token_name(src, int(np.argmax(weights[h, i])))}"
        for i in rows) for h in range(a.n_heads)]
    mean = weights.mean(0)                                                  # (T, S)
    exact = [i for i in rows if a.gold[i, int(np.argmax(mean[i]))]]
    i = rows[-1]                                    # the last *le*: only position finds its *the*
    target = token_name(a.tgt_tokens, i)
    return Told({"target": target},
                "\n".join(lines) + f"\n\nAveraged over heads, {len(exact)} of {len(rows)} *le* "
                "find their own *the*: only position can tell two *the*s apart, and some heads "
                "learned to use it.",
                f"Tap the English word {target} looks at most (all heads averaged).",
                _tokens(a.src_tokens), int(np.argmax(mean[i])), tokens=tuple(a.src_tokens),
                row=(i, -1))


TRAINING_CHOICES = ("A: the trained weights", "B: the random start", "Both alike")


def training(a: Attention, layer: int) -> Told:
    b = a.toy.untrained()
    conf = [float(np.nanmean(head_statistics(x.layer(layer), x.mask)["confidence"]))
            for x in (a, b)]
    truth = TRAINING_CHOICES[2 if abs(conf[0] - conf[1]) < 0.05 else 0 if conf[0] > conf[1]
                             else 1]
    return Told({},
                f"Mean confidence (the weight of each row's strongest source word, averaged): "
                f"**{conf[0]:.2f}** trained, **{conf[1]:.2f}** before training. The same "
                "module, the same words: training alone turned spread-out rows into one clear "
                "choice per French word, mostly the word it translates (◻).",
                "Which picture gives each French word one clear English word?",
                Question("choice", TRAINING_CHOICES), truth)


def ablation(a: Attention, layer: int) -> Told:
    res = a.layers.ablate(layer, ())
    order = np.argsort(-np.nan_to_num(res.per_head, nan=-1.0), kind="stable")
    most, least = int(order[0]), int(order[-1])
    choices = tuple(f"head {h + 1}" for h in range(a.n_heads))
    return Told({"heads": _heads(a.n_heads)},
                f"Head {most + 1}: switching it off changes the output by "
                f"**{res.per_head[most]:.1%}**; head {least + 1} matters least "
                f"({res.per_head[least]:.1%}). Many heads can go with little loss (Michel, "
                "Levy and Neubig 2019), but not every one.",
                "Which head's removal will change the output most?",
                Question("choice", choices) if a.n_heads > 1 else None, choices[most])


SQRT_CHOICES = ("It goes down", "It goes up", "It stays the same")
SATURATED = 0.9       # a row's largest weight from which one token takes "nearly all" of it


def _sqrt_why(truth: str, d_head: int, top_on: float, top_off: float) -> str:
    """What the numbers on screen say, for the answer they give."""
    if truth == SQRT_CHOICES[1]:
        return ("Scores multiplied by √d_head can only sharpen a softmax, never spread it: a "
                "rise this small is rounding.")
    if truth == SQRT_CHOICES[2]:
        return (f"Here the row hardly changes: its scores are close together, or √{d_head} is "
                "close to 1.")
    grown = (f"Undivided, the scores of {d_head}-dimensional vectors are √{d_head} times "
             f"larger, so the softmax is sharper: the row's largest weight goes from "
             f"{top_on:.3f} to {top_off:.3f}")
    if top_off >= SATURATED:
        return grown + ". The softmax saturates: one source token takes nearly all the weight."
    return grown + (": the weight gathers on fewer source tokens, but no one token takes "
                    "nearly all of it.")


def sqrt(a: Attention, layer: int) -> Told:
    on, off = a.layers.trace(layer, True), a.layers.trace(layer, False)
    allowed = on.mask[0]
    h_on, h_off = (float(entropy(t.weights[0, :1], allowed)[0]) for t in (on, off))
    top_on, top_off = (float(t.weights[0, 0].max()) for t in (on, off))
    d_head = on.q.shape[-1]
    truth = SQRT_CHOICES[2 if abs(h_on - h_off) < 1e-3 else 0 if h_off < h_on else 1]
    return Told({"d_head": str(d_head)},
                f"Head 1, target token {token_name(a.tgt_tokens, 0)}: entropy **{h_on:.3f}** "
                f"nats divided by √{d_head}, **{h_off:.3f}** without (the most possible: "
                f"{np.log(allowed.sum()):.3f}). " + _sqrt_why(truth, d_head, top_on, top_off),
                "Switch the division off: what happens to the entropy of the first row?",
                Question("choice", SQRT_CHOICES), truth)


def layers(a: Attention, layer: int) -> Told:
    from xattn.alignlab import score_heads

    scores = score_heads(a.heldout(False))
    n = scores.aer.shape[0]
    best = scores.best_layer
    tied = scores.best_layers
    aers = ", ".join(f"layer {k + 1}: {v:.3f}" for k, v in enumerate(scores.layer_aer))
    choices = tuple(f"layer {k + 1}" for k in range(n))
    which = (f"**layer {best + 1}** aligns best" if len(tied) <= 1 else
             "**layers " + " and ".join(str(k + 1) for k in tied) + "** tie for the best")
    heads = scores.best_heads
    head = ("its best single head is " + "; ".join(
        f"head {h + 1} of layer {lay + 1}" for lay, h in heads) if len(heads) <= 1 else
        f"{len(heads)} single heads tie for the best: " + "; ".join(
            f"head {h + 1} of layer {lay + 1}" for lay, h in heads))
    return Told({"layers": number_word(n), "n": str(scores.n_pairs), "heads": _heads(a.n_heads)},
                f"Over {scores.n_pairs} held-out sentences, the average of each layer's heads "
                f"has AER {aers} (lower is better): {which}, and {head}. Which layer aligns "
                "differs by model: Garg et al. (2019) found the penultimate of six in their "
                "transformer; nothing forces a model to align at all, since it is trained to "
                "translate.",
                "Which layer's heads, averaged, will align words best?",
                Question("choice", choices) if n > 1 else None, choices[max(best, 0)],
                also=tuple(choices[k] for k in tied[1:]))


def learning(a: Attention, layer: int) -> Told:
    tl = a.toy.timelapse()
    onset = tl.onset(0.5)
    started = [(int(step), h) for h, step in enumerate(onset.tolist()) if step >= 0]
    choices = tuple(f"head {h + 1}" for h in range(len(onset)))
    if not started:
        return Told({}, "No head reached half of the held-out words on its own in this run: "
                        "train longer (sidebar, Training steps).")
    step, first = min(started)
    moved = tl.by_head["moved_accuracy"][:, first]
    repeated = tl.by_head["repeated_accuracy"][:, first]
    k = int(np.searchsorted(tl.steps, step))
    cue = ("meaning" if moved[k] > repeated[k] + 0.1 else "position"
           if repeated[k] > moved[k] + 0.1 else "meaning and position alike")
    return Told({},
                f"**Head {first + 1}** reaches half of the held-out words first, at step {step}"
                f", and then by {cue} (moved words {moved[k]:.0%}, repeated words "
                f"{repeated[k]:.0%}). Heads do not learn together: one finds a cue, the others "
                "follow or specialise in another.",
                "Which head will start aligning first?", Question("choice", choices)
                if len(choices) > 1 else None, choices[first])
