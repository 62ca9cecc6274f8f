"""Per-head measures on hand-made matrices with known values, and their properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from xattn.attention import MultiHeadCrossAttention
from xattn.metrics import (
    MEASURE_DESCRIPTIONS,
    confidence,
    diagonal_alignment,
    effective_keys,
    entropy,
    head_statistics,
    monotonicity,
    normalised_entropy,
)

N = 4
IDENTITY = np.eye(N)
UNIFORM = np.full((N, N), 1 / N)
ANTI = np.eye(N)[::-1]


def gaussian(d, g=0.2):
    return math.exp(-d * d / (2 * g * g))


# ---------------------------------------------------------------- known values
@pytest.mark.parametrize(
    "weights, norm_h, eff, conf, mono",
    [
        (IDENTITY, 0.0, 1.0, 1.0, 1.0),
        (UNIFORM, 1.0, N, 1 / N, 1.0),  # ties go to the first key: a uniform head never moves
        (ANTI, 0.0, 1.0, 1.0, 0.0),
    ],
    ids=["identity", "uniform", "anti-diagonal"],
)
def test_known_matrices(weights, norm_h, eff, conf, mono):
    np.testing.assert_allclose(normalised_entropy(weights), norm_h, atol=1e-12)
    np.testing.assert_allclose(effective_keys(weights), eff)
    assert confidence(weights) == pytest.approx(conf)
    assert monotonicity(weights) == pytest.approx(mono)


def test_entropy_values():
    np.testing.assert_allclose(entropy(IDENTITY), 0.0, atol=0)
    np.testing.assert_allclose(entropy(UNIFORM), math.log(N))
    np.testing.assert_allclose(entropy([[0.5, 0.25, 0.25, 0.0]]), [1.5 * math.log(2)])


def test_diagonal_alignment_values():
    assert diagonal_alignment(IDENTITY) == pytest.approx(1.0)
    # Anti-diagonal of 4: row i sits |2i - 3| / 4 away from the diagonal.
    expected_anti = np.mean([gaussian(abs(2 * i - 3) / N) for i in range(N)])
    assert diagonal_alignment(ANTI) == pytest.approx(expected_anti)
    assert expected_anti < 0.25
    expected_uniform = np.mean([[gaussian((i - j) / N) for j in range(N)] for i in range(N)])
    assert diagonal_alignment(UNIFORM) == pytest.approx(expected_uniform)
    assert diagonal_alignment(ANTI) < diagonal_alignment(UNIFORM) < diagonal_alignment(IDENTITY)


def test_diagonal_alignment_unequal_lengths_uses_cell_centres():
    # 2 target tokens over 4 source tokens: each target token covers two source cells.
    w = np.array([[0.5, 0.5, 0, 0], [0, 0, 0.5, 0.5]])
    assert diagonal_alignment(w) == pytest.approx(gaussian(0.125))
    # Reading both sentences backwards gives the same value.
    assert diagonal_alignment(w[::-1, ::-1]) == pytest.approx(diagonal_alignment(w))
    assert diagonal_alignment(w, g=0.1) == pytest.approx(gaussian(0.125, 0.1))


def test_heads_axis_and_single_head_agree():
    w = np.stack([IDENTITY, UNIFORM, ANTI])
    assert entropy(w).shape == (3, N)
    assert confidence(w).shape == (3,)
    for h, single in enumerate([IDENTITY, UNIFORM, ANTI]):
        np.testing.assert_allclose(entropy(w)[h], entropy(single))
        assert monotonicity(w)[h] == monotonicity(single)
        assert diagonal_alignment(w)[h] == pytest.approx(diagonal_alignment(single))


def test_head_statistics_table():
    stats = head_statistics(np.stack([IDENTITY, UNIFORM, ANTI]))
    assert list(stats) == ["head", *MEASURE_DESCRIPTIONS]
    assert stats["head"].tolist() == [0, 1, 2]
    np.testing.assert_allclose(stats["normalised_entropy"], [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(stats["effective_keys"], [1, N, 1])
    np.testing.assert_allclose(stats["confidence"], [1, 1 / N, 1])
    np.testing.assert_allclose(stats["monotonicity"], [1, 1, 0])
    np.testing.assert_allclose(stats["diagonal_alignment"],
                               [diagonal_alignment(m) for m in (IDENTITY, UNIFORM, ANTI)])
    for text in MEASURE_DESCRIPTIONS.values():
        assert isinstance(text, str) and "\n" not in text and len(text) < 200


# ---------------------------------------------------------------- awkward sizes and masks
def test_one_target_token():
    w = np.array([[0.1, 0.2, 0.7]])
    assert monotonicity(w) == 1.0  # no step that could go backwards
    assert confidence(w) == pytest.approx(0.7)
    stats = head_statistics(w)
    assert all(np.isfinite(v).all() for v in stats.values())


def test_one_source_token():
    w = np.ones((2, 3, 1))
    np.testing.assert_array_equal(normalised_entropy(w), 0.0)  # one key: defined as 0
    np.testing.assert_array_equal(effective_keys(w), 1.0)
    np.testing.assert_array_equal(confidence(w), 1.0)
    np.testing.assert_array_equal(monotonicity(w), 1.0)


def test_masked_rows_and_keys():
    mask = np.array([[True, True, False],
                     [False, False, False],   # no key: left out of every mean
                     [True, False, False]])   # one key: normalised entropy 0
    w = np.array([[0.5, 0.5, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(normalised_entropy(w, mask), [1.0, np.nan, 0.0])
    np.testing.assert_allclose(effective_keys(w, mask), [2.0, np.nan, 1.0])
    np.testing.assert_allclose(entropy(w, mask), [math.log(2), np.nan, 0.0])
    assert confidence(w, mask) == pytest.approx(0.75)
    assert monotonicity(w, mask) == 1.0  # rows 0 and 2 are consecutive rows with a key
    stats = head_statistics(w, mask)
    assert stats["normalised_entropy"][0] == pytest.approx(0.5)
    assert stats["effective_keys"][0] == pytest.approx(1.5)


def test_key_padding_mask_normalises_by_unmasked_keys():
    w = np.array([[0.5, 0.5, 0.0, 0.0]])
    assert normalised_entropy(w)[0] == pytest.approx(0.5)  # log 2 / log 4 without a mask
    assert normalised_entropy(w, np.array([True, True, False, False]))[0] == pytest.approx(1.0)


def test_all_zero_rows_without_mask_count_as_no_key():
    w = np.array([[[0.0, 0.0], [0.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]])
    np.testing.assert_allclose(entropy(w), [[np.nan, 0.0], [np.nan, np.nan]])
    np.testing.assert_allclose(confidence(w), [1.0, np.nan])
    np.testing.assert_allclose(monotonicity(w), [1.0, np.nan])


def test_monotonicity_counts_backward_steps():
    cols = [0, 2, 1, 1, 3]  # one step back out of four
    w = np.eye(4)[cols]
    assert monotonicity(w) == pytest.approx(0.75)


def test_module_weights_are_accepted_in_float32():
    mha = MultiHeadCrossAttention(d_model=16, n_heads=4, seed=3, dtype=np.float32)
    rng = np.random.default_rng(3)
    mask = np.array([True] * 5 + [False] * 2)
    _, w = mha(rng.standard_normal((6, 16)), rng.standard_normal((7, 16)), mask)
    stats = head_statistics(w, mask)
    assert np.all(stats["effective_keys"] <= 5 + 1e-9)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "weights, mask, match",
    [
        (np.ones(3) / 3, None, r"shape \(n_heads, n_tgt, n_src\) or \(n_tgt, n_src\).*\(3,\)"),
        (np.ones((1, 1, 1, 1)), None, r"received shape \(1, 1, 1, 1\)"),
        (np.ones((2, 0)), None, r"received shape \(2, 0\)"),
        (np.array([[1.5, -0.5]]), None, r"probabilities in \[0, 1\]; received 1.5"),
        (np.array([[0.5, 0.2]]), None, r"sum to 1 .*received 0.7 in head 0, target row 0"),
        (np.array([[np.nan, 1.0]]), None, r"finite"),
        (np.array([[0.5, 0.5]]), np.array([True, False]), r"0 at masked keys; received 0.5"),
        (np.array([[0.5, 0.5]]), np.array([1, 1]), r"boolean .* received dtype int"),
        (np.array([[0.5, 0.5]]), np.array([True, True, True]),
         r"mask must have shape \(2,\) or \(1, 2\).*received shape \(3,\)"),
        (np.array([[0.0, 0.0]]), np.array([True, True]), r"sum to 1 .*received 0 in head 0"),
    ],
)
def test_bad_weights(weights, mask, match):
    with pytest.raises(TypeError if "dtype" in match else ValueError, match=match):
        head_statistics(weights, mask)


@pytest.mark.parametrize("g", [0, -0.1, float("nan")])
def test_bad_gaussian_width(g):
    with pytest.raises(ValueError, match="g must be a positive number"):
        diagonal_alignment(IDENTITY, g=g)


# ---------------------------------------------------------------- properties
@st.composite
def attention(draw):
    n_heads, n_tgt, n_src = (draw(st.integers(1, n)) for n in (3, 5, 6))
    scores = draw(hnp.arrays(np.float64, (n_heads, n_tgt, n_src),
                             elements=st.floats(-30, 30, allow_nan=False)))
    mask = draw(hnp.arrays(np.bool_, (n_tgt, n_src)))
    masked = np.where(mask, scores, -np.inf)
    top = masked.max(axis=-1, keepdims=True)
    e = np.exp(masked - np.where(np.isfinite(top), top, 0))
    total = e.sum(axis=-1, keepdims=True)
    return np.divide(e, total, out=np.zeros_like(e), where=total > 0), mask


@settings(deadline=None)
@given(attention())
def test_measures_stay_in_bounds(case):
    w, mask = case
    n_keys = mask.sum(axis=-1)                                       # (n_tgt,)
    has_key = n_keys > 0
    norm = normalised_entropy(w, mask)
    eff = effective_keys(w, mask)
    assert np.isnan(norm[:, ~has_key]).all() and np.isnan(eff[:, ~has_key]).all()
    assert ((norm[:, has_key] >= 0) & (norm[:, has_key] <= 1)).all()
    assert ((eff[:, has_key] >= 1) & (eff[:, has_key] <= n_keys[has_key])).all()
    stats = head_statistics(w, mask)
    if not has_key.any():
        assert all(np.isnan(v).all() for k, v in stats.items() if k != "head")
        return
    floor = np.mean(1 / n_keys[has_key])  # the most uniform a row can be
    assert ((stats["confidence"] >= floor - 1e-9) & (stats["confidence"] <= 1 + 1e-9)).all()
    assert ((stats["diagonal_alignment"] > 0) & (stats["diagonal_alignment"] <= 1)).all()
    assert ((stats["monotonicity"] >= 0) & (stats["monotonicity"] <= 1)).all()
    assert ((stats["normalised_entropy"] >= 0) & (stats["normalised_entropy"] <= 1)).all()


@settings(deadline=None)
@given(attention(), st.randoms(use_true_random=False))
def test_permuting_heads_permutes_statistics(case, rnd):
    w, mask = case
    order = list(range(len(w)))
    rnd.shuffle(order)
    before, after = head_statistics(w, mask), head_statistics(w[order], mask)
    for name in MEASURE_DESCRIPTIONS:
        np.testing.assert_allclose(after[name], before[name][order])


# ---------------------------------------------------------------- ablation
