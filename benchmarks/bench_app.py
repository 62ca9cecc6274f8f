"""Server time of one full script run of the dashboard, and the size of what it sends.

    python -m benchmarks.bench_app [--repeats 15]

A full run is what happens on every click: the whole script reruns. It is measured with
Streamlit's AppTest, which executes the real script in-process, on a warm process (imports
done), for two cases: the cache already holding the computation (a student opening a link the
lecturer opened before) and a cold cache (new settings). A breakdown times the pieces of the
per-head figure outside Streamlit. Targets: default example < 100 ms; 16 heads with 64 x 64
tokens < 300 ms; the per-head figure's JSON for 16 x 64 x 64 < 500 KB.

The other weights sources (``--sources``, needs requirements-models.txt for the model): the
trained source's first load (training included, nothing stored yet) < 2 s; with a loaded
model of opus-mt's shape (6 layers x 8 heads, a sentence pair of 30 pieces each, random
weights saved and loaded like a cached download), a rerun that switches the layer or opens a
head < 150 ms.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from pathlib import Path

import plotly.io as pio
from streamlit.testing.v1 import AppTest

from benchmarks.machine import machine_line
from xattn.figures import per_head_figure
from xattn.pipeline import Settings, run
from xattn.ui.compute import clear_caches

ROOT = Path(__file__).resolve().parent.parent

BIG_SRC = " ".join(f"s{i}" for i in range(64))
BIG_TGT = " ".join(f"t{i}" for i in range(64))
CASES = {
    "default example (4 heads, 7 x 8 tokens)": {},
    "16 heads, 64 x 64 tokens, d_model 64": {"src": BIG_SRC, "tgt": BIG_TGT, "d_model": "64",
                                             "heads": "16"},
}


def quiet_streamlit_logs() -> None:
    """AppTest runs without a server: silence its "no runtime" and "no ScriptRunContext" chatter."""
    for name in ("streamlit.runtime.caching.cache_data_api",
                 "streamlit.runtime.scriptrunner_utils.script_run_context"):
        logging.getLogger(name).setLevel(logging.ERROR)


def full_runs(query: dict, repeats: int, *, cold: bool, first: bool = False) -> list[float]:
    """Times of ``repeats`` reruns after a warm-up run (``first``: the time of that run)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    t0 = time.perf_counter()
    at.run()  # warm-up: imports, first figure
    if first:
        return [time.perf_counter() - t0]
    quiet_streamlit_logs()
    times = []
    for _ in range(repeats):
        if cold:
            clear_caches()
        start = time.perf_counter()
        at.run()
        times.append(time.perf_counter() - start)
        assert not at.exception, at.exception
    return times


VIEWS = ("Heads", "Step through", "Head statistics", "Switch heads off", "Lines", "Compare",
         "Export")


def breakdown(settings: Settings, repeats: int) -> dict[str, float]:
    parts = {"compute (tokenize, embed, attend)": [], "build per-head go.Figure": [],
             "figure to JSON": []}
    size = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = run(settings)
        t1 = time.perf_counter()
        fig = per_head_figure(r.weights, r.src_tokens, r.tgt_tokens, mask=r.mask)
        t2 = time.perf_counter()
        size = len(pio.to_json(fig, validate=False))
        t3 = time.perf_counter()
        for name, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            parts[name].append(dt)
    out = {name: statistics.median(v) * 1e3 for name, v in parts.items()}
    out["per-head JSON size (KB)"] = size / 1000
    return out


def sources(repeats: int) -> list[str]:
    """Rows of the table of the trained and model sources."""
    import os
    import tempfile

    import streamlit as st

    rows = []
    firsts = []
    for _ in range(3):
        st.cache_resource.clear()                     # nothing trained, nothing stored
        firsts.append(full_runs({"weights": "trained"}, 0, cold=False, first=True)[0])
    stored = statistics.median(full_runs({"weights": "trained"}, repeats, cold=False))
    rows.append(f"| trained: first load, training included | "
                f"{statistics.median(firsts) * 1e3:.0f} | < 2000 |")
    rows.append(f"| trained: a rerun, the class's run stored | {stored * 1e3:.0f} | |")
    from benchmarks.bench_models import OPUS_SHAPE, sentence
    from devtools.tiny_marian import SRC_SENTENCES, TGT_SENTENCES, make_tokenizer, save_tiny
    from xattn.models import MODELS_ENV

    with tempfile.TemporaryDirectory() as tmp:
        folder = str(save_tiny(os.path.join(tmp, "opus"), **OPUS_SHAPE))
        os.environ[MODELS_ENV] = folder
        tok = make_tokenizer(os.path.join(tmp, "tok"))
        query = {"weights": "model", "src": sentence(tok, SRC_SENTENCES, target=False),
                 "tgt": sentence(tok, TGT_SENTENCES, target=True)}
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
        for key, value in query.items():
            at.query_params[key] = value
        start = time.perf_counter()
        at.run()
        rows.append(f"| model (opus-mt shape): first page, load and one pass | "
                    f"{(time.perf_counter() - start) * 1e3:.0f} | |")
        for label, change in (("switch the layer", lambda i: at.select_slider(key="layer")
                               .set_value(1 + i % 6)),
                              ("open a head", lambda i: at.selectbox(key="focus")
                               .set_value(1 + i % 8))):
            times = []
            for i in range(repeats):
                change(i)
                t0 = time.perf_counter()
                at.run()
                times.append(time.perf_counter() - t0)
                assert not at.exception, at.exception
            rows.append(f"| model (opus-mt shape): {label} | "
                        f"{statistics.median(times) * 1e3:.0f} | < 150 |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--sources", action="store_true",
                    help="only the trained and model sources (needs requirements-models.txt)")
    args = ap.parse_args()
    print(machine_line())
    if args.sources:
        print("| weights source | full run (ms, median) | target |")
        print("|---|---:|---:|")
        print("\n".join(sources(args.repeats)))
        return
    print("| case | full run, cached (ms, median) | full run, cold cache (ms, median) |")
    print("|---|---:|---:|")
    for name, query in CASES.items():
        warm = statistics.median(full_runs(query, args.repeats, cold=False)) * 1e3
        cold = statistics.median(full_runs(query, args.repeats, cold=True)) * 1e3
        print(f"| {name} | {warm:.0f} | {cold:.0f} |")
    print()
    print("| view (cached, median ms) | " + " | ".join(CASES) + " |")
    print("|---|" + "---:|" * len(CASES))
    for view in VIEWS:
        cells = [statistics.median(full_runs({**q, "view": view}, max(3, args.repeats // 3),
                                             cold=False)) * 1e3 for q in CASES.values()]
        print(f"| {view} | " + " | ".join(f"{c:.0f}" for c in cells) + " |")
    print()
    big = Settings(src=BIG_SRC, tgt=BIG_TGT, d_model=64, n_heads=16)
    print("| piece, 16 heads x 64 x 64 | value |")
    print("|---|---:|")
    for name, value in breakdown(big, args.repeats).items():
        unit = "" if "KB" in name else " ms"
        print(f"| {name} | {value:.1f}{unit} |")


if __name__ == "__main__":
    main()
