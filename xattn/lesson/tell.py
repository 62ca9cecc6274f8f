"""The lesson's computed questions: what each tells about the weights on screen, its words,
answer and prediction.

One function per question, each reading only the `Attention` it is given (and the callables
its record offers: ``unmasked``, ``variant``, ``untrained``, ``ablate``, ``trace``) and the
arguments a lesson file gives it (the word it asks about, the head), never a number written
by hand. ``xattn.lesson.computed`` lists them with their arguments.
"""

from __future__ import annotations

import numpy as np

from xattn.classroom.question import Question
from xattn.lesson._told import Told
from xattn.lesson._words import (
    head_choices,
    heads_said,
    number_word,
    target_row,
    token_label,
    token_name,
)
from xattn.lesson.charts import aer_chart, head_chart, named_charts
from xattn.metrics import head_statistics
from xattn.words import N_, listed, number, say, say_n, sentences

__all__ = ["one_head", "rows_sum", "padding", "wait_k", "seed", "trained", "training",
           "layers", "learning", "asked_head"]


def _tokens(tokens) -> Question:
    """A token question over ``tokens`` (a repeated word named with its position)."""
    return Question("token", tuple(token_label(tokens, j) for j in range(len(tokens))))


def asked_head(a, head: int) -> tuple[int, str]:
    """The head a question asks about (``head`` from 1) as an index from 0, and a note when
    the page has fewer heads (the question then asks about the last)."""
    if head <= a.n_heads:
        return head - 1, ""
    return a.n_heads - 1, say("This page shows {heads}: the question asks about head {last} "
                              "instead of head {head}.", heads=heads_said(a.n_heads),
                              last=a.n_heads, head=head)


def one_head(a, layer: int, *, target: str = "chat", head: int = 1) -> Told:
    i, note = target_row(a, target)
    h, fewer = asked_head(a, head)
    row = a.layer(layer)[h, i]
    j = int(np.argmax(row))
    name, src = token_name(a.tgt_tokens, i), a.src_tokens
    alone = a.n_heads == 1
    if not alone and h == 0 and head == 1:   # a link of its own: more heads than the step's
        fewer = say("This page shows {heads}: the step asks about head 1, the first.",
                    heads=heads_said(a.n_heads))
    note = sentences(note, fewer)
    looks = (say("{target} looks most at {source} ({weight:.3f}).", target=name,
                 source=token_name(src, j), weight=float(row[j])) if alone else
             say("In head {head}, {target} looks most at {source} ({weight:.3f}).",
                 head=h + 1, target=name, source=token_name(src, j), weight=float(row[j])))
    return Told({"target": name,
                 "heatmap": say("the heatmap") if alone else say("head {head}'s heatmap",
                                                                 head=h + 1),
                 "head": say("the head") if alone else say("head {head}", head=h + 1)},
                sentences(looks, say(a.meta.caveat) if a.meta.caveat else ""),
                say("Tap the source word {target} will look at most in head {head}.",
                    target=name, head=h + 1),
                _tokens(src), j, note, tokens=tuple(src), row=(i, h), layer=layer, head=h,
                charts=(head_chart(a, layer, h),))


def rows_sum(a, layer: int, *, target: str = "noir", head: int = 2) -> Told:
    i, note = target_row(a, target)
    h, fewer = asked_head(a, head)
    row = a.layer(layer)[h, i]
    shown = [round(float(w), 3) for w in row]
    name = token_name(a.tgt_tokens, i)
    terms = " + ".join(number(w, ".3f") for w in shown)
    rounding = "" if abs(sum(shown) - 1) < 5e-4 else say(
        "The three-decimal numbers shown add up to {total:.3f}, not exactly 1: each is "
        "rounded, the weights themselves add up to 1.", total=sum(shown))
    sums = say("Head {head}, row {target}: {terms} = **{total:.3f}**. The softmax divides "
               "every exp(score) by the row's total, so each target token shares exactly "
               "one unit of attention among the source tokens.", head=h + 1, target=name,
               terms=terms, total=float(row.sum()))
    return Told({"target": name, "head": say("head {head}", head=h + 1),
                 "heads": heads_said(a.n_heads)},
                sentences(sums, rounding),
                say("What does the row of {target} in head {head} add up to?", target=name,
                    head=h + 1),
                Question("number", low=0, high=10, decimals=2), float(row.sum()),
                sentences(note, fewer), layer=layer, head=h,
                charts=(head_chart(a, layer, h),))


