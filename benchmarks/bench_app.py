"""Server time of one full script run of the dashboard, and the size of what it sends.

    python -m benchmarks.bench_app [--repeats 15]

A full run is what happens on every click: the whole script reruns. It is measured with
Streamlit's AppTest, which executes the real script in-process, on a warm process (imports
done), for two cases: the cache already holding the computation (a student opening a link the
lecturer opened before) and a cold cache (new settings). A breakdown times the pieces of the
per-head figure outside Streamlit. Targets: default example < 100 ms; 16 heads with 64 x 64
tokens < 300 ms; the per-head figure's JSON for 16 x 64 x 64 < 500 KB.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import time
from pathlib import Path

import plotly.io as pio
from streamlit.testing.v1 import AppTest

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


def full_runs(query: dict, repeats: int, *, cold: bool) -> list[float]:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()  # warm-up: imports, first figure
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
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
