"""The guided lesson: every step's answer is computed from the weights it shows."""

from dataclasses import replace

import numpy as np
import pytest

from xattn.lesson import STEPS, verdict
from xattn.live.link import REGISTRY
from xattn.pipeline import Settings, run
from xattn.sources import random_attention
from xattn.ui.page import VIEWS


def test_the_lesson_has_six_to_sixteen_steps_with_a_question_each():
    assert 6 <= len(STEPS) <= 16                 # a room holds 16 steps
    for step in STEPS:
        assert step.title and step.text and step.look and step.question.endswith("?")
        assert set(step.state) <= set(REGISTRY), set(step.state) - set(REGISTRY)
        assert step.state.get("view", "Heads") in VIEWS


def attention(**changes):
    return random_attention(run(replace(Settings(), **changes)))


def answer(k: int, a, layer: int = 0) -> str:
    return STEPS[k].tell(a, layer).answer


def test_answers_follow_the_numbers_not_a_script():
    one = answer(0, attention(n_heads=1))
    other = answer(0, attention(n_heads=1, seed=5))
    assert one != other                                     # another seed, another answer
    a = attention(n_heads=1)
    j = int(np.argmax(a.layer(0)[0, 1]))                   # row of "chat"
    assert f"`{a.src_tokens[j]}`" in one and f"({a.layer(0)[0, 1, j]:.3f})" in one


def test_rows_sum_to_one_is_added_up_from_the_row():
    a = attention()
    text = answer(1, a)
    row = a.layer(0)[1, 2]                                  # head 2, "noir"
    assert " + ".join(f"{w:.3f}" for w in row) in text and "**1.000**" in text


def test_the_masking_answers_read_the_mask():
    a = attention(mask_mode="padding", padded=(6,))
    assert "`mat` gets **0.000**" in answer(2, a)
    a = attention(mask_mode="wait-k", wait_k=2)
    assert "may see `the` (0), `black` (2 tokens)" in answer(3, a)


def test_the_seed_answer_compares_the_steps_seed_with_the_next_whatever_the_page_shows():
    """Step 5 asks "seed 0 → 1"; doing what *Look at* says (the page at seed 1) must not turn
    the question into "1 → 2" (an audit found it did): both seeds are counted as they are."""
    first, then = (run(Settings(n_heads=8, seed=s)).weights for s in (0, 1))
    moved = int((first.argmax(-1) != then.argmax(-1)).sum())
    for seed_on_page in (0, 1):                           # before and after the change
        told = STEPS[4].tell(attention(n_heads=8, seed=seed_on_page), 0)
        assert f"**{moved} of 64**" in told.answer and "seed 1 instead of 0" in told.answer
        text, look, question = STEPS[4].render(told)
        assert "from 0 to 1" in question and "eight heads" in text
        assert [c.key[-1] for c in told.charts] == ["head 1, seed 0", "head 1, seed 1"]


def test_the_seed_answer_counts_rows_that_moved_and_names_both_seeds():
    a = attention(n_heads=8, seed=5)                        # a lesson file's step at seed 5
    other = run(Settings(n_heads=8, seed=6)).weights
    moved = int((a.layer(0).argmax(-1) != other.argmax(-1)).sum())
    from xattn.lesson.tell import seed
    told = seed(a, 0, seed=5)
    assert f"**{moved} of 64**" in told.answer and "seed 6 instead of 5" in told.answer
    assert "seed 6 instead of 5" in told.prompt and told.words["next"] == "6"


def trained_attention_of(trained, sentence="the red cat sees the dog"):
    from xattn.alignment import evaluate
    from xattn.corpus import translate
    from xattn.sources import trained_attention

    return trained_attention(evaluate(trained, 1.0), translate(sentence))


def test_the_trained_steps_answer_from_the_trained_weights(trained):
    a = trained_attention_of(trained)
    text = answer(5, a)
    assert text.count("- Head") == 4 and "`le` (0)" in text and "`le` (4)" in text
    res = a.layers.ablate(0, ())
    text = answer(7, a)
    assert f"Head {int(np.argmax(res.per_head)) + 1}: switching it off" in text
    assert f"**{res.per_head.max():.1%}**" in text
    told = STEPS[6].tell(a, 0)                              # trained beside its random start
    assert told.truth == "A: the trained weights" and "before training" in told.answer


def test_the_sqrt_answer_compares_entropies():
    a = attention(d_model=256, n_heads=2)
    told = STEPS[8].tell(a, 0)
    assert "√128" in told.answer and "nats" in told.answer and told.truth == "It goes down"
    assert "here 128" in STEPS[8].render(told)[0]
    assert "saturates" in told.answer


def test_the_sqrt_answer_says_saturation_only_where_the_entropy_fell():
    a = attention(d_model=8, n_heads=8)                 # d_head 1: the division changes nothing
    told = STEPS[8].tell(a, 0)
    assert told.truth == "It stays the same" and "√1" in told.answer
    assert "saturates" not in told.answer and "hardly changes" in told.answer


