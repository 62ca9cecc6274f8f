"""The distractors of named misconceptions (xattn/lesson/misconceptions.py, _distractors.py):
on 100 random settings each differs from the answer and from the others, and each is what its
misconception gives, re-derived here with plain loops from the module's projections."""

from __future__ import annotations

import math
from functools import cache

import numpy as np
import pytest

from xattn.classroom import Question
from xattn.lesson import Told, verdict
from xattn.lesson.computed import COMPUTED
from xattn.lesson.misconceptions import (
    MISCONCEPTIONS,
    Distractor,
    class_misconceptions,
    keep,
    misconception_of,
    surprise,
)
from xattn.pipeline import Settings, run
from xattn.sources import random_attention

WORDS = ("the", "cat", "dog", "sat", "on", "mat", "black", "a", "sees", "big")
MOTS = ("le", "chat", "noir", "chien", "sur", "tapis", "voit", "un", "grand")


def _setting(rng: np.random.Generator, mask: str) -> Settings:
    d_model = int(rng.choice((8, 12, 16, 24, 32)))
    heads = [h for h in (1, 2, 3, 4, 6, 8) if d_model % h == 0]
    src = " ".join(rng.choice(WORDS, int(rng.integers(3, 8))))
    tgt = " ".join(rng.choice(MOTS, int(rng.integers(2, 8))))
    n_src = len(src.split())
    padded = tuple(sorted({int(p) for p in rng.integers(0, n_src, 2)})) if mask == "padding" \
        else ()
    return Settings(src=src, tgt=tgt, d_model=d_model, n_heads=int(rng.choice(heads)),
                    seed=int(rng.integers(0, 1000)), mask_mode=mask, padded=padded,
                    wait_k=int(rng.integers(1, 4)), positional=bool(rng.integers(0, 2)))


SETTINGS = [_setting(np.random.default_rng(k), ("none", "padding", "wait-k", "window")[k % 4])
            for k in range(100)]
# 100 settings of each mask a question needs (masked_share: padding; wait_k: wait-k)
PADDED = [_setting(np.random.default_rng(1000 + k), "padding") for k in range(100)]
WAIT_K = [_setting(np.random.default_rng(2000 + k), "wait-k") for k in range(100)]


class ByHand:
    """One setting's scores and weights, with plain loops: q·k / √d_head, each softmax."""

    def __init__(self, r):
        m = r.module()
        self.n_heads, d_h = m.n_heads, m.d_head
        self.mask = r.mask
        n_tgt, n_src = r.mask.shape
        self.scores = np.zeros((m.n_heads, n_tgt, n_src))
        for h in range(m.n_heads):
            cols = slice(h * d_h, (h + 1) * d_h)
            for i in range(n_tgt):
                q = r.decoder_state[i] @ m.W_Q[:, cols]
                for j in range(n_src):
                    k = r.encoder_output[j] @ m.W_K[:, cols]
                    self.scores[h, i, j] = sum(q[c] * k[c] for c in range(d_h)) / math.sqrt(d_h)

    def row_softmax(self, h, i, masked=True) -> list[float]:
        cells = [j for j in range(self.scores.shape[2]) if self.mask[i, j] or not masked]
        top = max(self.scores[h, i, j] for j in cells)
        e = {j: math.exp(self.scores[h, i, j] - top) for j in cells}
        return [e.get(j, 0.0) / sum(e.values()) for j in range(self.scores.shape[2])]

    def col_softmax(self, h, j) -> list[float]:
        cells = [i for i in range(self.scores.shape[1]) if self.mask[i, j]]
        if not cells:
            return [0.0] * self.scores.shape[1]
        top = max(self.scores[h, i, j] for i in cells)
        e = {i: math.exp(self.scores[h, i, j] - top) for i in cells}
        return [e.get(i, 0.0) / sum(e.values()) for i in range(self.scores.shape[1])]

    def weights(self, h) -> list[list[float]]:
        return [self.row_softmax(h, i) for i in range(self.scores.shape[1])]


