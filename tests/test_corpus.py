"""Toy parallel corpus: hand-checked alignments, grammar invariants, lexicon checks, errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xattn.corpus import (
    LEXICON,
    SOURCE_WORDS,
    TARGET_WORDS,
    SentencePair,
    align,
    generate_pairs,
    sentence_words,
    translate,
    unknown_words,
)

# Checked by hand: French word order, gender agreement, and which English word each French
# word renders (target word i -> source index).
HAND_CHECKED = [
    ("the red cat sees the dog", "le chat rouge voit le chien", (0, 2, 1, 3, 4, 5)),
    ("the cat chases the mouse", "le chat chasse la souris", (0, 1, 2, 3, 4)),
    ("a yellow car sees this sick boy", "une voiture jaune voit ce garçon malade",
     (0, 2, 1, 3, 4, 6, 5)),
    ("the queen sleeps", "la reine dort", (0, 1, 2)),
    ("this pink flower runs", "cette fleur rose court", (0, 2, 1, 3)),
    ("the magic king likes the magic queen", "le roi magique aime la reine magique",
     (0, 2, 1, 3, 4, 6, 5)),
    ("a cow eats a strange book", "une vache mange un livre étrange", (0, 1, 2, 3, 5, 4)),
]
_EN = {e.english: e for e in LEXICON}


@pytest.mark.parametrize(("english", "french", "alignment"), HAND_CHECKED)
def test_translate_matches_hand_checked_examples(english, french, alignment):
    pair = translate(english)
    assert pair.source == tuple(english.split())
    assert pair.target == tuple(french.split())
    assert pair.alignment == alignment
    assert align(english, french) == pair


def test_alignment_matrix_marks_gold_cells():
    gold = translate("the red cat sees the dog").alignment_matrix()
    assert gold.shape == (6, 6) and gold.dtype == bool
    np.testing.assert_array_equal(gold.sum(axis=1), 1)
    assert gold[1, 2] and gold[2, 1] and gold[4, 4] and not gold[4, 0]
    assert SentencePair(("a",), ("x", "y"), (None, 0)).alignment_matrix().tolist() == [
        [False], [True]]


def test_lexicon_is_about_forty_words_and_translation_is_unambiguous():
    assert 35 <= len(LEXICON) <= 45
    assert {e.category for e in LEXICON} == {"determiner", "noun", "adjective", "verb"}
    assert len(set(SOURCE_WORDS)) == len(SOURCE_WORDS)
    assert len(set(TARGET_WORDS)) == len(TARGET_WORDS)  # each French form has one English word
    assert all(e.gender in ("m", "f") for e in LEXICON if e.category == "noun")
    assert all(len(e.french) == 2 for e in LEXICON if e.category == "determiner")


def _check_pair(pair: SentencePair) -> None:
    """The grammar's invariants for one generated pair."""
    assert 3 <= len(pair.source) == len(pair.target) <= 7
    assert sorted(pair.alignment) == list(range(len(pair.source)))  # a permutation
    for i, j in enumerate(pair.alignment):
        assert pair.target[i] in _EN[pair.source[j]].french
    for i, word in enumerate(pair.target):
        entry = _EN[pair.source[pair.alignment[i]]]
        if entry.category == "determiner":  # agrees with the noun right after it in French
            gender = _EN[pair.source[pair.alignment[i + 1]]].gender
            assert word == entry.french[gender == "f"]
        if entry.category == "adjective":   # follows its noun in French
            assert _EN[pair.source[pair.alignment[i - 1]]].category == "noun"


