"""xattn.words: a number said in a language is formatted by Babel once per (value, format,
language), and the cache never gives one value's words to another."""

from __future__ import annotations

import pytest

from xattn import words


@pytest.fixture
def babel_calls(monkeypatch):
    """Babel's formatting calls made through ``xattn.words`` (the cache emptied first)."""
    calls = []
    for name in ("format_decimal", "format_percent"):
        real = getattr(words, name)

        def counted(*args, real=real, **kwargs):
            calls.append(args[0])
            return real(*args, **kwargs)
        monkeypatch.setattr(words, name, counted)
    words._formatted.cache_clear()
    yield calls
    words._formatted.cache_clear()


def test_a_number_is_formatted_by_babel_once_per_value_format_and_language(babel_calls):
    said = [words.number(0.25, ".2f", lang) for lang in ("fr", "fr", "en", "fr")]
    assert said == ["0,25", "0,25", "0.25", "0,25"]
    assert words.number(0.25, ".1%", "fr") == "25,0\u00a0%"
    assert len(babel_calls) == 3                  # fr .2f, en .2f, fr .1%


@pytest.mark.parametrize(("first", "then", "spec", "expected"), [
    (0.0, -0.0, ".2f", "-0.00"),                 # equal, and hashed alike: the sign apart
    (-0.0, 0.0, ".2f", "0.00"),
    (1, 1.5, "", "1.5"),
    (1.0, 1, "", "1"),
])
def test_the_cache_keeps_each_value_its_own_words(babel_calls, first, then, spec, expected):
    words.number(first, spec, "en")
    assert words.number(then, spec, "en") == expected


def test_a_bad_value_or_format_is_still_refused_each_time():
    for _ in range(2):
        with pytest.raises(TypeError, match="received bool"):
            words.number(True, ".2f", "en")
        with pytest.raises(ValueError, match="received '.2e'"):
            words.number(0.5, ".2e", "en")
