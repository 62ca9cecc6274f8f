"""Benchmark the alignment lab (``xattn.alignlab``): scoring every layer and head, reading gold.

Run from the repository root::

    python -m benchmarks.bench_aer            # about half a minute on 2 busy cores
    python -m benchmarks.bench_aer --quick    # fewer repeats (smoke test)

Prints the machine, then Markdown tables:

1. ``score_heads`` over 256 held-out toy pairs (``xattn.corpus``, the gold of the corpus),
   for each way of making links: weights of 3 layers x 4 heads and of 6 layers x 8 heads
   (random rows, with a ``</s>`` row and column as a real model's word-level weights have),
   and the default trained toy model (1 layer x 4 heads); median and maximum of the repeats,
   in milliseconds. The model's own forward pass is not included, except in the last row:
   ``toy_examples`` (the toy model on the 256 pairs) plus ``score_heads``.
2. ``read_gold``: a Pharaoh file of 256 lines like the toy corpus's gold, and files at the
   2,000,000-byte limit (Pharaoh, and NAACL of the same links), to show the reading is
   linear; one malformed file of the same size, every line refused.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from benchmarks.machine import machine_line
from xattn.alignlab import (
    MAX_GOLD_BYTES,
    MAX_GOLD_PAIRS,
    METHODS,
    GoldFileError,
    read_gold,
    score_heads,
    toy_examples,
)
from xattn.corpus import generate_pairs
from xattn.train import TrainConfig, train

N_PAIRS = 256


def timed(fn, repeats: int) -> tuple[float, float, float, object]:
    """Median and maximum wall time, median CPU time of this process (ms) over ``repeats``
    calls, and the last result. CPU time is what a busy machine inflates least."""
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        out = fn()
        wall.append(1000 * (time.perf_counter() - start))
        cpu.append(1000 * (time.process_time() - start_cpu))
    return statistics.median(wall), max(wall), statistics.median(cpu), out


def random_examples(pairs, n_layers: int, n_heads: int, seed: int = 0) -> list:
    """Random attention rows (with ``</s>`` as an extra last row and column) for each pair."""
    rng = np.random.default_rng(seed)
    return [(rng.dirichlet(np.ones(len(p.source) + 1),
                           size=(n_layers, n_heads, len(p.target) + 1)), p) for p in pairs]


def scoring_table(repeats: int) -> None:
    pairs = generate_pairs(N_PAIRS, seed=1)
    result = train(TrainConfig(snapshots=0))
    cases = [("random, 3 layers x 4 heads", random_examples(pairs, 3, 4)),
             ("random, 6 layers x 8 heads", random_examples(pairs, 6, 8)),
             ("toy model (trained), 1 x 4", toy_examples(result.model, result.embedder,
                                                          result.heldout))]
    print(f"| weights ({N_PAIRS} pairs) | method | wall: median / max | CPU: median "
          "| best layer (AER) |")
    print("|---|---|---:|---:|---|")
    for label, examples in cases:
        for method in METHODS:
            kwargs = {"threshold": 0.3} if method == "threshold" else {}
            med, worst, cpu, s = timed(lambda ex=examples, m=method, k=kwargs:
                                       score_heads(ex, method=m, **k), repeats)
            best = f"{s.best_layer} ({s.layer_aer[s.best_layer]:.3f})" \
                if s.best_layer >= 0 else "none"
            print(f"| {label} | {method}{' 0.3' if kwargs else ''} | {med:.0f} / {worst:.0f} ms "
                  f"| {cpu:.0f} ms | {best} |", flush=True)
    med, worst, cpu, _ = timed(lambda: score_heads(toy_examples(
        result.model, result.embedder, result.heldout)), repeats)
    print(f"| toy model: inputs, forward pass and scoring | target_argmax "
          f"| {med:.0f} / {worst:.0f} ms | {cpu:.0f} ms | |")


def pharaoh_text(pairs, first_index: int = 1) -> str:
    return "".join(" ".join(f"{j + first_index}-{i + first_index}"
                            for i, j in enumerate(p.alignment)) + "\n" for p in pairs)


def reading_table(repeats: int) -> None:
    small = pharaoh_text(generate_pairs(N_PAIRS, seed=1))
    line = " ".join(f"{k}-{k}" for k in range(1, 41)) + "\n"           # 40 links, 191 bytes
    big = line * (MAX_GOLD_BYTES // len(line))
    naacl = "".join(f"{k + 1} {a} {a} S\n" for k in range(MAX_GOLD_PAIRS)
                    for a in range(1, 21))                                 # 20 links a pair
    naacl = naacl[:naacl.rindex("\n", 0, MAX_GOLD_BYTES) + 1]
    bad = "1-x " * (MAX_GOLD_BYTES // 4 // 2) + "\n"
    print("| file | bytes | pairs | links | wall: median / max | CPU: median |")
    print("|---|---:|---:|---:|---:|---:|")
    for label, text, fmt in (("Pharaoh, toy gold", small, "pharaoh"),
                             ("Pharaoh, at the limit", big, "pharaoh"),
                             ("NAACL, at the limit", naacl, "naacl")):
        med, worst, cpu, gold = timed(lambda t=text, f=fmt: read_gold(
            t, format=f, first_index=1, order="src-tgt"), repeats)
        n_links = sum(len(p.possible) for p in gold.pairs)
        print(f"| {label} | {len(text.encode()):,} | {len(gold):,} | {n_links:,} "
              f"| {med:.0f} / {worst:.0f} ms | {cpu:.0f} ms |", flush=True)

    def refuse() -> int:
        try:
            read_gold(bad, format="pharaoh", first_index=1, order="src-tgt")
        except GoldFileError as err:
            return len(err.problems)
        raise AssertionError("a malformed file was accepted")

    med, worst, cpu, n_problems = timed(refuse, repeats)
    print(f"| Pharaoh, malformed ({n_problems:,} problems listed) | {len(bad):,} | 1 | 0 "
          f"| {med:.0f} / {worst:.0f} ms | {cpu:.0f} ms |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="3 repeats instead of 11")
    args = parser.parse_args(argv)
    repeats = 3 if args.quick else 11
    print(f"Machine: {machine_line()}\n")
    print(f"Scoring every layer and head, {repeats} repeats:\n")
    scoring_table(repeats)
    print(f"\nReading gold alignment files, {repeats} repeats:\n")
    reading_table(repeats)


if __name__ == "__main__":
    main()
