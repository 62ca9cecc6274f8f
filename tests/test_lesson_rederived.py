"""Every step of every shipped lesson, on three settings each, re-derived independently
(issue 44, "Done when"): the answer, the numbers its reveal states, its follow-up cases'
answers and its Moodle answer, each recomputed here from the weights on screen with plain
loops and plain NumPy, never with the lesson's own computing functions.

- Random weights and the toy task's trained module: the weights themselves are recomputed
  from the module's parameters (q·k / √d_head, a softmax per row over the keys the mask
  leaves) and must be the ones on screen; every answer is then read off these.
- The shipped model (toy-en-fr): its cross-attention is the model's (pinned to transformers
  by ``tests/test_torch_reference.py``); masking a source word is a separate plain layer loop
  (``tests/test_effects.py``'s), each head's job the loops of ``tests/test_jobs.py`` on the
  held-out sentences, each layer's AER counted over the held-out links here.

A lesson whose model is not on this server (en-de: ``opus-mt-en-de``) is counted as not
checked, with the reason. The counts are printed (``-s``) and documented in docs/lesson.md.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from functools import cache

import numpy as np
import pytest
from test_effects import reference_layers, word_p
from test_jobs import JOBS, SINKS, by_hand, held_out_by_hand  # noqa: F401  (a fixture)

from xattn.lesson import shipped_lessons
from xattn.lesson.followup import case_step, cases, shows_case
from xattn.lesson.lms import moodle_xml, step_item
from xattn.live.prepared import StepUnavailable, prepared_attention
from xattn.pipeline import Settings, run

LESSONS = shipped_lessons()
TOY = {"tr_src": "the dog sees the red cat", "tr_tgt": "le chien voit le chat rouge"}
# Three settings of each computed question: the step as shipped, then two more (another seed,
# head count, pair, link rule or layer; a short sentence, a mask, a k beyond the sentence).
SETTINGS = {
    "strongest_source": ({}, {"seed": 7, "heads": 4},
                         {"src": "the cat sat", "tgt": "le chat", "mask": "wait-k", "k": 1}),
    "row_sum": ({}, {"seed": 3, "heads": 8},
                {"src": "a black cat", "tgt": "un chat noir", "mask": "padding",
                 "pad": ["1: black"]}),
    "masked_share": ({}, {"seed": 3, "pad": ["0: the", "6: mat"]},
                     {"src": "the cat sat", "tgt": "le chat", "pad": ["2: sat"]}),
    "wait_k": ({}, {"k": 1, "seed": 2}, {"k": 9, "src": "the cat", "tgt": "le chat"}),
    "seed_change": ({}, {"seed": 4, "heads": 2}, {"src": "the cat", "tgt": "le chat",
                                                  "heads": 1}),
    "repeated_word": ({}, TOY, {"tr_heads": 2}),
    "trained_vs_random": ({}, TOY, {"tr_seed": 1}),
    "head_off": ({}, {"tr_seed": 1}, {"tr_heads": 2, **TOY}),
    "divide_by_sqrt": ({}, {"d_model": 64, "heads": 8}, {"d_model": 8, "heads": 8}),
    "best_layer": ({}, {"links": "intersection"}, {"links": "threshold", "link_min": 0.5}),
    "first_to_learn": ({}, {"tr_seed": 1}, {"tr_heads": 2}),
    "head_jobs": ({}, {"layer": 1}, {"src": "a sick king hears the dog"}),
    "masking_effect": ({}, {"src": "the horse sees this sad house"},
                       {"src": "the sad boy likes the king"}),
    "align_words": ({}, {"src": "the red cat sees the dog", "tgt": "le chat rouge voit le chien"},
                    {"weights": "trained", **TOY}),
}
# The en-de lesson's model steps: another pair (punctuation: sink columns), a short one
# without the word asked about (its first token asked instead).
DE = ({"src": "the cat sat on the mat.", "tgt": "die Katze sitzt auf der Matte."},
      {"src": "the dog is happy", "tgt": "der Hund ist glücklich"})
SETTINGS_DE = {"strongest_source": ({}, *DE), "row_sum": ({}, *DE),
               "head_jobs": ({}, {"layer": 1}, DE[0]), "masking_effect": ({}, *DE)}
ROWS = [(lesson, n, k) for lesson, found in LESSONS.items()
        for n, step in enumerate(found.steps, 1) for k in range(3 if step.computed else 1)]


def settings_of(lesson: str, step) -> tuple:
    """The three settings of ``step``'s question (its lesson's model's own, for en-de)."""
    return (SETTINGS_DE if lesson == "en-de" else SETTINGS)[step.computed.name]


