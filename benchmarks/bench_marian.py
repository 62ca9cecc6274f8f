"""Benchmark the NumPy Marian (``xattn.marian``) against torch eager, side by side in one run.

    python -m benchmarks.bench_marian            # a few minutes on 2 cores
    python -m benchmarks.bench_marian --rounds 1 # quicker, noisier
    python -m benchmarks.bench_marian --threads 2 --rounds 6 --no-float16   # one part, more rounds

An opus-mt-shaped RANDOM model (6 + 6 layers, d_model 512, 8 heads, FFN 2048, vocabulary
58101, swish, scaled and tied embeddings) is built with transformers' ``MarianConfig``, saved
with ``save_pretrained`` (for torch) and with ``write_folder`` (the NumPy folder ``python -m
xattn.models convert`` writes) in a temporary folder. ``</s>`` gets a bias of -1e4 so greedy
decoding always runs 30 steps on both sides. Each measurement runs in a fresh process
(``OPENBLAS_NUM_THREADS`` is read when NumPy starts), alternating torch and NumPy round by
round; the table gives the best and the median of the rounds, each round itself the median of
5 calls after one warm-up call (1 call for float16 storage, which is slow to decode).

- teacher-forced pass: a 30-piece source and a 30-piece target, logits included;
- greedy: 30 new tokens, one beam, with the key/value cache (torch: ``generate``; NumPy:
  ``xattn.marian.decode``, logits of the last position only);
- memory: resident-set growth of the NumPy process from before loading to after one pass,
  against the float32 size of the weights;
- the shipped toy model: in a fresh process, import xattn (the page has done it already),
  import xattn.marian, load, translate and run the teacher-forced pass (the page's first view).
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

from benchmarks.machine import machine_line

OPUS_SHAPE = dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                  decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
                  vocab_size=58101, max_position_embeddings=512, activation_function="swish",
                  scale_embedding=True, pad_token_id=58100, eos_token_id=0,
                  decoder_start_token_id=58100, forced_eos_token_id=None)
N_PIECES, N_NEW, CALLS = 30, 30, 5


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def pair() -> tuple[list[int], list[int]]:
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 58000, size=(2, N_PIECES - 1)).tolist()
    return ids[0] + [0], ids[1] + [0]


def build(folder: Path) -> None:
    """The random model as a save_pretrained folder (torch/) and a NumPy folder (numpy/)."""
    import torch
    from transformers import MarianConfig, MarianMTModel

    from xattn.models import write_folder
    torch.manual_seed(0)
    model = MarianMTModel(MarianConfig(**OPUS_SHAPE)).eval()
    with torch.no_grad():
        model.final_logits_bias[0, 0] = -1e4           # never </s>: 30 steps on both sides
    model.save_pretrained(folder / "torch")
    for dtype in ("float32", "float16"):
        out = write_folder(model, folder / f"numpy-{dtype}", dtype=dtype)
        vocab = {"</s>": 0, "<unk>": 1, "<pad>": 58100}
        (out / "vocab.json").write_text(json.dumps(vocab))
        import sentencepiece as spm
        spm.SentencePieceTrainer.train(sentence_iterator=iter(["a b c d e f g h"] * 20),
                                       model_prefix=str(out / "sp"), vocab_size=12,
                                       hard_vocab_limit=False, minloglevel=2)
        for side in ("source", "target"):
            (out / f"{side}.spm").write_bytes((out / "sp.model").read_bytes())


def _timed(fn, calls: int = CALLS) -> float:
    fn()                                                # warm-up (first call)
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def worker(kind: str, folder: Path, threads: int) -> dict:
    """One measurement process: ``kind`` is torch, numpy-float32 or numpy-float16."""
    src, tgt = pair()
    if kind == "torch":
        import torch
        from transformers import MarianMTModel
        torch.set_num_threads(threads)
        model = MarianMTModel.from_pretrained(folder / "torch", attn_implementation="eager")
        s, t = torch.tensor([src]), torch.tensor([tgt])

        def forced():
            with torch.no_grad():
                model(input_ids=s, labels=t, output_attentions=True)

        def greedy():
            with torch.no_grad():
                out = model.generate(input_ids=s, num_beams=1, do_sample=False,
                                     max_new_tokens=N_NEW, bad_words_ids=[[58100]])
            assert out.shape[1] == N_NEW + 1
        return {"forced": _timed(forced), "greedy": _timed(greedy)}
    from xattn.marian import MarianMT, decode
    before = rss_mb()
    model = MarianMT.from_folder(folder / kind, dtype=kind.split("-")[1])
    loaded = rss_mb()
    model.forward(src, tgt)
    after = rss_mb()
    f32 = sum(a.size * 4 for a in {id(a): a for a in _arrays(model)}.values())

    def greedy():
        assert len(decode(model, src, max_new_tokens=N_NEW).tgt_ids) == N_NEW
    calls = 1 if kind.endswith("float16") else CALLS   # float16: seconds per greedy run
    return {"forced": _timed(lambda: model.forward(src, tgt), calls),
            "greedy": _timed(greedy, calls),
            "rss_load": loaded - before, "rss_pass": after - before, "f32_mb": f32 / 2**20}


def _arrays(model):
    yield from (model.embed_tokens_encoder, model.embed_tokens_decoder, model.lm_head,
                model.final_logits_bias)
    for layer in (*model.encoder_layers, *model.decoder_layers):
        for part in vars(layer).values():
            yield from (v for v in vars(part).values() if isinstance(v, np.ndarray))


def shipped_first_view() -> dict:
    """Seconds for each part of the page's first view of the shipped model, fresh process."""
    code = ("import time; t = [time.perf_counter()]\n"
            "import xattn; t.append(time.perf_counter())\n"
            "from xattn.marian import load_marian, cross_attention; t.append(time.perf_counter())\n"
            "m = load_marian(); t.append(time.perf_counter())\n"
            "a = cross_attention(m, 'the red cat sees the dog'); t.append(time.perf_counter())\n"
            "import json, sys; d = [b - a for a, b in zip(t, t[1:])]\n"
            "print(json.dumps({'import xattn': d[0], 'import xattn.marian': d[1], 'load': d[2], "
            "'translate + pass': d[3], 'torch': 'torch' in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def run(kind: str, folder: Path, threads: int) -> dict:
    env_threads = {"OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    import os
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_marian", "--worker", kind,
                          "--folder", str(folder), "--threads", str(threads)],
                         capture_output=True, text=True, env={**os.environ, **env_threads})
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--worker")
    parser.add_argument("--folder", type=Path)
    parser.add_argument("--threads", default="1,2", help="thread counts to compare, e.g. 1,2")
    parser.add_argument("--no-float16", action="store_true", help="skip float16 storage")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker, args.folder, int(args.threads))))
        return
    print(machine_line())
    kinds = ("torch", "numpy-float32") + (() if args.no_float16 else ("numpy-float16",))
    thread_counts = tuple(int(t) for t in args.threads.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build(folder)
        results = {(k, t): [] for k in kinds for t in thread_counts}
        for r in range(args.rounds):
            for threads in thread_counts:
                for kind in kinds:
                    results[kind, threads].append(run(kind, folder, threads))
            print(f"round {r + 1} done", file=sys.stderr, flush=True)
    print("\n| threads | step | torch eager (s) | NumPy float32 (s) | NumPy / torch | "
          "NumPy float16 storage (s) |")
    print("|---|---|---|---|---|---|")
    for threads in thread_counts:
        for step in ("forced", "greedy"):
            cells = {k: [r[step] for r in results[k, threads]] for k in kinds}
            best = {k: min(v) for k, v in cells.items()}
            med = {k: statistics.median(v) for k, v in cells.items()}
            print(f"| {threads} | {'teacher-forced pass' if step == 'forced' else 'greedy, 30'}"
                  f" | {best['torch']:.3f} (median {med['torch']:.3f}) | "
                  f"{best['numpy-float32']:.3f} (median {med['numpy-float32']:.3f}) | "
                  f"{best['numpy-float32'] / best['torch']:.2f}x | "
                  f"{best.get('numpy-float16', float('nan')):.3f} |")
    print("\n| storage | float32 weights (MB) | RSS growth after load (MB) | after one pass (MB) |"
          " growth / float32 weights |")
    print("|---|---|---|---|---|")
    for kind in kinds[1:]:
        rows = results[kind, thread_counts[0]]
        f32 = rows[0]["f32_mb"]
        load = statistics.median(r["rss_load"] for r in rows)
        after = statistics.median(r["rss_pass"] for r in rows)
        print(f"| {kind.split('-')[1]} | {f32:.0f} | {load:.0f} | {after:.0f} | "
              f"{load / f32:.2f} (after a pass {after / f32:.2f}) |")
    views = [shipped_first_view() for _ in range(max(3, args.rounds))]
    parts = ("import xattn", "import xattn.marian", "load", "translate + pass")
    print("\nShipped model, first view in a fresh process (median of "
          f"{len(views)}): " + ", ".join(f"{k} {statistics.median(v[k] for v in views):.3f} s"
                                         for k in parts) +
          f"; the last three: {statistics.median(sum(v[k] for k in parts[1:]) for v in views):.3f}"
          f" s; torch imported: {any(v['torch'] for v in views)}")


if __name__ == "__main__":
    main()
