"""Benchmark ``MultiHeadCrossAttention.__call__`` against the textbook NumPy version.

Run from the repository root::

    python -m benchmarks.bench_attention            # full table, under ~2 minutes on 2 cores
    python -m benchmarks.bench_attention --quick    # smaller cases, fewer repeats (smoke test)

Prints the machine, then a Markdown table (docs/performance.md) with, per shape: median wall time
of ours and of the textbook baseline, the speed-up, the GFLOP/s ours achieves (and as a share
of a large float32 GEMM measured in the same run, the practical ceiling), and the peak extra
memory traced by ``tracemalloc`` during one call (returned arrays included), in MiB and as a
multiple of the returned weights array. Every case is checked against the textbook result
before it is timed.
"""

from __future__ import annotations

import argparse
import gc
import math
import statistics
import time
import tracemalloc
from functools import partial

import numpy as np

from benchmarks.machine import machine_line
from xattn import MultiHeadCrossAttention

DTYPE = np.float32
# (n_tgt, n_src, d_model, n_heads)
SHAPES = [(6, 8, 32, 4), (64, 64, 256, 8), (512, 512, 512, 8), (2048, 2048, 512, 16)]
QUICK_SHAPES = SHAPES[:3]
GEMM_N = 2048
# Aim for about this much textbook time per case, within [min, max] calls of each.
TIME_BUDGET_S = 6.0
MIN_REPEATS, MAX_REPEATS = 5, 2000


# ----------------------------------------------------------------------------- baseline
def textbook(mha: MultiHeadCrossAttention, x_t: np.ndarray, x_s: np.ndarray,
             key_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cross-attention as written in the paper, one step per line; ``key_mask`` is (n_src,)."""
    n_tgt, n_src, d_model = x_t.shape[0], x_s.shape[0], mha.d_model
    h, d_head = mha.n_heads, mha.d_head
    q = (x_t @ mha.W_Q).reshape(n_tgt, h, d_head).transpose(1, 0, 2)       # (h, T, dh)
    k = (x_s @ mha.W_K).reshape(n_src, h, d_head).transpose(1, 0, 2)       # (h, S, dh)
    v = (x_s @ mha.W_V).reshape(n_src, h, d_head).transpose(1, 0, 2)       # (h, S, dh)
    scores = q @ k.transpose(0, 2, 1)                                      # (h, T, S)
    scores = scores / math.sqrt(d_head)  # a Python float keeps float32 (NEP 50)
    scores = np.where(key_mask, scores, -1e9)                              # (h, T, S)
    row_max = scores.max(axis=-1, keepdims=True)
    shifted = scores - row_max
    e = np.exp(shifted)
    total = e.sum(axis=-1, keepdims=True)
    weights = e / total
    heads = weights @ v                                                    # (h, T, dh)
    concat = heads.transpose(1, 0, 2).reshape(n_tgt, d_model)              # (T, d_model)
    return concat @ mha.W_O, weights                                       # (T, d_model)


# ----------------------------------------------------------------------------- measuring
def median_time(fn, repeats: int) -> float:
    """Median wall time of ``fn()`` in seconds, after one warm-up call."""
    return median_times([fn], repeats)[0]


def median_times(fns, repeats: int) -> list[float]:
    """Median wall time of each of ``fns``, calling them in turn so that both see the same
    background load (this may be a shared machine), after one warm-up call each."""
    times = [[] for _ in fns]
    for fn in fns:
        fn()
    for _ in range(repeats):
        for fn, t in zip(fns, times, strict=True):
            t0 = time.perf_counter()
            fn()
            t.append(time.perf_counter() - t0)
    return [statistics.median(t) for t in times]


def repeats_for(fn, quick: bool) -> int:
    """How many calls fit the time budget, judged from one call."""
    t0 = time.perf_counter()
    fn()
    once = time.perf_counter() - t0
    budget = TIME_BUDGET_S / (6 if quick else 1)
    return int(min(MAX_REPEATS, max(MIN_REPEATS, budget / max(once, 1e-7))))


def peak_bytes(fn) -> int:
    """Peak memory traced during one call of ``fn()``, its returned arrays included."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        result = fn()  # noqa: F841 (kept alive so the returned arrays count)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - base


def gemm_gflops(n: int, repeats: int) -> float:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=DTYPE)
    b = rng.standard_normal((n, n), dtype=DTYPE)
    return 2 * n**3 / median_time(lambda: a @ b, repeats) / 1e9


