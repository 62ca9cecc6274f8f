"""MultiHeadCrossAttention: against a plain per-head loop, invariants, masks, errors."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xattn import MultiHeadCrossAttention


def loop_reference(mha, x_t, x_s, mask=None, gate=None):
    """The textbook maths written out one head and one target row at a time."""
    n_tgt, n_src = len(x_t), len(x_s)
    dh = mha.d_head
    out_heads = np.zeros((n_tgt, mha.d_model))
    weights = np.zeros((mha.n_heads, n_tgt, n_src))
    allowed = np.ones((n_tgt, n_src), bool) if mask is None else np.broadcast_to(mask, (n_tgt, n_src))
    for h in range(mha.n_heads):
        cols = slice(h * dh, (h + 1) * dh)
        q, k, v = x_t @ mha.W_Q[:, cols], x_s @ mha.W_K[:, cols], x_s @ mha.W_V[:, cols]
        for i in range(n_tgt):
            keys = np.flatnonzero(allowed[i])
            if len(keys) == 0:
                continue
            s = np.array([q[i] @ k[j] / math.sqrt(dh) for j in keys])
            p = np.exp(s - s.max())
            p /= p.sum()
            weights[h, i, keys] = p
            out_heads[i, cols] = (p @ v[keys]) * (1.0 if gate is None else gate[h])
    return out_heads @ mha.W_O, weights


def inputs(n_tgt, n_src, d_model, seed=0, batch=None):
    rng = np.random.default_rng(seed)
    lead = () if batch is None else (batch,)
    return (rng.standard_normal(lead + (n_tgt, d_model)),
            rng.standard_normal(lead + (n_src, d_model)))


@pytest.mark.parametrize("n_tgt,n_src,d_model,n_heads", [
    (1, 1, 4, 1), (3, 4, 8, 2), (9, 7, 32, 4), (5, 3, 12, 12), (40, 300, 64, 8)])
def test_matches_per_head_loop(n_tgt, n_src, d_model, n_heads):
    mha = MultiHeadCrossAttention(d_model, n_heads, seed=3)
    x_t, x_s = inputs(n_tgt, n_src, d_model)
    out, w = mha(x_t, x_s)
    ref_out, ref_w = loop_reference(mha, x_t, x_s)
    np.testing.assert_allclose(w, ref_w, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out, ref_out, rtol=1e-10, atol=1e-12)
    assert out.shape == (n_tgt, d_model) and w.shape == (n_heads, n_tgt, n_src)


def test_large_inputs_take_the_threaded_blocked_path_and_still_match():
    mha = MultiHeadCrossAttention(64, 4, seed=1)
    x_t, x_s = inputs(300, 1000, 64, seed=2)  # 4 x 300 x 1000 scores: the parallel path
    mask = np.ones(1000, bool)
    mask[::7] = False
    out, w = mha(x_t, x_s, mask)
    ref_out, ref_w = loop_reference(mha, x_t, x_s, mask)
    np.testing.assert_allclose(w, ref_w, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(out, ref_out, rtol=1e-9, atol=1e-12)


def test_huge_scores_take_the_max_subtracted_path_without_overflow():
    mha = MultiHeadCrossAttention(8, 2, seed=0)
    x_t, x_s = inputs(4, 6, 8)
    x_t, x_s = x_t * 300, x_s * 300  # scores far beyond exp's range
    mask = np.array([[True] * 6, [False] * 5 + [True], [False] * 6, [True, False] * 3])
    out, w = mha(x_t, x_s, mask)
    ref_out, ref_w = loop_reference(mha, x_t, x_s, mask)
    assert np.isfinite(w).all() and np.isfinite(out).all()
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, rtol=1e-9, atol=1e-9)


def test_trace_agrees_with_call_and_documents_shapes():
    mha = MultiHeadCrossAttention(16, 4, seed=0)
    x_t, x_s = inputs(5, 7, 16)
    mask = np.array([True] * 6 + [False])
    out, w = mha(x_t, x_s, mask)
    tr = mha.trace(x_t, x_s, mask)
    np.testing.assert_allclose(tr.weights, w, atol=1e-14)
    np.testing.assert_allclose(tr.output, out, atol=1e-12)
    assert tr.q.shape == (4, 5, 4) and tr.k.shape == tr.v.shape == (4, 7, 4)
    assert tr.scores.shape == tr.scaled_scores.shape == tr.masked_scores.shape == (4, 5, 7)
    np.testing.assert_allclose(tr.scaled_scores, tr.scores / 2.0)
    assert np.isneginf(tr.masked_scores[..., 6]).all()
    np.testing.assert_allclose(tr.concat @ mha.W_O, tr.output)
    np.testing.assert_allclose(tr.concat[:, 4:8], tr.head_outputs[1])
    np.testing.assert_allclose(tr.head_outputs, tr.weights @ tr.v, atol=1e-14)
    unscaled = mha.trace(x_t, x_s, mask, scale=False)
    np.testing.assert_allclose(unscaled.scaled_scores, tr.scores)
    assert unscaled.scale == 1.0 and tr.scale == 0.5


def test_batched_trace_has_a_leading_batch_axis():
    mha = MultiHeadCrossAttention(8, 2)
    x_t, x_s = inputs(3, 5, 8, batch=2)
    tr = mha.trace(x_t, x_s)
    assert tr.weights.shape == (2, 2, 3, 5) and tr.output.shape == (2, 3, 8)
    np.testing.assert_allclose(tr.weights, mha(x_t, x_s)[1], atol=1e-14)


@pytest.mark.parametrize("mask_kind", ["none", "padding", "per_row", "all_masked_row"])
def test_rows_sum_to_one_and_masked_keys_get_exactly_zero(mask_kind):
    mha = MultiHeadCrossAttention(12, 3, seed=5)
    x_t, x_s = inputs(4, 6, 12)
    mask = {
        "none": None,
        "padding": np.array([1, 1, 0, 1, 0, 1], bool),
        "per_row": np.tril(np.ones((4, 6), bool), 1),
        "all_masked_row": np.array([[1] * 6, [0] * 6, [1, 0] * 3, [0] * 5 + [1]], bool),
    }[mask_kind]
    out, w = mha(x_t, x_s, mask)
    allowed = np.ones((4, 6), bool) if mask is None else np.broadcast_to(mask, (4, 6))
    assert np.all(w[:, ~allowed] == 0.0)
    has_key = allowed.any(axis=1)
    np.testing.assert_allclose(w.sum(-1)[:, has_key], 1.0, rtol=1e-12)
    # A row with nothing to attend to: zero weights, zero output, never NaN or a uniform spread.
    assert np.all(w[:, ~has_key] == 0.0) and np.all(out[~has_key] == 0.0)
    assert np.isfinite(out).all()


def test_fully_masked_source_gives_zero_output_not_nan():
    mha = MultiHeadCrossAttention(8, 2)
    out, w = mha(*inputs(3, 4, 8), np.zeros(4, bool))
    assert np.all(w == 0) and np.all(out == 0)


def test_permuting_source_tokens_permutes_weight_columns():
    mha = MultiHeadCrossAttention(16, 4, seed=2)
    x_t, x_s = inputs(5, 6, 16)
    perm = np.array([3, 0, 5, 1, 4, 2])
    out, w = mha(x_t, x_s)
    out_p, w_p = mha(x_t, x_s[perm])
    np.testing.assert_allclose(w_p, w[:, :, perm], atol=1e-14)
    np.testing.assert_allclose(out_p, out, atol=1e-12)  # a set of keys: the output is unchanged


def test_head_mask_of_ones_changes_nothing_and_zeroing_removes_exactly_one_head():
    mha = MultiHeadCrossAttention(16, 4, seed=7)
    x_t, x_s = inputs(5, 6, 16)
    out, w = mha(x_t, x_s)
    out_ones, w_ones = mha(x_t, x_s, head_mask=np.ones(4))
    np.testing.assert_array_equal(out_ones, out)
    np.testing.assert_array_equal(w_ones, w)
    tr = mha.trace(x_t, x_s)
    for h in range(4):
        gate = np.ones(4)
        gate[h] = 0.0
        out_h, w_h = mha(x_t, x_s, head_mask=gate)
        contribution = tr.head_outputs[h] @ mha.W_O[h * 4:(h + 1) * 4]      # (n_tgt, d_model)
        np.testing.assert_allclose(out_h, out - contribution, atol=1e-12)
        np.testing.assert_array_equal(w_h, w)  # weights are still returned for every head


@pytest.mark.parametrize("mask_rank", [None, 2, 3])
def test_batched_equals_looping_over_the_batch(mask_rank):
    mha = MultiHeadCrossAttention(16, 2, seed=4)
    x_t, x_s = inputs(3, 5, 16, batch=4)
    rng = np.random.default_rng(9)
    mask = None if mask_rank is None else rng.random((4, 5) if mask_rank == 2 else (4, 3, 5)) > 0.3
    out, w = mha(x_t, x_s, mask)
    assert out.shape == (4, 3, 16) and w.shape == (4, 2, 3, 5)
    for b in range(4):
        out_b, w_b = mha(x_t[b], x_s[b], None if mask is None else mask[b])
        np.testing.assert_allclose(out[b], out_b, atol=1e-13)
        np.testing.assert_allclose(w[b], w_b, atol=1e-14)


def test_dtype_is_kept_and_inputs_are_cast():
    mha32 = MultiHeadCrossAttention(8, 2, seed=0, dtype=np.float32)
    mha64 = MultiHeadCrossAttention(8, 2, seed=0)
    x_t, x_s = inputs(3, 4, 8)
    out, w = mha32(x_t, x_s)  # float64 in: cast to the module's float32
    assert out.dtype == w.dtype == mha32.W_Q.dtype == np.float32
    np.testing.assert_allclose(mha32.W_Q, mha64.W_Q.astype(np.float32))
    out64, w64 = mha64(x_t.astype(np.float32), x_s.astype(np.float32))
    assert out64.dtype == np.float64
    np.testing.assert_allclose(w, w64, rtol=1e-5, atol=1e-6)
    out_i, _ = mha64(np.ones((2, 8), dtype=int), np.ones((3, 8), dtype=int))
    assert out_i.dtype == np.float64


def test_weights_follow_the_documented_initialisation():
    mha = MultiHeadCrossAttention(8, 2, seed=11)
    rng = np.random.default_rng(11)
    for w in (mha.W_Q, mha.W_K, mha.W_V, mha.W_O):
        np.testing.assert_array_equal(w, rng.standard_normal((8, 8)) * math.sqrt(1 / 8))
    gen = MultiHeadCrossAttention(8, 2, seed=np.random.default_rng(11))
    np.testing.assert_array_equal(gen.W_O, mha.W_O)
    assert "d_head=4" in repr(mha)


SUBPROCESS = """
import hashlib, numpy as np, xattn
m = xattn.MultiHeadCrossAttention(16, 4, seed=123)
e = xattn.ToyEmbedder(16, seed=5, mode="{mode}")
x = e.embed(xattn.tokenize("le chat noir s'est assis sur le tapis"))
s = e.embed(xattn.tokenize("the black cat sat on the mat"))
out, w = m(x, s)
print(hashlib.sha256(np.concatenate([m.W_Q.ravel(), m.W_O.ravel(), x.ravel(), w.ravel()])
      .tobytes()).hexdigest())
