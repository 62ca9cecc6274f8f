"""Whisper in NumPy (``xattn.speech``) against torch eager, side by side in one run.

    python -m benchmarks.bench_whisper                 # whisper-tiny's and whisper-base's shapes
    python -m benchmarks.bench_whisper --rounds 1 --shapes tiny

A RANDOM model of each real model's shape is built from transformers' ``WhisperConfig`` and
saved with ``save_pretrained`` (safetensors, float32) in a temporary folder that both sides
read as it is: whisper-tiny (d_model 384, 4 + 4 layers, 6 heads, 39 M parameters) and
whisper-base (512, 6 + 6, 8 heads, 74 M). The clip is 10 s of a sine sweep under noise,
padded to 30 s by each side's front end (NumPy's ``log_mel``; transformers'
``WhisperFeatureExtractor``, which takes torch's STFT where torch is installed). Each
measurement runs in a fresh process on one thread (``OPENBLAS_NUM_THREADS=1``,
``torch.set_num_threads(1)``), torch and NumPy alternating, round by round; a number is the
median of 3 calls after a warm-up, in CPU seconds of the process (``time.process_time``).

- front end: audio to (80, 3000) log-mel features;
- encoder: features to (1500, d_model);
- transcribe: the clip from audio to tokens, greedy, one beam, key/value cache, timestamps
  off, at most 24 new tokens (both sides must give the same tokens: it is checked);
- memory: the peak resident set through loading and the first transcription, less the
  resident set before loading (after the imports and one small matmul and FFT, which
  allocate the libraries' own buffers), over the bytes of ``model.safetensors``.

Targets (issue 46): transcribe NumPy <= 1.5x torch on one thread; peak <= 1.1x the weights.
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

import numpy as np

from benchmarks.bench_marian import _env, status
from benchmarks.machine import machine_line

N_NEW, CALLS, SECONDS = 24, 3, 10
SHAPES = {   # name -> (the real model it has the shape of, sizes beyond WhisperConfig's)
    "tiny": ("openai/whisper-tiny", {}),
    "base": ("openai/whisper-base", dict(d_model=512, encoder_layers=6, decoder_layers=6,
                                         encoder_attention_heads=8, decoder_attention_heads=8,
                                         encoder_ffn_dim=2048, decoder_ffn_dim=2048)),
}


def clip() -> np.ndarray:
    """10 s: a sweep 100 Hz -> 4 kHz under a little noise, float32."""
    t = np.arange(SECONDS * 16000) / 16000
    noise = np.random.default_rng(0).standard_normal(len(t))
    return (0.5 * np.sin(2 * np.pi * (100 + 195 * t) * t) + 0.02 * noise).astype(np.float32)


def build(shape: str, folder: Path) -> None:
    from devtools.tiny_whisper import WHISPER_TINY, save_whisper

    save_whisper(folder, seed=0, **{**WHISPER_TINY, **SHAPES[shape][1]})


def _cpu(fn) -> float:
    fn()                                                # warm-up (first call)
    times = []
    for _ in range(CALLS):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def _warm_libraries() -> None:
    """The BLAS's buffers and the FFT's plans, allocated once per process whatever the
    model (about 7 MB for OpenBLAS and pocketfft): not counted as the model's memory."""
    np.ones((256, 384), np.float32) @ np.ones((384, 1536), np.float32)
    np.fft.rfft(np.ones((512, 400)))


def _torch_side(folder: Path, audio: np.ndarray):
    import torch
    from transformers import WhisperFeatureExtractor, WhisperForConditionalGeneration

    torch.set_num_threads(1)
    extractor = WhisperFeatureExtractor()
    _warm_libraries()
    torch.ones(256, 384) @ torch.ones(384, 1536)
    torch.stft(torch.ones(16000), 400, 160, window=torch.hann_window(400), return_complex=True)
    before = status()
    model = WhisperForConditionalGeneration.from_pretrained(
        folder, attn_implementation="eager").eval()

    def features():
        return torch.from_numpy(extractor(audio, sampling_rate=16000,
                                          return_tensors="np").input_features)

    def encode():
        with torch.no_grad():
            model.model.encoder(features())

    def transcribe():
        with torch.no_grad():
            out = model.generate(features(), max_new_tokens=N_NEW, return_timestamps=False,
                                 return_dict_in_generate=True)
        return out.sequences[0, 1:].tolist()

    return before, features, encode, transcribe


