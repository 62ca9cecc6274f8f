"""Mask helpers: shapes, semantics, errors, and that the module accepts them."""

import numpy as np
import pytest

from xattn import MultiHeadCrossAttention, local_window_mask, padding_mask, wait_k_mask


def test_padding_mask():
    np.testing.assert_array_equal(padding_mask(5, [0, 3]), [False, True, True, False, True])
    assert padding_mask(3).all()


def test_wait_k_row_i_sees_first_i_plus_k():
    m = wait_k_mask(4, 6, 2)
    assert m.shape == (4, 6)
    for i in range(4):
        assert m[i].sum() == min(i + 2, 6) and m[i, : i + 2].all()
    assert wait_k_mask(2, 3, 10).all()


@pytest.mark.parametrize("n_tgt,n_src", [(1, 1), (1, 5), (4, 4), (3, 9), (9, 3), (8, 7)])
@pytest.mark.parametrize("width", [0, 1, 3])
def test_local_window_is_a_scaled_band_with_a_key_in_every_row(n_tgt, n_src, width):
    m = local_window_mask(n_tgt, n_src, width)
    assert m.shape == (n_tgt, n_src) and m.any(axis=1).all()
    first = [int(np.flatnonzero(row)[0]) for row in m]
    assert first == sorted(first)  # the band moves down-right
    if n_tgt > 1:
        assert m[0, 0] and m[-1, -1]  # corners on the stretched diagonal
    assert (m.sum(axis=1) <= 2 * width + 2).all()


def test_local_window_equal_lengths_is_a_plain_band():
    m = local_window_mask(5, 5, 1)
    i, j = np.indices((5, 5))
    np.testing.assert_array_equal(m, np.abs(i - j) <= 1)


def test_module_accepts_every_helper():
    mha = MultiHeadCrossAttention(8, 2)
    rng = np.random.default_rng(0)
    x_t, x_s = rng.standard_normal((4, 8)), rng.standard_normal((6, 8))
    for mask in (padding_mask(6, [5]), wait_k_mask(4, 6, 1), local_window_mask(4, 6, 1)):
        _, w = mha(x_t, x_s, mask)
        assert np.all(w[:, ~np.broadcast_to(mask, (4, 6))] == 0)


@pytest.mark.parametrize("call,error,match", [
    (lambda: padding_mask(3, [3]), ValueError,
     r"each padded position must be an int >= 0 and <= 2; received 3"),
    (lambda: padding_mask(0), ValueError, r"n_src must be an int >= 1; received 0"),
    (lambda: wait_k_mask(3, 4, 0), ValueError, r"k must be an int >= 1; received 0"),
    (lambda: local_window_mask(3, 4, -1), ValueError, r"width must be an int >= 0; received -1"),
    (lambda: local_window_mask(3, 4, 1.5), TypeError, r"width must be an int; received float 1.5"),
    # True is not position 1 (it used to mask every position through boolean indexing)
    (lambda: padding_mask(3, [True]), TypeError,
     r"each padded position must be an int; received bool True"),
    (lambda: padding_mask(3, 1), TypeError, r"padded must be an iterable of positions"),
    (lambda: padding_mask(True), TypeError, r"n_src must be an int; received bool"),
    (lambda: wait_k_mask(3, 4, True), TypeError, r"k must be an int; received bool"),
])
def test_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