def padding(a, layer: int, *, target: str = "chat") -> Told:
    masked = [j for j in range(len(a.src_tokens)) if not a.mask[:, j].any()]
    if not masked:
        return Told({"masked": say("a masked token (none on this page yet)")},
                    say("No source token is masked here: choose *Masking: padding* in the "
                        "sidebar and mask a source token; the answer follows the numbers then."),
                    note=say("No source token is masked on this page."))
    free = a.recipe.unmasked().layer(layer)                                       # (h, T, S)
    j = masked[0]
    i, _ = target_row(a, target)
    before, after = free[0, i], a.layer(layer)[0, i]
    k = int(np.argmax(after))
    name, src = token_name(a.src_tokens, j), a.src_tokens
    # every masked token's share leaves the row: the others are divided by what is left
    shares = " − ".join(number(float(before[m]), ".3f") for m in masked)
    said = dict(masked=name, weight=float(after[j]), target=token_name(a.tgt_tokens, i),
                given=float(before[j]), other=token_name(src, k), was=float(before[k]),
                now=float(after[k]), shares=shares, n=len(masked))
    answer = (say("{masked} gets **{weight:.3f}** from every target token. The masked token's "
                  "weight went to the others, in proportion: in head 1, {target} gave {masked} "
                  "{given:.3f}; {other} went from {was:.3f} to {now:.3f} (= {was:.3f} / (1 − "
                  "{shares}): the row without its share).", **said) if len(masked) == 1 else
              say("{masked} gets **{weight:.3f}** from every target token. The masked tokens' "
                  "weight went to the others, in proportion: in head 1, {target} gave {masked} "
                  "{given:.3f}; {other} went from {was:.3f} to {now:.3f} (= {was:.3f} / (1 − "
                  "{shares}): the row without the {n} masked tokens' shares).", **said))
    return Told({"masked": name}, answer,
                say("What weight does {masked} get now, from each target token?", masked=name),
                Question("number", low=0, high=1, decimals=2), float(after[j]), layer=layer,
                head=0, charts=(head_chart(a, layer, 0),))


def wait_k(a, layer: int) -> Told:
    src, n = a.src_tokens, len(a.src_tokens)
    seen = [int(a.mask[i].sum()) for i in (0, -1)]
    counts = sorted({m for m in (1, 2, 3, seen[0], n) if 1 <= m <= n})
    choices = tuple(f"the first {m}: {' '.join(src[:m])}" if m < n else f"all {n}"
                    for m in counts)                               # the values, in English
    shown = tuple(_first_said(src[:m]) if m < n else say("all {n}", n=n) for m in counts)
    first = [token_name(src, j) for j in range(n) if a.mask[0, j]]
    restricted = int((a.mask.sum(axis=-1) < n).sum())             # rows that see fewer than n
    how = (say("Each step of the translation may look one source token further, like an "
               "interpreter who starts speaking before the sentence ends.") if restricted else
           say("No row is restricted here: k is at least the {n} source tokens, so every "
               "target token sees the whole sentence and the mask changes nothing.", n=n))
    sees = say_n("The first target token {first} (target token 0) may see {seen} ({n} "
                 "token); the last one, {last}, sees {last_seen} of {total}.",
                 "The first target token {first} (target token 0) may see {seen} ({n} "
                 "tokens); the last one, {last}, sees {last_seen} of {total}.", seen[0],
                 first=token_name(a.tgt_tokens, 0), seen=listed(first) or say("nothing"),
                 last=token_name(a.tgt_tokens, len(a.tgt_tokens) - 1), last_seen=seen[1],
                 total=n)
    return Told({},
                sentences(sees, how),
                say("Which source tokens may the first target token see?"),
                Question("choice", choices) if len(choices) > 1 else None,
                choices[counts.index(seen[0])] if seen[0] in counts else None, layer=layer,
                head=0, charts=(head_chart(a, layer, 0),), shown=shown)


def _first_said(tokens) -> tuple[str, ...]:
    """A wait-k option "the first 2: le chat" in the context's language, as the pieces
    ``(words, token, " ", token, ..., words)`` a phone draws (each token untranslated)."""
    text = say_n("the first {n}: {tokens}", "the first {n}: {tokens}", len(tokens),
                 tokens="\0")
    before, _, after = text.partition("\0")
    pieces = [before]
    for k, t in enumerate(tokens):
        pieces += [t] if k == 0 else [" ", t]
    return (*pieces, after)


SEED_CHOICES = (N_("They stay the same"), N_("Some rows change"), N_("Most rows change"))


