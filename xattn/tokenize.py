"""Split text into tokens: words, whitespace-separated pieces, or characters.

Text is normalised to Unicode NFC first, so "é" typed as e + combining accent is one character.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["tokenize", "TOKENIZER_MODES", "splits_words"]

TOKENIZER_MODES = ("words", "whitespace", "chars")

# Scripts written without spaces: every character is a token in "words" mode.
_CJK = ("\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
        "\U00020000-\U0002ffff")
_WORDS = re.compile(
    r"<[^<>\s][^<>]{0,60}>"                       # markup-like special tokens: <s>, </s>, <pad>
    rf"|[{_CJK}]"                                 # one CJK character
    rf"|[^\W{_CJK}]+(?:['\u2019][^\W{_CJK}]+)*'?"  # a word; apostrophes inside stay: s'est, don't
    r"|\S"                                        # anything else: one punctuation mark or symbol
)
_CJK_WORD = re.compile(rf"[{_CJK}]{{2,}}")    # two CJK characters in a row: a word to split
# Characters that attach to the previous one in a user-perceived character (a simplified
# grapheme cluster): combining marks, variation selectors, emoji skin tones, zero-width joiner.
_ATTACH = {"Mn", "Me", "Mc", "Sk"}
_ZWJ = "\u200d"


def _attaches(previous: str, ch: str) -> bool:
    """Whether ``ch`` belongs to the same user-perceived character as ``previous``."""
    return (previous == _ZWJ or ch == _ZWJ or unicodedata.category(ch) in _ATTACH
            or "\U0001f3fb" <= ch <= "\U0001f3ff" or "\ufe00" <= ch <= "\ufe0f")


def _graphemes(text: str) -> list[str]:
    starts = [i for i, ch in enumerate(text) if i == 0 or not _attaches(text[i - 1], ch)]
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)], strict=True)]


def tokenize(text: str, mode: str = "words") -> list[str]:
    """Split ``text`` into tokens.

    Parameters
    ----------
    text : str
        Any Unicode text.
    mode : {"words", "whitespace", "chars"}
        ``"words"``: words, with punctuation split off (apostrophes inside a word stay: "s'est"),
        markup-like tokens such as ``<s>`` or ``</s>`` kept whole, and each CJK character on its
        own. ``"whitespace"``: split on runs of whitespace only. ``"chars"``: one token per
        user-perceived character (accents and emoji sequences stay whole), spaces dropped.

    Returns
    -------
    list of str
        The tokens in order; ``[]`` for empty or whitespace-only text.

    Examples
    --------
    >>> tokenize("The cat, the hat!")
    ['The', 'cat', ',', 'the', 'hat', '!']
    >>> tokenize("<s> le chat </s>")
    ['<s>', 'le', 'chat', '</s>']
    >>> tokenize("né 🐱", mode="chars")
    ['n', 'é', '🐱']
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str; received {type(text).__name__}.")
    if mode not in TOKENIZER_MODES:
        raise ValueError(f"mode must be one of {TOKENIZER_MODES}; received {mode!r}.")
    text = unicodedata.normalize("NFC", text)
    if mode == "whitespace":
        return text.split()
    if mode == "chars":
        return [g for g in _graphemes(text) if not g.isspace()]
    spans: list[list[int]] = []  # [start, end) of each token in text
    for match in _WORDS.finditer(text):
        start, end = match.span()
        # \S took one code point: glue the marks, joiners and modifiers of its grapheme back on
        # by extending the previous span (linear time, however many marks follow one letter).
        if spans and spans[-1][1] == start and end - start == 1 and not text[start].isalnum() \
                and _attaches(text[start - 1], text[start]):
            spans[-1][1] = end
        else:
            spans.append([start, end])
    return [text[a:b] for a, b in spans]


def splits_words(text: str) -> bool:
    """Whether the "words" mode would cut space-separated words of ``text`` into characters:
    Chinese, Japanese or Korean words of two characters or more, written between spaces.

    Examples
    --------
    >>> splits_words("我们 喜欢 猫"), splits_words("我喜欢猫"), splits_words("the cat")
    (True, False, False)
    """
    return any(c.isspace() for c in text) and bool(_CJK_WORD.search(text))
