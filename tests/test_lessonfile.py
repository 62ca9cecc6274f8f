"""xattn/lesson/lessonfile.py: a lesson as a TOML file, checked with one line per problem (its
line in the file, what was expected and what was found), and carried as canonical JSON."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xattn.lesson import LESSONS, Lesson, LessonError, read_lesson, shipped_lessons
from xattn.lesson.lessonfile import MAX_LESSON_BYTES
from xattn.live.link import lesson_setting

ROOT = Path(__file__).resolve().parent.parent


def docs_example() -> str:
    """The complete example of docs/lesson-files.md, as the docs show it."""
    text = (ROOT / "docs" / "lesson-files.md").read_text()
    return re.search(r"```toml\n(.*?)```", text, re.S).group(1)


def test_the_docs_example_is_a_lesson_of_three_kinds_of_question():
    lesson = read_lesson(docs_example(), "seminar", page=lesson_setting)
    assert lesson.title == "Attention in my seminar" and lesson.minutes == 40
    kinds = [s.ask.computed or s.ask.own.kind for s in lesson.steps]
    assert kinds == ["strongest_source", "choice", "masked_share", "poll"]
    first = lesson.steps[0]
    assert first.state == {"src": "the old man reads the paper",
                           "tgt": "le vieil homme lit le journal", "heads": 2, "seed": 7,
                           "view": "Heads"}
    assert dict(first.ask.args) == {"target": "homme", "head": 2}
    assert lesson.steps[2].state["pad"] == ("5: paper",)
    assert lesson.steps[3].ask.own.answer is None                      # a poll
    assert "\n" not in first.text          # the author's wrapping undone: one paragraph


def test_a_lesson_travels_as_json_and_comes_back_the_same():
    for lesson in [*shipped_lessons(page=lesson_setting).values(),
                   read_lesson(docs_example(), "seminar", page=lesson_setting)]:
        back = Lesson.from_json(lesson.to_json(), page=lesson_setting)
        assert back.to_json() == lesson.to_json() and back.digest == lesson.digest
        assert [s.state for s in back.steps] == [s.state for s in lesson.steps]
        assert [s.ask for s in back.steps] == [s.ask for s in lesson.steps]
        assert back.name == lesson.name


def test_the_shipped_lessons_are_the_long_one_a_fifty_minute_one_and_another_language():
    lessons = shipped_lessons(page=lesson_setting)
    assert list(lessons) == ["cross-attention", "en-de", "short"]
    assert len(lessons["cross-attention"].steps) == 14
    short = lessons["short"]
    assert short.minutes == 50 and len(short.steps) == 5
    assert all(s.ask is not None for s in short.steps)            # five questions
    en_de = lessons["en-de"]
    assert {s.state["model"] for s in en_de.steps} == {"Helsinki-NLP/opus-mt-en-de"}
    assert any(s.ask.own is not None for s in en_de.steps)         # a question of its own
    for lesson in lessons.values():
        for step in lesson.steps:
            assert step.title and step.text and step.look and step.question
            assert step.line > 0


def problems(text: str, page=lesson_setting) -> list[str]:
    with pytest.raises(LessonError) as caught:
        read_lesson(text, "mine", page=page)
    return caught.value.problems


STEP = 'title = "Mine"\n[[step]]\ntitle = "One"\n'


@pytest.mark.parametrize("text, expected", [
    ('title = "Mine"\n', "`step`: expected one or more [[step]] tables, found none"),
    (STEP + "heads = 3\n", "line 4: step 1, `heads`: unknown key 'heads': expected one of "),
    (STEP + "[step.page]\nheads = 0\n",
     "line 5: step 1, `page.heads`: expected a whole number from 1 to 16 (the number of "
     "heads), found 0"),
    (STEP + "[step.page]\nheads = true\n",
     "line 5: step 1, `page.heads`: expected the number of heads, not true or false"),
    (STEP + "[step.page]\nroom = \"ABCDEF\"\n",
     "line 5: step 1, `page.room`: expected one of the page's settings"),
    (STEP + "[step.page]\nweights = \"magic\"\n",
     "line 5: step 1, `page.weights`: expected one of random, trained, model, file"),
    (STEP + "[step.page]\nmodel = \"no-such-model\"\n",
     "line 5: step 1, `page.model`: expected a model this server offers"),
    (STEP + "[step.question]\ncomputed = \"guess\"\n",
     "line 5: step 1, `question.computed`: expected one of strongest_source, row_sum"),
    (STEP + "[step.question]\ncomputed = \"row_sum\"\nhead = \"two\"\n",
     "line 6: step 1, `question.head`: expected a whole number from 1 (the head asked about, "
     "from 1), found 'two'"),
    (STEP + "[step.question]\ncomputed = \"row_sum\"\nword = \"x\"\n",
     "line 6: step 1, `question.word`: unknown key 'word': expected one of computed, target, "
     "head"),
    (STEP + "[step.question]\nkind = \"choice\"\nprompt = \"Tap\"\noptions = [\"a\", \"b\"]\n"
            "answer = \"c\"\n",
     "line 8: step 1, `question.answer`: expected one of the options, found 'c'"),
    (STEP + "[step.question]\nkind = \"poll\"\nprompt = \"Tap\"\noptions = [\"a\", \"b\"]\n"
            "answer = \"a\"\n",
     "line 8: step 1, `question.answer`: expected no answer (a poll has no right answer"),
    (STEP + "[step.question]\nkind = \"choice\"\nprompt = \"Tap\"\noptions = [\"a\", \"a\"]\n"
            "answer = \"a\"\n",
     "line 7: step 1, `question.options`: expected 2 to 8 different texts"),
    (STEP + "[step.question]\nkind = \"number\"\nprompt = \"Tap\"\nlow = 0\nhigh = 1\n"
            "answer = 2\n",
     "line 9: step 1, `question.answer`: expected low < high and the answer between them"),
    (STEP + "[step.question]\nkind = \"essay\"\n",
     "line 5: step 1, `question.kind`: expected one of choice, poll, number, found 'essay'"),
    (STEP + "[step.question]\nprompt = \"Tap\"\n",
     "step 1, [step.question]: expected `computed = ...`"),
    (STEP + 'text = "see [this](https://evil.example)"\n',
     "line 4: step 1, `text`: expected the lesson's Markdown (bold, italics, code, "
     "$formulas$, lists, tables), found a link, image, address or HTML"),
    (STEP + 'look = "<img src=x onerror=alert(1)>"\n', "line 4: step 1, `look`: expected the "
                                                       "lesson's Markdown"),
    (STEP + 'chart = "pie"\n', "line 4: step 1, `chart`: expected one of head, heads,"),
    ('title = "Mine"\nminutes = -5\n[[step]]\ntitle = "One"\n',
     "line 2: `minutes`: expected a whole number of minutes from 1 to 600, found -5"),
    ('title = "Mine"\n[[step]]\ntitle = "One"\ntext = "unclosed\n',
     "line 4: not TOML (illegal character"),
    ('title = "Mine"\ncheck = [1, 1]\n[[step]]\ntitle = "One"\n',
     "line 2: `check`: expected 1 to 5 different step numbers, found [1, 1]"),
    ('title = "Mine"\ncheck = [1, 7]\n[[step]]\ntitle = "One"\n[step.question]\n'
     'computed = "row_sum"\n',
     "line 2: `check`: expected steps of this lesson (1 to 1) whose question has a right "
     "answer, found 7"),
    (STEP * 1 + "".join(f'[[step]]\ntitle = "{k}"\n' for k in range(16)),
     "expected at most 16 steps (a room asks one question a step), found 17"),
])
def test_each_problem_is_one_line_with_its_line_what_was_expected_and_what_was_found(
        text, expected):
    found = problems(text)
    assert any(p.startswith(expected) or expected in p for p in found), found


def test_a_check_asks_its_steps_before_and_after_the_lesson():
    lesson = read_lesson(docs_example().replace("minutes = 40", "minutes = 40\ncheck = [1, 3]"),
                         "checked", page=lesson_setting)
    titles = [s.title for s in lesson.steps]
    assert titles[:2] == ["Before the lesson: One head on our sentence",
                          "Before the lesson: Masking a word"]
    assert titles[-2:] == ["After the lesson: One head on our sentence",
                           "After the lesson: Masking a word"]
    assert len(lesson.steps) == 8 and lesson.checks() == [(1, 7), (2, 8)]
    assert [lesson.step_number(n) for n in range(1, 9)] == [1, 3, 1, 2, 3, 4, 1, 3]
    assert lesson.steps[0].ask == lesson.steps[2].ask == lesson.steps[6].ask
    assert Lesson.from_json(lesson.to_json(), page=lesson_setting).checks() == lesson.checks()
    poll = docs_example().replace("minutes = 40", "minutes = 40\ncheck = [4]")
    assert "whose question has a right answer, found 4" in problems(poll)[0]


def test_a_code_span_may_hold_an_address_and_markup_stays_its_characters():
    lesson = read_lesson(STEP + 'text = "see `https://example.org` and `<b>`"\n', "mine")
    assert lesson.steps[0].text == "see `https://example.org` and `<b>`"


def test_every_problem_is_said_at_once():
    found = problems(STEP + "heads = 3\n[step.page]\nheads = 0\nseed = -1\n")
    assert len(found) == 3, found


def test_sizes_are_checked_before_anything_is_parsed():
    big = "# " + "x" * MAX_LESSON_BYTES + "\n" + STEP
    assert problems(big)[0].startswith(f"a lesson file holds at most {MAX_LESSON_BYTES:,} bytes")
    assert problems(big.encode())[0].startswith("a lesson file holds at most")
    assert problems(b"title = \"\xff\"")[0] == "a lesson file is UTF-8 text; byte 9 is not"
    with pytest.raises(TypeError, match="takes the file's text"):
        read_lesson(3)


def test_a_lesson_json_that_is_not_a_lesson_is_refused_in_words():
    for bad in ("", "[]", '{"title": 3}', "x" * (MAX_LESSON_BYTES + 1)):
        with pytest.raises(LessonError):
            Lesson.from_json(bad)


def test_the_shipped_files_are_the_lessons_the_library_reads():
    assert sorted(f.stem for f in LESSONS.glob("*.toml")) == sorted(shipped_lessons())


@pytest.mark.parametrize("question", [
    'kind = "choice"\nprompt = "Tap."',                              # options missing
    'kind = "number"\nprompt = "Type."',                             # range missing
    'kind = "choice"\nprompt = "Tap."\noptions = ["a", "b"]',        # answer missing
    'computed = "strongest_source"\ntarget = "chat"\nhead = 1\nlinks = "x"'])
def test_a_missing_key_is_said_as_missing_never_found_none(question):
    """Issue 44: a lesson file's problems said "found None" for a key that is not there."""
    text = ('title = "x"\n[[step]]\ntitle = "a"\ntext = "t"\nlook = "l"\nask = "q?"\n'
            f"[step.question]\n{question}\n")
    with pytest.raises(LessonError) as err:
        read_lesson(text, "x", page=lesson_setting)
    assert "None" not in str(err.value), str(err.value)
