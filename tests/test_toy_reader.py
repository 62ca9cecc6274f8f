"""The shipped toy reader (xattn/vision/toy-reader): its card's numbers from its weights.

Every held-out reading and every head's glyph count is recomputed here with NumPy, in a fresh
process where torch and transformers cannot be imported, and must equal ``metrics.json``;
README.md must be the card of those numbers. That the training script reproduces the folder
is checked by ``python -m scripts.train_toy_reader --check`` (minutes of torch training: not
a test).
"""

import json

import numpy as np
import pytest
from toy_helpers import check_recomputed_without_torch, check_training_described, folder_config

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
)
from xattn.vision import VisionEncoderDecoder

METRICS = json.loads((OUT / "metrics.json").read_text())


@pytest.fixture(scope="module")
def model():
    return VisionEncoderDecoder.from_folder(OUT)


def test_the_folder_holds_trocr_s_layout_and_stays_small():
    config = folder_config(OUT, FILES)
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
    check_training_described(METRICS, OUT, TRAIN, "images", N_HELD_OUT, HELD_OUT_SEED)


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


def test_the_card_s_numbers_are_recomputed_without_torch():
    """Exact readings and every head's glyph count as metrics.json has them (counts: exact),
    and README.md is the card of those numbers."""
    check_recomputed_without_torch("train_toy_reader", "xattn.vision", "VisionEncoderDecoder",
                                   "images", METRICS, OUT)