@pytest.fixture(scope="module")
def en_de(tmp_path_factory):
    """The en-de lesson on a tiny random English→German Marian in a folder named as the lesson
    names its model (``opus-mt-en-de``, as ``tests/test_app_lessons.py`` runs it): the
    lesson read again once this server lists the folder."""
    from model_helpers import models_or_skip

    models_or_skip()
    from devtools.tiny_marian import GERMAN, save_tiny
    from xattn.live.catalog import server_lessons

    folder = save_tiny(tmp_path_factory.mktemp("models") / "opus-mt-en-de",
                       tgt_sentences=GERMAN, seed=3, spread=0.5)
    before, shipped = os.environ.get("XATTN_MODELS"), LESSONS["en-de"]
    os.environ["XATTN_MODELS"] = str(folder)
    LESSONS["en-de"] = server_lessons()["en-de"]        # its model's name: the folder
    yield
    LESSONS["en-de"] = shipped
    if before is None:
        os.environ.pop("XATTN_MODELS")
    else:
        os.environ["XATTN_MODELS"] = before


def on(step, over: dict):
    """``step`` with ``over`` on its page, its page-bound arguments following (as the page)."""
    s = replace(step, state={**step.state, **over})
    return s.on_page(s.state)


@cache
def shown(lesson: str, n: int, k: int):
    """Step ``n`` of ``lesson`` on its ``k``-th setting: (step, weights, told), once."""
    step = LESSONS[lesson].steps[n - 1]
    if step.computed is not None:
        step = on(step, settings_of(lesson, step)[k])
    a = prepared_attention(step)
    return step, a, step.tell(a, step.layer(a.n_layers))


