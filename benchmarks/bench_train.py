"""Benchmark ``xattn.train.train``: time, loss and alignment accuracy on held-out sentences.

Run from the repository root::

    python -m benchmarks.bench_train            # all tables, about a minute on 2 cores
    python -m benchmarks.bench_train --quick    # the first table only, seed 0 (smoke test)

Prints the machine, then Markdown tables (for the README):

1. per setting, seed 0: wall time of ``train`` (first call in the process, with cold embedding
   caches, and the median of 3 calls), the mean training loss of the last 10 batches, then on
   the 256 held-out sentences the share of target words whose head-averaged attention argmax
   is the gold source word (*word*: either "the" of two counts), is the gold position
   (*exact*), and is the gold position among words that occur twice in the source (*exact,
   repeated*: only position can tell those apart); the mean over heads of each head's own
   word accuracy; the mean head-averaged attention weight on the gold word; the same word
   and exact accuracies for the untrained weights; and the chance level of a uniform argmax;
2. the same accuracies over seeds 0-4 (min / mean);
3. per-head measures of the default run (``xattn.train.alignment_by_head``).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from benchmarks.machine import machine_line
from xattn.alignment import (
    ALIGNMENT_MEASURES,
    alignment_accuracy,
    alignment_by_head,
    chance_accuracy,
)
from xattn.train import TrainConfig, make_batch, train

# (label, config overrides): the default, the "about 60%" cross-entropy readout, and
# both at half the step size.
SETTINGS = [("MSE (default)", {}), ("MSE, lr 0.01", {"lr": 0.01}),
            ("cross-entropy", {"objective": "ce"}),
            ("cross-entropy, lr 0.01", {"objective": "ce", "lr": 0.01})]
SEEDS = range(5)
TIME_REPEATS = 3


def scores(result) -> dict[str, float]:
    """Held-out accuracies of a TrainResult, trained and untrained."""
    model, emb, pairs = result.model, result.embedder, result.heldout
    gold_weight, repeated = head_average_details(result)
    return {
        "word": alignment_accuracy(model, emb, pairs),
        "exact": alignment_accuracy(model, emb, pairs, exact=True),
        "repeated": repeated,
        "per_head_word": float(alignment_by_head(model, emb, pairs)["word_accuracy"].mean()),
        "gold_weight": gold_weight,
        "untrained_word": alignment_accuracy(result.untrained, emb, pairs),
        "untrained_exact": alignment_accuracy(result.untrained, emb, pairs, exact=True),
        "chance_word": chance_accuracy(pairs),
        "chance_exact": chance_accuracy(pairs, exact=True),
    }


def head_average_details(result) -> tuple[float, float]:
    """Of the head-averaged attention on the held-out set: the mean weight on the gold
    position, and the exact accuracy on target words whose gold word occurs twice."""
    batch = make_batch(result.heldout, result.embedder)
    _, w = result.model(batch.decoder_state, batch.encoder_output, batch.encoder_mask)
    avg = w.mean(axis=1)                                                      # (B, T, S)
    rows, gold = batch.gold >= 0, np.maximum(batch.gold, 0)                   # (B, T)
    on_gold = np.take_along_axis(avg, gold[..., None], axis=-1)[..., 0]       # (B, T)
    gold_word = np.take_along_axis(batch.source_words, gold, axis=1)          # (B, T)
    repeated = rows & ((batch.source_words[:, None, :] == gold_word[..., None]).sum(-1) > 1)
    exact = avg.argmax(axis=-1) == batch.gold
    return float(on_gold[rows].mean()), float(exact[repeated].mean())


def timed_train(config: TrainConfig) -> tuple[object, float, float]:
    """The result, the first call's wall time, and the median of TIME_REPEATS calls."""
    times = []
    for _ in range(TIME_REPEATS):
        start = time.perf_counter()
        result = train(config)
        times.append(time.perf_counter() - start)
    return result, times[0], statistics.median(times)


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def settings_table() -> None:
    print("| setting | time: first / median | final loss | word | exact | exact, repeated "
          "| per-head word (mean) | weight on gold | untrained word / exact "
          "| chance word / exact |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, overrides in SETTINGS:
        result, first, median = timed_train(TrainConfig(**overrides))
        s = scores(result)
        print(f"| {label} | {first:.2f} s / {median:.2f} s | {result.losses[-10:].mean():.4f} "
              f"| {pct(s['word'])} | {pct(s['exact'])} | {pct(s['repeated'])} "
              f"| {pct(s['per_head_word'])} | {s['gold_weight']:.2f} "
              f"| {pct(s['untrained_word'])} / {pct(s['untrained_exact'])} "
              f"| {pct(s['chance_word'])} / {pct(s['chance_exact'])} |", flush=True)


def seeds_table() -> None:
    print("| setting | word: min / mean | exact: min / mean | exact, repeated: min / mean "
          "| weight on gold: mean |")
    print("|---|---:|---:|---:|---:|")
    for label, overrides in SETTINGS:
        runs = [scores(train(TrainConfig(seed=seed, **overrides))) for seed in SEEDS]
        col = {k: np.array([r[k] for r in runs]) for k in runs[0]}
        print(f"| {label} | " + " | ".join(
            f"{pct(col[k].min())} / {pct(col[k].mean())}" for k in ("word", "exact", "repeated"))
            + f" | {col['gold_weight'].mean():.2f} |", flush=True)


def heads_table() -> None:
    result = train(TrainConfig())
    stats = alignment_by_head(result.model, result.embedder, result.heldout)
    print("| head | " + " | ".join(ALIGNMENT_MEASURES) + " |")
    print("|---:|" + "---:|" * len(ALIGNMENT_MEASURES))
    for h in stats["head"]:
        print(f"| {h} | " + " | ".join(
            f"{stats[k][h]:.2f}" if k == "gold_weight" else pct(stats[k][h])
            for k in ALIGNMENT_MEASURES) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="first table only")
    args = parser.parse_args(argv)
    c = TrainConfig()
    print(f"Machine: {machine_line()}\n")
    print(f"Defaults: d_model {c.d_model}, {c.n_heads} heads, {c.steps} Adam steps of "
          f"{c.batch_size} fresh sentences, lr {c.lr}; {c.n_heldout} held-out sentences.\n")
    settings_table()
    if args.quick:
        return
    print(f"\nSeeds {SEEDS.start}-{SEEDS.stop - 1}:\n")
    seeds_table()
    print("\nPer head, default run (seed 0):\n")
    heads_table()


if __name__ == "__main__":
    main()
