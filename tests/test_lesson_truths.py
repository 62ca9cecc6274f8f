"""Every sentence of the lesson true, each pinned with the setting an audit found it false on
(issue 34): the number a sentence prints is recomputed here from the weights, independently of
the code that wrote it, and the chart beside an answer is the one the question is about."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
import pytest
from test_lesson import attention, shipped_attention, trained_attention_of

from xattn.figures.phone import values
from xattn.lesson import STEPS
from xattn.lesson.aligns import versus
from xattn.lesson.probe import explanation
from xattn.lesson.switched import ablation
from xattn.lesson.tell import layers, learning, trained, wait_k
from xattn.pipeline import Settings, run


def test_two_masked_tokens_divide_the_others_by_what_both_leave():
    """Step 3 at ``pad=0: the, 6: mat & seed=3`` printed "0.279 → 0.536 (= 0.279 / (1 −
    0.444))", a fraction that is 0.502: the denominator must take away every masked share."""
    a = attention(mask_mode="padding", padded=(0, 6), seed=3)
    told = STEPS[2].tell(a, 0)
    free = run(replace(a.recipe and Settings(), mask_mode="none", seed=3)).weights[0]  # (T, S)
    i = a.tgt_tokens.index("chat")
    shown = re.search(r"went from ([\d.]+) to ([\d.]+) \(= ([\d.]+) / \(1 − ([\d.]+) − ([\d.]+)\)",
                      told.answer)
    assert shown, told.answer
    before, after, numerator, s1, s2 = (float(x) for x in shown.groups())
    assert {round(float(free[i, 0]), 3), round(float(free[i, 6]), 3)} == {s1, s2}
    assert numerator == before
    assert abs(numerator / (1 - s1 - s2) - after) < 0.002      # the fraction is the number
    k = int(np.argmax(a.layer(0)[0, i]))
    assert after == round(float(free[i, k] / (1 - free[i, 0] - free[i, 6])), 3)


def test_wait_k_counts_from_zero_and_says_one_token():
    """Step 4: "target token *i* sees the first *i + k*" holds counting from 0, and says so;
    one visible token is "1 token", never "1 tokens"."""
    assert "(counting from 0)" in STEPS[3].text
    a = attention(mask_mode="wait-k", wait_k=1)
    told = wait_k(a, 0)
    assert "(1 token)" in told.answer and "1 tokens" not in told.answer
    assert int(a.mask[0].sum()) == 1                   # target token 0 sees i + k = 1 token


def test_a_repeated_word_says_position_was_learned_only_when_a_head_learned_it():
    """Step 6 at 25 training steps said "some heads learned to use [position]" where none did.
    A head uses position here when each *le* looks most at its own *the*."""
    from xattn.train import TrainConfig, train

    for steps in (25, 100):
        a = trained_attention_of(train(TrainConfig(steps=steps)))
        told = trained(a, 0)
        w = a.layer(0)                                                    # (h, T, S)
        rows = [i for i, t in enumerate(a.tgt_tokens) if t == "le"]
        apart = [h for h in range(a.n_heads)
                 if all(a.gold[i, int(np.argmax(w[h, i]))] for i in rows)]
        if apart:
            assert "these heads learned to use it" in told.answer
            assert f"({', '.join(str(h + 1) for h in apart)})" in told.answer
        else:
            assert "no head tells them apart" in told.answer and "learned to use it (yet)" \
                in told.answer


def test_switching_a_head_off_is_a_change_of_the_output_not_a_loss():
    """Step 8 said "many heads can go with little loss" beside a least important head that
    changes the output by 34.9 %, and called ‖ΔY‖/‖Y‖ a loss."""
    a = attention()
    told = ablation(a, 0)
    per_head = a.layers.ablate(0, ()).per_head
    assert "‖ΔY‖ / ‖Y‖" in told.answer and "Many heads can go with little loss" not in \
        told.answer and "a change of the output is not a loss of quality" in told.answer
    small = [h for h in range(a.n_heads) if per_head[h] < 0.05]
    if small:
        assert f"{len(small)} head" in told.answer and "could go unnoticed here" in told.answer
    else:
        assert f"every head changes it by at least {per_head.min():.1%}" in told.answer.lower()
    assert told.charts and told.charts[0].key == ("ablation", 0)


def test_the_entropy_sentence_divides_the_scores_not_the_entropy():
    told = STEPS[8].tell(attention(d_model=256, n_heads=2), 0)
    assert "with the scores divided by √128, the row's entropy is **" in told.answer
    assert "nats divided by" not in told.answer


