"""Step-through stages and the saturation curve."""

import numpy as np
import pytest

from xattn import MultiHeadCrossAttention, ToyEmbedder
from xattn.steps import row_entropy, saturation, stages


@pytest.fixture
def trace():
    rng = np.random.default_rng(0)
    mha = MultiHeadCrossAttention(8, 2, seed=1)
    mask = np.array([True, True, False, True])
    return mha, mha.trace(rng.standard_normal((3, 8)), rng.standard_normal((4, 8)), mask)


def test_stages_follow_one_row_from_query_to_output(trace):
    mha, tr = trace
    q, k, dots, scaled, mask, w, weighted, out, concat, y = stages(tr, head=1, i=2)
    np.testing.assert_allclose(dots.values, k.values @ q.values)
    np.testing.assert_allclose(scaled.values, dots.values / 2.0)
    assert list(mask.values) == [True, True, False, True] and w.values[2] == 0
    np.testing.assert_allclose(w.values.sum(), 1.0)
    np.testing.assert_allclose(weighted.values.sum(axis=0), out.values)
    np.testing.assert_allclose(concat.values[4:8], out.values)
    np.testing.assert_allclose(concat.values @ mha.W_O, y.values)
    assert [s.shape for s in (q, k, dots, out, y)] == ["4", "4 × 4", "4", "4", "8"]


def test_stages_refuse_out_of_range_choices(trace):
    with pytest.raises(ValueError, match=r"head must be in 0..1 and i in 0..2; received head=2, i=0"):
        stages(trace[1], head=2, i=0)


def test_row_entropy():
    assert row_entropy(np.array([1.0, 0, 0]), np.array([True] * 3)) == 0.0
    assert row_entropy(np.full(4, 0.25), np.ones(4, bool)) == pytest.approx(np.log(4))


def test_without_scaling_the_softmax_saturates_as_d_head_grows():
    tokens_s, tokens_t = ["a", "b", "c", "d", "e", "f"], ["x", "y", "z", "w"]

    def embed(tokens):
        return lambda d: ToyEmbedder(d, seed=0).embed(tokens)

    curve = saturation(embed(tokens_t), embed(tokens_s), np.ones((4, 6), bool), n_heads=2,
                       seed=0, d_heads=(1, 4, 16, 64))
    assert curve["unscaled"][-1] < curve["scaled"][-1] - 0.2   # collapsed onto few keys
    assert curve["unscaled"][-1] < curve["unscaled"][0]
    assert np.all(np.diff(curve["unscaled"]) < 0.05)
