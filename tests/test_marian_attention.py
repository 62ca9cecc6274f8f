"""MultiHeadCrossAttention with given weights and biases, and keys/values projected once.

What the NumPy encoder-decoders need from the module: ``from_weights`` (nothing drawn, no
copies), biases in both paths (``q = x W_Q + b_Q``, ``output = concat W_O + b_O``), float16
and bfloat16 storage, and ``KeyValues`` (a decoder's cache) giving the same numbers as
projecting again; for T5, heads narrower in all than d_model, no division by sqrt(d_head) and a
position bias on the scores.
"""


import numpy as np
import pytest

from xattn._floats import BFLOAT16, to_float32
from xattn.attention import KeyValues, MultiHeadCrossAttention, split_heads


def weights(d_model, seed=0, dtype=np.float32, scale=0.5):
    rng = np.random.default_rng(seed)
    mats = [(rng.standard_normal((d_model, d_model)) * scale).astype(dtype) for _ in range(4)]
    biases = [(rng.standard_normal(d_model) * scale).astype(dtype) for _ in range(4)]
    return mats, biases


def with_biases(d_model, n_heads, seed=0, dtype=np.float32):
    mats, (b_q, b_k, b_v, b_o) = weights(d_model, seed, dtype)
    return MultiHeadCrossAttention.from_weights(*mats, n_heads=n_heads, b_Q=b_q, b_K=b_k,
                                                b_V=b_v, b_O=b_o, dtype=dtype)


def loop_reference(mha, x_t, x_s, gate=None, bias=None):
    """Biased projections, one head and one row at a time, in float64."""
    f = {n: to_float32(getattr(mha, n)).astype(np.float64) for n in ("W_Q", "W_K", "W_V", "W_O")}
    b = {n: 0.0 if getattr(mha, n) is None
         else np.asarray(getattr(mha, n), np.float64) for n in ("b_Q", "b_K", "b_V", "b_O")}
    q, k, v = x_t @ f["W_Q"] + b["b_Q"], x_s @ f["W_K"] + b["b_K"], x_s @ f["W_V"] + b["b_V"]
    dh = mha.d_head
    concat = np.zeros((len(x_t), mha.n_heads * dh))
    w = np.zeros((mha.n_heads, len(x_t), len(x_s)))
    for h in range(mha.n_heads):
        cols = slice(h * dh, (h + 1) * dh)
        for i in range(len(x_t)):
            s = np.array([q[i, cols] @ k[j, cols] for j in range(len(x_s))]) * mha.scaling
            s = s if bias is None else s + bias[h, i]
            p = np.exp(s - s.max())
            w[h, i] = p / p.sum()
            concat[i, cols] = (w[h, i] @ v[:, cols]) * (1.0 if gate is None else gate[h])
    return concat @ f["W_O"] + b["b_O"], w


@pytest.mark.parametrize("n_tgt,n_src,d_model,n_heads", [(1, 1, 4, 1), (3, 5, 8, 2),
                                                         (6, 4, 12, 3), (2, 7, 16, 4)])
