"""Follow-ups differ by answer, not by position (issue 44, G2 and G6): on the settings that
showed the findings, every case `follow_up` offers has another right answer by meaning and
shows what it names; where no such case exists there is none."""

from __future__ import annotations

import pytest

from xattn.lesson import SHIPPED, shipped_lessons
from xattn.lesson.followup import cases, differs
from xattn.live.answers import class_step, follow_up


def offered(lesson, n: int) -> list:
    """Every case `follow_up` offers for step ``n``, one after another, as Told records."""
    asked, out = [], []
    while (k := follow_up(lesson, n, asked)[0]) and len(asked) <= len(cases(lesson.steps[n - 1])):
        asked.append(k)
        out.append(class_step(lesson, n, case=k)[1])
    return out


def word(told) -> str:
    return told.tokens[told.truth] if told.tokens else told.question.choices[told.truth]


@pytest.mark.parametrize(("lesson", "n"), [("cross-attention", 13), ("cross-attention", 6),
                                           ("short", 4)])
def test_a_token_follow_up_is_another_word(lesson, n):
    """Step 13 (every case answered `cat`), step 6 and short step 4 (the second `the` again):
    each offered case's word differs from the step's own; no case is the same word."""
    lesson = shipped_lessons()[lesson]
    _, first = class_step(lesson, n)
    if first.question.kind != "token":
        pytest.skip(f"step {n} asks {first.question.kind}")
    for then in offered(lesson, n):
        assert word(then) != word(first)
    for k in range(1, len(cases(lesson.steps[n - 1])) + 1):
        _, then = class_step(lesson, n, case=k)
        if word(then) == word(first):
            assert not differs(first, then)


def test_step_13_has_no_follow_up_when_every_case_answers_cat():
    _, first = class_step(SHIPPED, 13)
    words = {word(class_step(SHIPPED, 13, case=k)[1])
             for k in range(1, len(cases(SHIPPED.steps[12])) + 1)}
    assert words == {word(first)}
    case, why, differs_ = follow_up(SHIPPED, 13)
    assert (case, differs_) == (0, False) and "another right answer" in why


def test_step_12_follows_up_on_a_layer_the_model_has():
    """Step 12 shows layer 2 of a 2-layer model: its follow-up is layer 1 (named so, and
    labelled differently), never "layer 3" showing layer 2 again."""
    found = offered(SHIPPED, 12)
    assert [t.layer for t in found] == [0]
    k = follow_up(SHIPPED, 12)[0]
    assert cases(SHIPPED.steps[11])[k - 1].what == "layer 1"
    assert follow_up(SHIPPED, 12, [k])[0] == 0


def test_a_job_follow_up_differs_for_some_head_and_a_number_beyond_the_tolerance():
    _, first = class_step(SHIPPED, 12)
    assert not differs(first, first)
    _, then = class_step(SHIPPED, 12, case=follow_up(SHIPPED, 12)[0])
    assert differs(first, then)
    assert any(a.truth != b.truth for a, b in zip(first.parts, then.parts, strict=True))


def test_a_case_that_changes_an_argument_also_sets_the_page_it_draws():
    """Issue 44: after a step-5 follow-up the lecturer's page kept the old case's heatmaps:
    a case that changes an argument whose default is a page setting (step 5's seed, step
    10's link rule) sets that setting, so the page opens the new case."""
    from xattn.lesson.followup import case_step

    five = case_step(SHIPPED.steps[4], 1)
    assert dict(five.ask.args)["seed"] == five.state["seed"] == 1
    ten = case_step(SHIPPED.steps[9], 1)
    assert dict(ten.ask.args)["links"] == ten.state["links"] != "target_argmax"
    one = case_step(SHIPPED.steps[0], 1)                       # a page case: as before
    assert one.state["seed"] == 1 and dict(one.ask.args) == dict(SHIPPED.steps[0].ask.args)


def test_a_lessons_follow_ups_are_found_ahead_of_the_reveal(fresh_cache, monkeypatch):
    """The host page warms its lesson's follow-ups in a thread of their own, once per lesson:
    the run after a *Reveal* then computes no case (step 7's took 2 s on the click's path)."""
    import uuid

    from xattn.lesson import LESSONS, read_lesson
    from xattn.live import answers

    text = (LESSONS / "short.toml").read_text()
    first_three = "[[step]]".join(text.split("[[step]]")[:4])      # the poll and two computed
    lesson = read_lesson(first_three.replace('title = "Cross-attention in five questions"',
                                             f'title = "warm {uuid.uuid4().hex}"').encode(),
                         "warm")
    assert answers.warm_follow_ups(None) is None
    thread = answers.warm_follow_ups(lesson)
    thread.join(60)
    assert answers.warm_follow_ups(lesson) is thread                 # once per lesson

    def computed(*args, **kwargs):
        raise AssertionError("a follow-up's case was computed on the reveal's path")
    monkeypatch.setattr(answers, "prepared_attention", computed)
    found = [follow_up(lesson, n)[0] for n in range(1, len(lesson.steps) + 1)]
    assert found[:2] == [0, 1], found             # a poll has none; step 2 its first case
