"""Server time of one full script run of the dashboard, and the size of what it sends.

    python -m benchmarks.bench_app [--repeats 15]

A full run is what happens on every click: the whole script reruns. It is measured with
Streamlit's AppTest, which executes the real script in-process, on a warm process (imports
done), for the default example, 16 heads of 64 x 64 tokens, and both in presenter mode, each
with the cache already holding the computation and its charts (a student opening a link the
lecturer opened before) and with a cold cache (new settings); then every view (Decode and
Alignment on the shipped model, Training on trained weights), every lesson step, and the
pieces of a new setting's charts outside Streamlit. Targets: a full run of the default example
< 100 ms, of 16 heads with 64 x 64 tokens < 300 ms, presenter mode and every
lesson step included; the JSON of the 16 heads' charts for 16 x 64 x 64 < 500 KB.

The other weights sources (``--sources``, needs requirements-models.txt for the model): the
trained source's first load (training included, nothing stored yet) < 2 s; with a loaded
model of opus-mt's shape (6 layers x 8 heads, a sentence pair of 30 pieces each, random
weights saved and loaded like a cached download), a rerun that switches the layer or opens a
head < 150 ms.

The views of a translation model (``--decode``, the shipped model, base install): a rerun after
a step change in Decode (``dstep``) < 100 ms, a step seen before and a step not seen before;
the alignment lab's first screen (``view=Alignment``, 256 held-out sentences translated and
scored, every cache cleared first but the loaded model) < 2 s, and the same with the model's
loading too (a fresh server's first visitor).
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
from xattn.figures.frozen import frozen
from xattn.figures.heads import head_parts
from xattn.live.compute import clear_caches
from xattn.live.process import clear_all
from xattn.pipeline import Settings, run

ROOT = Path(__file__).resolve().parent.parent

BIG_SRC = " ".join(f"s{i}" for i in range(64))
BIG_TGT = " ".join(f"t{i}" for i in range(64))
BIG = {"src": BIG_SRC, "tgt": BIG_TGT, "d_model": "64", "heads": "16"}
CASES = {
    "default example (4 heads, 7 x 8 tokens)": {},
    "16 heads, 64 x 64 tokens, d_model 64": BIG,
    "presenter mode (present=1), default example": {"present": "1"},
    "presenter mode, 16 heads, 64 x 64 tokens": {**BIG, "present": "1"},
}


def quiet_streamlit_logs() -> None:
    """AppTest runs without a server: silence its "no runtime" and "no ScriptRunContext" chatter."""
    for name in ("streamlit.runtime.caching.cache_data_api",
                 "streamlit.runtime.scriptrunner_utils.script_run_context"):
        logging.getLogger(name).setLevel(logging.ERROR)


def full_runs(query: dict, repeats: int, *, cold: bool, first: bool = False) -> list[float]:
    """Times of ``repeats`` reruns after a warm-up run (``first``: the time of that run)."""
    at = AppTest.from_file(str(ROOT / "xattn" / "ui" / "main.py"), default_timeout=120)
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
# The views that need other weights than random ones, each on the weights it is made for.
OWN_WEIGHTS = {"Decode": "model", "Alignment": "model", "Training": "trained"}


def breakdown(settings: Settings, repeats: int) -> dict[str, float]:
    """The pieces of a new setting's Heads view outside Streamlit: the attention, one chart
    per head as the page makes them (``head_parts`` + ``frozen``: Plotly's dict, no figure
    objects), their JSON (what ``st.plotly_chart`` sends)."""
    parts = {"compute (tokenize, embed, attend)": [], "make the 16 head charts (frozen dicts)": [],
             "charts to JSON": []}
    size = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        r = run(settings)
        t1 = time.perf_counter()
        charts = [frozen(*head_parts(r.weights[h], r.src_tokens, r.tgt_tokens, head=h,
                                     mask=r.mask, max_x_labels=32))
                  for h in range(len(r.weights))]
        t2 = time.perf_counter()
        size = sum(len(pio.to_json(c.to_dict(), validate=False)) for c in charts)
        t3 = time.perf_counter()
        for name, dt in zip(parts, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            parts[name].append(dt)
    out = {name: statistics.median(v) * 1e3 for name, v in parts.items()}
    out["JSON of the 16 charts (KB; a page of heads sends 2 of them)"] = size / 1000
    return out


def lesson(repeats: int) -> list[str]:
    """Rows: a full rerun of each lesson step (opened from its link, then rerun, cached)."""
    from xattn.lesson import STEPS
    rows = []
    for n, step in enumerate(STEPS, 1):
        t = statistics.median(full_runs({"view": "Lesson", "lesson": str(n)},
                                        max(3, repeats // 3), cold=False)) * 1e3
        rows.append(f"| {n}. {step.title} | {step.state.get('view', 'Heads')} | {t:.0f} |")
    return rows


def sources(repeats: int) -> list[str]:
    """Rows of the table of the trained and model sources."""
    import os
    import tempfile

    import streamlit as st

    rows = []
    firsts = []
    for _ in range(3):
        st.cache_resource.clear(), clear_all()        # nothing trained, nothing stored
        firsts.append(full_runs({"weights": "trained"}, 0, cold=False, first=True)[0])
    stored = statistics.median(full_runs({"weights": "trained"}, repeats, cold=False))
    rows.append(f"| trained: first load, training included | "
                f"{statistics.median(firsts) * 1e3:.0f} | < 2000 |")
    rows.append(f"| trained: a rerun, the class's run stored | {stored * 1e3:.0f} | |")
    from benchmarks.bench_models import OPUS_SHAPE, sentence
    from devtools.tiny_marian import SRC_SENTENCES, TGT_SENTENCES, make_tokenizer, save_tiny
    from xattn.torch_models import MODELS_ENV

    with tempfile.TemporaryDirectory() as tmp:
        folder = str(save_tiny(os.path.join(tmp, "opus"), **OPUS_SHAPE))
        os.environ[MODELS_ENV] = folder
        tok = make_tokenizer(os.path.join(tmp, "tok"))
        query = {"weights": "model", "src": sentence(tok, SRC_SENTENCES, target=False),
                 "tgt": sentence(tok, TGT_SENTENCES, target=True)}
        at = AppTest.from_file(str(ROOT / "xattn" / "ui" / "main.py"), default_timeout=300)
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


def decode_and_alignment(repeats: int) -> list[str]:
    """Rows of the table of the Decode and Alignment views on the shipped model."""
    import streamlit as st

    rows = []
    at = AppTest.from_file(str(ROOT / "xattn" / "ui" / "main.py"), default_timeout=300)
    at.query_params["view"], at.query_params["weights"] = "Decode", "model"
    at.run()
    assert not at.exception, at.exception
    n = len(at.select_slider(key="dstep").options)
    for label, steps in (("a step not seen before", range(n)),
                         ("a step seen before", [(7 * i) % n for i in range(repeats)])):
        times = []
        for t in steps:
            at.select_slider(key="dstep").set_value(t)
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
            assert not at.exception, at.exception
        rows.append(f"| Decode, shipped model ({n} steps): {label} | "
                    f"{statistics.median(times) * 1e3:.0f} (max {max(times) * 1e3:.0f}) "
                    f"| < 100 |")
    for label, clear in (("first screen (model loaded)", clear_caches),
                         ("first screen, model loading included",
                          lambda: (clear_caches(), st.cache_resource.clear(), clear_all()))):
        times = []
        for _ in range(3):
            clear()
            at = AppTest.from_file(str(ROOT / "xattn" / "ui" / "main.py"), default_timeout=300)
            at.query_params["view"], at.query_params["weights"] = "Alignment", "model"
            start = time.perf_counter()
            at.run()
            times.append(time.perf_counter() - start)
            assert not at.exception, at.exception
        rows.append(f"| Alignment, shipped model, 256 held-out sentences: {label} | "
                    f"{statistics.median(times) * 1e3:.0f} (max {max(times) * 1e3:.0f}) "
                    f"| < 2000 |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--sources", action="store_true",
                    help="only the trained and model sources (needs requirements-models.txt)")
    ap.add_argument("--decode", action="store_true",
                    help="only the Decode and Alignment views of the shipped model")
    args = ap.parse_args()
    print(machine_line())
    if args.decode:
        print("| view | full run (ms, median) | target (ms) |")
        print("|---|---:|---:|")
        print("\n".join(decode_and_alignment(args.repeats)))
        return
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
    sizes = dict(list(CASES.items())[:2])
    print("| view (cached, median ms) | " + " | ".join(sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for view in VIEWS:
        cells = [statistics.median(full_runs({**q, "view": view}, max(3, args.repeats // 3),
                                             cold=False)) * 1e3 for q in sizes.values()]
        print(f"| {view} | " + " | ".join(f"{c:.0f}" for c in cells) + " |")
    print()
    print("| view on the weights it needs (cached, median ms) | weights | full run |")
    print("|---|---|---:|")
    for view, weights in OWN_WEIGHTS.items():
        t = statistics.median(full_runs({"view": view, "weights": weights},
                                        max(3, args.repeats // 3), cold=False)) * 1e3
        print(f"| {view} | {weights} (default) | {t:.0f} |")
    print()
    print("| lesson step (cached, median ms) | its view | full run |")
    print("|---|---|---:|")
    print("\n".join(lesson(args.repeats)))
    print()
    big = Settings(src=BIG_SRC, tgt=BIG_TGT, d_model=64, n_heads=16)
    print("| piece, 16 heads x 64 x 64 | value |")
    print("|---|---:|")
    for name, value in breakdown(big, args.repeats).items():
        unit = "" if "KB" in name else " ms"
        print(f"| {name} | {value:.1f}{unit} |")


if __name__ == "__main__":
    main()
