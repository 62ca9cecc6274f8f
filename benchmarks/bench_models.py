"""Benchmark ``xattn.torch_models`` on random Marian models: the tiny test model and opus-mt's
shape.

Run from the repository root (needs ``pip install -r requirements-models.txt``)::

    python -m benchmarks.bench_models            # about a minute on 2 cores
    python -m benchmarks.bench_models --quick    # the tiny model only

Nothing is downloaded: the models are random (built from a ``MarianConfig``), saved with
``save_pretrained`` in a temporary folder and loaded from there with ``load_model``, as a
deployment with a pre-filled cache would. The opus-mt shape is d_model 512, 6 encoder and 6
decoder layers, 8 heads, FFN 2048, vocabulary 58101, tied embeddings; its tokenizer is the tiny
test tokenizer (a few dozen ids), which changes nothing in the cost of a forward pass of a given
length. A random model never emits ``</s>``, so "translate" always runs ``max_new_tokens`` steps.

Prints the machine, then a Markdown table: the median wall time of each step (first call in the
process, then the median of the repeats), and for a load the growth of the resident memory of a
fresh process (import of torch and transformers included), right after ``load_model`` and after
one forward pass (safetensors are memory-mapped: pages count once touched), and the parameters'
float32 size.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.machine import machine_line
from devtools.tiny_marian import SRC_SENTENCES, TGT_SENTENCES, save_tiny

OPUS_SHAPE = dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                  decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
                  vocab_size=58101, max_position_embeddings=512)
N_PIECES = 30   # sentence length, in the tokenizer's pieces (``</s>`` included)
REPEATS = 5


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        kb = next(int(line.split()[1]) for line in f if line.startswith("VmRSS"))
    return kb / 1024


def load_in_fresh_process(folder: str) -> dict:
    """Import, load and measure in a new interpreter (cold imports, clean memory)."""
    code = f"""
import json, time
from benchmarks.bench_models import rss_mb
before = rss_mb(); t0 = time.perf_counter()
from xattn.torch_models import load_model
loaded = load_model({folder!r}, allowed=[{folder!r}])
t1 = time.perf_counter()
after_load = rss_mb()
from xattn.torch_models import cross_attention
cross_attention(loaded, "the cat sat on the mat.", "le chat est assis sur le tapis.")
n = sum(p.numel() for p in loaded.model.parameters())
print(json.dumps(dict(seconds=t1 - t0, rss_load=after_load - before,
                      rss_used=rss_mb() - before, parameters=n)))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def sentence(tokenizer, sentences, *, target: bool) -> str:
    """The first words of ``sentences`` that make at least N_PIECES pieces."""
    words, text = " ".join(sentences).split(), ""
    for n in range(1, len(words) + 1):
        text = " ".join(words[:n])
        ids = tokenizer(text_target=text) if target else tokenizer(text)
        if len(ids["input_ids"]) >= N_PIECES:
            break
    return text


def timed(fn, repeats: int = REPEATS) -> tuple[float, float]:
    """(first call, median of the repeats) in seconds."""
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return times[0], statistics.median(times[1:])


def bench(label: str, folder: str, rows: list[str]) -> None:
    from xattn.subwords import merge_words
    from xattn.torch_models import cross_attention, layer_ablation, layer_trace, load_model

    cold = load_in_fresh_process(folder)
    rows.append(f"| {label} | load_model (fresh process, imports included) | "
                f"{cold['seconds']:.2f} s | – | RSS +{cold['rss_load']:.0f} MB after the load, "
                f"+{cold['rss_used']:.0f} MB after one pass; "
                f"{cold['parameters'] / 1e6:.1f}M parameters = "
                f"{cold['parameters'] * 4 / 2**20:.0f} MB float32 |")
    warm_first, warm = timed(lambda: load_model(folder, allowed=[folder]), repeats=2)
    rows.append(f"| {label} | load_model in this process (imports done) | {warm_first:.2f} s | "
                f"{warm:.2f} s | |")
    loaded = load_model(folder, allowed=[folder])
    src = sentence(loaded.tokenizer, SRC_SENTENCES, target=False)
    tgt = sentence(loaded.tokenizer, TGT_SENTENCES, target=True)
    pieces = cross_attention(loaded, src, tgt, words=False)
    n = f"{len(pieces.tgt_ids)} x {len(pieces.src_ids)} pieces"
    steps = [
        ("cross_attention, pieces (one forward pass)",
         lambda: cross_attention(loaded, src, tgt, words=False)),
        ("cross_attention, words (forward + merging)",
         lambda: cross_attention(loaded, src, tgt)),
        ("merge_words alone", lambda: merge_words(pieces.weights, pieces.src_groups,
                                                  pieces.tgt_groups)),
        (f"cross_attention, translate {N_PIECES} pieces first",
         lambda: cross_attention(loaded, src, max_new_tokens=N_PIECES)),
        ("layer_trace (last layer)", lambda: layer_trace(loaded, pieces, loaded.n_layers - 1)),
        ("layer_ablation (last layer, all heads)",
         lambda: layer_ablation(loaded, pieces, loaded.n_layers - 1)),
    ]
    for name, fn in steps:
        first, median = timed(fn)
        rows.append(f"| {label} | {name} | {first * 1e3:.1f} ms | {median * 1e3:.1f} ms | {n} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the tiny model only")
    args = parser.parse_args(argv)

    print(machine_line())
    import torch
    import transformers
    print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), "
          f"transformers {transformers.__version__}\n")
    rows = ["| model | step | first | median | notes |", "|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        bench("tiny (test)", str(save_tiny(Path(tmp) / "tiny")), rows)
        if not args.quick:
            bench("opus-mt shape", str(save_tiny(Path(tmp) / "opus", **OPUS_SHAPE)), rows)
    print("\n".join(rows))


if __name__ == "__main__":
    main()