def attention_flops(n_tgt: int, n_src: int, d_model: int) -> int:
    """Matmul flops (2*n*m*k each): projections Q, K, V, O, then QK^T and AV over all heads."""
    projections = 2 * d_model * d_model * (2 * n_tgt + 2 * n_src)
    return projections + 2 * (2 * n_tgt * n_src * d_model)


# ----------------------------------------------------------------------------- one case
def make_case(n_tgt: int, n_src: int, d_model: int, n_heads: int):
    mha = MultiHeadCrossAttention(d_model, n_heads, seed=0, dtype=DTYPE)
    rng = np.random.default_rng(1)
    x_t = rng.standard_normal((n_tgt, d_model), dtype=DTYPE)
    x_s = rng.standard_normal((n_src, d_model), dtype=DTYPE)
    key_mask = np.ones(n_src, dtype=bool)
    key_mask[n_src - max(1, n_src // 10):] = False  # padding: the last ~10% of source tokens
    return mha, x_t, x_s, key_mask


def check_same(mha, x_t, x_s, key_mask) -> None:
    out, w = mha(x_t, x_s, key_mask)
    out_ref, w_ref = textbook(mha, x_t, x_s, key_mask)
    for name, a, b in (("output", out, out_ref), ("weights", w, w_ref)):
        if a.shape != b.shape or a.dtype != b.dtype or not np.allclose(a, b, rtol=1e-4,
                                                                       atol=1e-5):
            err = np.max(np.abs(a.astype(np.float64) - b)) if a.shape == b.shape else None
            raise SystemExit(f"{name} differs from textbook for {x_t.shape[0]}x{x_s.shape[0]}"
                             f"x{mha.d_model}x{mha.n_heads}: shapes {a.shape}/{b.shape}, "
                             f"dtypes {a.dtype}/{b.dtype}, max abs error {err}")


def run_case(shape, gemm: float, quick: bool) -> str:
    n_tgt, n_src, d_model, n_heads = shape
    mha, x_t, x_s, key_mask = make_case(*shape)
    check_same(mha, x_t, x_s, key_mask)
    ours = partial(mha, x_t, x_s, key_mask)
    base = partial(textbook, mha, x_t, x_s, key_mask)
    t_ours, t_base = median_times([ours, base], repeats_for(base, quick))
    weights_bytes = n_heads * n_tgt * n_src * np.dtype(DTYPE).itemsize
    m_ours, m_base = peak_bytes(ours), peak_bytes(base)
    gflops = attention_flops(n_tgt, n_src, d_model) / t_ours / 1e9
    return (f"| {n_tgt}×{n_src}×{d_model}×{n_heads} | {fmt_time(t_ours)} | {fmt_time(t_base)} "
            f"| {t_base / t_ours:.1f}× | {gflops:.1f} ({gflops / gemm:.0%}) "
            f"| {fmt_mem(m_ours, weights_bytes)} | {fmt_mem(m_base, weights_bytes)} |")


def fmt_time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_mem(peak: int, weights_bytes: int) -> str:
    mib = peak / 2**20
    size = f"{mib:.2f} MiB" if mib < 10 else f"{mib:.0f} MiB"
    return f"{size} ({peak / weights_bytes:.2f}×)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="skip the 2048-token case and time fewer repeats")
    args = parser.parse_args(argv)
    print(f"Machine: {machine_line()}\n")
    gemm = gemm_gflops(GEMM_N, 3 if args.quick else 7)
    print(f"Ceiling: float32 GEMM {GEMM_N}×{GEMM_N} @ {GEMM_N}×{GEMM_N}: {gemm:.1f} GFLOP/s\n")
    print("| n_tgt×n_src×d_model×n_heads | ours | textbook | speed-up "
          "| ours GFLOP/s (of GEMM) | peak memory ours (× weights) "
          "| peak memory textbook (× weights) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for shape in QUICK_SHAPES if args.quick else SHAPES:
        print(run_case(shape, gemm, args.quick), flush=True)
    print("\nfloat32, key-padding mask on the last ~10% of source tokens; median wall time, "
          "ours and textbook called in turn; peak memory = tracemalloc peak during one call, "
          "returned output and weights included, × = peak / weights.nbytes.")


if __name__ == "__main__":
    main()
