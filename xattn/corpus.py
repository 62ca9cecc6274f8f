"""A toy English-to-French parallel corpus whose word alignment is known for every pair.

The grammar has one reordering and lets words repeat, so the gold alignment is not the
diagonal and a repeated word ("the ... the") can only be told apart by its position::

    S  -> NP V_t NP | NP V_i           (the same in French)
    NP -> Det N | Det Adj N            (French: Det N | Det N Adj: the adjective moves)

    the red cat sees the dog   ->   le chat rouge voit le chien
    alignment (target word i -> source word): 0, 2, 1, 3, 4, 5

French determiners agree with the noun's gender (the -> le/la, a -> un/une, this ->
ce/cette); the adjectives are all invariable and follow the noun, and no noun begins with a
vowel, so there is no elision (l'). Words are lower case; ``sentence_words`` lower-cases what
a user types and drops punctuation.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int, check_seed
from xattn.tokenize import tokenize

__all__ = ["LexiconEntry", "LEXICON", "SOURCE_WORDS", "TARGET_WORDS", "SentencePair",
           "generate_pairs", "sentence_words", "unknown_words", "translate", "align"]


@dataclass(frozen=True)
class LexiconEntry:
    """One English word and its French translation.

    Attributes
    ----------
    english : str
    french : tuple of str
        One form, or (masculine, feminine) for determiners.
    category : {"determiner", "noun", "adjective", "verb"}
    gender : {"m", "f", ""}
        Grammatical gender of a French noun; empty for other words.
    transitive : bool
        Whether a verb takes an object.
    """

    english: str
    french: tuple[str, ...]
    category: str
    gender: str = ""
    transitive: bool = False


_DETERMINERS = {"the": ("le", "la"), "a": ("un", "une"), "this": ("ce", "cette")}
_DET_WEIGHTS = (0.6, 0.25, 0.15)  # "the" most often, so "the ... the" is common
_DET_CUMULATIVE = tuple(itertools.accumulate(_DET_WEIGHTS))[:-1]
_NOUNS = {"cat": ("chat", "m"), "dog": ("chien", "m"), "horse": ("cheval", "m"),
          "wolf": ("loup", "m"), "boy": ("garçon", "m"), "king": ("roi", "m"),
          "book": ("livre", "m"), "girl": ("fille", "f"), "queen": ("reine", "f"),
          "mouse": ("souris", "f"), "cow": ("vache", "f"), "car": ("voiture", "f"),
          "house": ("maison", "f"), "flower": ("fleur", "f")}
_ADJECTIVES = {"red": "rouge", "yellow": "jaune", "pink": "rose", "fast": "rapide",
               "calm": "calme", "sad": "triste", "rich": "riche", "sick": "malade",
               "strange": "étrange", "magic": "magique"}
_VERBS_T = {"sees": "voit", "eats": "mange", "likes": "aime", "follows": "suit",
            "watches": "regarde", "finds": "trouve", "chases": "chasse", "hears": "entend",
            "draws": "dessine"}
_VERBS_I = {"sleeps": "dort", "runs": "court", "sings": "chante"}
P_ADJECTIVE = 0.5   # chance that a noun phrase has an adjective
P_TRANSITIVE = 0.8  # chance that a sentence has an object

LEXICON: tuple[LexiconEntry, ...] = (
    *(LexiconEntry(en, fr, "determiner") for en, fr in _DETERMINERS.items()),
    *(LexiconEntry(en, (fr,), "noun", g) for en, (fr, g) in _NOUNS.items()),
    *(LexiconEntry(en, (fr,), "adjective") for en, fr in _ADJECTIVES.items()),
    *(LexiconEntry(en, (fr,), "verb", transitive=True) for en, fr in _VERBS_T.items()),
    *(LexiconEntry(en, (fr,), "verb") for en, fr in _VERBS_I.items()),
)
_BY_ENGLISH = {e.english: e for e in LEXICON}
SOURCE_WORDS: tuple[str, ...] = tuple(e.english for e in LEXICON)
TARGET_WORDS: tuple[str, ...] = tuple(fr for e in LEXICON for fr in e.french)


@dataclass(frozen=True)
class SentencePair:
    """A source sentence, its translation, and which source word each target word renders.

    Attributes
    ----------
    source : tuple of str, length n_src
    target : tuple of str, length n_tgt
    alignment : tuple of (int or None), length n_tgt
        ``alignment[i]`` is the index in ``source`` of the word that target word ``i``
        translates; None where it cannot be determined (only in pairs typed by a user).
    """

    source: tuple[str, ...]
    target: tuple[str, ...]
    alignment: tuple[int | None, ...]

    def alignment_matrix(self) -> np.ndarray:
        """Gold alignment as an ndarray of bool, shape (n_tgt, n_src), at most one True a row."""
        gold = np.zeros((len(self.target), len(self.source)), dtype=bool)
        for i, j in enumerate(self.alignment):
            if j is not None:
                gold[i, j] = True
        return gold


def _noun_phrase(det: str, adj: str | None, noun: str, start: int):
    """English words, French words and alignment (as source indices) of one noun phrase."""
    french_noun, gender = _NOUNS[noun]
    french_det = _DETERMINERS[det][gender == "f"]
    if adj is None:
        return [det, noun], [french_det, french_noun], [start, start + 1]
    return ([det, adj, noun], [french_det, french_noun, _ADJECTIVES[adj]],
            [start, start + 2, start + 1])


def _sentence(subject: tuple, verb: str, obj: tuple | None) -> SentencePair:
    en, fr, align_ = _noun_phrase(*subject, start=0)
    fr.append(_VERBS_T.get(verb) or _VERBS_I[verb])
    align_.append(len(en))
    en.append(verb)
    if obj is not None:
        en2, fr2, align2 = _noun_phrase(*obj, start=len(en))
        en, fr, align_ = en + en2, fr + fr2, align_ + align2
    return SentencePair(tuple(en), tuple(fr), tuple(align_))


def _sample_noun_phrase(rng: np.random.Generator) -> tuple:
    # bisect on the cumulative weights: rng.choice(p=...) costs ten times more per call
    det = tuple(_DETERMINERS)[bisect.bisect(_DET_CUMULATIVE, rng.random())]
    adj = tuple(_ADJECTIVES)[rng.integers(len(_ADJECTIVES))] \
        if rng.random() < P_ADJECTIVE else None
    return det, adj, tuple(_NOUNS)[rng.integers(len(_NOUNS))]


def generate_pairs(n: int, *, seed: int | np.random.Generator = 0) -> list[SentencePair]:
    """Draw ``n`` random sentence pairs from the grammar.

    Parameters
    ----------
    n : int
        Number of pairs, >= 0.
    seed : int or numpy.random.Generator, default 0
        The same int gives the same pairs in every process; a Generator is advanced.

    Returns
    -------
    list of SentencePair
        3 to 7 words a side; every alignment is a permutation of ``range(n_src)``.

    Examples
    --------
    >>> [" ".join(p.target) for p in generate_pairs(2, seed=3)]
    ['la voiture jaune voit le loup rouge', 'un livre jaune suit le cheval']
    """
    n = check_int(n, "n", minimum=0)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(check_seed(seed))
    pairs = []
    for _ in range(n):
        subject = _sample_noun_phrase(rng)
        if rng.random() < P_TRANSITIVE:
            verb, obj = tuple(_VERBS_T)[rng.integers(len(_VERBS_T))], _sample_noun_phrase(rng)
        else:
            verb, obj = tuple(_VERBS_I)[rng.integers(len(_VERBS_I))], None
        pairs.append(_sentence(subject, verb, obj))
    return pairs


def sentence_words(text: str) -> list[str]:
    """Lower-cased words of ``text``, punctuation dropped: ``"The cat sleeps."`` gives 3 words."""
    return [t.lower() for t in tokenize(text) if any(c.isalnum() for c in t)]


def _as_words(sentence, name: str) -> list[str]:
    if isinstance(sentence, str):
        return sentence_words(sentence)
    if not all(isinstance(w, str) for w in sentence):
        raise ValueError(f"{name} must be a str or a sequence of str; received "
                         f"{type(sentence).__name__} holding non-strings.")
    return [w.lower() for w in sentence]


def unknown_words(sentence, *, language: str = "english") -> list[str]:
    """Words of ``sentence`` that are not in the lexicon, each once, in order of appearance.

    Parameters
    ----------
    sentence : str or sequence of str
        Text (split with ``sentence_words``) or words.
    language : {"english", "french"}

    Examples
    --------
    >>> unknown_words("The purple cat sleeps on the mat.")
    ['purple', 'on', 'mat']
    """
    known = {"english": set(SOURCE_WORDS), "french": set(TARGET_WORDS)}.get(language)
    if known is None:
        raise ValueError(f"language must be 'english' or 'french'; received {language!r}.")
    words = _as_words(sentence, "sentence")
    return list(dict.fromkeys(w for w in words if w not in known))


def _grammar_error(words: list[str], at: int, expected: str) -> ValueError:
    found = words[at] if at < len(words) else None
    got = f"{found!r} ({_BY_ENGLISH[found].category})" if found else "the end of the sentence"
    return ValueError(f"the sentence does not follow the grammar: expected {expected} at word "
                      f"{at + 1}; received {got}. Sentences look like 'the (adjective) noun "
                      "verb' or 'the (adjective) noun verb a (adjective) noun'.")


def _category(words: list[str], at: int) -> str | None:
    return _BY_ENGLISH[words[at]].category if at < len(words) else None


def _parse_noun_phrase(words: list[str], i: int) -> tuple[tuple, int]:
    """(det, adj, noun) starting at word ``i`` and the index after it; ValueError if absent."""
    if _category(words, i) != "determiner":
        raise _grammar_error(words, i, "a determiner")
    adj = words[i + 1] if _category(words, i + 1) == "adjective" else None
    k = i + 1 + (adj is not None)
    if _category(words, k) != "noun":
        raise _grammar_error(words, k, "an adjective or a noun" if adj is None else "a noun")
    return (words[i], adj, words[k]), k + 1


def translate(source) -> SentencePair:
    """Translate an English sentence of the grammar into French, with its gold alignment.

    Parameters
    ----------
    source : str or sequence of str
        E.g. ``"The red cat sees a dog."``: determiner, optional adjective, noun, verb and,
        for a transitive verb, a second such noun phrase.

    Returns
    -------
    SentencePair

    Raises
    ------
    ValueError
        If a word is outside the lexicon (all such words are named) or the sentence does not
        follow the grammar (the first offending word is named).

    Examples
    --------
    >>> p = translate("The red cat sees the dog.")
    >>> " ".join(p.target), p.alignment
    ('le chat rouge voit le chien', (0, 2, 1, 3, 4, 5))
    """
    words = _as_words(source, "source")
    if not words:
        raise ValueError("source must hold at least one word; received an empty sentence.")
    unknown = unknown_words(words)
    if unknown:
        raise ValueError(f"words outside the lexicon: {', '.join(map(repr, unknown))}. "
                         "Use only the words listed in xattn.corpus.LEXICON.")
    subject, i = _parse_noun_phrase(words, 0)
    if _category(words, i) != "verb":
        raise _grammar_error(words, i, "a verb")
    verb, obj = words[i], None
    if _BY_ENGLISH[verb].transitive:
        obj, i = _parse_noun_phrase(words, i + 1)
    else:
        i += 1
    if i < len(words):
        raise _grammar_error(words, i, "the end of the sentence")
    return _sentence(subject, verb, obj)


def _french_forms(words: list[str], j: int) -> set[str]:
    """French words that source word ``j`` may become; a determiner takes its noun's gender."""
    entry = _BY_ENGLISH.get(words[j])
    if entry is None:
        return set()
    if entry.category != "determiner":
        return set(entry.french)
    for later in words[j + 1:]:
        if later in _NOUNS:
            return {entry.french[_NOUNS[later][1] == "f"]}
        if later in _DETERMINERS:
            break
    return set(entry.french)


def align(source, target) -> SentencePair:
    """Gold alignment of a user-typed pair, by the lexicon, where it can be determined.

    Target word ``i`` is aligned to the first source word not yet used whose translation it
    is, so repeated words are paired in order of occurrence (the grammar never swaps two noun
    phrases). Words outside the lexicon are allowed and left unaligned.

    Parameters
    ----------
    source, target : str or sequence of str
        English and French sentences (any word order).

    Returns
    -------
    SentencePair
        ``alignment[i]`` is None where no unused source word translates to target word ``i``.

    Examples
    --------
    >>> align("the cat sees the car", "le chat voit la voiture").alignment
    (0, 1, 2, 3, 4)
    >>> align("the dog sleeps", "le chien rouge dort").alignment
    (0, 1, None, 2)
    """
    src, tgt = _as_words(source, "source"), _as_words(target, "target")
    forms = [_french_forms(src, j) for j in range(len(src))]
    used: set[int] = set()
    alignment: list[int | None] = []
    for word in tgt:
        j = next((j for j, f in enumerate(forms) if word in f and j not in used), None)
        if j is not None:
            used.add(j)
        alignment.append(j)
    return SentencePair(tuple(src), tuple(tgt), tuple(alignment))
