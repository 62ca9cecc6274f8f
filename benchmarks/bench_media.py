"""First figure of the page on a speech and an image model: the views on audio and images
answer within the text views' budget.

    python -m benchmarks.bench_media [--repeats 3] [--shapes tiny,whisper-tiny]

Folders are built here with transformers (random weights, no download): the tests' tiny
Whisper (2 s clips, 2 + 2 layers of 4 heads) and tiny VisionEncoderDecoder (ViT 32 px + TrOCR),
and, with ``whisper-tiny`` in ``--shapes``, a random model of openai/whisper-tiny's shape
(39 M parameters, 30 s windows of 1500 positions). Each page is run with Streamlit's AppTest
on a warm process (imports done), the built-in example as input:

- load: a fresh server's first visitor (the model loaded, a pass on the example, the figures);
- first figure: the model loaded, every computation cache cleared (a new input: the clip or
  image's pass, greedy decoding and the Heads view's figures);
- tab: a rerun that opens the Alignment view (the time lab's DTW, or the glyph score) after
  the Heads view was drawn;
- rerun: the same page again (all cached);

and, for each speech model, its encoder alone on the clip (Whisper encodes a 30 s window
whatever the clip: 1500 positions for whisper-tiny, 100 for the tiny test model).

Target (issue 46, item 6): first figure <= 2 s on this machine (the text views' budget); the
median of ``--repeats`` runs is printed beside it.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import tempfile
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

from benchmarks.machine import machine_line

APP = str(Path(__file__).resolve().parent.parent / "xattn" / "ui" / "main.py")
TARGET = 2.0


def build(shape: str, root: Path) -> str:
    if shape == "tiny-whisper":
        from devtools.tiny_whisper import TINY, save_whisper
        return str(save_whisper(root / shape, spread=0.5, **TINY))
    if shape == "tiny-vision":
        from devtools.tiny_vision import save_tiny_vision, tiny_vision
        return str(save_tiny_vision(tiny_vision(), root / shape))
    if shape == "whisper-tiny":
        from devtools.tiny_whisper import WHISPER_TINY, save_whisper
        return str(save_whisper(root / shape, **WHISPER_TINY))
    raise ValueError(f"unknown shape {shape!r}; expected tiny-whisper, tiny-vision or "
                     f"whisper-tiny.")


def _run(folder: str, view: str = "Heads") -> tuple[float, AppTest]:
    at = AppTest.from_file(APP, default_timeout=600)
    at.query_params["weights"], at.query_params["model"] = "model", folder
    at.query_params["view"] = view
    start = time.perf_counter()
    at.run()
    took = time.perf_counter() - start
    if at.exception or at.error:
        raise RuntimeError(f"{folder}: {at.exception or [e.value for e in at.error]}")
    return took, at


def measure(folder: str, repeats: int) -> dict:
    from xattn.live import models
    from xattn.live.compute import clear_caches

    models._models().clear()
    models._files().clear()
    clear_caches()
    load, _ = _run(folder)
    first, tab, rerun = [], [], []
    for _ in range(repeats):
        clear_caches()
        took, at = _run(folder)
        first.append(took)
        at.session_state["view"] = "Alignment"
        start = time.perf_counter()
        at.run()
        tab.append(time.perf_counter() - start)
        rerun.append(_run(folder)[0])
    return dict(load=load, first=statistics.median(first), tab=statistics.median(tab),
                rerun=statistics.median(rerun))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shapes", default="tiny-whisper,tiny-vision,whisper-tiny")
    args = parser.parse_args(argv)
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    shapes = [s.strip() for s in args.shapes.split(",") if s.strip()]
    print(machine_line())
    with tempfile.TemporaryDirectory(prefix="xattn-bench-media-") as tmp:
        folders = {s: build(s, Path(tmp)) for s in shapes}
        os.environ["XATTN_MODELS"] = ",".join(folders.values())
        _run(folders[shapes[0]])                       # imports and Streamlit warmed up
        print(f"{'model':<14}{'load (s)':>10}{'first figure (s)':>18}{'target':>8}"
              f"{'Alignment tab (s)':>19}{'rerun (s)':>11}")
        for shape, folder in folders.items():
            r = measure(folder, args.repeats)
            ok = "ok" if r["first"] <= TARGET else "OVER"
            print(f"{shape:<14}{r['load']:>10.2f}{r['first']:>18.2f}{'<= 2':>8}"
                  f"{r['tab']:>19.2f}{r['rerun']:>11.2f}  {ok}")
        for shape, folder in folders.items():
            if "whisper" in shape:
                print(f"{shape}: the encoder alone on the clip's window: "
                      f"{encoder_seconds(folder):.2f} s (of the first figure's)")


def encoder_seconds(folder: str) -> float:
    """The median of 3 runs of the encoder on the built-in clip."""
    from xattn.speech import Whisper
    from xattn.speech.example import tone_clip

    model = Whisper.from_folder(folder)
    features = model.features(tone_clip().samples)
    took = []
    for _ in range(3):
        start = time.perf_counter()
        model.encode(features)
        took.append(time.perf_counter() - start)
    return statistics.median(took)


if __name__ == "__main__":
    main()