"""


@pytest.mark.parametrize("mode", ["token", "ngram"])
def test_same_numbers_in_processes_with_different_hash_seeds(mode):
    digests = set()
    for hash_seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        run = subprocess.run([sys.executable, "-c", SUBPROCESS.format(mode=mode)], env=env,
                             capture_output=True, text=True, check=True,
                             cwd=os.path.dirname(os.path.dirname(__file__)))
        digests.add(run.stdout.strip())
    assert len(digests) == 1


@settings(deadline=None)
@given(n_tgt=st.integers(1, 6), n_src=st.sampled_from([1, 3, 4, 5, 9]),
       n_heads=st.sampled_from([1, 2, 4]), d_head=st.integers(1, 5),
       seed=st.integers(0, 2**32 - 1), mask_seed=st.integers(0, 1000))
def test_property_random_shapes_match_the_loop(n_tgt, n_src, n_heads, d_head, seed, mask_seed):
    d_model = n_heads * d_head
    mha = MultiHeadCrossAttention(d_model, n_heads, seed=seed)
    x_t, x_s = inputs(n_tgt, n_src, d_model, seed=seed)
    mask = np.random.default_rng(mask_seed).random((n_tgt, n_src)) > 0.4
    out, w = mha(x_t, x_s, mask)
    ref_out, ref_w = loop_reference(mha, x_t, x_s, mask)
    np.testing.assert_allclose(w, ref_w, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(out, ref_out, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(w.sum(-1), np.broadcast_to(mask.any(-1), w.shape[:2]), atol=1e-12)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize("d_model,n_heads,kwargs,error,match", [
    (8, 0, {}, ValueError, r"n_heads must be an int >= 1; received 0"),
    (8, 3, {}, ValueError,
     r"d_model must be divisible by n_heads; received d_model=8, n_heads=3.*\[1, 2, 4, 8\]"),
    (0, 1, {}, ValueError, r"d_model must be an int >= 1; received 0"),
    (8, True, {}, TypeError, r"n_heads must be an int; received bool True"),
    (True, 1, {}, TypeError, r"d_model must be an int; received bool True"),
    (8.0, 2, {}, TypeError, r"d_model must be an int; received float 8.0"),
    (8, 2, {"seed": None}, TypeError, r"seed must be an int .*received None, which would give "
                                      r"different numbers in every run"),
    (8, 2, {"seed": -1}, ValueError, r"seed must be an int >= 0 and <= 9223372036854775807; "
                                     r"received -1"),
    (8, 2, {"seed": 1.5}, TypeError, r"seed must be an int; received float 1.5"),
    (8, 2, {"seed": 2**127}, ValueError, r"seed must be an int .*; received 1701411834"),
    (8, 2, {"seed": "0"}, TypeError, r"seed must be an int; received str '0'"),
])
def test_constructor_errors(d_model, n_heads, kwargs, error, match):
    with pytest.raises(error, match=match):
        MultiHeadCrossAttention(d_model, n_heads, **kwargs)


def test_huge_but_safe_inputs_give_the_same_weights_on_both_paths():
    x_t = X_T * 1e150                              # scores ~1e150: finite, one-hot softmax
    _, w = MHA(x_t, X_S)
    np.testing.assert_allclose(w, MHA.trace(x_t, X_S).weights)
    np.testing.assert_allclose(w.sum(-1), 1.0)


def test_a_generator_seed_draws_from_the_caller_s_stream():
    a = MultiHeadCrossAttention(8, 2, seed=np.random.default_rng(5))
    b = MultiHeadCrossAttention(8, 2, seed=np.random.default_rng(5))
    np.testing.assert_array_equal(a.W_Q, b.W_Q)


def test_unsupported_dtype():
    with pytest.raises(ValueError, match=r"dtype must be float32 or float64; received int64"):
        MultiHeadCrossAttention(4, 2, dtype=np.int64)


MHA = MultiHeadCrossAttention(8, 2)
X_T, X_S = inputs(3, 4, 8)


@pytest.mark.parametrize("args,kwargs,match", [
    ((X_T[:, :6], X_S), {}, r"decoder_state must have last dimension d_model=8; received shape \(3, 6\)"),
    ((X_T, X_S[:, :5]), {}, r"encoder_output must have last dimension d_model=8; received shape \(4, 5\)"),
    ((X_T[0], X_S), {}, r"decoder_state must have shape \(n_tgt, 8\) or \(B, n_tgt, 8\); received shape \(8,\)"),
    ((X_T[None], X_S), {}, r"must both be batched or both not; received shapes \(1, 3, 8\) and \(4, 8\)"),
    ((np.stack([X_T] * 2), np.stack([X_S] * 3)), {}, r"same batch size; received 2 and 3"),
    ((X_T[:0], X_S), {}, r"decoder_state must hold at least one token \(n_tgt >= 1\); received shape \(0, 8\)"),
    ((X_T, X_S[:0]), {}, r"encoder_output must hold at least one token \(n_src >= 1\); received shape \(0, 8\)"),
    ((np.where(np.eye(3, 8) > 0, np.nan, X_T), X_S), {}, r"decoder_state must hold finite numbers; received nan at index \(0, 0\)"),
    ((X_T, np.full((4, 8), np.inf)), {}, r"encoder_output must hold finite numbers; received inf"),
    ((X_T, X_S, np.ones(5, bool)), {}, r"encoder_mask must have shape \(4,\) or \(3, 4\) .*received shape \(5,\)"),
    ((X_T, X_S, np.ones((2, 4), bool)), {}, r"encoder_mask must have shape \(4,\) or \(3, 4\)"),
    ((X_T, X_S, np.ones(4)), {}, r"TypeError: encoder_mask must be boolean \(True = may attend\); received dtype float64"),
    ((X_T[None], X_S[None], np.ones((1, 3), bool)), {}, r"encoder_mask must have shape \(1, 4\) or \(1, 3, 4\)"),
    ((X_T, X_S), {"head_mask": np.ones(3)}, r"head_mask must have shape \(2,\), one gate per head; received shape \(3,\)"),
    ((X_T, X_S), {"head_mask": [1.0, np.nan]}, r"head_mask must hold finite numbers"),
    ((X_T, [["a"] * 8] * 4), {}, r"TypeError: encoder_output must be an array of numbers"),
    ((X_T + 1j, X_S), {}, r"TypeError: decoder_state must hold real numbers; received a complex "
                          r"array \(its imaginary part would be dropped silently\)"),
    ((X_T * 1e307, X_S * 1e307), {}, r"the inputs are too large: the projections x @ W or the "
                                     r"scores q . k overflow float64"),
    ((np.empty((0, 3, 8)), np.empty((0, 4, 8))), {}, r"a batch must hold at least one pair"),
])
def test_call_errors_say_expected_and_received(args, kwargs, match):
    error, match = ((TypeError, match.removeprefix("TypeError: ")) if match.startswith("TypeError")
                    else (ValueError, match))
    for fn in (MHA, MHA.trace):
        with pytest.raises(error, match=match):
            fn(*args, **kwargs)