@settings(deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_generated_pairs_follow_the_grammar(seed):
    for pair in generate_pairs(10, seed=seed):
        _check_pair(pair)
        assert translate(pair.source) == pair
        assert align(pair.source, pair.target) == pair


def test_generated_corpus_reorders_and_repeats_words():
    pairs = generate_pairs(200, seed=0)
    assert any(p.alignment != tuple(range(len(p.source))) for p in pairs)
    assert sum(p.source.count("the") == 2 for p in pairs) > 30
    assert any(p.target.count("le") == 2 for p in pairs)


def test_generate_pairs_is_reproducible_by_seed():
    assert generate_pairs(20, seed=5) == generate_pairs(20, seed=5)
    assert generate_pairs(20, seed=5) != generate_pairs(20, seed=6)
    rng = np.random.default_rng(5)
    assert generate_pairs(10, seed=rng) + generate_pairs(10, seed=rng) == \
        generate_pairs(20, seed=5)
    assert generate_pairs(0) == []


@pytest.mark.parametrize("n,error,match", [
    (-1, ValueError, "n must be an int >= 0; received -1"),
    (2.0, TypeError, "n must be an int; received float 2.0"),
    ("3", TypeError, "n must be an int; received str"),
    (True, TypeError, "n must be an int; received bool True"),
])
def test_generate_pairs_rejects_bad_counts(n, error, match):
    """A wrong kind of value is a TypeError, a wrong value a ValueError (house rule)."""
    with pytest.raises(error, match=match):
        generate_pairs(n)


def test_sentence_words_lowercases_and_drops_punctuation():
    assert sentence_words("The red Cat sees a dog.") == ["the", "red", "cat", "sees", "a", "dog"]
    assert sentence_words("  ") == []


@pytest.mark.parametrize(("sentence", "language", "expected"), [
    ("The purple cat sleeps on the mat.", "english", ["purple", "on", "mat"]),
    ("the cat sleeps", "english", []),
    (["The", "Dog", "dog", "mouse"], "english", []),
    ("le chat noir dort", "french", ["noir"]),
    ("zzz zzz 42", "english", ["zzz", "42"]),
    ("le chat", "english", ["le", "chat"]),
])
def test_unknown_words(sentence, language, expected):
    assert unknown_words(sentence, language=language) == expected


def test_unknown_words_rejects_bad_arguments():
    with pytest.raises(ValueError, match="language must be 'english' or 'french'; received 'de'"):
        unknown_words("the cat", language="de")
    with pytest.raises(ValueError, match="sentence must be a str or a sequence of str"):
        unknown_words(["the", 3])


@pytest.mark.parametrize(("sentence", "match"), [
    ("the purple cat sleeps on it", "outside the lexicon: 'purple', 'on', 'it'"),
    ("", "at least one word; received an empty sentence"),
    ("cat sleeps", "expected a determiner at word 1; received 'cat' \\(noun\\)"),
    ("the red sees", "expected a noun at word 3; received 'sees' \\(verb\\)"),
    ("the cat", "expected a verb at word 3; received the end of the sentence"),
    ("the cat sees", "expected a determiner at word 4; received the end"),
    ("the cat sleeps the dog", "expected the end of the sentence at word 4; received 'the'"),
    ("the cat sees the red red dog", "expected a noun at word 6; received 'red'"),
])
def test_translate_names_what_is_wrong(sentence, match):
    with pytest.raises(ValueError, match=match):
        translate(sentence)


def test_align_user_pairs_where_determinable():
    # a word the lexicon does not know, and an extra adjective, stay unaligned
    assert align("the dog sleeps", "le chien rouge dort").alignment == (0, 1, None, 2)
    assert align("the cat sleeps", "le chat dort zut").alignment == (0, 1, 2, None)
    # repeated words are paired in order of occurrence, whatever the gender of the "the"s
    assert align("the cat sees the dog", "le chien voit le chat").alignment == (0, 4, 2, 3, 1)
    assert align("the cat sees the car", "la voiture voit le chat").alignment == (3, 4, 2, 0, 1)
    # upper case and punctuation are ignored, as in sentence_words
    assert align("The cat sleeps.", "Le chat dort !").alignment == (0, 1, 2)
    # a determiner with no noun after it may become either form
    assert align("the", "la").alignment == (0,)