def shipped_attention():
    from xattn.encdec import cross_attention, load_encdec
    from xattn.sources import model_attention

    model = load_encdec()
    return model_attention(cross_attention(model, "the red cat sees the dog"), loaded=model)


def test_which_layer_aligns_is_read_from_the_held_out_scores():
    from xattn.alignlab import score_heads

    a = shipped_attention()
    told = STEPS[9].tell(a, 0)
    scores = score_heads(a.heldout(False))
    assert told.truth == f"layer {scores.best_layer + 1}"
    assert f"AER layer 1: {scores.layer_aer[0]:.3f}" in told.answer
    words = ["zero", "one", "two", "three", "four"]
    assert f"{words[a.n_layers]} decoder layers of {words[a.n_heads]} heads each" in \
        STEPS[9].render(told)[0]


def test_which_head_learns_first_is_read_from_the_time_lapse(trained):
    a = trained_attention_of(trained)
    told = STEPS[10].tell(a, 0)
    onset = trained.timelapse.onset(0.5)
    first = min((s, h) for h, s in enumerate(onset.tolist()) if s >= 0)[1]
    assert told.truth == f"head {first + 1}" and f"**Head {first + 1}**" in told.answer


# ---------------------------------------------------------------- predict, then see
@pytest.mark.parametrize("k", range(len(STEPS)))
def test_every_step_asks_a_prediction_whose_truth_is_an_accepted_answer(k, trained):
    """The class predicts before the numbers are shown: a tap on a token, a number or a
    choice, and the truth is one of the answers the question accepts."""
    step = STEPS[k]
    a = (trained_attention_of(trained) if step.state.get("weights") == "trained" else
         shipped_attention() if step.state.get("weights") == "model" else
         attention(**{"padding": dict(mask_mode="padding", padded=(6,)),
                      "wait-k": dict(mask_mode="wait-k", wait_k=2)}.get(
             step.state.get("mask"), {}), n_heads=step.state.get("heads", 4),
                   d_model=step.state.get("d_model", 32)))
    told = step.tell(a, step.layer(a.n_layers))
    q = told.question
    assert q is not None and told.prompt
    assert q.decode(q.encode(told.truth)) == told.truth            # the store accepts it
    if told.parts:                                  # several predictions at once: one a head
        assert q.kind == "parts" and q.rows == tuple(p.name for p in told.parts)
        assert told.truth == tuple(p.truth for p in told.parts)
        for part in told.parts:
            assert part.question.decode(part.question.encode(part.truth)) == part.truth
        assert verdict(told, told.truth).startswith(
            f"**{len(told.parts)} of {len(told.parts)} right**")
        return
    if q.kind == "links":                           # the gold alignment, and one link off
        assert verdict(told, told.truth).startswith("**Right: the gold alignment exactly**")
        (t, s), *rest = told.truth
        off = ((t, (s + 1) % len(q.choices)), *rest)
        assert verdict(told, off).startswith("**Your AER ")
        return
    assert verdict(told, told.truth).startswith("**Right**")
    if q.kind != "number":
        wrong = next(o for o in q.options() if o != told.truth and (
            q.kind != "token" or told.tokens[o] != told.tokens[told.truth]))
        assert verdict(told, wrong).startswith("**Not this time**")


def test_a_number_prediction_says_how_far_off_it_is():
    told = STEPS[1].tell(attention(), 0)
    assert verdict(told, 0.75) == "**Off by 0.25**: you said 0.75; the page shows 1.000."
    assert verdict(told, 1.004).startswith("**Right**")


def test_a_repeated_word_is_named_with_its_position():
    told = STEPS[0].tell(attention(n_heads=1), 0)
    assert told.question.choices[0] == "the (0)" and told.question.choices[5] == "the (5)"
    wrong_place = 0 if told.truth == 5 else 5
    if told.truth in (0, 5):
        assert "the wrong place" in verdict(told, wrong_place)


def test_the_text_adapts_when_the_page_does_not_fit_the_step():
    a = attention(tgt="un chien noir dort", n_heads=2)    # no "chat"; two heads, not one
    told = STEPS[0].tell(a, 0)
    assert "no *chat*" in told.note and "`un`" in told.note
    text, look, question = STEPS[0].render(told)
    assert "`un`" in question and "chat" not in question
    assert "With two heads" in STEPS[1].render(STEPS[1].tell(a, 0))[0]


def test_three_decimals_that_do_not_add_up_to_one_are_explained():
    for seed in range(40):                         # some row's rounded weights add to 1.001
        a = attention(seed=seed)
        row = a.layer(0)[1, 2]
        if abs(sum(round(float(w), 3) for w in row) - 1) > 5e-4:
            assert "not exactly 1: each is rounded" in answer(1, a)
            break
    else:
        pytest.fail("no seed of 40 gave a row whose rounded weights miss 1")