def test_biases_on_both_paths_match_the_loop(n_tgt, n_src, d_model, n_heads):
    mha = with_biases(d_model, n_heads, seed=n_src)
    rng = np.random.default_rng(1)
    x_t, x_s = rng.standard_normal((n_tgt, d_model)), rng.standard_normal((n_src, d_model))
    ref_out, ref_w = loop_reference(mha, x_t, x_s)
    out, w = mha(x_t, x_s)
    tr = mha.trace(x_t, x_s)
    for got_out, got_w in ((out, w), (tr.output, tr.weights)):
        np.testing.assert_allclose(got_w, ref_w, atol=2e-6)
        np.testing.assert_allclose(got_out, ref_out, rtol=1e-5, atol=2e-5)
    q = x_t.astype(np.float32) @ mha.W_Q + mha.b_Q
    np.testing.assert_allclose(tr.q, split_heads(q, n_heads), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(tr.concat @ mha.W_O + mha.b_O, tr.output, rtol=1e-6, atol=1e-6)


def t5_like(d_model=8, n_heads=3, d_head=4, seed=0, dtype=np.float32):
    """Heads of 3 x 4 = 12 columns over d_model 8, no biases, no division (T5 v1.1's kind)."""
    rng = np.random.default_rng(seed)
    into = [rng.standard_normal((d_model, n_heads * d_head)).astype(dtype) for _ in range(3)]
    out = rng.standard_normal((n_heads * d_head, d_model)).astype(dtype)
    return MultiHeadCrossAttention.from_weights(*into, out, n_heads=n_heads, scaling=1.0)


@pytest.mark.parametrize("chunked", [False, True])
def test_narrow_heads_a_position_bias_and_no_division_match_the_loop(chunked, monkeypatch):
    import xattn._fastpath as fastpath

    if chunked:                            # every branch of the chunked path, on a small input
        monkeypatch.setattr(fastpath, "_CHUNKED_MIN_ELEMENTS", 1)
        monkeypatch.setattr(fastpath, "_CHUNK_BYTES", 96)
        monkeypatch.setattr(fastpath, "_BLOCK_BYTES", 64)
    mha = t5_like()
    assert (mha.d_model, mha.n_heads, mha.d_head, mha.scaling) == (8, 3, 4, 1.0)
    rng = np.random.default_rng(2)
    x_t, x_s = rng.standard_normal((5, 8)), rng.standard_normal((6, 8))
    bias = rng.standard_normal((3, 5, 6)) * 3
    ref_out, ref_w = loop_reference(mha, x_t, x_s, bias=bias)
    out, w = mha(x_t, x_s, position_bias=bias)
    tr = mha.trace(x_t, x_s, position_bias=bias)
    for got_out, got_w in ((out, w), (tr.output, tr.weights)):
        np.testing.assert_allclose(got_w, ref_w, atol=2e-6)
        np.testing.assert_allclose(got_out, ref_out, rtol=1e-5, atol=2e-5)
    assert tr.scale == 1.0 and tr.concat.shape == (5, 12)
    np.testing.assert_allclose(tr.scaled_scores, tr.scores + bias, rtol=1e-6)
    kv = mha.keys_values(x_s)
    np.testing.assert_allclose(mha(x_t, kv, position_bias=bias)[1], w, atol=1e-7)
    with pytest.raises(ValueError, match=r"position_bias must have shape \(3, 5, 6\) \(heads, "
                                         r"target, source\); received shape \(3, 6, 5\)"):
        mha(x_t, x_s, position_bias=bias.transpose(0, 2, 1))


def test_bfloat16_and_float16_storage_are_kept_as_stored_and_computed_in_float32():
    rng = np.random.default_rng(3)
    mats = [rng.standard_normal((8, 8)).astype(np.float32) for _ in range(4)]
    bits = [(m.view(np.uint32) >> 16).astype(np.uint16).view(BFLOAT16) for m in mats]
    exact = [to_float32(b) for b in bits]             # the bfloat16 values, in float32
    stored = MultiHeadCrossAttention.from_weights(*bits, n_heads=2)
    assert stored.W_Q is bits[0] and stored.W_Q.dtype == BFLOAT16
    x_t, x_s = rng.standard_normal((3, 8)), rng.standard_normal((4, 8))
    want = MultiHeadCrossAttention.from_weights(*exact, n_heads=2)(x_t, x_s)
    for got, ref in zip(stored(x_t, x_s), want, strict=True):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, ref)
    half = [m.astype(np.float16) for m in mats]
    assert MultiHeadCrossAttention.from_weights(*half, n_heads=2).W_O is half[3]
    bad = bits[1].copy()
    bad.view(np.uint16)[0, 0] = 0x7FC0                                   # a bfloat16 NaN
    with pytest.raises(ValueError, match=r"W_K must hold finite numbers"):
        MultiHeadCrossAttention.from_weights(bits[0], bad, bits[2], bits[3], n_heads=2)