def test_which_layer_aligns_quotes_the_aers_of_the_link_rule_in_use():
    """Step 10 always quoted the target-argmax AERs, whatever the Alignment view used."""
    from xattn.alignlab import score_heads

    a = shipped_attention()
    for rule in ("target_argmax", "intersection", "source_argmax"):
        told = layers(a, 0, links=rule)
        scores = score_heads(a.heldout(False), method=rule)
        for k, v in enumerate(scores.layer_aer):
            assert f"layer {k + 1}: {v:.3f}" in told.answer
    threshold = layers(a, 0, links="threshold", link_min=0.5)
    assert "every weight above the threshold (0.5)" in threshold.answer


def test_the_first_head_to_learn_names_its_snapshot_and_every_tie(trained):
    """Step 11 said "at step 20" of a snapshot taken every 5 steps, and gave a tie at a
    snapshot to the lower head with no "also"."""
    a = trained_attention_of(trained)
    told = learning(a, 0)
    tl = a.toy.timelapse()
    onset = tl.onset(0.5)
    first = int(min(s for s in onset if s >= 0))
    tied = [h for h, s in enumerate(onset) if s == first]
    every = int(tl.steps[1] - tl.steps[0])
    assert f"by the snapshot at step {first} (snapshots every {every} steps)" in told.answer
    assert told.truth == f"head {tied[0] + 1}"
    assert set(told.also) == {f"head {h + 1}" for h in tied[1:]}


def test_where_attention_agrees_the_answer_says_it_once():
    """Step 13 read "(0.70; `the` (0) gets 0.70)" where the heads' weight and the masking
    agreed: on the shipped model, the first *le* is such a word."""
    a = shipped_attention()
    told = explanation(a, 0, target="le")
    assert "**They agree here**" in told.answer
    assert "also put most weight on it (" in told.answer and "gets" not in told.answer


def test_the_class_aligns_row_before_any_link_has_no_score():
    """Step 14's *you* row read AER 1.000 before any link."""
    from test_lesson_aligns import model_on_the_steps_pair

    v = versus(model_on_the_steps_pair(), {}, 0, who="you")
    row = next(line for line in v.table.splitlines() if "**you**" in line)
    assert "(no links yet)" in row and "| – | – | – |" in row and "1.000" not in row
    assert np.isnan(v.aer)


def test_one_layer_weights_name_their_heads_once():
    """Step 14 on one-layer weights said "averaged score" and "head head 2"."""
    from test_lesson import trained_attention_of as of

    from xattn.lesson.aligns import aligns
    from xattn.train import TrainConfig, train

    a = of(train(TrainConfig(steps=25)), "the sick king hears the dog")
    told = aligns(a, 0)
    assert "head head" not in told.answer and "averaged score" not in told.answer
    assert "the heads' average scores AER" in told.answer
    assert re.search(r"the best single head \(head \d\) scores", told.answer)


@pytest.mark.parametrize("k, chart", [(0, ("head", 0, 0, None)), (1, ("head", 0, 1, None)),
                                      (2, ("head", 0, 0, None))])
def test_the_chart_beside_an_answer_is_the_head_the_question_asks_about(k, chart):
    """Step 2 asks about head 2 and showed head 1."""
    a = attention(**({"mask_mode": "padding", "padded": (6,)} if k == 2 else {}))
    told = STEPS[k].tell(a, 0)
    assert told.charts[0].key == chart
    fig = told.charts[0].make(1.0)
    z = values(fig.to_dict()["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(z, a.layer(0)[chart[2]], atol=1e-6)
    assert f"head {chart[2] + 1}" in told.charts[0].alt


def test_head_jobs_chart_shows_the_layer_asked_about():
    """Step 12 asks about layer 2's heads and showed layer 1's."""
    a = shipped_attention()
    layer = STEPS[11].layer(a.n_layers)
    told = STEPS[11].tell(a, layer)
    assert told.charts[0].key == ("heads", layer) and told.layer == layer == 1
    fig = told.charts[0].make(1.0).to_dict()
    heat = [t for t in fig["data"] if t.get("type") == "heatmap"]
    for h, trace in enumerate(heat):
        np.testing.assert_allclose(values(trace["z"]).astype(float), a.layer(layer)[h],
                                   atol=1e-6)


def test_is_attention_the_explanation_opens_the_decode_view_at_its_word():
    """Step 13 on the host showed Decode at `</s>`: the step now opens it at the decoder
    step of the word it asks about."""
    a = shipped_attention()
    told = STEPS[12].tell(a, 0)
    assert told.page == {"dstep": a.tgt_tokens.index("chat")}
