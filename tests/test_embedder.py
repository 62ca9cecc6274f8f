"""ToyEmbedder: stable, seeded, positional, n-gram similarity."""

import numpy as np
import pytest

from xattn import ToyEmbedder, sinusoidal_positions


def cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_same_token_same_vector_and_seed_changes_it():
    e = ToyEmbedder(32, seed=0, positional=False)
    x = e.embed(["cat", "dog", "cat"])
    np.testing.assert_array_equal(x[0], x[2])
    assert abs(cos(x[0], x[1])) < 0.6
    other = ToyEmbedder(32, seed=1, positional=False).embed(["cat"])
    assert not np.allclose(other[0], x[0])


def test_positions_tell_a_repeated_word_apart():
    e = ToyEmbedder(16, seed=0, positional=True)
    x = e.embed(["the", "cat", "the"])
    assert not np.allclose(x[0], x[2])
    base = ToyEmbedder(16, seed=0, positional=False).embed(["the", "cat", "the"])
    np.testing.assert_allclose(x - base, sinusoidal_positions(3, 16))


def test_sinusoidal_positions_follow_vaswani():
    pe = sinusoidal_positions(5, 6)
    assert pe.shape == (5, 6)
    np.testing.assert_allclose(pe[:, 0], np.sin(np.arange(5)))
    np.testing.assert_allclose(pe[:, 1], np.cos(np.arange(5)))
    np.testing.assert_allclose(pe[3, 2], np.sin(3 / 10000 ** (2 / 6)))
    np.testing.assert_allclose(pe[3, 5], np.cos(3 / 10000 ** (4 / 6)))
    assert sinusoidal_positions(4, 7).shape == (4, 7)  # odd widths work


def test_vectors_have_unit_variance_entries():
    for mode in ("token", "ngram"):
        x = ToyEmbedder(512, seed=3, positional=False, mode=mode).embed(["internationalisation"])
        assert 0.8 < x.std() < 1.2


@pytest.mark.parametrize("a,b,unrelated", [
    ("nation", "nations", "tapis"), ("cat", "chat", "noir"), ("The", "the", "noir")])
def test_ngram_mode_makes_related_spellings_similar(a, b, unrelated):
    e = ToyEmbedder(256, seed=0, positional=False, mode="ngram")
    va, vb, vu = e.embed([a, b, unrelated])
    assert cos(va, vb) > 0.35
    assert cos(va, vb) > cos(va, vu) + 0.2
    t = ToyEmbedder(256, seed=0, positional=False, mode="token").embed([a, b])
    assert abs(cos(*t)) < 0.3  # token mode: different strings are unrelated


def test_unicode_tokens_embed():
    x = ToyEmbedder(8, mode="ngram").embed(["café", "🐱", "<s>", "我"])
    assert x.shape == (4, 8) and np.isfinite(x).all()


def test_empty_token_list_gives_empty_matrix():
    assert ToyEmbedder(8).embed([]).shape == (0, 8)


def test_cached_vectors_are_not_modified_by_callers():
    e = ToyEmbedder(8, positional=False)
    first = e.token_vector("cat")
    first[:] = 0
    assert np.any(e.token_vector("cat") != 0)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(d_model=0), ValueError, r"d_model must be an int >= 1; received 0"),
    (dict(d_model=8, mode="bpe"), ValueError,
     r"mode must be one of \('token', 'ngram'\); received 'bpe'"),
    (dict(d_model=8, seed=1.5), TypeError, r"seed must be an int; received float 1.5"),
    (dict(d_model=True), TypeError, r"d_model must be an int; received bool True"),
    (dict(d_model=8, seed=None), TypeError, r"seed must be an int .*received None"),
    (dict(d_model=8, seed=2**127), ValueError, r"seed must be an int >= 0 and <= 9223372036854775807"),
    (dict(d_model=8, positional="false"), TypeError,
     r"positional must be True or False; received str 'false'"),
])
def test_constructor_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        ToyEmbedder(**kwargs)


@pytest.mark.parametrize("tokens,match", [
    ("the cat", r"tokens must be a list of str .*received str of one str"),
    ([1, 2], r"tokens must be a list of str .*received list of int"),
])
def test_embed_refuses_anything_but_a_list_of_str(tokens, match):
    with pytest.raises(TypeError, match=match):
        ToyEmbedder(8).embed(tokens)


def test_the_vector_cache_is_bounded_by_bytes():
    from xattn.embedder import VECTOR_CACHE

    e = ToyEmbedder(512, seed=3)
    e.embed([f"w{i}" for i in range(6000)])            # 6,000 x 4 kB > the 16 MiB budget
    assert VECTOR_CACHE.total_bytes <= VECTOR_CACHE.max_bytes
    assert len(VECTOR_CACHE) < 6000
