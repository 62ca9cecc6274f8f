"""tokenize: the three modes, Unicode, special tokens, errors."""

import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xattn import tokenize


@pytest.mark.parametrize("text,mode,expected", [
    ("The cat, the hat!", "words", ["The", "cat", ",", "the", "hat", "!"]),
    ("le chat noir s'est assis", "words", ["le", "chat", "noir", "s'est", "assis"]),
    ("Hello,world", "whitespace", ["Hello,world"]),
    ("  a\tb\n c  ", "whitespace", ["a", "b", "c"]),
    ("<s> le chat </s>", "words", ["<s>", "le", "chat", "</s>"]),
    ("<b>bold</b> & <br>", "words", ["<b>", "bold", "</b>", "&", "<br>"]),
    ("<img src=x onerror=alert(1)>", "words", ["<img src=x onerror=alert(1)>"]),
    ("<script>alert(1)</script>", "words", ["<script>", "alert", "(", "1", ")", "</script>"]),
    ("<script>alert(1)</script>", "whitespace", ["<script>alert(1)</script>"]),
    ("a < b > c", "words", ["a", "<", "b", ">", "c"]),
    ("café naïve", "words", ["café", "naïve"]),
    ("cafe\u0301", "words", ["café"]),              # combining accent normalised to NFC
    ("我爱你", "words", ["我", "爱", "你"]),
    ("I ❤️ 🐱 👍🏽!", "words", ["I", "❤️", "🐱", "👍🏽", "!"]),
    ("👨‍👩‍👧 family", "words", ["👨‍👩‍👧", "family"]),
    ("ab c", "chars", ["a", "b", "c"]),
    ("né 👍🏽", "chars", ["n", "é", "👍🏽"]),
    ("", "words", []), ("   \n\t ", "words", []), (" \u3000 ", "chars", []), (" ", "whitespace", []),
])
def test_modes(text, mode, expected):
    assert tokenize(text, mode) == expected


@given(st.text())
def test_no_token_is_empty_or_contains_whitespace_in_words_mode(text):
    tokens = tokenize(text)
    assert all(t and not any(c.isspace() for c in t) or t.startswith("<") for t in tokens)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",))))
def test_whitespace_mode_keeps_every_non_space_character(text):
    import unicodedata
    joined = "".join(tokenize(text, "whitespace"))
    assert joined == "".join(unicodedata.normalize("NFC", text).split())


@pytest.mark.parametrize("text,mode,error,match", [
    ("a b", "sentencepiece", ValueError, r"mode must be one of \('words', 'whitespace', 'chars'\); received 'sentencepiece'"),
    (["a"], "words", TypeError, r"text must be a str; received list"),
    (7, "words", TypeError, r"text must be a str; received int"),
])
def test_errors(text, mode, error, match):
    with pytest.raises(error, match=match):
        tokenize(text, mode)


@pytest.mark.parametrize("mode", ["words", "chars"])
def test_combining_marks_stay_on_their_letter_in_linear_time(mode, monkeypatch):
    """Thousands of combining marks after one letter: one token, and a bounded number of
    steps per character (the old tokenizer re-scanned the growing token for every mark:
    quadratic, 5 s at 4,000 characters). Counted, not timed."""
    tok = importlib.import_module("xattn.tokenize")  # the package exports the function

    calls = []
    original = tok._attaches
    monkeypatch.setattr(tok, "_attaches", lambda a, b: calls.append(1) or original(a, b))
    for n in (2_000, 64_000):
        calls.clear()
        tokens = tokenize("a" + "\u0301" * (n - 1) + " b", mode)
        assert tokens == ["\u00e1" + "\u0301" * (n - 2), "b"]    # NFC: a + accent = á
        assert len(calls) <= 2 * n
