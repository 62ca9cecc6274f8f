"""tokenize: the three modes, Unicode, special tokens, errors."""

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


@pytest.mark.parametrize("text,mode,match", [
    ("a b", "sentencepiece", r"mode must be one of \('words', 'whitespace', 'chars'\); received 'sentencepiece'"),
    (["a"], "words", r"text must be a str; received list"),
])
def test_errors(text, mode, match):
    with pytest.raises(ValueError, match=match):
        tokenize(text, mode)
