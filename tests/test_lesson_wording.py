"""Every lesson step's text is true of the numbers and settings on screen, also under a link
that keeps settings of its own (issue 27's five cases): what a step says it needs, what it
says a head did, which head it asks about, and which way it asks to switch a toggle."""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_helpers import run_app

from xattn.lesson import STEPS
from xattn.pipeline import Settings, run
from xattn.sources import random_attention

pytestmark = pytest.mark.usefixtures("fresh_cache")


def page_text(at) -> str:
    return "\n".join(e.value for kind in ("markdown", "info", "caption", "warning")
                     for e in getattr(at, kind))


def step_text(at) -> str:
    """The step's own Markdown: title, paragraph, look at, question and answer."""
    return "\n".join(m.value for m in at.markdown if not m.value.startswith("<style>"))


def test_masking_with_a_sentence_of_its_own_says_what_is_missing_not_other_weights():
    """lesson=3&src=...: random weights without a mask. The step asked for "Weights: random"
    while the weights were random; what is missing is the padding mask."""
    at = run_app({"view": "Lesson", "lesson": "3", "src": "the black cat sat on the rug"})
    assert not at.exception
    text = page_text(at)
    assert "Random weights" in text                      # the weights are random ...
    assert "choose *Weights: random*" not in text        # ... so never ask for them
    assert "No source token is masked here: choose *Masking: padding*" in text


def test_the_sqrt_step_says_nearly_all_the_weight_only_where_it_is():
    """lesson=9&d_model=64&heads=2: the undivided row's largest weight is 0.463."""
    a = random_attention(run(Settings(d_model=64, n_heads=2)))
    off = a.layers.trace(0, False).weights[0, 0]
    on = a.layers.trace(0, True).weights[0, 0]
    told = STEPS[8].tell(a, 0)
    assert off.max() < 0.9
    assert "nearly all the weight" not in told.answer.replace("no one token takes nearly all",
                                                             "")
    assert f"goes from {on.max():.3f} to {off.max():.3f}" in told.answer
    assert "no one token takes nearly all of it" in told.answer
    at = run_app({"view": "Lesson", "lesson": "9", "d_model": "64", "heads": "2"})
    assert f"to {off.max():.3f}" in step_text(at)
    # The step's own setting (d_head 128) does saturate, and says so with its number.
    a = random_attention(run(Settings(d_model=256, n_heads=2)))
    top = a.layers.trace(0, False).weights[0, 0].max()
    told = STEPS[8].tell(a, 0)
    assert top >= 0.9 and f"to {top:.3f}. The softmax saturates" in told.answer


def test_a_trained_step_on_other_weights_says_the_paragraph_is_not_about_them():
    """lesson=6&tr_src=...: the link keeps its own settings (random weights) under "Trained
    heads align words"; the page says the paragraph describes the step's weights and offers
    to open them."""
    at = run_app({"view": "Lesson", "lesson": "6", "tr_src": "the red dog sees the cat"})
    assert not at.exception
    text = step_text(at)
    assert "**Not this step's setting.** The step is written for the toy task's trained " \
           "weights" in text and "shows random weights" in text
    assert text.index("Not this step's setting") < text.index("The same module trained")
    at.button(key="lesson_replan_go").click().run()
    assert not at.exception
    assert "Not this step's setting" not in step_text(at)
    assert any("Trained on the toy task" in i.value for i in at.info)   # the banner


def test_step_one_under_four_heads_says_which_head_it_asks_about():
    """lesson=1&tgt=le chien dort: four heads under "One head"; the text, the question and
    the answer name head 1."""
    at = run_app({"view": "Lesson", "lesson": "1", "tgt": "le chien dort"})
    text = step_text(at)
    assert "**Look at:** The row of `le` in head 1's heatmap." in text
    assert "look at most in head 1, and with what weight?" in text
    assert re.search(r"In head 1, `le` looks most at `\w+` \(0\.\d{3}\)", text)
    assert any("This page shows four heads: the step asks about head 1" in c.value
               for c in at.caption)
    one = run_app({"view": "Lesson", "lesson": "1"})            # the step's own: one head
    text = step_text(one)
    assert "in the heatmap." in text and "head 1" not in text.split("**Question")[0]


def test_the_sqrt_step_asks_one_direction_of_the_toggle():
    """Step 9 asked to switch the division "off and on" and then which way the entropy goes;
    it asks to switch it off, as its prediction does."""
    step = STEPS[8]
    assert "off and on" not in step.question and "on and off" not in step.look
    assert "Switch the division off." in step.question
    a = random_attention(run(Settings(d_model=256, n_heads=2)))
    told = step.tell(a, 0)
    assert told.prompt.startswith("Switch the division off:")
    h_on, h_off = (re.findall(r"\*\*([\d.]+)\*\*", told.answer)[k] for k in (0, 1))
    assert told.truth == ("It goes down" if float(h_off) < float(h_on) else "It goes up")


def test_layers_step_counts_the_model_s_heads():
    """Step 10 said "four heads each" by hand; it says the model's number."""
    from test_lesson import shipped_attention

    a = shipped_attention()
    text = STEPS[9].render(STEPS[9].tell(a, 0))[0]
    assert f"decoder layers of {['zero', 'one', 'two', 'three', 'four'][a.n_heads]} heads each" \
        in text
    assert np.isfinite(a.weights).all()


def test_wait_k_says_no_row_is_restricted_when_k_covers_the_sentence():
    """Issue 44, G8: step 4's new case k = 7 on 7 source tokens restricts no row; the answer
    no longer says each step looks one token further."""
    from xattn.lesson import SHIPPED
    from xattn.lesson.followup import cases
    from xattn.live.answers import class_step

    k = next(n for n, c in enumerate(cases(SHIPPED.steps[3]), 1) if c.what.startswith("k = 7"))
    _, told = class_step(SHIPPED, 4, case=k)
    assert "No row is restricted here" in told.answer
    assert "one source token further" not in told.answer
    _, told = class_step(SHIPPED, 4)                    # k = 2: rows wait
    assert "one source token further" in told.answer and "No row" not in told.answer


NUMBER = r"[−-]?\d+\.\d+"


def test_no_answer_claims_a_change_that_reads_0_000_against_0_000():
    """Issue 44, G9, on step 13's own setting and every new case of it: no "−0.000" or
    "-0.000", no "costs 0.000", no "from X to X" with equal figures; a change below 0.0005
    is said as none at 3 decimals (case 1: masking `</s>`, −0.000012)."""
    from xattn.lesson import SHIPPED
    from xattn.lesson.followup import cases
    from xattn.live.answers import class_step

    for case in range(len(cases(SHIPPED.steps[12])) + 1):
        _, told = class_step(SHIPPED, 13, case=case)
        text = told.answer
        assert not re.search(r"[−-]0\.0+\b(?!\d)", text), text
        assert not re.search(r"costs (only )?0\.0+\b(?![\d])", text), text
        for before, after in re.findall(rf"from ({NUMBER}) to ({NUMBER})", text):
            assert before != after, text
    _, told = class_step(SHIPPED, 13, case=1)
    assert "but masking it changes nothing at 3 decimals" in told.answer


def test_a_masked_token_s_weight_is_spelled_as_one():
    """Issue 44, G9: "The masked token' weight" read wrong for one masked token."""
    from xattn.lesson import SHIPPED
    from xattn.live.answers import class_step

    _, told = class_step(SHIPPED, 3)
    assert "The masked token's weight went to the others" in told.answer
    assert "token' weight" not in told.answer