def _numpy_side(folder: Path, audio: np.ndarray):
    from xattn.speech import Whisper, greedy

    _warm_libraries()
    before = status()
    model = Whisper.from_folder(folder)

    def features():
        return model.features(audio)

    def encode():
        model.encode(features())

    def transcribe():
        return list(greedy(model, features(), max_new_tokens=N_NEW).tokens)

    return before, features, encode, transcribe


def worker(kind: str, folder: Path) -> dict:
    """One measurement process (``kind``: torch or numpy)."""
    audio = clip()
    side = _torch_side if kind == "torch" else _numpy_side
    before, features, encode, transcribe = side(folder, audio)
    tokens = transcribe()                              # the first pass: the memory peak
    after = status()
    return {"features": _cpu(features), "encode": _cpu(encode),
            "transcribe": _cpu(transcribe), "tokens": tokens,
            "rss_before": before["VmRSS"], "peak": after["VmHWM"]}


def run(kind: str, folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_whisper", "--worker", kind,
                          "--folder", str(folder)], capture_output=True, text=True, env=_env())
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--worker")
    parser.add_argument("--folder", type=Path)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.folder)))
        return
    shapes = args.shapes.split(",")
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        folders = {s: Path(tmp) / s for s in shapes}
        for shape, folder in folders.items():
            build(shape, folder)
        results = {(s, k): [] for s in shapes for k in ("torch", "numpy")}
        for r in range(args.rounds):
            for shape in shapes:
                for kind in ("torch", "numpy"):
                    results[shape, kind].append(run(kind, folders[shape]))
            print(f"round {r + 1} done ({machine_line().rsplit(', ', 1)[-1]})",
                  file=sys.stderr, flush=True)
        sizes = {s: (folders[s] / "model.safetensors").stat().st_size / 2**20 for s in shapes}
    _tables(shapes, results, sizes)
    print(machine_line())


def _tables(shapes, results, sizes) -> None:
    print(f"\n| shape | step ({SECONDS}-s clip) | torch CPU s | NumPy CPU s | NumPy / torch "
          f"(target <= 1.5) |")
    print("|---|---|---|---|---|")
    for shape in shapes:
        for step, what in (("features", "front end"), ("encode", "encoder, 1500 positions"),
                           ("transcribe", f"transcribe, <= {N_NEW} tokens")):
            t = statistics.median(r[step] for r in results[shape, "torch"])
            n = statistics.median(r[step] for r in results[shape, "numpy"])
            print(f"| {SHAPES[shape][0]} | {what} | {t:.3f} | {n:.3f} | {n / t:.2f}x |")
    print("\n| shape | weights | NumPy: peak through load and first transcription / weights "
          "| torch: same | target | same tokens |")
    print("|---|---|---|---|---|---|")
    def ratio(shape, kind):
        return statistics.median((r["peak"] - r["rss_before"]) / sizes[shape]
                                 for r in results[shape, kind])

    for shape in shapes:
        same = all(a["tokens"] == b["tokens"] for a, b in
                   zip(results[shape, "torch"], results[shape, "numpy"], strict=True))
        n_tokens = len(results[shape, "numpy"][0]["tokens"])
        print(f"| {SHAPES[shape][0]} | {sizes[shape]:.0f} MiB | {ratio(shape, 'numpy'):.2f} | "
              f"{ratio(shape, 'torch'):.2f} | <= 1.1 | {'yes' if same else 'NO'} ({n_tokens}) |")


if __name__ == "__main__":
    main()