def test_a_tie_makes_each_tied_answer_right():
    from xattn.classroom import Question
    from xattn.lesson import Told

    told = Told({}, "", question=Question("choice", ("layer 1", "layer 2", "layer 3")),
                truth="layer 1", also=("layer 3",))
    assert verdict(told, "layer 3").startswith("**Right**")
    assert verdict(told, "layer 1").startswith("**Right**")
    assert "a tie: `layer 1`, `layer 3`" in verdict(told, "layer 2")


def test_each_head_s_job_is_read_from_its_measures():
    """Step 12: one part per head of the layer on screen, its truth the job of
    ``xattn.jobs`` (re-derived in tests/test_jobs.py), the table and a verdict per head; the
    answer says which sentences and which rule give each label, and opens with a sentence
    (the host's room page puts "**The answer.**" before it: a table first would be pipes)."""
    from xattn.jobs import head_jobs
    from xattn.markup import to_html

    a = shipped_attention()
    layer = a.n_layers - 1
    told = STEPS[11].tell(a, layer)
    assert STEPS[11].layer(a.n_layers) == layer                 # what a room asks about too
    jobs = head_jobs(a, layer)
    assert [(p.name, p.truth, p.also) for p in told.parts] == [
        (j.name, j.job, j.close) for j in jobs]
    b = jobs[0].basis.gold_in_place
    for j in jobs:
        tell = [k for k, ok in enumerate(j.scores.values()) if ok is not None]
        assert len(tell) == 4 and j.n_tell == 434                 # the moved words
        assert (f"| {j.name} | {j.scores['sink']:.2f} | {j.spread:.2f} | {j.offset:+d} | "
                f"{j.n_tell} | {j.tell_in_place:.2f} | {j.tell_on_gold:.2f} | **{j.job}**"
                ).replace("-", "−") in told.answer
    assert told.answer.startswith("Measured on the 256 held-out sentences (1,379 target words), "
                                  "not on the pair on screen: the labels are the same")
    assert f"{100 * b:.1f} % of these words have their gold word in their own place" in \
        told.answer and "a head doing only the other job scores 0 there" in told.answer
    assert "`</s>` counted as a column" in told.answer and "within 0.05" in told.answer
    for shown in (told.answer, f"**The answer.** {told.answer}"):
        html = to_html(shown)
        assert html.count("<table>") == 1 and "|" not in html
    text, look, question = STEPS[11].render(told)
    assert f"of layer {layer + 1}?" in question and "the four heads" in question
    wrong = next(job for job in ("sink", "spread out", "follows position")
                 if job != told.parts[0].truth and job not in told.parts[0].also)
    said = {told.parts[0].name: wrong, told.parts[1].name: told.parts[1].truth}
    assert verdict(told, said) == (
        f"**1 of 2 right** (2 not guessed): {told.parts[0].name}: you said `{wrong}`, the "
        f"measures say `{told.parts[0].truth}`.")


def test_each_head_s_job_says_when_it_is_measured_on_the_pair_on_screen():
    """Weights that cannot run on other sentences: the answer says the labels come from the
    pair on screen and that aligning is unknown without gold."""
    told = STEPS[11].tell(attention(n_heads=2), 0)
    assert told.answer.startswith("Measured on the pair on screen (8 target words): these "
                                  "weights cannot run on other sentences")
    assert "**aligns words** is unknown (–)" in told.answer
    assert "| head 1 |" in told.answer and "aligns words" not in told.truth


def test_is_attention_the_explanation_is_read_from_a_masked_pass():
    """Step 13: the truth is the source word whose masking (a separate pass in
    tests/test_effects.py) costs `chat` most; the answer says where attention disagrees."""
    from xattn.encdec import load_encdec
    from xattn.encdec.effects import effects

    a = shipped_attention()
    told = STEPS[12].tell(a, 0)
    model = load_encdec()
    e = effects(model, model.tokenizer.encode("the red cat sees the dog"),
                model.tokenizer.encode(a.meta.tgt_text, side="target"), 1)
    assert told.truth == int(np.argmax(e.drop)) and told.tokens[told.truth] == "cat"
    assert "**They disagree**" in told.answer and "`</s>`" in told.answer
    # 0.000085 would read 0.000 at three decimals: both get the digits that show them
    assert f"falls from {e.p:.4f} to {e.masked[told.truth]:.4f}" in told.answer
    assert e.masked[told.truth] < 0.0005 and f"{e.masked[told.truth]:.4f}" != "0.0000"
    assert len(told.charts) == 2
    figure = told.charts[0].make(1.0)
    np.testing.assert_allclose(figure.data[1].y, e.drop)
    np.testing.assert_allclose(figure.data[0].y, e.attention[-1].mean(axis=0))
    assert "needs other weights" not in told.answer
    from xattn.lesson import missing
    assert "Weights: model" in missing(STEPS[12], attention())         # random: says what
