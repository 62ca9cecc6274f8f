"""Benchmark the NumPy VisionEncoderDecoder (``xattn.vision``) against torch eager.

    python -m benchmarks.bench_vision              # 3 rounds
    python -m benchmarks.bench_vision --rounds 1   # quicker

A RANDOM model of microsoft/trocr-small-printed's shape (no download) is built from
transformers' configs and saved with ``save_pretrained`` (float32 safetensors) in a temporary
folder both sides read as it is: a DeiT encoder (384 wide, 12 layers, 6 heads, 384x384 image
in 16x16 patches: 578 positions) and a TrOCR decoder (256 wide, 6 layers, 8 heads, 64,044
tokens, reading the encoder's 384 features directly: ``cross_attention_hidden_size``), output
layer untied. ``</s>`` never wins (its output row is zero), so greedy decoding runs its 20
steps on both sides. Each measurement runs in a fresh process on one thread
(``OPENBLAS_NUM_THREADS=1``, ``torch.set_num_threads(1)``), torch and NumPy alternating round
by round; a number is the median of 5 calls after a warm-up, in CPU seconds of the process.

- encoder: one image through the encoder (and the decoder's cross-attention keys and values
  on the NumPy side, which computes them once an image);
- teacher-forced pass: one image and 20 target tokens, cross-attention and logits;
- greedy: 20 new tokens, one beam, with the key/value cache;
- memory: the peak resident set while loading and through the first pass, less the resident
  set before loading, divided by the bytes of ``model.safetensors`` (target <= 1.1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from benchmarks.bench_marian import _cpu, _env, status
from benchmarks.machine import machine_line

N_TGT, N_NEW = 20, 20
ENCODER = dict(image_size=384, patch_size=16, hidden_size=384, num_hidden_layers=12,
               num_attention_heads=6, intermediate_size=1536)
DECODER = dict(vocab_size=64044, d_model=256, decoder_layers=6, decoder_attention_heads=8,
               decoder_ffn_dim=1024, max_position_embeddings=512, activation_function="relu",
               scale_embedding=True, cross_attention_hidden_size=384, tie_word_embeddings=False)


def build(folder: Path) -> None:
    """The random TrOCR-small-shaped model, saved in ``folder``."""
    import torch

    from devtools.tiny_vision import save_tiny_vision, tiny_vision
    model = tiny_vision("deit", spread=None, encoder=ENCODER, decoder=DECODER)
    with torch.no_grad():
        model.decoder.output_projection.weight[model.config.decoder.eos_token_id] = 0.0
    save_tiny_vision(model, folder)


def _inputs():
    rng = np.random.default_rng(0)
    pixels = rng.standard_normal((3, 384, 384)).astype(np.float32)
    return pixels, rng.integers(5, 60000, size=N_TGT).tolist()


def worker(kind: str, folder: Path) -> dict:
    """One measurement process (torch or numpy): CPU seconds and memory."""
    pixels, tgt = _inputs()
    if kind == "torch":
        import torch
        from transformers import VisionEncoderDecoderModel
        torch.set_num_threads(1)
        before = status()
        model = VisionEncoderDecoderModel.from_pretrained(folder, attn_implementation="eager")
        loaded = status()
        px, ids = torch.tensor(pixels[None]), torch.tensor([[2, *tgt[:-1]]])

        def encoder():
            with torch.no_grad():
                model.encoder(pixel_values=px)

        def forced():
            with torch.no_grad():
                model(pixel_values=px, decoder_input_ids=ids, output_attentions=True)

        def greedy():
            with torch.no_grad():
                out = model.generate(pixel_values=px, num_beams=1, do_sample=False,
                                     max_new_tokens=N_NEW)
            assert out.shape[1] == N_NEW + 1, out.shape
    else:
        from xattn.vision import VisionEncoderDecoder
        before = status()
        model = VisionEncoderDecoder.from_folder(folder)
        loaded = status()

        def encoder():
            model.sources(model.encode(pixels))

        def forced():
            model.forward(pixels, tgt)

        def greedy():
            assert len(model.greedy(pixels, max_new_tokens=N_NEW).tgt_ids) == N_NEW
    forced()
    after = status()
    return {"encoder": _cpu(encoder), "forced": _cpu(forced), "greedy": _cpu(greedy),
            "rss_before": before["VmRSS"], "peak_load": loaded["VmHWM"],
            "peak_first_pass": after["VmHWM"]}


def run(kind: str, folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_vision", "--worker", kind,
                          "--folder", str(folder)], capture_output=True, text=True, env=_env())
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def tables(results: dict, weights_mb: float) -> None:
    print("\n| step (trocr-small-printed's shape) | torch CPU s | NumPy CPU s | NumPy / torch "
          "(no target for images; the text families' is <= 1.2) |")
    print("|---|---|---|---|")
    for step, what in (("encoder", "encoder, one 384x384 image"),
                       ("forced", f"teacher-forced pass, {N_TGT} tokens"),
                       ("greedy", f"greedy, {N_NEW} new tokens")):
        t = statistics.median(r[step] for r in results["torch"])
        n = statistics.median(r[step] for r in results["numpy"])
        print(f"| {what} | {t:.3f} | {n:.3f} | {n / t:.2f}x |")

    def ratio(kind, key):
        return statistics.median((r[key] - r["rss_before"]) / weights_mb
                                 for r in results[kind])

    print("\n| side | weights (MB) | peak while loading / weights | peak through the first "
          "pass / weights (target <= 1.1) |")
    print("|---|---|---|---|")
    for kind in ("numpy", "torch"):
        print(f"| {kind} | {weights_mb:.0f} | {ratio(kind, 'peak_load'):.2f} | "
              f"{ratio(kind, 'peak_first_pass'):.2f} |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker")
    parser.add_argument("--folder", type=Path)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.folder)))
        return
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "trocr-small-shape"
        build(folder)
        weights_mb = (folder / "model.safetensors").stat().st_size / 2**20
        results = {"torch": [], "numpy": []}
        for r in range(args.rounds):
            for kind in ("torch", "numpy"):
                results[kind].append(run(kind, folder))
            print(f"round {r + 1} done", file=sys.stderr, flush=True)
    tables(results, weights_mb)
    print(machine_line())


if __name__ == "__main__":
    main()