def _argmax(values) -> int:
    return max(range(len(values)), key=lambda j: (values[j], -j))


def _own(i, n_tgt, n_src) -> int:
    return int((i + 0.5) * n_src // n_tgt)


def _differ(told: Told) -> None:
    """Each distractor differs from the answer and from the others (numbers: by more than the
    tolerance), and is an answer the question takes."""
    values = [told.truth, *(d.value for d in told.distractors)]
    for x in range(len(values)):
        for y in range(x + 1, len(values)):
            if told.question.kind == "number":
                assert abs(values[x] - values[y]) > told.tolerance, values
            else:
                assert values[x] != values[y], values
    for d in told.distractors:
        assert d.key in MISCONCEPTIONS and d.why
        told.question.encode(d.value)          # refused if the question does not take it


def _all_named(told: Told, want: dict) -> None:
    """Each distractor is its misconception's answer (``want``), and a misconception left out
    gives the answer or a distractor already named."""
    for d in told.distractors:
        assert d.value == want[d.key], (d, want)
    named = [d.value for d in told.distractors]
    for key, value in want.items():
        if key not in {d.key for d in told.distractors}:
            assert value == told.truth or value in told.also or value in named, (key, want)


def _expected_one_head(r, by, h, i) -> dict:
    """strongest_source's distractors, each re-derived by its misconception."""
    w = [by.weights(g) for g in range(by.n_heads)]
    n_tgt, n_src = r.mask.shape
    mean = [sum(w[g][i][j] for g in range(by.n_heads)) / by.n_heads for j in range(n_src)]
    col_sum = [sum(w[h][k][j] for k in range(n_tgt)) for j in range(n_src)]
    share = [w[h][i][j] / col_sum[j] if col_sum[j] > 0 else 0.0 for j in range(n_src)]
    return {"heads": _argmax(mean), "swapped": _argmax(share),
            "axis": _argmax([by.col_softmax(h, j)[i] for j in range(n_src)]),
            "mask": _argmax(by.row_softmax(h, i, masked=False)),
            "diagonal": _own(i, n_tgt, n_src)}


@pytest.mark.parametrize("k", range(100))
def test_strongest_source_and_row_sum_on_random_settings(k):
    s = SETTINGS[k]
    r = run(s)
    a, by = random_attention(r), ByHand(run(s))
    told = COMPUTED["strongest_source"].tell(a, 0, target="chat", head=2)
    _differ(told)
    i, h = told.row
    want = _expected_one_head(r, by, h, i)
    _all_named(told, want)

    told = COMPUTED["row_sum"].tell(a, 0, target="noir", head=2)
    _differ(told)
    i = list(a.tgt_tokens).index("noir") if "noir" in a.tgt_tokens else 0
    h = min(2, by.n_heads) - 1
    w = by.weights(h)
    want = {"swapped": sum(w[t][i] for t in range(len(w))) if i < len(a.src_tokens) else None,
            "scores": sum(by.scores[h, i, j] for j in range(len(a.src_tokens)) if r.mask[i, j]),
            "axis": sum(by.col_softmax(h, j)[i] for j in range(len(a.src_tokens)))}
    for d in told.distractors:
        assert d.value == pytest.approx(want[d.key], abs=1e-5)


@pytest.mark.parametrize("k", range(100))
def test_masked_share_on_random_settings(k):
    s = PADDED[k]
    r = run(s)
    a, by = random_attention(r), ByHand(r)
    told = COMPUTED["masked_share"].tell(a, 0, target="chat")
    assert told.question is not None                       # a token is masked in each
    _differ(told)
    j = next(j for j in range(len(a.src_tokens)) if not r.mask[:, j].any())
    i = list(a.tgt_tokens).index("chat") if "chat" in a.tgt_tokens else 0
    want = {"mask": by.row_softmax(0, i, masked=False)[j], "scores": by.scores[0, i, j]}
    for d in told.distractors:
        assert d.value == pytest.approx(want[d.key], abs=1e-5)


@pytest.mark.parametrize("k", range(100))
def test_wait_k_on_random_settings(k):
    a = random_attention(run(WAIT_K[k]))
    told = COMPUTED["wait_k"].tell(a, 0)
    assert told.question is not None                       # 3 source tokens or more
    _differ(told)
    n = len(a.src_tokens)
    for d in told.distractors:
        seen = n if d.key == "mask" else 1                 # no mask: all; the diagonal: one
        assert d.value == (f"all {n}" if seen == n else
                           f"the first 1: {a.src_tokens[0]}")


@pytest.mark.parametrize("k", range(100))
def test_choice_questions_on_random_settings(k):
    """divide_by_sqrt (the direction of the scaling flipped), head_off (the most diagonal
    head) and seed_change (the heads averaged)."""
    s = SETTINGS[k]
    r = run(s)
    a, by = random_attention(r), ByHand(r)
    told = COMPUTED["divide_by_sqrt"].tell(a, 0)
    _differ(told)
    flip = {"It goes down": "It goes up", "It goes up": "It goes down"}
    raw = [by.scores[0, 0, j] for j in range(len(a.src_tokens))]
    for d in told.distractors:
        if d.key == "unscaled":
            assert d.value == flip[told.truth]
        else:
            assert d.key == "scores" and d.value == "It stays the same"
            d_h = r.module().d_head
            assert _argmax(raw) == _argmax([x * math.sqrt(d_h) for x in raw])
    if a.n_heads > 1:
        told = COMPUTED["head_off"].tell(a, 0)
        _differ(told)
        n_tgt, n_src = r.mask.shape
        diag = [sum(by.weights(h)[i][_own(i, n_tgt, n_src)] for i in range(n_tgt))
                for h in range(a.n_heads)]
        for d in told.distractors:
            assert d.value == f"head {_argmax(diag) + 1}"
    told = COMPUTED["seed_change"].tell(a, 0, seed=s.seed)
    _differ(told)
    for d in told.distractors:
        rows = [[by_s.weights(h) for h in range(a.n_heads)] for by_s in (
            by, ByHand(run(Settings(**{**s.__dict__, "seed": s.seed + 1}))))]
        n_tgt, n_src = r.mask.shape
        moved = sum(_argmax([sum(w[h][i][j] for h in range(a.n_heads)) for j in range(n_src)])
                    != _argmax([sum(v[h][i][j] for h in range(a.n_heads)) for j in range(n_src)])
                    for w, v in [rows] for i in range(n_tgt))
        assert d.value == ("They stay the same" if moved == 0 else "Some rows change"
                           if moved <= n_tgt / 2 else "Most rows change")


# --- keeping, naming, counting, surprise -----------------------------------------------------
NUMBER = Told({}, "", "?", Question("number", low=0, high=10, decimals=2), 1.0)
TOKENS = Told({}, "", "?", Question("token", ("le", "chat", "noir")), 1, also=(2,))


def test_keep_drops_the_answer_ties_duplicates_and_what_no_student_can_give():
    found = [Distractor("scores", 1.004), Distractor("axis", 0.5), Distractor("swapped", 0.503),
             Distractor("mask", 12.0), None, Distractor("heads", None)]
    assert [(d.key, d.value) for d in keep(NUMBER, found)] == [("axis", 0.5)]
    found = [Distractor("heads", 1), Distractor("axis", 2), Distractor("swapped", 0),
             Distractor("diagonal", 0), Distractor("mask", 7)]
    assert [d.key for d in keep(TOKENS, found)] == ["swapped"]
    with pytest.raises(ValueError, match="Distractor.key must be one of"):
        Distractor("guess", 1)


def test_a_number_is_named_by_the_nearest_distractor_within_the_tolerance():
    told = Told(**{**NUMBER.__dict__, "distractors": keep(NUMBER, [
        Distractor("axis", 0.53), Distractor("swapped", 0.54), Distractor("scores", 3.2)])})
    assert misconception_of(told, 0.533).key == "axis"
    assert misconception_of(told, 0.54).key == "swapped"
    assert misconception_of(told, 3.204).key == "scores"
    assert misconception_of(told, 1.0) is None and misconception_of(told, 2.0) is None
    shares = class_misconceptions(told, {0.53: 3, 0.54: 1, 1.0: 5, 3.2: 1}, 10)
    assert [(s.distractor.key, s.count, s.share) for s in shares] == [
        ("axis", 3, 0.3), ("swapped", 1, 0.1), ("scores", 1, 0.1)]
    assert "**softmax over the wrong axis**" in verdict(told, 0.53)
    assert "known slip" not in verdict(told, 2.0)


def test_surprise_orders_wrong_answers_by_how_far_they_are():
    told = Told(**{**TOKENS.__dict__, "weights": (0.1, 0.6, 0.3)})
    assert surprise(told, 1) == 0 and surprise(told, 2) == 0       # right, or a tie
    assert surprise(told, 0) == pytest.approx(1 + 1 - 0.1 / 0.6, abs=1e-4)
    assert surprise(NUMBER, 1.0) == 0
    assert surprise(NUMBER, 1.5) == pytest.approx(1.5)
    assert surprise(NUMBER, 9.0) == 2.0                            # capped: 800 % off
    choice = Told({}, "", "?", Question("choice", ("up", "down")), "up")
    assert surprise(choice, "down") == 2.0 and surprise(choice, None) is None
    poll = Told({}, "", "?", Question("poll", ("up", "down")), None)
    assert surprise(poll, "up") is None


# --- trained weights and the shipped model: the steps they ask, on 100 sentence pairs each ---
@cache
def _pairs(n: int = 100) -> list:
    """Toy pairs whose French side has *le* at least twice (the repeated word asked about)."""
    from xattn.corpus import generate_pairs

    return [p for p in generate_pairs(2000, seed=5) if p.target.count("le") >= 2][:n]


@pytest.fixture(scope="module")
def evaluated(trained):
    from xattn.alignment import evaluate

    return evaluate(trained, 1.0)


@pytest.mark.parametrize("k", range(100))
def test_the_trained_questions_distractors_on_100_sentence_pairs(evaluated, k):
    """repeated_word (head 1 alone, the diagonal, columns, the softmax over targets),
    head_off (the most diagonal head) and trained_vs_random (head 1 alone), each by hand."""
    from xattn.sources import trained_attention

    assert len(_pairs()) == 100
    a = trained_attention(evaluated, _pairs()[k])
    t = a.layers.trace(0, True)
    n_h, n_tgt, n_src = t.weights.shape
    told = COMPUTED["repeated_word"].tell(a, 0, word="le")
    _differ(told)
    i = told.row[0]
    w = t.weights
    col = [[sum(w[h, q, j] for q in range(n_tgt)) for j in range(n_src)] for h in range(n_h)]
    e = [[[math.exp(t.scaled_scores[h, q, j]) for j in range(n_src)] for q in range(n_tgt)]
         for h in range(n_h)]
    want = {"heads": _argmax(list(w[0, i])), "diagonal": _own(i, n_tgt, n_src),
            "swapped": _argmax([sum(w[h, i, j] / col[h][j] for h in range(n_h)) / n_h
                                for j in range(n_src)]),
            "axis": _argmax([sum(e[h][i][j] / sum(e[h][q][j] for q in range(n_tgt))
                                 for h in range(n_h)) / n_h for j in range(n_src)])}
    _all_named(told, want)
    told = COMPUTED["head_off"].tell(a, 0)
    _differ(told)
    diag = [sum(w[h, q, _own(q, n_tgt, n_src)] for q in range(n_tgt)) for h in range(n_h)]
    _all_named(told, {"diagonal": f"head {_argmax(diag) + 1}"})
    told = COMPUTED["trained_vs_random"].tell(a, 0)
    _differ(told)
    b = a.toy.untrained().layer(0)
    conf = [sum(max(x[0, q]) for q in range(n_tgt)) / n_tgt for x in (w, b)]
    _all_named(told, {"heads": "Both alike" if abs(conf[0] - conf[1]) < 0.05 else
                      "A: the trained weights" if conf[0] > conf[1] else "B: the random start"})


@cache
def _model():
    from xattn.encdec import load_encdec

    return load_encdec()


@cache
def _held_out_best_head_layer(rule: str, link_min: float) -> int:
    from xattn.alignlab import score_heads
    from xattn.encdec import cross_attention
    from xattn.sources import model_attention

    a = model_attention(cross_attention(_model(), "the red cat sees the dog"), loaded=_model())
    return score_heads(a.heldout(False), method=rule, threshold=link_min
                       if rule == "threshold" else None).best_heads[0][0]


RULES = (("target_argmax", 0.3), ("intersection", 0.3), ("source_argmax", 0.3),
         ("threshold", 0.3), ("threshold", 0.5))


@pytest.mark.parametrize("k", range(100))
def test_the_models_questions_distractors_on_100_sentences(k):
    """masking_effect: the word the last layer's heads, averaged, weigh most (a weight taken
    for an effect) and the diagonal; best_layer (its link rule varied): the best single
    head's layer and the most diagonal layer. Sentences of the toy grammar, one each."""
    from xattn.corpus import generate_pairs
    from xattn.encdec import cross_attention
    from xattn.sources import model_attention

    sentence = " ".join(generate_pairs(100, seed=11)[k].source)
    a = model_attention(cross_attention(_model(), sentence), loaded=_model())
    told = COMPUTED["masking_effect"].tell(a, 0, target=a.tgt_tokens[k % 3])
    _differ(told)
    i, last = told.row[0], told.layer
    w = a.layer(last)
    n_h, n_tgt, n_src = w.shape
    want = {"effect": _argmax([sum(w[h, i, j] for h in range(n_h)) for j in range(n_src)]),
            "diagonal": _own(i, n_tgt, n_src)}
    _all_named(told, want)
    rule, link_min = RULES[k % len(RULES)]
    told = COMPUTED["best_layer"].tell(a, 0, links=rule, link_min=link_min)
    _differ(told)
    diag = [sum(a.layer(q)[:, t, _own(t, n_tgt, n_src)].mean() for t in range(n_tgt))
            for q in range(a.n_layers)]
    _all_named(told, {"heads": f"layer {_held_out_best_head_layer(rule, link_min) + 1}",
                      "diagonal": f"layer {_argmax(diag) + 1}"})


def test_the_histogram_figure_has_a_bar_per_misconception_most_given_on_top():
    from xattn.figures.misconceptions import misconceptions_figure

    told = Told(**{**NUMBER.__dict__, "distractors": keep(NUMBER, [
        Distractor("axis", 0.53), Distractor("swapped", 0.6), Distractor("scores", 3.2)])})
    shares = class_misconceptions(told, {0.53: 1, 0.6: 3, 1.0: 6}, 10)
    fig = misconceptions_figure(shares)
    bar = fig.data[0]
    assert bar.orientation == "h" and list(bar.y) == [
        "scores read as weights", "softmax over the wrong axis", "rows and columns swapped"]
    assert list(bar.x) == [0.0, 10.0, 30.0] and list(bar.text) == ["0% (0)", "10% (1)",
                                                                    "30% (3)"]
    assert "10 answers" in fig.layout.title.text


def test_a_reason_names_typed_tokens_as_code_never_as_markup():
    from xattn.markup import to_html
    from xattn.pipeline import run_tokens

    a = random_attention(run_tokens(["**b**", "<i>", "_c_"], ["le", "chat", "noir"],
                                    Settings(n_heads=2)))
    told = COMPUTED["row_sum"].tell(a, 0, target="noir", head=2)
    swapped = next(d for d in told.distractors if d.key == "swapped")
    html = to_html(verdict(told, round(swapped.value, 2)))
    assert "added up the column of <code>_c_</code> instead of the row of <code>noir</code>" \
        in html and "<em>" not in html and "<i>" not in html
