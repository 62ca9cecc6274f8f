"""xattn/lesson/_budget.py: a lesson file's TOML is refused before ``tomllib`` parses it when
it asks more than a lesson needs (a key of 30,000 dotted parts took a process to 3.6 GB of
Python objects and 16 s; nested arrays raised RecursionError). Each crafted file is refused in
one line that says where, what was expected and what was found, and reading it allocates at
most a little (tracemalloc's peak), so the refusal comes before the costly work."""

from __future__ import annotations

import tracemalloc

import pytest

from xattn.lesson import LessonError, read_lesson
from xattn.lesson._budget import MAX_KEY_PARTS, MAX_NESTING, check_budget
from xattn.lesson.lessonfile import MAX_LESSON_BYTES, MAX_STEPS
from xattn.live.link import lesson_setting

HEAD = 'title = "Mine"\n'
STEP = '[[step]]\ntitle = "One"\n[step.question]\ncomputed = "strongest_source"\n'


def _fill(prefix: str, unit: str, suffix: str) -> str:
    """``prefix`` + as many ``unit`` as fit in a lesson file + ``suffix``."""
    room = MAX_LESSON_BYTES - len(prefix) - len(suffix) - 1
    return prefix + unit * (room // len(unit)) + suffix


HOSTILE = {   # the shapes that cost tomllib most per byte, each as large as an upload may be
    "dotted key": _fill(HEAD, "a.", "a = 1\n"),
    "dotted key in an inline table": _fill(HEAD + "about = {", "a.", "a = 1}\n"),
    "table header": _fill(HEAD + "[", "a.", "a]\n"),
    "array of tables header": _fill(HEAD + "[[", "a.", "a]]\n"),
    "nested arrays": _fill(HEAD + "about = ", "[", "\n"),
    "nested inline tables": _fill(HEAD + "about = ", "{a=", "\n"),
    "steps": _fill(HEAD, STEP, ""),
}


def _read_peak(text: str) -> tuple[list[str], int]:
    """The problems ``read_lesson`` raises for ``text`` and the peak of what it allocated
    (bytes, tracemalloc)."""
    tracemalloc.start()
    try:
        with pytest.raises(LessonError) as caught:
            read_lesson(text, "hostile", page=lesson_setting)
        return caught.value.problems, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_lesson_file_is_refused_in_one_line_before_it_is_parsed(name):
    text = HOSTILE[name]
    assert len(text.encode()) <= MAX_LESSON_BYTES           # an upload the page takes
    found, peak = _read_peak(text)
    assert len(found) == 1, found
    assert found[0].startswith("line 2: expected") or found[0].startswith(
        f"expected at most {MAX_STEPS} steps"), found
    assert "found" in found[0]
    assert peak < 1_000_000, f"{peak:,} bytes allocated to refuse {name}"


def test_the_dotted_key_is_what_tomllib_pays_for_quadratically():
    """The cause, measured with tracemalloc: 2,000 parts are below the 65 kB a file may be,
    yet tomllib alone allocates megabytes for them (n² prefix tuples), 2x the parts about 4x
    (the 30,000 parts of the issue's file: 3.6 GB)."""
    import tomllib

    def peak(parts: int) -> int:
        tracemalloc.start()
        try:
            tomllib.loads("a." * parts + "a = 1\n")
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    small, large = peak(1000), peak(2000)
    assert large > 10_000_000 and large > 3 * small, (small, large)


@pytest.mark.parametrize("text", [
    'a.b.c.d.e.f.g.h = 1\n',                                   # 8 parts: the most
    'src = "a.b.c.d.e.f.g.h.i.j.k.l"\n',                       # dots in a string
    "src = 'a.b.c.d.e.f.g.h.i.j.k.l'\n",
    'text = """\n[a.b.c.d.e.f.g.h.i.j]\n"""\n',                 # a header in a string
    "x = 1.5\ny = 1979-05-27T07:32:00.999\nz = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5]\n",
    "x = " + "[" * MAX_NESTING + "]" * MAX_NESTING + "\n",   # as deep as allowed
    'x = [ # a comment with a.b.c.d.e.f.g.h.i.j and [[[[[[[[[\n  1, 2]\n',
    'x = "a \\" quote and [[[[[[[[[["\n',
    'x = [\n{a.b = 1},\n{c.d = 2}]\n' + "\n[[step]]\n" * MAX_STEPS,
])
def test_what_a_lesson_may_write_passes(text):
    assert check_budget(text, MAX_STEPS) is None


@pytest.mark.parametrize("text, line, expected", [
    ("a" + ".a" * MAX_KEY_PARTS + " = 1\n", 1, "a key or [table] of at most 8 dotted parts"),
    ('x = 1\n\n["a"' + ".b" * MAX_KEY_PARTS + "]\n", 3, "a key or [table] of at most 8"),
    ('x = """\n\n"""\ny = ' + "[" * (MAX_NESTING + 1) + "\n", 4, "values nested at most 8 deep"),
    ("x = [\n[\n" + "{a = [" * 4 + "\n", 3, "values nested at most 8 deep"),
])
def test_the_line_and_the_bound_are_said(text, line, expected):
    said = check_budget(text, MAX_STEPS)
    assert said.startswith(f"line {line}: expected {expected}"), said


def test_more_step_tables_than_a_lesson_holds_are_counted_before_parsing():
    text = HEAD + STEP * (MAX_STEPS + 1)
    assert check_budget(text, MAX_STEPS) == (
        f"expected at most {MAX_STEPS} steps (a room asks one question a step), found "
        f"{MAX_STEPS + 1} [[step]] tables")
    assert read_lesson(HEAD + STEP * MAX_STEPS, "full", page=lesson_setting).steps
