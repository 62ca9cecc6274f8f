"""Benchmark the NumPy encoder-decoders (``xattn.encdec``) against torch eager, per family.

    python -m benchmarks.bench_marian                      # every family, 3 rounds
    python -m benchmarks.bench_marian --rounds 1 --families marian,t5   # quicker

For each family a RANDOM model of a real model's shape is built from its transformers config
and saved with ``save_pretrained`` (safetensors, float32) beside a small tokenizer, in a
temporary folder that both sides read as it is: opus-mt-en-de (Marian), bart-base,
m2m100_418M, t5-small and flan-t5-small (T5 v1.1). ``</s>`` can never win (a -1e4 bias, or a
zero output row), so greedy decoding runs its 20 steps on both sides. Each measurement runs in
a fresh process on one thread (``OPENBLAS_NUM_THREADS=1``, ``torch.set_num_threads(1)``),
torch and NumPy alternating family by family, round by round; a number is the median of 5
calls after a warm-up, in CPU seconds of the process (``time.process_time``).

- teacher-forced pass: a 30-piece source and a 30-piece target, with logits;
- greedy: 20 new tokens, one beam, with the key/value cache;
- loading: the peak resident set while loading and through the first pass, less the resident
  set before, divided by the bytes of ``model.safetensors`` (NumPy maps the file);
- two processes serving one model: the proportional set size (PSS: shared pages split between
  the processes that map them) of both, against one process alone;
- the shipped toy model: the page's first view in a fresh process, by part.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks.machine import machine_line

N_PIECES, N_NEW, CALLS = 30, 20, 5
SHAPES = {   # family -> (the real model it has the shape of, transformers config class, sizes)
    "marian": ("opus-mt-en-de", "MarianConfig", dict(
        d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
        decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048, vocab_size=58101,
        max_position_embeddings=512, activation_function="swish", scale_embedding=True,
        pad_token_id=58100, eos_token_id=0, decoder_start_token_id=58100)),
    "bart": ("bart-base", "BartConfig", dict(
        d_model=768, encoder_layers=6, decoder_layers=6, encoder_attention_heads=12,
        decoder_attention_heads=12, encoder_ffn_dim=3072, decoder_ffn_dim=3072,
        vocab_size=50265, max_position_embeddings=1024)),
    "m2m_100": ("m2m100_418M", "M2M100Config", dict(
        d_model=1024, encoder_layers=12, decoder_layers=12, encoder_attention_heads=16,
        decoder_attention_heads=16, encoder_ffn_dim=4096, decoder_ffn_dim=4096,
        vocab_size=128112, max_position_embeddings=1024, scale_embedding=True)),
    "t5": ("t5-small", "T5Config", dict(
        d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8, vocab_size=32128,
        decoder_start_token_id=0)),
    "t5-v1.1": ("flan-t5-small", "T5Config", dict(
        d_model=512, d_kv=64, d_ff=1024, num_layers=8, num_heads=6, vocab_size=32128,
        feed_forward_proj="gated-gelu", tie_word_embeddings=False, decoder_start_token_id=0)),
}
_TOKENIZER = {"marian": None, "bart": "bart", "m2m_100": "m2m_100", "t5": "t5",
              "t5-v1.1": "t5"}


def status(pid: str = "self") -> dict:
    """VmRSS, VmHWM (peak) and, from smaps_rollup, Pss of a process, in MB."""
    out = {}
    for name in (f"/proc/{pid}/status", f"/proc/{pid}/smaps_rollup"):
        with open(name) as f:
            for line in f:
                key = line.split(":")[0]
                if key in ("VmRSS", "VmHWM", "Pss"):
                    out[key] = int(line.split()[1]) / 1024
    return out


def pair(vocab: int) -> tuple[list[int], list[int]]:
    rng = np.random.default_rng(0)
    ids = rng.integers(5, min(vocab, 30000), size=(2, N_PIECES - 1)).tolist()
    return ids[0] + [2], ids[1] + [2]


def build(family: str, folder: Path) -> None:
    """The random model of ``family``'s shape, saved with its tokenizer in ``folder``."""
    import torch
    import transformers

    from devtools.tiny_marian import make_tokenizer as marian_tokenizer
    from devtools.tiny_models import make_tokenizer
    _, config_class, sizes = SHAPES[family]
    tokenizer = None if _TOKENIZER[family] is None else \
        make_tokenizer(_TOKENIZER[family], folder / "tokenizer")
    if tokenizer is not None:              # the config's special ids are the tokenizer's
        sizes = {**sizes, "pad_token_id": tokenizer.pad_token_id,
                 "eos_token_id": tokenizer.eos_token_id, "decoder_start_token_id":
                 tokenizer.pad_token_id if family.startswith("t5") else tokenizer.eos_token_id}
    config = getattr(transformers, config_class)(**sizes)
    torch.manual_seed(0)
    model = transformers.AutoModelForSeq2SeqLM.from_config(config).eval()
    eos = config.eos_token_id
    with torch.no_grad():                          # </s> never wins: every decoding is long
        if hasattr(model, "final_logits_bias"):
            model.final_logits_bias[0, eos] = -1e4
        else:
            model.get_output_embeddings().weight[eos] = 0.0
    model.save_pretrained(folder)
    if _TOKENIZER[family] is None:
        tok = marian_tokenizer(folder / "spm")
        for name in ("source.spm", "target.spm"):
            (folder / name).write_bytes((folder / "spm" / name).read_bytes())
        vocab = json.loads((folder / "spm" / "vocab.json").read_text())
        vocab = {p: i for p, i in vocab.items() if p != "<pad>"} | {"<pad>": 58100}
        (folder / "vocab.json").write_text(json.dumps(vocab))
        del tok
    else:
        tokenizer.save_pretrained(folder)


