"""Benchmark ``xattn.train.train``: time, loss and alignment accuracy on held-out sentences.

Run from the repository root::

    python -m benchmarks.bench_train            # all tables, about a minute on 2 cores
    python -m benchmarks.bench_train --quick    # the first table only, seed 0 (smoke test)
    python -m benchmarks.bench_train --timelapse  # tables 4 and 5 only, about a minute

Prints the machine, then Markdown tables (for docs/training.md):

1. per setting, seed 0: wall time of ``train`` (first call in the process, with cold embedding
   caches, and the median of 3 calls), the mean training loss of the last 10 batches, then on
   the 256 held-out sentences the share of target words whose head-averaged attention argmax
   is the gold source word (*word*: either "the" of two counts), is the gold position
   (*exact*), and is the gold position among words that occur twice in the source (*exact,
   repeated*: only position can tell those apart); the mean over heads of each head's own
   word accuracy; the mean head-averaged attention weight on the gold word; the same word
   and exact accuracies for the untrained weights; and the chance level of a uniform argmax;
2. the same accuracies over seeds 0-4 (min / mean);
3. per-head measures of the default run (``xattn.train.alignment_by_head``);
4. what the time-lapse (``TrainConfig.snapshots``, ``xattn.timelapse``) costs, for the page's
   settings: CPU time of this process for ``train`` alone and for ``train`` + ``evaluate``
   (what one new setting costs the page, which reuses the first and last frames as the
   untrained and trained scores), and the wall time of the latter, without frames
   (``snapshots=0``) and with the default 20, runs interleaved, median of
   ``TIMELAPSE_REPEATS``; and the bytes it adds to the run, pickled and by
   ``xattn.cache.nbytes`` (what a byte-bounded cache counts);
5. the default run's time-lapse: per frame the held-out loss, the head-averaged word
   accuracy and each head's word accuracy, then per head the step at which its word accuracy
   first reaches 50% and 90% and its accuracy on moved and on repeated words there and at the
   end ("when does each head start aligning, and by meaning or by position?").
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import time
from dataclasses import replace

import numpy as np

from benchmarks.machine import machine_line
from xattn.alignment import (
    ALIGNMENT_MEASURES,
    alignment_accuracy,
    alignment_by_head,
    chance_accuracy,
    evaluate,
)
from xattn.cache import nbytes
from xattn.train import TrainConfig, make_batch, train

# (label, config overrides): the default, the "about 60%" cross-entropy readout, and
# both at half the step size.
SETTINGS = [("MSE (default)", {}), ("MSE, lr 0.01", {"lr": 0.01}),
            ("cross-entropy", {"objective": "ce"}),
            ("cross-entropy, lr 0.01", {"objective": "ce", "lr": 0.01})]
SEEDS = range(5)
TIME_REPEATS = 3
# (heads, steps) of the page's training controls (1, 2, 4 or 8 heads; 25 to 400 steps)
TIMELAPSE_SETTINGS = [(4, 25), (4, 50), (4, 100), (4, 200), (4, 400), (1, 100), (8, 100),
                      (8, 400)]
TIMELAPSE_REPEATS = 7


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


def _run_times(config: TrainConfig) -> tuple[float, float, float, float]:
    """CPU and wall seconds of ``train``, then of ``train`` + ``evaluate`` (what one new
    setting costs the page: ``xattn.live.training`` caches both)."""
    start, start_cpu = time.perf_counter(), time.process_time()
    result = train(config)
    trained_cpu, trained_wall = time.process_time() - start_cpu, time.perf_counter() - start
    evaluate(result, trained_wall)
    return (trained_cpu, trained_wall,
            time.process_time() - start_cpu, time.perf_counter() - start)


def timelapse_cost_table() -> None:
    print("| heads | steps | frames | train, CPU: without / with | added "
          "| train + score, CPU: without / with | added | wall (train + score): without / with "
          "| bytes added: pickled / nbytes |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for heads, steps in TIMELAPSE_SETTINGS:
        plain, framed = TrainConfig(n_heads=heads, steps=steps, snapshots=0), \
            TrainConfig(n_heads=heads, steps=steps)
        times: dict[str, list] = {"plain": [], "framed": []}
        for _ in range(TIMELAPSE_REPEATS):               # interleaved: load hits both alike
            times["plain"].append(_run_times(plain))
            times["framed"].append(_run_times(framed))
        med = {k: [statistics.median(t[i] for t in v) for i in range(4)]
               for k, v in times.items()}
        result = train(framed)
        bare = replace(result, timelapse=None)
        pickled = len(pickle.dumps(result)) - len(pickle.dumps(bare))

        def added(i: int, med=med) -> str:
            p, f = med["plain"][i], med["framed"][i]
            return f"{1000 * p:.0f} / {1000 * f:.0f} ms | {1000 * (f - p):+.0f} ms " \
                   f"({100 * (f / p - 1):+.0f}%)"
        print(f"| {heads} | {steps} | {len(result.timelapse.steps)} | {added(0)} | {added(2)} "
              f"| {1000 * med['plain'][3]:.0f} / {1000 * med['framed'][3]:.0f} ms "
              f"| {pickled / 1000:.1f} kB / {(nbytes(result) - nbytes(bare)) / 1000:.1f} kB |",
              flush=True)


def timelapse_lesson_table() -> None:
    tl = train(TrainConfig()).timelapse
    n_heads = tl.weights.shape[1]
    print("| step | held-out loss | word (heads averaged) | "
          + " | ".join(f"head {h} word" for h in range(n_heads)) + " |")
    print("|---:|---:|---:|" + "---:|" * n_heads)
    for k, step in enumerate(tl.steps):
        print(f"| {step} | {tl.loss[k]:.3f} | {pct(tl.word_accuracy[k])} | " + " | ".join(
            pct(tl.by_head["word_accuracy"][k, h]) for h in range(n_heads)) + " |")
    print("\n| head | word >= 50% at step | moved / repeated there | word >= 90% at step "
          "| moved / repeated at the end |")
    print("|---:|---:|---:|---:|---:|")
    half, most = tl.onset(0.5), tl.onset(0.9)
    moved, repeated = tl.by_head["moved_accuracy"], tl.by_head["repeated_accuracy"]
    for h in range(n_heads):
        k = int(np.searchsorted(tl.steps, half[h])) if half[h] >= 0 else None
        there = "n/a" if k is None else f"{pct(moved[k, h])} / {pct(repeated[k, h])}"
        print(f"| {h} | {half[h] if half[h] >= 0 else 'never'} | {there} "
              f"| {most[h] if most[h] >= 0 else 'never'} "
              f"| {pct(moved[-1, h])} / {pct(repeated[-1, h])} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="first table only")
    parser.add_argument("--timelapse", action="store_true", help="the time-lapse tables only")
    args = parser.parse_args(argv)
    c = TrainConfig()
    print(f"Machine: {machine_line()}\n")
    if args.timelapse:
        print(f"The time-lapse's cost ({c.snapshots} frames and the start; median of "
              f"{TIMELAPSE_REPEATS} interleaved runs):\n")
        timelapse_cost_table()
        print("\nThe default run's time-lapse (seed 0):\n")
        timelapse_lesson_table()
        print(f"\nMachine after: {machine_line()}")
        return
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
