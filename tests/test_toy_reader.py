"""The shipped toy reader (xattn/vision/toy-reader): its card's numbers from its weights.

Every held-out reading and every head's glyph count is recomputed here with NumPy, in a fresh
process where torch and transformers cannot be imported, and must equal ``metrics.json``;
README.md must be the card of those numbers. That the training script reproduces the folder
is checked by ``python -m scripts.train_toy_reader --check`` (minutes of torch training: not
a test).
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scripts.train_toy_reader import (
    DECODER,
    ENCODER,
    FILES,
    HELD_OUT_SEED,
    N_HELD_OUT,
    OUT,
    SIZE,
    TRAIN,
    held_out,
    model_card,
    stored_parameters,
)
from xattn.vision import VisionEncoderDecoder

ROOT = Path(__file__).resolve().parent.parent
METRICS = json.loads((OUT / "metrics.json").read_text())


@pytest.fixture(scope="module")
def model():
    return VisionEncoderDecoder.from_folder(OUT)


def test_the_folder_holds_trocr_s_layout_and_stays_small():
    assert sorted(p.name for p in OUT.iterdir()) == FILES
    total = sum(p.stat().st_size for p in OUT.iterdir())
    assert total < 4 * 2**20, f"{total / 2**20:.1f} MB: the shipped folder must stay small"
    config = json.loads((OUT / "config.json").read_text())
    assert config["model_type"] == "vision-encoder-decoder"
    assert (config["encoder"]["model_type"], config["decoder"]["model_type"]) == ("vit", "trocr")


def test_the_card_quotes_metrics_json(model):
    card = (OUT / "README.md").read_text(encoding="utf-8")
    ex = METRICS["exact"]
    assert f"**{ex['correct']} / {ex['total']} = {100 * ex['rate']:.1f} %**" in card
    assert card == model_card(METRICS)
    assert ex["rate"] >= 0.9


def test_the_card_describes_what_the_script_does_and_what_is_stored():
    t = METRICS["training"]
    assert (t["encoder"], t["decoder"]) == (ENCODER, DECODER)
    assert {k: t[k] for k in TRAIN} == TRAIN
    assert (METRICS["held_out"]["images"], METRICS["held_out"]["seed"]) == (N_HELD_OUT,
                                                                           HELD_OUT_SEED)
    assert HELD_OUT_SEED != t["batch_seed"]
    assert t["parameters"] == stored_parameters(OUT)
    assert f"{t['parameters']:,} parameters stored" in (OUT / "README.md").read_text()


def test_the_best_head_looks_at_the_letter_it_writes():
    share = np.array(METRICS["glyph_share"])
    assert share.max() >= 0.8, share
    assert np.array_equal(np.round(np.array(METRICS["on_glyph"]) /
                                   METRICS["held_out"]["characters"], 4), share)


def test_a_held_out_word_is_read_and_its_patches_are_boxes_of_the_image(model):
    word = held_out(1, METRICS["held_out"]["seed"])[0]
    run = model.greedy(model.pixel_values(word.image), max_new_tokens=8)
    assert run.finished and model.detokenize(run.tgt_ids) == word.text
    boxes = model.boxes(word.image.shape)
    assert boxes[0] is None and len(boxes) == 1 + 2 * 8          # CLS, 2 x 8 patches of 16 x 12
    assert boxes[-1] == (SIZE[1] - 12.0, SIZE[0] - 16.0, float(SIZE[1]), float(SIZE[0]))
    for k, glyph in enumerate(word.glyphs):         # each letter whole in one patch
        owners = [j for j, b in enumerate(boxes) if b is not None and b[0] <= glyph.box[0]
                  and glyph.box[2] <= b[2] and b[1] <= glyph.box[1] and glyph.box[3] <= b[3]]
        assert len(owners) == 1 and (owners[0] - 1) % 8 == k


_CHILD = """
import json, sys
sys.modules["torch"] = None          # the base install: any attempt to import torch fails
sys.modules["transformers"] = None
from scripts.train_toy_reader import OUT, evaluate, model_card
from xattn.vision import VisionEncoderDecoder
old = json.loads((OUT / "metrics.json").read_text())
got = evaluate(VisionEncoderDecoder.from_folder(OUT), old["held_out"]["images"],
               old["held_out"]["seed"])
got["training"] = old["training"]
print(json.dumps({"metrics": got, "card": model_card(got),
                  "imported": [k for k in ("torch", "transformers")
                               if sys.modules.get(k) is not None]}))
"""


def test_the_card_s_numbers_are_recomputed_without_torch():
    """Exact readings and every head's glyph count as metrics.json has them (counts: exact),
    and README.md is the card of those numbers."""
    child = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True,
                           cwd=ROOT, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    out = json.loads(child.stdout)
    assert out["imported"] == []
    assert out["metrics"] == METRICS
    assert out["card"] == (OUT / "README.md").read_text(encoding="utf-8")
