"""Head ablation: switching heads off through the module's gates, against the per-head sums."""

import numpy as np
import pytest

from xattn.ablation import ablation
from xattn.attention import MultiHeadCrossAttention


@pytest.fixture
def setup():
    mha = MultiHeadCrossAttention(d_model=12, n_heads=3, seed=7)
    rng = np.random.default_rng(7)
    mask = np.ones((4, 5), dtype=bool)
    mask[2] = False  # a target row with no key: zero output row
    return mha, rng.standard_normal((4, 12)), rng.standard_normal((5, 12)), mask


def head_outputs(mha, x_t, x_s, mask):
    """Y_h: the output with only head h's gate at 1."""
    return np.stack([mha(x_t, x_s, mask, head_mask=np.eye(mha.n_heads)[h])[0]
                     for h in range(mha.n_heads)])                   # (n_heads, n_tgt, d_model)


def test_output_is_linear_in_the_gates(setup):
    mha, x_t, x_s, mask = setup
    y_h = head_outputs(mha, x_t, x_s, mask)
    gates = np.random.default_rng(0).uniform(-1, 2, size=mha.n_heads)
    y = mha(x_t, x_s, mask, head_mask=gates)[0]
    np.testing.assert_allclose(y, np.tensordot(gates, y_h, axes=1), atol=1e-12)


def test_all_heads_on_changes_nothing(setup):
    res = ablation(*setup)
    assert res.heads_off == () and res.chosen == 0.0
    np.testing.assert_array_equal(res.per_token, 0.0)
    assert res.per_head.shape == (3,)


def test_ablation_matches_head_contributions(setup):
    mha, x_t, x_s, mask = setup
    y_h = head_outputs(mha, x_t, x_s, mask)
    y = y_h.sum(axis=0)
    res = ablation(mha, x_t, x_s, mask, heads_off=[2, 0, 2])
    assert res.heads_off == (0, 2)
    norm_y = np.linalg.norm(y)
    np.testing.assert_allclose(res.per_head, [np.linalg.norm(y_h[h]) / norm_y for h in range(3)])
    assert res.chosen == pytest.approx(np.linalg.norm(y_h[0] + y_h[2]) / norm_y)
    kept = [0, 1, 3]  # rows with a key
    np.testing.assert_allclose(res.per_token[kept],
                               np.linalg.norm(y_h[0] + y_h[2], axis=-1)[kept]
                               / np.linalg.norm(y, axis=-1)[kept])
    assert res.per_token[2] == 0.0  # zero output row, nothing changed: 0, not NaN
    assert "heads_off=(0, 2)" in repr(res)


def test_all_heads_off_is_a_full_change(setup):
    res = ablation(*setup, heads_off=range(3))
    assert res.chosen == pytest.approx(1.0)
    np.testing.assert_allclose(res.per_token, [1, 1, 0, 1])


def test_batched_inputs(setup):
    mha, x_t, x_s, mask = setup
    res = ablation(mha, np.stack([x_t, x_t]), np.stack([x_s, x_s]), np.stack([mask, mask]),
                   heads_off=[1])
    single = ablation(mha, x_t, x_s, mask, heads_off=[1])
    assert res.per_token.shape == (2, 4)
    np.testing.assert_allclose(res.per_token, [single.per_token] * 2)
    assert res.chosen == pytest.approx(single.chosen)


class CancellingHeads:
    """Two heads whose outputs cancel exactly: Y = 0, yet switching one off changes it."""

    n_heads = 2

    def __call__(self, decoder_state, encoder_output, encoder_mask=None, *, head_mask=None):
        y_0 = np.ones((2, 3))
        return head_mask[0] * y_0 - head_mask[1] * y_0, None


def test_zero_output_is_handled():
    res = ablation(CancellingHeads(), None, None)
    assert res.chosen == 0.0 and np.isnan(res.per_head).all()
    assert np.isnan(ablation(CancellingHeads(), None, None, heads_off=[1]).per_token).all()


@pytest.mark.parametrize(
    "heads_off, error, match",
    [([3], ValueError, r"each of heads_off must be an int >= 0 and <= 2; received 3"),
     ([-1], ValueError, r"received -1"), ([True], TypeError, r"must be an int; received bool"),
     ([0.5], TypeError, r"received float 0.5"),
     (None, TypeError, r"heads_off must be an iterable of head indices; received NoneType")],
)
def test_bad_heads_off(setup, heads_off, error, match):
    with pytest.raises(error, match=match):
        ablation(*setup, heads_off=heads_off)


def test_module_without_heads():
    with pytest.raises(TypeError, match=r"module.n_heads .* must be an int; received NoneType"):
        ablation(object(), np.ones((1, 4)), np.ones((1, 4)))
