"""Train the toy reader of rendered words that ships in xattn/vision/toy-reader/.

    python -m scripts.train_toy_reader [--steps 2500] [--out xattn/vision/toy-reader]
    python -m scripts.train_toy_reader --card-only     # re-evaluate the folder, rewrite its card
    python -m scripts.train_toy_reader --check         # retrain in a temporary folder and
                                                       # compare with the shipped metrics.json

A ``VisionEncoderDecoderModel`` (a ViT encoder, a TrOCR decoder: transformers, torch, CPU, one
thread) learns to read the words of ``xattn.vision.glyphs.word_image`` (capitals of a 5 x 7
bitmap font, fresh images every step, drawn with ``BATCH_SEED``). The folder is written in
TrOCR's layout (``config.json``, ``model.safetensors``, ``generation_config.json``,
``preprocessor_config.json``, ``tokenizer.json``: one token a letter) and evaluated with NumPy
only (``xattn.vision``) on held-out images drawn with their own seed: the numbers of
``metrics.json`` and of the card (README.md), which ``tests/test_toy_reader.py`` recomputes
from the shipped weights.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from scripts.toy_training import ToyScript, fit, head_grid, run, save_weights, write_metrics
from xattn.vision import VisionEncoderDecoder
from xattn.vision.glyphs import LETTERS, glyph_counts, word_image

TORCH_SEED, BATCH_SEED, HELD_OUT_SEED = 0, 1, 2
N_HELD_OUT = 300
SIZE = (32, 96)                                    # (height, width) of every image
# Letters of 10 x 14 pixels every 12 pixels from the left edge (at most 2 pixels in), on the top
# or the bottom line, at most 2 pixels below its top: letter k inside patch column k of the
# line's patch row. With 8 x 8 patches and letters anywhere (or 15 x 21 letters near the left)
# the model had not learnt to tell one letter from another after 300 steps (loss 1.67 on
# one-letter words: chance for the letter); here each letter is whole in one patch.
DRAW = dict(lengths=(3, 6), scales=(2,), max_left=2, max_top=2, lines=2)
VOCAB = ("<s>", "<pad>", "</s>", "<unk>", *LETTERS)  # TrOCR's specials; </s> starts and ends
ENCODER = dict(image_size=list(SIZE), patch_size=[16, 12], num_channels=3, hidden_size=64,
               num_hidden_layers=2, num_attention_heads=4, intermediate_size=128,
               hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
DECODER = dict(vocab_size=len(VOCAB), d_model=64, decoder_layers=2, decoder_attention_heads=4,
               decoder_ffn_dim=256, max_position_embeddings=16, dropout=0.0,
               attention_dropout=0.0, activation_dropout=0.0, pad_token_id=1, bos_token_id=0,
               eos_token_id=2, decoder_start_token_id=2)
# A curriculum: words of 1 to min(6, 1 + step // ramp) letters (the held-out ones have 3 to 6).
# Trained so at lr 1e-3 the loss sat at 2.2-2.5 until step ~1100, then fell below 0.5 by 1550.
TRAIN = dict(steps=2500, batch=32, lr=1e-3, warmup=50, weight_decay=0.01, ramp=150)
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "xattn" / "vision" / "toy-reader"
FILES = ["README.md", "config.json", "generation_config.json", "metrics.json",
         "model.safetensors", "preprocessor_config.json", "tokenizer.json"]


def write_tokenizer(folder: Path) -> None:
    """tokenizer.json: one token a letter, the four specials; decoded letters join up."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)}, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    tok.decoder = decoders.Fuse()
    tok.add_special_tokens(list(VOCAB[:4]))
    tok.save(str(folder / "tokenizer.json"))


def write_settings(folder: Path) -> None:
    """preprocessor_config.json (no resize needed: images are drawn at the model's size;
    mean and std 0.5, as TrOCR's) and generation_config.json."""
    (folder / "preprocessor_config.json").write_text(json.dumps({
        "image_processor_type": "ViTImageProcessor", "do_resize": True, "resample": 2,
        "size": {"height": SIZE[0], "width": SIZE[1]}, "do_rescale": True,
        "rescale_factor": 1 / 255, "do_normalize": True, "image_mean": [0.5, 0.5, 0.5],
        "image_std": [0.5, 0.5, 0.5]}, indent=1) + "\n")
    (folder / "generation_config.json").write_text(json.dumps({
        "decoder_start_token_id": 2, "eos_token_id": 2, "pad_token_id": 1, "bos_token_id": 0,
        "max_length": 16}, indent=1) + "\n")


def _pixels(image: np.ndarray) -> np.ndarray:
    """(3, H, W) float32 as the model reads it: rescaled, normalised by 0.5 and 0.5."""
    return (image.astype(np.float32).transpose(2, 0, 1) / 255 - 0.5) / 0.5