def seed(a, layer: int, *, seed: int = 0) -> Told:
    """Random weights at the step's ``seed`` against ``seed + 1``, whichever the page shows
    now (following the step's *Look at* changes the seed on the page, not the question)."""
    first, then = (a.recipe.variant(s, a.n_heads) for s in (seed, seed + 1))
    now, other = first.layer(layer), then.layer(layer)                           # (h, T, S)
    moved = int((now.argmax(-1) != other.argmax(-1)).sum())
    total = now.shape[0] * now.shape[1]
    truth = SEED_CHOICES[0 if moved == 0 else 1 if moved <= total / 2 else 2]
    return Told({"seed": str(seed), "next": str(seed + 1), "heads": heads_said(a.n_heads)},
                say("With seed {next} instead of {seed}, **{moved} of {total}** rows (all "
                    "heads) put their strongest weight on another source token. The patterns "
                    "of random weights come from the seed, not from language.", next=str(seed + 1),
                    seed=str(seed), moved=moved, total=total),
                say("With seed {next} instead of {seed}, do the strongest weights stay?",
                    next=str(seed + 1), seed=str(seed)),
                Question("choice", SEED_CHOICES), truth, layer=layer, head=0,
                charts=tuple(head_chart(b, layer, 0, say("head 1, seed {seed}", seed=str(s)))
                             for b, s in ((first, seed), (then, seed + 1))))


def trained(a, layer: int, *, word: str = "le") -> Told:
    rows = [i for i, t in enumerate(a.tgt_tokens) if t == word]
    if not rows:
        said = token_name((word,), 0)
        return Told({"target": said}, say("This target sentence has no {word}: type a sentence "
                                          "where it appears twice (for *le*: `the cat sees the "
                                          "dog`) to ask the question.", word=said),
                    note=say("There is no {word} in this target sentence.", word=said))
    weights = a.layer(layer)                                                  # (h, T, S)
    tgt, src = a.tgt_tokens, a.src_tokens
    lines = [say("- Head {head}: ", head=h + 1) + listed((
        f"{token_name(tgt, i)} → {token_name(src, int(np.argmax(weights[h, i])))}"
        for i in rows), semicolons=True) for h in range(a.n_heads)]
    mean = weights.mean(0)                                                  # (T, S)
    exact = [i for i in rows if a.gold[i, int(np.argmax(mean[i]))]]
    # a head tells the repeats apart when each of them looks most at its own gold word
    apart = [h for h in range(a.n_heads)
             if all(a.gold[i, int(np.argmax(weights[h, i]))] for i in rows)]
    i = rows[-1]                                    # the last one: only position finds its word
    name = token_name(a.tgt_tokens, i)
    heads = (say("no head tells them apart") if not apart else
             say_n("{n} head of {total} ({which}) put each on its own gold word",
                   "{n} heads of {total} ({which}) put each on its own gold word", len(apart),
                   total=a.n_heads, which=listed(str(h + 1) for h in apart)))
    found = say("Averaged over heads, {found} of {n} {word} find their own gold word, and "
                "{heads}.", found=len(exact), n=len(rows), word=token_name((word,), 0),
                heads=heads)
    why = (say("Only position can tell repeated words apart, and these heads learned to use "
               "it.") if apart else
           say("Only position can tell repeated words apart: none of these heads learned to "
               "use it (yet)."))
    return Told({"target": name},
                "\n".join(lines) + "\n\n" + sentences(found, why),
                say("Tap the source word {target} looks at most (all heads averaged).",
                    target=name),
                _tokens(a.src_tokens), int(np.argmax(mean[i])), tokens=tuple(a.src_tokens),
                row=(i, -1), layer=layer, head=-1, charts=(head_chart(a, layer, -1),))


TRAINING_CHOICES = (N_("A: the trained weights"), N_("B: the random start"), N_("Both alike"))


def training(a, layer: int) -> Told:
    b = a.toy.untrained()
    conf = [float(np.nanmean(head_statistics(x.layer(layer), x.mask)["confidence"]))
            for x in (a, b)]
    truth = TRAINING_CHOICES[2 if abs(conf[0] - conf[1]) < 0.05 else 0 if conf[0] > conf[1]
                             else 1]
    return Told({},
                say("Mean confidence (the weight of each row's strongest source word, "
                    "averaged): **{trained:.2f}** trained, **{random:.2f}** before training. The "
                    "same module, the same words: training alone turned spread-out rows into "
                    "one clear choice per French word, mostly the word it translates (◻).",
                    trained=conf[0], random=conf[1]),
                say("Which picture gives each French word one clear English word?"),
                Question("choice", TRAINING_CHOICES), truth, layer=layer, head=0,
                charts=(head_chart(a, layer, 0, say("A: trained, head 1")),
                        head_chart(b, layer, 0, say("B: the random start, head 1"))))