# --- the weights, from the parameters ---------------------------------------------------------
def softmax_rows(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """(h, T, S) scores: each row's softmax over the keys ``mask`` (T, S) leaves, by loops."""
    out = np.zeros_like(scores, dtype=float)
    for h in range(scores.shape[0]):
        for i in range(scores.shape[1]):
            keys = [j for j in range(scores.shape[2]) if mask[i, j]]
            if not keys:
                continue                                   # a row with nothing to attend
            top = max(scores[h, i, j] for j in keys)
            e = {j: math.exp(scores[h, i, j] - top) for j in keys}
            for j in keys:
                out[h, i, j] = e[j] / sum(e.values())
    return out


def scores_of(m, x_t: np.ndarray, x_s: np.ndarray, scaled: bool = True) -> np.ndarray:
    """q·k (/ √d_head) of every head from the module's W_Q, b_Q, W_K, b_K: (h, T, S)."""
    d_h = m.d_model // m.n_heads
    q = x_t @ m.W_Q + (m.b_Q if m.b_Q is not None else 0)           # (T, d_model)
    k = x_s @ m.W_K + (m.b_K if m.b_K is not None else 0)           # (S, d_model)
    out = np.zeros((m.n_heads, len(x_t), len(x_s)))
    for h in range(m.n_heads):
        cols = slice(h * d_h, (h + 1) * d_h)
        out[h] = q[:, cols] @ k[:, cols].T / (math.sqrt(d_h) if scaled else 1.0)
    return out


def module_of(a):
    """The attention module on screen and its inputs (random weights, the toy module)."""
    cells = dict(zip(a.layers.ablate.__code__.co_freevars,
                     (c.cell_contents for c in a.layers.ablate.__closure__), strict=True))
    return cells["module"](), cells["decoder_state"], cells["encoder_output"], cells["mask"]


def weights_by_hand(a, scaled: bool = True) -> np.ndarray:
    """The one-layer module's weights (h, T, S) recomputed from its parameters; checked to
    be the ones on screen."""
    m, x_t, x_s, mask = module_of(a)
    w = softmax_rows(scores_of(m, x_t, x_s, scaled), mask)
    if scaled:
        np.testing.assert_allclose(w, a.layer(0), atol=1e-5)
    return w


def random_with(a, **changes):
    """The random weights of ``a``'s settings changed (another seed, no mask), from a new
    run of the pipeline (settings as recorded on ``a``)."""
    s = json.loads(str(a.meta.extras["settings"]))
    s["padded"] = tuple(s["padded"])
    from xattn.sources import random_attention

    return random_attention(run(Settings(**{**s, **changes})))


def row_of(tokens, word: str) -> int:
    """The row a question asks about: the word's first place, else the first token."""
    return list(tokens).index(word) if word in tokens else 0


def named(tokens, j: int) -> str:
    """A token as the text names it: a code span, its place when the word repeats."""
    return f"`{tokens[j]}`" + (f" ({j})" if list(tokens).count(tokens[j]) > 1 else "")


def first_max(values) -> int:
    best = 0
    for j in range(1, len(values)):
        if values[j] > values[best]:
            best = j
    return best


def entropy(p) -> float:
    return -sum(x * math.log(x) for x in p if x > 0)


# --- each question, re-derived ----------------------------------------------------------------
def weights_of(a, layer: int) -> np.ndarray:
    """The weights a question reads: a model's as it computes them, a module's by hand."""
    return np.asarray(a.layer(layer)) if a.source == "model" else weights_by_hand(a)


def _strongest_source(step, a, told, args):
    w = weights_of(a, told.layer)
    i, h = row_of(a.tgt_tokens, args["target"]), min(args["head"], a.n_heads) - 1
    j = first_max(w[h, i])
    return j, [f"({w[h, i, j]:.3f})"]


def _row_sum(step, a, told, args):
    w = weights_of(a, told.layer)
    i, h = row_of(a.tgt_tokens, args["target"]), min(args["head"], a.n_heads) - 1
    total = sum(w[h, i])
    shown = sum(round(float(x), 3) for x in w[h, i])
    assert ("add up to" in told.answer) == (abs(shown - 1) >= 5e-4)     # rounding, said
    return total, [" + ".join(f"{x:.3f}" for x in w[h, i]), f"**{total:.3f}**"] + (
        [f"add up to {shown:.3f}, not exactly 1"] if abs(shown - 1) >= 5e-4 else [])


def _masked_share(step, a, told, args):
    mask = module_of(a)[3]
    masked = [j for j in range(len(a.src_tokens)) if not any(mask[:, j])]
    if not masked:
        return None, []
    w = weights_by_hand(a)
    m, x_t, x_s, _ = module_of(a)
    free = softmax_rows(scores_of(m, x_t, x_s), np.ones_like(mask))       # no mask at all
    i = row_of(a.tgt_tokens, args["target"])
    k = first_max(w[0, i])
    left = 1 - sum(free[0, i, j] for j in masked)
    assert abs(free[0, i, k] / left - w[0, i, k]) < 1e-6      # the fraction the text shows
    j = masked[0]
    return w[0, i, j], [f"**{w[0, i, j]:.3f}**", f"{named(a.tgt_tokens, i)} gave "
                        f"{named(a.src_tokens, j)} {free[0, i, j]:.3f}",
                        f"{free[0, i, k]:.3f} to {w[0, i, k]:.3f} (= {free[0, i, k]:.3f} / (1 − "
                        + " − ".join(f"{free[0, i, m]:.3f}" for m in masked) + ")"]


def _wait_k(step, a, told, args):
    k, n = step.state.get("k", 3), len(a.src_tokens)
    mask = module_of(a)[3]
    for i in range(len(a.tgt_tokens)):                       # target i sees the first i + k
        assert list(mask[i]) == [j < i + k for j in range(n)], i
    seen = min(k, n)
    restricted = sum(1 for i in range(len(a.tgt_tokens)) if sum(mask[i]) < n)
    assert ("No row is restricted" in told.answer) == (restricted == 0)
    if len({m for m in (1, 2, 3, seen, n) if 1 <= m <= n}) < 2:
        return None, []
    return (f"the first {seen}: {' '.join(a.src_tokens[:seen])}" if seen < n else f"all {n}",
            [f"({seen} token{'s' if seen != 1 else ''})",
             f"sees {min(len(a.tgt_tokens) - 1 + k, n)} of {n}"])


def _seed_change(step, a, told, args):
    s = args["seed"]
    one, two = (weights_by_hand(random_with(a, seed=x, n_heads=a.n_heads)) for x in (s, s + 1))
    moved = sum(first_max(one[h, i]) != first_max(two[h, i])
                for h in range(one.shape[0]) for i in range(one.shape[1]))
    total = one.shape[0] * one.shape[1]
    return ("They stay the same" if moved == 0 else "Some rows change" if moved <= total / 2
            else "Most rows change"), [f"**{moved} of {total}**"]


def _repeated_word(step, a, told, args):
    rows = [i for i, t in enumerate(a.tgt_tokens) if t == args["word"]]
    if not rows:
        return None, []
    w = weights_by_hand(a)
    n_h = w.shape[0]
    mean = [[sum(w[h, i, j] for h in range(n_h)) / n_h for j in range(w.shape[2])]
            for i in range(w.shape[1])]
    lines = [f"- Head {h + 1}: " + "; ".join(
        f"{named(a.tgt_tokens, i)} → {named(a.src_tokens, first_max(w[h, i]))}" for i in rows)
        for h in range(n_h)]
    exact = sum(1 for i in rows if a.gold[i, first_max(mean[i])])
    apart = [h + 1 for h in range(n_h) if all(a.gold[i, first_max(w[h, i])] for i in rows)]
    return first_max(mean[rows[-1]]), lines + [
        f"{exact} of {len(rows)} `{args['word']}` find their own gold word",
        f"({', '.join(map(str, apart))}) put each" if apart else "no head tells them apart"]


def _confidence(w: np.ndarray, mask: np.ndarray) -> float:
    """Each head's mean over rows (with a key) of the row's largest weight, then over heads."""
    per = [np.mean([max(w[h, i]) for i in range(w.shape[1]) if mask[i].any()])
           for h in range(w.shape[0])]
    return float(np.mean(per))


def _trained_vs_random(step, a, told, args):
    mask = module_of(a)[3]
    conf = [_confidence(weights_by_hand(x), mask) for x in (a, a.toy.untrained())]
    truth = ("Both alike" if abs(conf[0] - conf[1]) < 0.05 else "A: the trained weights"
             if conf[0] > conf[1] else "B: the random start")
    return truth, [f"**{conf[0]:.2f}** trained", f"**{conf[1]:.2f}** before"]


def _head_off(step, a, told, args):
    m, x_t, x_s, mask = module_of(a)
    w = weights_by_hand(a)
    d_h = m.d_model // m.n_heads
    v = x_s @ m.W_V + (m.b_V if m.b_V is not None else 0)                 # (S, d_model)
    heads = [w[h] @ v[:, h * d_h:(h + 1) * d_h] for h in range(m.n_heads)]  # (T, d_head)
    y = np.concatenate(heads, axis=1) @ m.W_O + (m.b_O if m.b_O is not None else 0)
    change = [float(np.linalg.norm(heads[h] @ m.W_O[h * d_h:(h + 1) * d_h]) / np.linalg.norm(y))
              for h in range(m.n_heads)]            # the output is linear in each head's part
    most, least = first_max(change), first_max([-x for x in change])
    small = sum(1 for x in change if x < 0.05)
    return (f"head {most + 1}" if m.n_heads > 1 else None), [
        f"**{change[most]:.1%}**", f"head {least + 1} changes it least ({change[least]:.1%})",
        f"{small} head{'s' if small != 1 else ''} of {m.n_heads} change it by less than 5%"
        if small else f"Every head changes it by at least {change[least]:.1%}"]


def _divide_by_sqrt(step, a, told, args):
    m, x_t, x_s, mask = module_of(a)
    on, off = (softmax_rows(scores_of(m, x_t, x_s, s), mask)[0, 0] for s in (True, False))
    h_on, h_off = entropy(on), entropy(off)
    truth = ("It stays the same" if abs(h_on - h_off) < 1e-3 else "It goes down"
             if h_off < h_on else "It goes up")
    if truth == "It goes down":
        assert f"goes from {max(on):.3f} to {max(off):.3f}" in told.answer
        assert ("The softmax saturates" in told.answer) == (max(off) >= 0.9)
    return truth, [f"√{m.d_model // m.n_heads}", f"**{h_on:.3f}** nats", f"**{h_off:.3f}** nats",
                   f"possible: {math.log(sum(mask[0])):.3f})"]


def _link_sets(w: np.ndarray, rule: str, link_min: float) -> set:
    """One (T, S) matrix's links under ``rule``, by loops."""
    n_t, n_s = w.shape
    rows = {(i, first_max(w[i])) for i in range(n_t)}
    cols = {(first_max(w[:, j]), j) for j in range(n_s)}
    return {"target_argmax": rows, "source_argmax": cols, "intersection": rows & cols,
            "threshold": {(i, j) for i in range(n_t) for j in range(n_s)
                          if w[i, j] > link_min}}[rule]


def _aer(held, pick, rule: str, link_min: float) -> float:
    """AER over the held-out sentences of the (T, S) matrices ``pick(w)`` picks, by counts."""
    found = right = gold_n = 0
    for w, pair in held:
        gold = {(i, s) for i, s in enumerate(pair.alignment)}
        links = _link_sets(pick(np.asarray(w)), rule, link_min)
        found, right, gold_n = found + len(links), right + len(links & gold), gold_n + len(gold)
    return 1 - 2 * right / (found + gold_n)


def _best_layer(step, a, told, args):
    rule, link_min = args["links"], args["link_min"]
    held = a.heldout(False)
    n_layers, n_heads = held[0][0].shape[:2]
    aer = [_aer(held, lambda w, k=k: w[k].mean(axis=0), rule, link_min) for k in range(n_layers)]
    heads = {(k, h): _aer(held, lambda w, k=k, h=h: w[k, h], rule, link_min)
             for k in range(n_layers) for h in range(n_heads)}
    best = min(aer)
    tied = [k for k in range(n_layers) if abs(aer[k] - best) < 1e-12]
    top = [f"head {h + 1} of layer {k + 1}" for (k, h), v in heads.items()
           if abs(v - min(heads.values())) < 1e-12]
    return (f"layer {tied[0] + 1}", {f"layer {k + 1}" for k in tied[1:]}), \
        [f"layer {k + 1}: {v:.3f}" for k, v in enumerate(aer)] + ["; ".join(top)]


def _first_to_learn(step, a, told, args):
    tl = a.toy.timelapse()
    acc = tl.by_head["word_accuracy"]                                   # (snapshots, heads)
    onset = []
    for h in range(acc.shape[1]):
        at = [int(tl.steps[s]) for s in range(acc.shape[0]) if acc[s, h] >= 0.5]
        onset.append(at[0] if at else None)
    started = [s for s in onset if s is not None]
    if not started:
        return None, []
    heads = [h for h, s in enumerate(onset) if s == min(started)]
    at = list(tl.steps).index(min(started))
    moved, repeated = (tl.by_head[x][at, heads[0]] for x in ("moved_accuracy",
                                                             "repeated_accuracy"))
    every = int(tl.steps[1] - tl.steps[0])
    return (f"head {heads[0] + 1}", {f"head {h + 1}" for h in heads[1:]}), \
        [f"by the snapshot at step {min(started)} (snapshots every {every} step",
         f"(moved words {moved:.0%}, repeated words {repeated:.0%})"]


def _on_screen_by_hand(a, layer: int) -> list[dict]:
    """Each head's measures on the pair on screen (weights with no held-out sentences): its
    target words' rows, each word's own place among the source words, `</s>` and
    punctuation columns as sinks; no gold."""
    w = np.asarray(a.layer(layer))
    sinks = [j for j, t in enumerate(a.src_tokens) if t in SINKS]
    words_s = [j for j in range(len(a.src_tokens)) if j not in sinks]
    words_t = [i for i, t in enumerate(a.tgt_tokens) if t not in SINKS]
    return [by_hand([(list(w[h, i]), words_s[int((r + 0.5) * len(words_s) // len(words_t))],
                      None, sinks) for r, i in enumerate(words_t)])
            for h in range(a.n_heads)]


def _head_jobs(step, a, told, args):
    hands = JOBS_BY_HAND[0][told.layer] if a.heldout is not None else \
        _on_screen_by_hand(a, told.layer)
    truth = []
    for hand in hands[:len(told.parts)]:
        known = {k: v for k, v in hand.items() if k in JOBS and v is not None}
        truth.append(next(k for k in JOBS if known.get(k) == max(known.values())))
    def signed(v) -> str:
        return "–" if v is None else f"{v:.2f}".replace("-", "−")
    rows = [f"| {j} | {signed(hand['sink'])} | {hand['spread out']:.2f} | "
            + f"{hand['offset']:+d}".replace("-", "−") + f" | {hand.get('n_tell') or '–'} | "
            f"{signed(hand['follows position'])} | {signed(hand['aligns words'])} | "
            f"**{job}**" for j, hand, job in zip([p.name for p in told.parts],
                                                 hands[:len(truth)], truth, strict=True)]
    return tuple(truth), rows


def _masking_effect(step, a, told, args):
    from xattn.encdec import load_encdec
    from xattn.subwords import word_groups

    model = load_encdec(*([step.state["model"]] if "/" in step.state.get("model", "") else []))
    tok = model.tokenizer
    i = row_of(a.tgt_tokens, args["target"])
    src = tok.encode(" ".join(a.src_tokens[:-1]))
    tgt = tok.encode(" ".join(a.tgt_tokens[:-1]), side="target")
    src_words = word_groups(tok.id_to_piece(src), specials=tok.specials)     # piece -> word
    tgt_words = word_groups(tok.id_to_piece(tgt), specials=tok.specials)
    assert src_words.max() + 1 == len(a.src_tokens) and tgt_words.max() + 1 == len(
        a.tgt_tokens)
    steps = np.flatnonzero(tgt_words == i)              # the pieces of the word asked about
    p = word_p(model, reference_layers(model, src, tgt)[-1], tgt, steps)
    drop = [p - word_p(model, reference_layers(model, src, tgt, may_attend=src_words != j)[-1],
                       tgt, steps) for j in range(len(a.src_tokens))]
    needed = first_max(drop)
    last = a.layer(a.n_layers - 1)
    mean = [sum(last[h, i, j] for h in range(a.n_heads)) / a.n_heads
            for j in range(len(a.src_tokens))]
    looked = first_max(mean)
    head_drop = []
    for layer in range(a.n_layers):
        for h in range(a.n_heads):
            gates = np.ones((a.n_layers, a.n_heads), np.float32)
            gates[layer, h] = 0
            z = model.forward(src, tgt, head_mask=gates).logits.astype(np.float64)  # (T, V)
            off = math.prod(math.exp(z[t, tgt[t]] - z[t].max()) / np.exp(z[t] - z[t].max()).sum()
                            for t in steps)
            head_drop.append(p - off)
    most = first_max(head_drop)
    return needed, [f"({mean[looked]:.2f}" if looked != needed else f"({mean[needed]:.2f})",
                    f"layer {most // a.n_heads + 1}, head {most % a.n_heads + 1} matters most"]


def _align_words(step, a, told, args):
    from xattn.corpus import translate

    words_s = [j for j, t in enumerate(a.src_tokens) if t != "</s>"]
    words_t = [i for i, t in enumerate(a.tgt_tokens) if t != "</s>"]
    pair = translate(" ".join(a.src_tokens[j] for j in words_s))
    assert list(pair.target) == [a.tgt_tokens[i] for i in words_t]
    gold = {(i, s) for i, s in enumerate(pair.alignment)}
    aers = []
    for layer in range(a.n_layers):
        w = np.asarray(a.layer(layer) if a.source == "model" else weights_by_hand(a))
        mean = w.mean(axis=0)
        links = {(r, first_max([mean[words_t[r], c] for c in words_s]))
                 for r in range(len(words_t))}
        aers.append(1 - 2 * len(links & gold) / (len(links) + len(gold)))
    best = first_max([-x for x in aers])
    return tuple(sorted(gold)), [f"layer {best + 1}'s heads, averaged, score AER "
                                 f"{aers[best]:.2f}" if a.n_layers > 1 else f"{aers[0]:.2f}"]


DERIVE = {name[1:]: f for name, f in list(globals().items()) if name[1:] in SETTINGS
          and name.startswith("_")}
JOBS_BY_HAND: list = []


def expected(step, a, told, request):
    """The re-derived (truth, ties, numbers the answer must state) of a step on ``a``."""
    computed = step.computed
    if computed is None:                               # a lecturer's own question, or none
        own = step.ask.own if step.ask else None
        return (own.answer if own else None), set(), []
    if computed.name == "head_jobs" and not JOBS_BY_HAND:
        JOBS_BY_HAND.append(request.getfixturevalue("held_out_by_hand")[0])
    args = {k: arg.default for k, arg in computed.args.items()} | dict(step.ask.args)
    truth, numbers = DERIVE[computed.name](step, a, told, args)
    if isinstance(truth, tuple) and len(truth) == 2 and isinstance(truth[1], set):
        return truth[0], truth[1], numbers
    return truth, set(), numbers


def same(told, truth, also) -> bool:
    if truth is None or told.truth is None:
        return truth is None and (told.truth is None or told.question is None
                                  or not told.question.of.graded)
    if isinstance(truth, (float, np.floating)):
        return abs(float(told.truth) - truth) < 1e-5          # float32 weights, summed
    return told.truth == truth and set(told.also) == also


def moodle_answers(n: int, step, told, a) -> tuple[str, object]:
    """The question type of step ``n``'s Moodle export and its right answer(s), as read back."""
    root = ET.fromstring(moodle_xml("check", [step_item(n, step, told, a)]).split("\n", 1)[1])
    q = root.find("question[@type!='category']")
    if q is None:
        return "none", None
    kind = q.get("type")
    if kind == "multichoice":
        return kind, {html.unescape(re.sub("<[^>]+>", "", x.findtext("text")))
                      for x in q.iter("answer")
                      if x.get("fraction") == "100"}
    if kind == "numerical":
        return kind, float(q.find("answer").findtext("text"))
    if kind == "cloze":
        text = q.find("questiontext").findtext("text")
        return kind, tuple(re.search(r"~?=([^~}]+)", m).group(1).replace("\\", "") for m in
                           re.findall(r"\{1:MULTICHOICE:([^}]*)\}", text))
    return kind, {(html.unescape(re.sub("<[^>]+>", "", s.findtext("text"))),
                   s.find("answer").findtext("text"))
                  for s in q.iter("subquestion") if s.findtext("text")}


def check_moodle(n: int, step, told, a, truth, also) -> None:
    kind, found = moodle_answers(n, step, told, a)
    q = told.question
    if truth is None or q is None or not q.of.graded:
        assert kind == "none", (kind, found)
    elif q.kind == "number":
        assert kind == "numerical" and abs(found - truth) <= 10 ** -q.decimals / 2 + 1e-9
    elif q.kind in ("choice", "token"):
        want = {truth, *also}
        labels = {q.choices[x] if q.kind == "token" else x for x in want}
        assert kind == "multichoice" and found == {str(x) for x in labels}, (found, labels)
    elif q.kind == "parts":
        assert kind == "cloze" and found == truth, (found, truth)
    else:                                              # links: each word to its gold word
        singles = {t for t, _ in truth if sum(1 for x, _ in truth if x == t) == 1}
        assert kind == "matching" and found == {(q.rows[t], q.choices[s]) for t, s in truth
                                                if t in singles}, found


RESULTS: dict = {}


@pytest.fixture(scope="module", autouse=True)
def counts():
    """What was checked, printed at the end (``-s``): the counts docs/lesson.md gives."""
    yield
    runs = [v for k, v in RESULTS.items() if k[2] != "cases"]
    cases = sum(v for k, v in RESULTS.items() if k[2] == "cases")
    print(f"\nre-derived: {runs.count('checked')} step x setting runs, {cases} follow-up "
          f"cases, {runs.count('unavailable')} runs whose model is not here")


@pytest.mark.parametrize("lesson, n, k", ROWS, ids=[f"{x}-{n}-s{k}" for x, n, k in ROWS])
def test_every_step_on_three_settings_is_what_the_weights_give(lesson, n, k, request):
    if lesson == "en-de":
        request.getfixturevalue("en_de")
    try:
        step, a, told = shown(lesson, n, k)
    except StepUnavailable as err:
        RESULTS[(lesson, n, k)] = "unavailable"
        pytest.skip(f"{lesson} step {n}: {err}")
    truth, also, numbers = expected(step, a, told, request)
    assert same(told, truth, also), (told.truth, told.also, truth, also)
    for x in numbers:
        assert x in told.answer, (x, told.answer)
    check_moodle(n, step, told, a, truth, also)
    RESULTS[(lesson, n, k)] = "checked"


FOLLOWED = [(lesson, n) for lesson, n, k in ROWS if k == 0 and LESSONS[lesson].steps[n - 1].computed]


@pytest.mark.parametrize("lesson, n", FOLLOWED, ids=[f"{x}-{n}" for x, n in FOLLOWED])
def test_every_follow_up_case_is_what_its_weights_give(lesson, n, request):
    if lesson == "en-de":
        request.getfixturevalue("en_de")
    step = LESSONS[lesson].steps[n - 1]
    try:
        prepared_attention(step)
    except StepUnavailable as err:
        pytest.skip(f"{lesson} step {n}: {err}")
    checked = 0
    for c in range(1, len(cases(step)) + 1):
        s = case_step(step, c)
        try:
            a = prepared_attention(s)
        except StepUnavailable:
            continue                                   # a case the page cannot make is not offered
        told = s.tell(a, s.layer(a.n_layers))
        if not shows_case(step, c, told):
            continue
        truth, also, numbers = expected(s, a, told, request)
        assert same(told, truth, also), (c, told.truth, told.also, truth, also)
        for x in numbers:
            assert x in told.answer, (c, x, told.answer)
        checked += 1
    RESULTS[(lesson, n, "cases")] = checked


@pytest.mark.parametrize("lesson", list(LESSONS))
def test_each_steps_three_settings_are_three_pages(lesson):
    """A setting that changed nothing would check one page thrice: each of a step's three
    settings gives another page or other arguments of its question."""
    for step in LESSONS[lesson].steps:
        if step.computed is not None:
            made = [on(step, over) for over in settings_of(lesson, step)]
            assert len({(tuple(sorted((k, str(v)) for k, v in s.state.items())), s.ask.args)
                        for s in made}) == 3, step.title