def _batch(rng: np.random.Generator, size: int, longest: int):
    """Pixels (size, 3, 32, 96) of words of 1 to ``longest`` letters, decoder inputs and
    labels (-100 after the end)."""
    import torch

    draw = {**DRAW, "lengths": (1, longest)}
    words = [word_image(rng, SIZE, **draw) for _ in range(size)]
    n = max(len(w.glyphs) for w in words) + 1
    inputs, labels = torch.full((size, n), 1), torch.full((size, n), -100)
    for row, w in enumerate(words):
        ids = [VOCAB.index(ch) for ch in w.text]
        inputs[row, :len(ids) + 1] = torch.tensor([2, *ids])
        labels[row, :len(ids) + 1] = torch.tensor([*ids, 2])
    return torch.from_numpy(np.stack([_pixels(w.image) for w in words])), inputs, labels


def train(*, steps: int, batch: int, lr: float, warmup: int, weight_decay: float, ramp: int):
    """The model, trained on fresh images every step (words of at most 1 + step // ramp
    letters, 6 at most); and (step, mean loss) every 250."""
    import torch
    import transformers as tf

    torch.set_num_threads(1)
    torch.manual_seed(TORCH_SEED)
    cfg = tf.VisionEncoderDecoderConfig.from_encoder_decoder_configs(
        tf.ViTConfig(**ENCODER), tf.TrOCRConfig(**DECODER))
    cfg.decoder_start_token_id, cfg.pad_token_id, cfg.eos_token_id = 2, 1, 2
    model = tf.VisionEncoderDecoderModel(cfg)
    rng = np.random.default_rng(BATCH_SEED)

    def loss_at(step: int):
        pixels, inputs, labels = _batch(rng, batch, min(DRAW["lengths"][1], 1 + step // ramp))
        logits = model(pixel_values=pixels, decoder_input_ids=inputs).logits
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())

    return fit(model, loss_at, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay)


def held_out(n: int = N_HELD_OUT, seed: int = HELD_OUT_SEED) -> list:
    """The held-out images, drawn with their own seed."""
    rng = np.random.default_rng(seed)
    return [word_image(rng, SIZE, **DRAW) for _ in range(n)]


def evaluate(model: VisionEncoderDecoder, n: int = N_HELD_OUT, seed: int = HELD_OUT_SEED) -> dict:
    """Held-out images through NumPy: exact greedy readings, characters right where the
    reading has the right length, and every head's characters on their glyph (teacher
    forcing on the true word: row i produces character i)."""
    exact, wrong, chars, on_glyph = 0, [], 0, np.zeros((model.n_layers, model.n_heads), int)
    right_chars = 0
    for k, w in enumerate(held_out(n, seed)):
        pixels = model.pixel_values(w.image)
        ids = [VOCAB.index(ch) for ch in w.text]
        read = model.greedy(pixels, max_new_tokens=8)
        text = "".join(VOCAB[t] for t in read.tgt_ids if t > 3)
        exact += text == w.text
        right_chars += sum(a == b for a, b in zip(text, w.text, strict=False))
        if text != w.text and len(wrong) < 5:
            wrong.append({"image": k, "drawn": w.text, "read": text})
        run = model.forward(pixels, [*ids, 2], logits=False)
        on_glyph += glyph_counts(run.cross_attention, model.boxes(w.image.shape), w.glyphs)
        chars += len(ids)
    return {"held_out": {"images": n, "seed": seed, "characters": chars},
            "exact": {"correct": exact, "total": n, "rate": round(exact / n, 4),
                      "examples_wrong": wrong},
            "characters_right": {"correct": right_chars, "total": chars,
                                 "rate": round(right_chars / chars, 4)},
            "on_glyph": on_glyph.tolist(),
            "glyph_share": np.round(on_glyph / chars, 4).tolist()}


def write_folder(model, folder: Path) -> None:
    """config.json and model.safetensors (save_pretrained), the tokenizer and the settings."""
    save_weights(model, folder)
    write_tokenizer(folder)
    write_settings(folder)


def finish(folder: Path, training: dict) -> dict:
    """Evaluate the folder; write metrics.json and README.md."""
    metrics = evaluate(VisionEncoderDecoder.from_folder(folder))
    metrics["training"] = training
    return write_metrics(folder, metrics, model_card(metrics))


def model_card(m: dict) -> str:
    """README.md from metrics.json's contents."""
    t, ex, held, cr = m["training"], m["exact"], m["held_out"], m["characters_right"]
    e, d = t["encoder"], t["decoder"]
    share = np.array(m["glyph_share"])                                 # (L, H)
    layer, head = np.unravel_index(np.argmax(share), share.shape)
    ph, pw = e["patch_size"]
    grid = (SIZE[0] // ph, SIZE[1] // pw)
    lines = [
        "# toy-reader: a small ViT + TrOCR that reads words drawn in a bitmap font", "",
        "A `VisionEncoderDecoderModel` (transformers' ViT encoder and TrOCR decoder, TrOCR's "
        "layout) trained by `python -m scripts.train_toy_reader`; it runs in NumPy "
        "(`xattn.vision.VisionEncoderDecoder.from_folder`). Every number below is in "
        "`metrics.json` and recomputed from the shipped weights by `tests/test_toy_reader.py`.",
        "",
        "## Model", "",
        f"- Encoder: ViT, {SIZE[1]} x {SIZE[0]} pixel images (width x height) in patches of "
        f"{e['patch_size']} x {e['patch_size']}: a grid of {grid[0]} x {grid[1]}, "
        f"{grid[0] * grid[1]} patches and CLS; {e['num_hidden_layers']} layers, hidden "
        f"{e['hidden_size']}, {e['num_attention_heads']} heads, feed-forward "
        f"{e['intermediate_size']}.",
        f"- Decoder: TrOCR, {d['decoder_layers']} layers, d_model {d['d_model']}, "
        f"{d['decoder_attention_heads']} heads, feed-forward {d['decoder_ffn_dim']}; "
        f"{t['parameters']:,} parameters stored, float32. Layers and heads count from 1 "
        "below, as on the page.",
        "- Vocabulary (`tokenizer.json`, one token a letter): `<s>` = 0, `<pad>` = 1, `</s>` "
        "= 2 (it starts and ends a reading, as in TrOCR), `<unk>` = 3, then A to Z.", "",
        "## Data and training", "",
        "- Images from `xattn.vision.glyphs.word_image`: 3 to 6 random capitals drawn with a "
        "5 x 7 bitmap font (in NumPy, the same pixels everywhere), each dot 2 x 2 pixels "
        "(letters 10 x 14, one every 12 pixels), on the top or the bottom line, at most 2 "
        "pixels from the left edge and from the line's top: each letter lies whole in one "
        "patch, letter k in patch column k of its line. Dark ink on a light page of random "
        "shades, Gaussian noise; every letter's box is known to the pixel. (With 8 x 8 "
        "patches and letters anywhere the model had not begun to tell letters apart after "
        "300 steps.)",
        f"- Training: {t['steps']:,} steps of {t['batch']} fresh images drawn with seed "
        f"{t['batch_seed']}, at step s words of 1 to min(6, 1 + s // {t['ramp']}) letters (a "
        "curriculum); AdamW (lr {t['lr']}, weight decay {t['weight_decay']}), "
        f"{t['warmup']} warm-up steps then linear decay; no dropout; torch seed "
        f"{t['torch_seed']}; {t['seconds']} s of wall time on 1 thread of a shared 2-core "
        f"machine (torch {t['versions']['torch']}, transformers "
        f"{t['versions']['transformers']}).",
        "- Loss (mean over the last 250 steps): " + ", ".join(
            f"{loss} at {step}" for step, loss in t["loss"]) + ".",
        f"- Held out: {held['images']} images drawn with seed {held['seed']} "
        f"({held['characters']:,} letters), never trained on.", "",
        "## Held-out reading", "",
        f"Exact readings (greedy, NumPy): **{ex['correct']} / {ex['total']} = "
        f"{100 * ex['rate']:.1f} %**; letters right in place: {cr['correct']:,} / "
        f"{cr['total']:,} = {100 * cr['rate']:.1f} %.", "",
        "## Does a head look at the letter it writes?", "",
        "Teacher forcing on the true word: the row that produces letter i peaks at one encoder "
        "position; it is *on the glyph* when, of all the word's letter boxes, letter i's "
        "overlaps that patch most (CLS, or a patch on no letter, is on none; "
        "`xattn.vision.glyphs.glyph_counts`). Share of letters on their glyph:", "",
        *head_grid(share.tolist(), lambda v: f"{100 * v:.1f} %"), "",
        f"Best: layer {layer + 1}, head {head + 1}, {100 * share[layer, head]:.1f} % of "
        f"{held['characters']:,} letters on their glyph.", "",
        "## Limits", "",
        "- It reads capitals of one bitmap font on a plain page, nothing else: a photo or "
        "another font gives nonsense.",
        "- Attention weights are not explanations; a head that looks at the letter here may "
        "do something else on other images.", ""]
    return "\n".join(lines)


def main(argv=None) -> None:
    run(ToyScript(__doc__, TRAIN, OUT, train, write_folder, finish, (TORCH_SEED, BATCH_SEED),
                  {"encoder": ENCODER, "decoder": DECODER}), argv)


if __name__ == "__main__":
    main()