def _cpu(fn, calls: int = CALLS) -> float:
    fn()                                                # warm-up (first call)
    times = []
    for _ in range(calls):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return statistics.median(times)


def worker(kind: str, folder: Path) -> tuple[dict, object]:
    """One measurement process: ``kind`` is torch or numpy. The numbers, and the model (kept
    alive by a serving process)."""
    config = json.loads((folder / "config.json").read_text())
    src, tgt = pair(config["vocab_size"])
    start = config.get("decoder_start_token_id") or 0
    if kind == "torch":
        import torch
        from transformers import AutoModelForSeq2SeqLM
        torch.set_num_threads(1)
        before = status()                      # after the imports: the model's own memory
        model = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager")
        s, d = torch.tensor([src]), torch.tensor([[start, *tgt[:-1]]])

        def forced():
            with torch.no_grad():
                model(input_ids=s, decoder_input_ids=d, output_attentions=True)

        def greedy():
            with torch.no_grad():
                out = model.generate(input_ids=s, num_beams=1, do_sample=False,
                                     max_new_tokens=N_NEW, forced_eos_token_id=None)
            assert out.shape[1] == N_NEW + 1
        forced()
    else:
        import tokenizers  # noqa: F401  (imported by the load, not part of the model)

        from xattn.encdec import EncoderDecoder, decode
        before = status()
        model = EncoderDecoder.from_folder(folder)
        loaded = status()

        def forced():
            model.forward(src, tgt)

        def greedy():
            assert len(decode(model, src, max_new_tokens=N_NEW).tgt_ids) == N_NEW
        forced()
    after = status()
    out = {"forced": _cpu(forced), "greedy": _cpu(greedy), "rss_before": before["VmRSS"],
           "peak_first_pass": after["VmHWM"], "rss_after": after["VmRSS"]}
    if kind == "numpy":
        out["peak_load"] = loaded["VmHWM"]
    return out, model


def serve(kind: str, folder: Path) -> None:
    """Load and run one pass, say so, and stay until stdin closes (a server process)."""
    numbers, model = worker(kind, folder)
    print(json.dumps(numbers), flush=True)
    sys.stdin.read()
    del model


def _env() -> dict:
    return {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "TRANSFORMERS_VERBOSITY": "error"}


def run(kind: str, folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-m", "benchmarks.bench_marian", "--worker", kind,
                          "--folder", str(folder)], capture_output=True, text=True, env=_env())
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def two_processes(kind: str, folder: Path) -> tuple[float, float]:
    """PSS of one serving process alone, and of two serving the same folder together (MB)."""
    cmd = [sys.executable, "-m", "benchmarks.bench_marian", "--serve", kind, "--folder",
           str(folder)]
    procs = []
    try:
        for _ in range(2):
            procs.append(subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                          text=True, env=_env()))
            procs[-1].stdout.readline()                   # loaded and one pass done
            if len(procs) == 1:
                one = status(str(procs[0].pid))["Pss"]
        both = sum(status(str(p.pid))["Pss"] for p in procs)
    finally:
        for p in procs:
            p.stdin.close()
            p.wait(60)
    return one, both


