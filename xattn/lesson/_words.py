"""How the lesson names what is on screen: tokens (with their position when a word repeats),
the row a step asks about (and what it asks instead when that word is not in the sentence),
numbers of heads in words. Every token is a Markdown code span (``xattn.literal.md_code``)."""

from __future__ import annotations

from xattn.literal import md_code
from xattn.sources import Attention
from xattn.words import language, number, say, say_n

__all__ = ["token_name", "token_label", "target_row", "number_word", "heads_said", "head_choices"]

_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen")


def token_label(tokens, j: int) -> str:
    """Plain text naming token ``j``: the word, with its position when it occurs twice.

    Examples
    --------
    >>> token_label(["the", "cat", "the"], 2), token_label(["the", "cat", "the"], 1)
    ('the (2)', 'cat')
    """
    return tokens[j] + (f" ({j})" if list(tokens).count(tokens[j]) > 1 else "")


def token_name(tokens, j: int) -> str:
    """Markdown naming token ``j``: a code span, and its position when the word repeats.

    Examples
    --------
    >>> token_name(["the", "cat", "the"], 2)
    '`the` (2)'
    """
    return md_code(tokens[j]) + (f" ({j})" if list(tokens).count(tokens[j]) > 1 else "")


def target_row(a: Attention, word: str, occurrence: int = 0) -> tuple[int, str]:
    """The target position a step asks about: ``word`` (its ``occurrence``-th time, or its
    last), else the first target token; and, in that case, a sentence saying so (Markdown)."""
    rows = [i for i, t in enumerate(a.tgt_tokens) if t == word]
    if rows:
        return rows[min(occurrence, len(rows) - 1)], ""
    return 0, say("There is no *{word}* in this target sentence: the question asks about "
                  "{first} instead.", word=word, first=token_name(a.tgt_tokens, 0))


def number_word(n: int) -> str:
    """``4`` as "four" (up to sixteen) in English; digits in other languages (where a word
    would be English inside their sentence) and beyond sixteen."""
    if language() == "en" and 0 <= n < len(_WORDS):
        return _WORDS[n]
    return number(n)


def heads_said(n: int) -> str:
    """``n`` heads in words (English spells the number: "four heads")."""
    return say_n("{word} head", "{word} heads", n, word=number_word(n))


def head_choices(n: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A choice of one of ``n`` heads: the values ("head 2", the same in every language)
    and the options as the context's language says them."""
    return (tuple(f"head {h + 1}" for h in range(n)),
            tuple(say("head {head}", head=h + 1) for h in range(n)))
