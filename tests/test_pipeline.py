"""pipeline: settings to weights, user-facing errors, downloads."""


import numpy as np
import pytest

from xattn import MultiHeadCrossAttention, ToyEmbedder, tokenize
from xattn.pipeline import MAX_TOKENS, Settings, head_choices, run, run_tokens


def test_run_equals_the_library_called_by_hand():
    s = Settings()
    r = run(s)
    emb = ToyEmbedder(32, seed=0, positional=True)
    x_s, x_t = emb.embed(tokenize(s.src)), emb.embed(tokenize(s.tgt))
    out, w = MultiHeadCrossAttention(32, 4, seed=0)(x_t, x_s)
    np.testing.assert_array_equal(r.weights, w)
    np.testing.assert_array_equal(r.output, out)
    assert r.src_tokens == ["the", "black", "cat", "sat", "on", "the", "mat"]
    assert r.mask.shape == (8, 7) and r.mask.all() and len(r.empty_rows) == 0


def test_head_choices_are_divisors_up_to_16():
    assert head_choices(32) == [1, 2, 4, 8, 16]
    assert head_choices(24) == [1, 2, 3, 4, 6, 8, 12]
    assert head_choices(512)[-1] == 16


@pytest.mark.parametrize("changes,rows_without_keys", [
    (dict(mask_mode="padding", padded=(0, 1, 2, 3, 4, 5, 6)), 8),
    (dict(mask_mode="padding", padded=(6, 40)), 0),  # positions beyond the sentence are ignored
    (dict(mask_mode="wait-k", wait_k=1), 0),
    (dict(mask_mode="window", window=0), 0),
])
def test_masks_from_settings(changes, rows_without_keys):
    r = run(Settings(**changes))
    assert len(r.empty_rows) == rows_without_keys
    assert np.all(r.weights[:, ~r.mask] == 0)


@pytest.mark.parametrize("changes,match", [
    (dict(src=""), r"The source sentence is empty: type at least one word\."),
    (dict(tgt=" \t "), r"The target sentence is empty"),
    (dict(src="a " * (MAX_TOKENS + 3)), r"The source sentence has 67 tokens; the limit is 64\. Shorten it by 3 tokens\."),
    (dict(n_heads=3), r"With d_model = 32 the number of heads must be one of \[1, 2, 4, 8, 16\]; received 3\."),
    (dict(d_model=10), r"d_model must be one of .*received 10"),
    (dict(tokenizer="bpe"), r"tokenizer must be one of \('words', 'whitespace', 'chars'\); received 'bpe'"),
])
def test_bad_settings_say_what_to_change(changes, match):
    with pytest.raises(ValueError, match=match):
        run(Settings(**changes))


def test_run_tokens_takes_tokens_as_they_are():
    r = run_tokens(["a b", "<s>"], ["x"], Settings(n_heads=2))
    assert r.src_tokens == ["a b", "<s>"] and r.weights.shape == (2, 1, 2)
    with pytest.raises(TypeError, match="src must hold str tokens"):
        run_tokens([1], ["x"], Settings())
    with pytest.raises(ValueError, match="at least one token"):
        run_tokens([], ["x"], Settings())