def test_head_mask_gates_before_out_proj_and_keeps_its_bias():
    mha = with_biases(8, 2)
    rng = np.random.default_rng(0)
    x_t, x_s = rng.standard_normal((3, 8)), rng.standard_normal((4, 8))
    out, _ = mha(x_t, x_s, head_mask=np.zeros(2))
    np.testing.assert_allclose(out, np.broadcast_to(mha.b_O, (3, 8)))
    ref, _ = loop_reference(mha, x_t, x_s, gate=np.array([1.0, 0.0]))
    np.testing.assert_allclose(mha(x_t, x_s, head_mask=[1.0, 0.0])[0], ref, rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(mha.trace(x_t, x_s, head_mask=[1.0, 0.0]).output, ref, rtol=1e-5,
                               atol=2e-5)


def test_from_weights_keeps_the_given_arrays_without_copies():
    (wq, wk, wv, wo), (bq, *_) = weights(8)
    torch_layout = np.ascontiguousarray(wq.T)     # a torch Linear's weight: (out, in)
    mha = MultiHeadCrossAttention.from_weights(torch_layout.T, wk, wv, wo, n_heads=2, b_Q=bq)
    assert np.shares_memory(mha.W_Q, torch_layout) and mha.W_K is wk and mha.b_Q is bq
    assert (mha.b_K, mha.b_V, mha.b_O) == (None, None, None)
    assert repr(mha) == "MultiHeadCrossAttention(d_model=8, n_heads=2, d_head=4, dtype=float32)"
    drawn = MultiHeadCrossAttention(8, 2)
    assert (drawn.b_Q, drawn.b_K, drawn.b_V, drawn.b_O) == (None, None, None, None)
    cast = MultiHeadCrossAttention.from_weights(wq.astype(np.float64), wk, wv, wo, n_heads=2)
    assert cast.W_Q.dtype == np.float32


def test_float16_storage_is_kept_and_computed_in_float32():
    mats, biases = weights(16, seed=3, dtype=np.float16)
    half = MultiHeadCrossAttention.from_weights(*mats, n_heads=4, b_Q=biases[0], dtype=np.float32)
    full = MultiHeadCrossAttention.from_weights(*(m.astype(np.float32) for m in mats), n_heads=4,
                                                b_Q=biases[0].astype(np.float32))
    assert half.W_Q.dtype == np.float16 and half.W_Q is mats[0]
    rng = np.random.default_rng(2)
    x_t, x_s = rng.standard_normal((3, 16)), rng.standard_normal((5, 16))
    (o1, w1), (o2, w2) = half(x_t, x_s), full(x_t, x_s)
    assert o1.dtype == w1.dtype == np.float32
    np.testing.assert_allclose(o1, o2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(w1, w2, atol=1e-6)
    np.testing.assert_allclose(half.trace(x_t, x_s).weights, w2, atol=1e-6)


@pytest.mark.parametrize("batch", [None, 2])
def test_projected_keys_and_values_give_the_same_numbers(batch):
    mha = with_biases(12, 3, seed=4)
    rng = np.random.default_rng(5)
    lead = () if batch is None else (batch,)
    x_t, x_s = rng.standard_normal(lead + (4, 12)), rng.standard_normal(lead + (6, 12))
    mask = rng.random(lead + (4, 6)) > 0.3
    kv = mha.keys_values(x_s)
    assert isinstance(kv, KeyValues) and kv.k.shape == (batch or 1, 3, 6, 4) and kv.n_src == 6
    assert repr(kv) == f"KeyValues(shape={kv.k.shape}, batched={batch is not None})"
    for a, b in ((mha(x_t, kv, mask, head_mask=[1, 0, 1]), mha(x_t, x_s, mask, head_mask=[1, 0, 1])),
                 ((mha.trace(x_t, kv, mask).output,), (mha.trace(x_t, x_s, mask).output,))):
        for got, want in zip(a, b, strict=True):
            np.testing.assert_array_equal(got, want)


def test_appended_keys_and_values_are_a_growing_self_attention_cache():
    mha = with_biases(8, 2, seed=6)
    x = np.random.default_rng(7).standard_normal((5, 8))
    cache = mha.keys_values(x[:1])
    for t in range(1, 5):
        cache = cache.append(mha.keys_values(x[t:t + 1]))
    causal = np.tril(np.ones((5, 5), bool))
    step_out, step_w = mha(x[4:], cache)                       # the last position, all keys
    full_out, full_w = mha(x, x, causal)
    np.testing.assert_allclose(step_out, full_out[4:], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(step_w, full_w[:, 4:], atol=1e-7)


@pytest.mark.parametrize("call,match", [
    (lambda m, kv: m(np.ones((1, 3, 8)), kv), r"decoder_state must have shape \(n_tgt, 8\) with n_tgt >= 1"),
    (lambda m, kv: m(np.ones((0, 8)), kv), r"decoder_state must have shape \(n_tgt, 8\)"),
    (lambda m, kv: m(np.ones((2, 8)), kv, np.ones(4, bool)), r"encoder_mask must have shape \(3,\) or \(2, 3\)"),
    (lambda m, kv: m(np.ones((2, 8)), kv, head_mask=[1.0]), r"head_mask must have shape \(2,\)"),
    (lambda m, kv: MultiHeadCrossAttention.from_weights(*[np.eye(4, dtype=np.float32)] * 4, n_heads=1)(
        np.ones((2, 4)), kv), r"keys and values must have shape \(B, 1, n_src, 4\) for this module; "
                              r"received \(1, 2, 3, 4\)"),
    (lambda m, kv: m.keys_values(np.ones((3, 5))), r"encoder_output must have last dimension d_model=8"),
    (lambda m, kv: m.keys_values(np.ones((0, 8))), r"encoder_output must hold at least one token"),
])
def test_key_value_errors_say_expected_and_received(call, match):
    mha = with_biases(8, 2)
    kv = mha.keys_values(np.ones((3, 8)))
    with pytest.raises(ValueError, match=match):
        call(mha, kv)


def test_batched_keys_need_batched_queries():
    mha = with_biases(8, 2)
    kv = mha.keys_values(np.ones((2, 3, 8)))
    with pytest.raises(ValueError, match=r"decoder_state must have shape \(2, n_tgt, 8\)"):
        mha(np.ones((3, 8)), kv)
    with pytest.raises(ValueError, match=r"same batch size; received 3 and 2"):
        mha(np.ones((3, 1, 8)), kv)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(W_Q=np.ones(4)), ValueError, r"W_Q must have shape \(d_model, n_heads \* d_head\); received shape \(4,\)"),
    (dict(W_K=np.ones((8, 8))), ValueError, r"W_K must have shape \(d_model, d_model\) = \(4, 4\); received shape \(8, 8\)"),
    (dict(b_O=np.ones(5)), ValueError, r"b_O must have shape \(d_model,\) = \(4,\); received shape \(5,\)"),
    (dict(W_V=np.full((4, 4), np.nan, np.float32)), ValueError, r"W_V must hold finite numbers"),
    (dict(b_Q=[1, 2, np.inf, 0]), ValueError, r"b_Q must hold finite numbers; received inf"),
    (dict(n_heads=3), ValueError, r"d_model must be divisible by n_heads; received d_model=4 \(W_Q's size\), n_heads=3"),
    (dict(n_heads=True), TypeError, r"n_heads must be an int; received bool True"),
    (dict(dtype=np.float16), ValueError, r"dtype must be float32 or float64; received float16"),
    (dict(W_O=[["a"] * 4] * 4), TypeError, r"W_O must be an array of numbers"),
])
def test_from_weights_errors(kwargs, error, match):
    args = dict(W_Q=np.eye(4), W_K=np.eye(4), W_V=np.eye(4), W_O=np.eye(4), n_heads=2)
    args.update(kwargs)
    with pytest.raises(error, match=match):
        MultiHeadCrossAttention.from_weights(**args)
