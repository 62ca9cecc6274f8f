"""The guided lesson: every step's answer is computed from the weights it shows."""

from dataclasses import replace

import numpy as np
import pytest

from xattn.lesson import STEPS
from xattn.pipeline import Settings, run
from xattn.sources import random_attention
from xattn.ui.link import REGISTRY
from xattn.ui.page import VIEWS


def test_the_lesson_has_six_to_ten_steps_with_a_question_each():
    assert 6 <= len(STEPS) <= 10
    for step in STEPS:
        assert step.title and step.text and step.look and step.question.endswith("?")
        assert set(step.state) <= set(REGISTRY), set(step.state) - set(REGISTRY)
        assert step.state.get("view", "Heads") in VIEWS


def attention(**changes):
    return random_attention(run(replace(Settings(), **changes)))


def test_answers_follow_the_numbers_not_a_script():
    one = STEPS[0].answer(attention(n_heads=1), 0)
    other = STEPS[0].answer(attention(n_heads=1, seed=5), 0)
    assert one != other                                     # another seed, another answer
    a = attention(n_heads=1)
    j = int(np.argmax(a.layer(0)[0, 1]))                   # row of "chat"
    assert f"`{a.src_tokens[j]}` ({a.layer(0)[0, 1, j]:.3f})" in one


def test_rows_sum_to_one_is_added_up_from_the_row():
    a = attention()
    answer = STEPS[1].answer(a, 0)
    row = a.layer(0)[1, 2]                                  # head 2, "noir"
    assert " + ".join(f"{w:.3f}" for w in row) in answer and "**1.000**" in answer


def test_the_masking_answers_read_the_mask():
    a = attention(mask_mode="padding", padded=(6,))
    assert "`mat` gets **0.000**" in STEPS[2].answer(a, 0)
    a = attention(mask_mode="wait-k", wait_k=2)
    assert "may see `the`, `black` (2 tokens)" in STEPS[3].answer(a, 0)


def test_the_seed_answer_counts_rows_that_moved():
    a = attention(n_heads=8)
    other = run(Settings(n_heads=8, seed=1)).weights
    moved = int((a.layer(0).argmax(-1) != other.argmax(-1)).sum())
    assert f"**{moved} of 64**" in STEPS[4].answer(a, 0)


@pytest.mark.parametrize("k", [5, 6])
def test_the_trained_steps_answer_from_the_trained_weights(trained, k):
    from xattn.alignment import evaluate
    from xattn.corpus import translate
    from xattn.sources import trained_attention

    a = trained_attention(evaluate(trained, 1.0), translate("the red cat sees the dog"))
    answer = STEPS[k].answer(a, 0)
    if k == 5:
        assert answer.count("- Head") == 4 and "`le` (0)" in answer and "`le` (4)" in answer
    else:
        res = a.ablate(0, ())
        assert f"Head {int(np.argmax(res.per_head)) + 1}: switching it off" in answer
        assert f"**{res.per_head.max():.1%}**" in answer


def test_the_sqrt_answer_compares_entropies():
    a = attention(d_model=256, n_heads=2)
    answer = STEPS[7].answer(a, 0)
    assert "√128" in answer and "nats" in answer
