"""The chunked fast path, reached on small inputs by shrinking its chunk constants.

Large problems are cut into chunks of heads x target rows, their softmax into cache-sized
blocks, and keys no row of a chunk may attend are left out. With the constants shrunk, a
problem of a few tokens goes through several chunks and blocks, so every branch is compared
with the per-head loop of test_attention.py.
"""

import numpy as np
import pytest
from test_attention import inputs, loop_reference

import xattn._fastpath as fastpath
from xattn.attention import MultiHeadCrossAttention


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Chunks of 96 bytes of scores (a few rows), blocks of one or two rows, always chunked."""
    monkeypatch.setattr(fastpath, "_CHUNKED_MIN_ELEMENTS", 1)
    monkeypatch.setattr(fastpath, "_CHUNK_BYTES", 96)
    monkeypatch.setattr(fastpath, "_BLOCK_BYTES", 64)
    calls = []
    original = fastpath._attend_chunk
    monkeypatch.setattr(fastpath, "_attend_chunk",
                        lambda *args: calls.append(args[-1].shape) or original(*args))
    return calls


def masks(n_tgt, n_src, rng):
    per_row = rng.random((n_tgt, n_src)) > 0.4           # (n_tgt, n_src): differs by row
    per_row[1] = False                                    # a row with nothing to attend
    per_row[:, -2:] = False                               # padding at the end of the source
    return {"none": None, "key padding": np.arange(n_src) < n_src - 3, "per row": per_row,
            "all masked": np.zeros(n_src, bool)}


@pytest.mark.parametrize("kind", ["none", "key padding", "per row", "all masked"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_many_chunks_equal_the_loop(tiny_chunks, kind, dtype):
    mha = MultiHeadCrossAttention(12, 3, seed=2, dtype=dtype)
    x_t, x_s = inputs(7, 9, 12, seed=4)
    mask = masks(7, 9, np.random.default_rng(1))[kind]
    out, w = mha(x_t, x_s, mask)
    ref_out, ref_w = loop_reference(mha, x_t.astype(dtype), x_s.astype(dtype), mask)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, **tol)
    np.testing.assert_allclose(out, ref_out, **tol)
    assert len(tiny_chunks) > 3                           # really cut into several chunks


def test_scores_beyond_the_exp_bound_take_the_max_subtracting_branch(tiny_chunks):
    mha = MultiHeadCrossAttention(8, 2, seed=0)
    x_t, x_s = inputs(5, 6, 8, seed=1)
    x_t = x_t * 200.0                                     # scores in the hundreds: exp overflows
    _, w = mha(x_t, x_s, masks(5, 6, np.random.default_rng(3))["per row"])
    assert np.isfinite(w).all()
    np.testing.assert_allclose(w, loop_reference(mha, x_t, x_s, masks(
        5, 6, np.random.default_rng(3))["per row"])[1], rtol=1e-9, atol=1e-12)


def test_batched_per_row_masks_across_chunks(tiny_chunks):
    mha = MultiHeadCrossAttention(8, 4, seed=5)
    x_t, x_s = inputs(6, 5, 8, seed=2, batch=3)
    mask = np.random.default_rng(0).random((3, 6, 5)) > 0.5
    _, w = mha(x_t, x_s, mask)
    for b in range(3):
        np.testing.assert_allclose(w[b], loop_reference(mha, x_t[b], x_s[b], mask[b])[1],
                                   rtol=1e-10, atol=1e-12)
