"""Reading a user's sentence pair for the toy task: the pair, or a problem a student can act on."""

import pytest

from xattn.pairs import MAX_WORDS, Problem, gold_text, read_pair


def test_an_english_sentence_is_translated_and_typed_french_is_aligned():
    assert read_pair("THE Dog sleeps!", "").target == ("le", "chien", "dort")
    assert read_pair("the dog sleeps", "Le chien dort.").alignment == (0, 1, 2)
    assert read_pair("the cat sleeps", "le chien dort").alignment == (0, None, 2)


@pytest.mark.parametrize("src,tgt,level,words", [
    ("", "", "error", ["Type an English sentence"]),
    ("sees the the", "", "error", ["Cannot translate", "expected a determiner"]),
    ("the purple cat sleeps", "", "warning", ["English `purple`", "replace them"]),
    ("the cat sleeps", "le chein dort", "warning", ["French `chein` (did you mean `chien`?)",
                                                    "or empty the French box"]),
    (" ".join(["the cat sleeps"] * 9), "", "error", [f"at most {MAX_WORDS} words"]),
])
def test_problems_say_what_is_wrong_and_never_raise(src, tgt, level, words):
    problem = read_pair(src, tgt)
    assert isinstance(problem, Problem) and problem.level == level
    assert all(w in problem.message for w in words), problem.message


def test_the_gold_alignment_reads_as_code_spans():
    assert gold_text(read_pair("the red cat sleeps", "")) == (
        "`le` → `the` · `chat` → `cat` · `rouge` → `red` · `dort` → `sleeps`")
    assert "`chien` → ?" in gold_text(read_pair("the cat sleeps", "le chien dort"))