def main(argv=None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--families", default=",".join(SHAPES))
    parser.add_argument("--worker")
    parser.add_argument("--serve")
    parser.add_argument("--folder", type=Path)
    args = parser.parse_args(argv)
    if args.worker or args.serve:
        if args.serve:
            serve(args.serve, args.folder)
        else:
            print(json.dumps(worker(args.worker, args.folder)[0]))
        return
    families = args.families.split(",")
    print(machine_line())
    with tempfile.TemporaryDirectory() as tmp:
        folders = {f: Path(tmp) / f for f in families}
        for family, folder in folders.items():
            build(family, folder)
        results = {(f, k): [] for f in families for k in ("torch", "numpy")}
        for r in range(args.rounds):
            for family in families:
                for kind in ("torch", "numpy"):
                    results[family, kind].append(run(kind, folders[family]))
            print(f"round {r + 1} done ({machine_line().rsplit(', ', 1)[-1]})",
                  file=sys.stderr, flush=True)
        shared = {f: {k: two_processes(k, folders[f]) for k in ("numpy", "torch")}
                  for f in families}
        sizes = {f: (folders[f] / "model.safetensors").stat().st_size / 2**20 for f in families}
    _tables(families, results, shared, sizes)
    print(machine_line())
    _shipped()


def _tables(families, results, shared, sizes) -> None:
    print("\n| family (shape) | step | torch CPU s | NumPy CPU s | NumPy / torch (target "
          "<= 1.2) |")
    print("|---|---|---|---|---|")
    for family in families:
        for step, what in (("forced", "teacher-forced pass"), ("greedy", f"greedy, {N_NEW}")):
            t = statistics.median(r[step] for r in results[family, "torch"])
            n = statistics.median(r[step] for r in results[family, "numpy"])
            print(f"| {family} ({SHAPES[family][0]}) | {what} | {t:.3f} | {n:.3f} | "
                  f"{n / t:.2f}x |")
    print("\n| family | weights (MB) | NumPy peak while loading / weights | NumPy peak "
          "through the first pass / weights (target <= 1.1) | torch peak through the first "
          "pass / weights | PSS, 2 NumPy processes / 1 | PSS, 2 torch processes / 1 |")
    print("|---|---|---|---|---|---|---|")
    def ratio(rows, key, w):
        return statistics.median((r[key] - r["rss_before"]) / w for r in rows)

    for family in families:
        num, tor, w = results[family, "numpy"], results[family, "torch"], sizes[family]
        (n1, n2), (t1, t2) = shared[family]["numpy"], shared[family]["torch"]
        print(f"| {family} | {w:.0f} | {ratio(num, 'peak_load', w):.2f} | "
              f"{ratio(num, 'peak_first_pass', w):.2f} | {ratio(tor, 'peak_first_pass', w):.2f} | "
              f"{n2:.0f} / {n1:.0f} MB = {n2 / n1:.2f} | {t2:.0f} / {t1:.0f} MB = "
              f"{t2 / t1:.2f} |")


def _shipped() -> None:
    """Seconds for each part of the page's first view of the shipped model, fresh process."""
    code = ("import time; t = [time.perf_counter()]\n"
            "import xattn; t.append(time.perf_counter())\n"
            "from xattn.encdec import load_encdec, cross_attention; t.append(time.perf_counter())\n"
            "m = load_encdec(); t.append(time.perf_counter())\n"
            "a = cross_attention(m, 'the red cat sees the dog'); t.append(time.perf_counter())\n"
            "import json, sys; d = [b - a for a, b in zip(t, t[1:])]\n"
            "print(json.dumps(d + ['torch' in sys.modules]))")
    views = [json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                       text=True, check=True).stdout) for _ in range(3)]
    parts = ("import xattn", "import xattn.encdec", "load", "translate + pass")
    print("\nShipped model, first view in a fresh process (median of 3): " + ", ".join(
        f"{name} {statistics.median(v[i] for v in views):.3f} s" for i, name in
        enumerate(parts)) + f"; torch imported: {any(v[-1] for v in views)}")


if __name__ == "__main__":
    main()