LINK_RULES = {"target_argmax": N_("each target word linked to its strongest source word"),
              "source_argmax": N_("each source word linked to its strongest target word"),
              "intersection": N_("links that are the strongest both ways"),
              "threshold": N_("every weight above the threshold")}


def layers(a, layer: int, *, links: str = "target_argmax", link_min: float = 0.3) -> Told:
    from xattn.alignlab import score_heads

    scores = score_heads(a.heldout(False), method=links,
                         threshold=link_min if links == "threshold" else None)
    n = scores.aer.shape[0]
    best = scores.best_layer
    tied = scores.best_layers
    aers = listed(say("layer {layer}: {aer:.3f}", layer=k + 1, aer=float(v))
                  for k, v in enumerate(scores.layer_aer))
    choices = tuple(f"layer {k + 1}" for k in range(n))         # the values, in English
    shown = tuple(say("layer {layer}", layer=k + 1) for k in range(n))
    which = (say("**layer {layer}** aligns best", layer=best + 1) if len(tied) <= 1 else
             say("**layers {layers}** tie for the best",
                 layers=say(" and ").join(str(k + 1) for k in tied)))
    heads = scores.best_heads
    named = listed((say("head {head} of layer {layer}", head=h + 1, layer=lay + 1)
                    for lay, h in heads), semicolons=True)
    head = (say("its best single head is {heads}", heads=named) if len(heads) <= 1 else
            say("{n} single heads tie for the best: {heads}", n=len(heads), heads=named))
    rule = say(LINK_RULES[links]) + (f" ({number(link_min, 'g')})" if links == "threshold"
                                     else "")
    return Told({"layers": number_word(n), "n": str(scores.n_pairs),
                 "heads": heads_said(a.n_heads)},
                say("Over {n} held-out sentences, the average of each layer's heads has AER "
                    "{aers} (lower is better; links: {rule}): {which}, and {head}. Which layer "
                    "aligns differs by model: Garg et al. (2019) found the penultimate of six in "
                    "their transformer; nothing forces a model to align at all, since it is "
                    "trained to translate.", n=scores.n_pairs, aers=aers, rule=rule,
                    which=which, head=head),
                say("Which layer's heads, averaged, will align words best?"),
                Question("choice", choices) if n > 1 else None, choices[max(best, 0)],
                also=tuple(choices[k] for k in tied[1:]), layer=max(best, 0), head=-1,
                charts=(aer_chart(a, scores=scores, rule=(links, link_min if links ==
                                                          "threshold" else None)),),
                shown=shown)


CUES = {"meaning": N_("meaning"), "position": N_("position"),
        "alike": N_("meaning and position alike")}


def learning(a, layer: int) -> Told:
    tl = a.toy.timelapse()
    onset = tl.onset(0.5)
    started = [(int(step), h) for h, step in enumerate(onset.tolist()) if step >= 0]
    choices, shown = head_choices(len(onset))
    if not started:
        return Told({}, say("No head reached half of the held-out words on its own in this "
                            "run: train longer (sidebar, Training steps)."))
    step, first = min(started)
    tied = [h for s, h in started if s == step and h != first]
    moved = tl.by_head["moved_accuracy"][:, first]
    repeated = tl.by_head["repeated_accuracy"][:, first]
    k = int(np.searchsorted(tl.steps, step))
    cue = CUES["meaning" if moved[k] > repeated[k] + 0.1 else "position"
               if repeated[k] > moved[k] + 0.1 else "alike"]
    every = int(tl.steps[1] - tl.steps[0]) if len(tl.steps) > 1 else 0
    said = dict(step=step, every=say_n("snapshots every {n} step", "snapshots every {n} steps",
                                       every), head=first + 1, cue=say(cue),
                moved=float(moved[k]), repeated=float(repeated[k]))
    reach = (say("**Head {head}** reaches half of the held-out words first: by the snapshot at "
                 "step {step} ({every}), head {head} by {cue} (moved words {moved:.0%}, "
                 "repeated words {repeated:.0%}).", **said) if not tied else
             say("**Heads {heads}** (together) reach half of the held-out words first: by the "
                 "snapshot at step {step} ({every}), head {head} by {cue} (moved words "
                 "{moved:.0%}, repeated words {repeated:.0%}).",
                 heads=listed(str(h + 1) for h in (first, *tied)), **said))
    return Told({},
                sentences(reach, say("Heads do not learn together: one finds a cue, the "
                                     "others follow or specialise in another.")),
                say("Which head will start aligning first?"), Question("choice", choices)
                if len(choices) > 1 else None, choices[first],
                also=tuple(choices[h] for h in tied), layer=layer, head=first,
                charts=named_charts("curves", a, layer, first), shown=shown)
