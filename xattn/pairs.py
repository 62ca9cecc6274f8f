"""A user's sentence pair for the toy translation task: read it, check it, explain why not.

The model trained by ``xattn.train`` knows only the lexicon of ``xattn.corpus``; `read_pair`
turns two typed sentences into the ``SentencePair`` to draw (with its gold alignment), or into
a `Problem` that says, in words a student can act on, why not. It never raises.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

from xattn.corpus import (
    LEXICON,
    SOURCE_WORDS,
    TARGET_WORDS,
    SentencePair,
    align,
    sentence_words,
    translate,
    unknown_words,
)
from xattn.literal import md_code

__all__ = ["Problem", "read_pair", "gold_text", "MAX_WORDS"]

MAX_WORDS = 24   # the model was trained on 3 to 7 words; longer pairs are refused


class Problem(NamedTuple):
    """Why no pair can be shown: ``level`` is "warning" or "error", ``message`` Markdown."""

    level: str
    message: str


def _unknown_list(words: list[str], vocabulary) -> str:
    out = []
    for w in words:
        close = difflib.get_close_matches(w, vocabulary, n=1, cutoff=0.6)
        out.append(md_code(w) + (f" (did you mean {md_code(close[0])}?)" if close else ""))
    return ", ".join(out)


def read_pair(src: str, tgt: str) -> SentencePair | Problem:
    """The pair to draw, or the problem to explain instead; never raises.

    An empty ``tgt`` means: translate ``src`` with the grammar. A typed French sentence is
    aligned word by word through the lexicon, any word order.

    Examples
    --------
    >>> read_pair("The cat sleeps.", "").target
    ('le', 'chat', 'dort')
    >>> read_pair("the purple cat sleeps", "").level
    'warning'
    """
    words, tgt_words = sentence_words(src or ""), sentence_words(tgt or "")
    if not words:
        return Problem("error", "Type an English sentence, e.g. *the red cat sees the dog*.")
    if max(len(words), len(tgt_words)) > MAX_WORDS:
        return Problem("error", f"Sentences here hold at most {MAX_WORDS} words (the model was "
                                f"trained on 3 to 7); received {len(words)} English and "
                                f"{len(tgt_words)} French words.")
    unknown = [(lang, u, vocab) for lang, u, vocab in (
        ("English", unknown_words(words), SOURCE_WORDS),
        ("French", unknown_words(tgt_words, language="french"), TARGET_WORDS)) if u]
    if unknown:
        named = "; ".join(f"{lang} {_unknown_list(u, vocab)}" for lang, u, vocab in unknown)
        return Problem("warning", (
            f"**Words outside the lexicon**: {named}. The model has only ever seen the "
            f"{len(LEXICON)} English words listed under *The lexicon* and their French "
            "translations, so it has nothing to say about other words. To fix it, replace them "
            "with listed words (e.g. *the sad king follows a pink horse*)"
            + (", or empty the French box to have the English translated." if tgt_words
               else ".")))
    if tgt_words:
        return align(words, tgt_words)
    try:
        return translate(words)
    except ValueError as err:
        return Problem("error", f"Cannot translate this sentence: {err} Or type a French "
                                "sentence yourself in the second box: its words are then "
                                "aligned through the lexicon, whatever the grammar.")


def gold_text(pair: SentencePair) -> str:
    """Markdown ``le → the · chat → cat · …``, with ``?`` for target words with no gold word;
    words as code spans (they are typed by users)."""
    return " · ".join(f"{md_code(t)} → {md_code(pair.source[j]) if j is not None else '?'}"
                      for t, j in zip(pair.target, pair.alignment, strict=True))
