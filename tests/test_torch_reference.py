"""The module equals PyTorch's nn.MultiheadAttention given the same weights.

PyTorch is not a dependency of xattn: this test runs where torch is installed (CI installs the
CPU wheel when the machine has it) and is skipped with a reason elsewhere.
"""

import numpy as np
import pytest

from xattn import MultiHeadCrossAttention

torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional reference)")


def torch_attention(mha, x_t, x_s, mask, dtype):
    ref = torch.nn.MultiheadAttention(mha.d_model, mha.n_heads, bias=False, batch_first=True,
                                      dtype=dtype)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.from_numpy(np.concatenate([mha.W_Q.T, mha.W_K.T, mha.W_V.T])))
        ref.out_proj.weight.copy_(torch.from_numpy(mha.W_O.T.copy()))
        out, w = ref(torch.from_numpy(x_t), torch.from_numpy(x_s), torch.from_numpy(x_s),
                     key_padding_mask=None if mask is None else torch.from_numpy(~mask),
                     need_weights=True, average_attn_weights=False)
    return out.numpy(), w.numpy()


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("n_tgt,n_src,d_model,n_heads", [(6, 8, 32, 4), (1, 3, 8, 1), (9, 4, 24, 6)])
def test_equals_torch_multihead_attention(dtype, tol, n_tgt, n_src, d_model, n_heads):
    mha = MultiHeadCrossAttention(d_model, n_heads, seed=1, dtype=dtype)
    rng = np.random.default_rng(0)
    x_t = rng.standard_normal((3, n_tgt, d_model)).astype(dtype)
    x_s = rng.standard_normal((3, n_src, d_model)).astype(dtype)
    mask = rng.random((3, n_src)) > 0.3
    mask[:, 0] = True  # every row keeps a key: torch gives NaN for rows with none
    tdtype = torch.float64 if dtype == np.float64 else torch.float32
    for m in (None, mask):
        out, w = mha(x_t, x_s, m)
        ref_out, ref_w = torch_attention(mha, x_t, x_s, m, tdtype)
        assert out.dtype == dtype
        np.testing.assert_allclose(w, ref_w, rtol=tol, atol=tol)
        np.testing.assert_allclose(out, ref_out, rtol=tol * 10, atol=tol * 10)
