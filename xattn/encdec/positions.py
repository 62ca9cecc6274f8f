"""Where each token is, the four ways the families say it (NumPy, float32).

- ``sinusoidal``: Marian's fixed sines, sin of the even features' angles in the first half of
  the vector, cos of the odd ones' in the second (``MarianSinusoidalPositionalEmbedding``);
- ``fairseq``: M2M100's and NLLB's fixed sines, ``exp(-j log(10000) / (half - 1))`` apart,
  counted from ``pad + 1`` and skipping padding (``M2M100SinusoidalPositionalEmbedding``);
- ``learned``: BART's and mBART's table, read two rows on (``BartLearnedPositionalEmbedding``);
- ``relative``: T5 adds no vector; each self-attention adds a learned bias per head to its
  scores, by the bucket of the distance between query and key (``T5Attention.compute_bias``).
"""

from __future__ import annotations

import math

import numpy as np

from xattn._floats import to_float32

__all__ = ["LEARNED_OFFSET", "sinusoidal_positions", "fairseq_positions", "learned_positions",
           "relative_buckets", "relative_bias"]

LEARNED_OFFSET = 2      # BART's table starts two rows on (a fairseq habit kept in transformers)


def sinusoidal_positions(n: int, d_model: int, offset: int = 0) -> np.ndarray:
    """Marian's position vectors for positions ``offset .. offset+n-1``, (n, d_model) float32.

    Computed in float64 and rounded once, as transformers does.

    Examples
    --------
    >>> sinusoidal_positions(2, 4).tolist()[1]          # position 1: sin 1, sin .01, cos ...
    [0.8414709568023682, 0.009999833069741726, 0.5403022766113281, 0.9999499917030334]
    """
    pos = np.arange(offset, offset + n, dtype=np.float64)[:, None]    # (n, 1)
    j = np.arange(d_model)
    angles = pos / np.power(10000, 2 * (j // 2) / d_model)            # (n, d_model)
    half = (d_model + 1) // 2
    out = np.empty((n, d_model), dtype=np.float32)
    out[:, :half] = np.sin(angles[:, 0::2])
    out[:, half:] = np.cos(angles[:, 1::2])
    return out


def fairseq_positions(ids, pad: int, d_model: int, past: int = 0) -> np.ndarray:
    """M2M100's position vectors for token ``ids`` after ``past`` earlier ones, (n, d_model).

    A token's position is ``pad + 1 +`` the number of non-padding tokens before it (``past``
    counts as such); padding sits at ``pad``, whose vector is zero. Computed in float32 as
    torch does (its frequencies, products and sines, each within an ulp of torch's).
    """
    ids = np.asarray(ids)
    real = ids != pad
    pos = np.where(real, np.cumsum(real) + past, 0) + pad                    # (n,)
    half = d_model // 2
    step = np.float32(-math.log(10000) / (half - 1)) if half > 1 else np.float32(0)
    # exp of the float32 exponents, rounded once (as torch's exp; NumPy's float32 exp is off
    # by an ulp at times, which grows to 3e-5 in the angles of position 300)
    freq = np.exp((np.arange(half, dtype=np.float32) * step).astype(np.float64)).astype(
        np.float32)                                                          # (half,)
    angles = pos.astype(np.float32)[:, None] * freq                           # (n, half)
    out = np.zeros((len(ids), d_model), dtype=np.float32)
    out[:, :half] = np.sin(angles)
    out[:, half:2 * half] = np.cos(angles)
    out[pos == pad] = 0.0
    return out


def learned_positions(table: np.ndarray, n: int, past: int = 0) -> np.ndarray:
    """BART's learned vectors of positions ``past .. past+n-1``: rows two on, (n, d_model)."""
    return to_float32(table[past + LEARNED_OFFSET:past + LEARNED_OFFSET + n])


def relative_buckets(relative: np.ndarray, *, bidirectional: bool, num_buckets: int,
                     max_distance: int) -> np.ndarray:
    """T5's bucket of each distance ``key - query``: exact below half the buckets, then
    logarithmic up to ``max_distance`` (float32, truncated, as transformers does).

    Examples
    --------
    >>> relative_buckets(np.array([-3, 0, 1, 200]), bidirectional=True, num_buckets=32,
    ...                  max_distance=128).tolist()
    [3, 0, 17, 31]
    """
    buckets = np.zeros(relative.shape, dtype=np.int64)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative > 0) * num_buckets
        n = np.abs(relative)
    else:
        n = -np.minimum(relative, 0)
    max_exact = num_buckets // 2
    ratio = np.maximum(n, 1).astype(np.float32) / np.float32(max_exact)  # n < max_exact: unused
    log_ratio = np.log(ratio) / np.float32(math.log(max_distance / max_exact))
    large = max_exact + (log_ratio * np.float32(num_buckets - max_exact)).astype(np.int64)
    return buckets + np.where(n < max_exact, n, np.minimum(large, num_buckets - 1))


def relative_bias(table: np.ndarray, n_queries: int, n_keys: int, *, bidirectional: bool,
                  max_distance: int, past: int = 0) -> np.ndarray:
    """T5's position bias for queries ``past .. past+n_queries-1`` against keys
    ``0 .. n_keys-1``: ``table`` (num_buckets, n_heads) read by bucket, (n_heads, n_queries,
    n_keys) float32."""
    relative = np.arange(n_keys)[None, :] - (np.arange(n_queries) + past)[:, None]   # (q, k)
    b = relative_buckets(relative, bidirectional=bidirectional, num_buckets=len(table),
                         max_distance=max_distance)
    return np.ascontiguousarray(to_float32(table)[b].transpose(2, 0, 1))     # (h, q, k)
