"""The shipped toy speech model (xattn/speech/toy-digits): its card's numbers from its weights.

Every held-out transcription and every head's timing count is recomputed here with NumPy, in a
fresh process where torch and transformers cannot be imported, and must equal
``metrics.json``; README.md must be the card of those numbers. That the training script
reproduces the folder is checked by ``python -m scripts.train_toy_speech --check`` (minutes
of torch training: not a test).
"""

import json

import numpy as np
import pytest
from toy_helpers import check_recomputed_without_torch, check_training_described, folder_config

from scripts.train_toy_speech import (
    FILES,
    HELD_OUT_SEED,
    MODEL,
    N_HELD_OUT,
    OUT,
    TRAIN,
    VOCAB,
    model_card,
)
from xattn.speech import Whisper, greedy
from xattn.speech.tones import tone_clips

METRICS = json.loads((OUT / "metrics.json").read_text())


@pytest.fixture(scope="module")
def model():
    return Whisper.from_folder(OUT)


def test_the_folder_holds_whisper_s_layout_and_stays_small():
    config = folder_config(OUT, FILES)
    assert config["model_type"] == "whisper"
    assert config["architectures"] == ["WhisperForConditionalGeneration"]


def test_the_card_quotes_metrics_json_and_the_model_reads_words(model):
    card = (OUT / "README.md").read_text(encoding="utf-8")
    ex = METRICS["exact"]
    assert f"**{ex['correct']} / {ex['total']} = {100 * ex['rate']:.1f} %**" in card
    assert card == model_card(METRICS)
    assert ex["rate"] >= 0.9
    assert model.generation.alignment_heads == tuple(map(tuple, METRICS["alignment_heads"]))
    assert model.tokenizer.decode([1, 3, 4, 0]) == "one two"


def test_the_card_describes_what_the_script_does_and_what_is_stored():
    """The training settings in metrics.json are the script's (so --check retrains the same
    model), the held-out seed differs from the batches', and the parameter count is the
    numbers in model.safetensors."""
    assert METRICS["training"]["model"] == MODEL
    check_training_described(METRICS, OUT, TRAIN, "clips", N_HELD_OUT, HELD_OUT_SEED)


def test_the_best_head_tells_time():
    """Some head's attention peak puts at least 90 % of words within 50 ms of their span;
    the alignment heads are the two best by DTW, and their F1 is that of their counts."""
    peak = np.array(METRICS["peak_f1"])
    assert peak[0].max() >= 0.9, peak[0]
    dtw = np.array(METRICS["dtw_on_time"])[1]                      # at 100 ms, (L, H)
    named = sorted(dtw[layer, head] for layer, head in METRICS["alignment_heads"])
    assert named == sorted(dtw.ravel())[-2:]
    together = np.array(METRICS["alignment_heads_on_time"])[:, 0, 0]
    np.testing.assert_allclose(METRICS["alignment_heads_f1"][1][0][0],
                               round(2 * together[1] / (METRICS["held_out"]["words"] + METRICS["written"]), 4))


def test_a_held_out_clip_is_transcribed(model):
    clip = tone_clips(1, METRICS["held_out"]["seed"])[0]
    run = greedy(model, model.features(clip.audio), max_new_tokens=12)
    assert run.finished
    assert model.tokenizer.decode(run.tokens) == clip.text
    assert [VOCAB[t] for t in run.tokens[:-1]] == list(clip.words)


def test_the_card_s_numbers_are_recomputed_without_torch():
    """Exact transcriptions and every on-time count as metrics.json has them (counts: exact),
    and README.md is the card of those numbers."""
    check_recomputed_without_torch("train_toy_speech", "xattn.speech", "Whisper", "clips",
                                   METRICS, OUT)
