"""Train the toy speech model that ships in xattn/speech/toy-digits/.

    python -m scripts.train_toy_speech [--steps 1200] [--out xattn/speech/toy-digits]
    python -m scripts.train_toy_speech --card-only     # re-evaluate the folder, rewrite its card
    python -m scripts.train_toy_speech --check         # retrain in a temporary folder and
                                                       # compare with the shipped metrics.json

A ``WhisperForConditionalGeneration`` (transformers, torch, CPU, one thread) learns to write the
words of the tone clips of ``xattn.speech.tones`` (fresh clips every step, drawn with
``BATCH_SEED``). The folder is written in Whisper's layout (``config.json``,
``model.safetensors``, ``generation_config.json``, ``preprocessor_config.json`` for the 2-s
window, ``tokenizer.json``: one token a word) and evaluated with NumPy only
(``xattn.speech.Whisper``, ``greedy``, ``xattn.speech.timing``) on held-out clips drawn with
their own seed: the numbers of ``metrics.json`` and of the card (README.md), which
``tests/test_toy_speech.py`` recomputes from the shipped weights.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from scripts.toy_training import ToyScript, fit, head_grid, run, save_weights, write_metrics
from xattn.speech import FrontEnd, Whisper, greedy, log_mel
from xattn.speech.alignment import TOLERANCES
from xattn.speech.timing import TimingCounts, dtw_counts, peak_counts
from xattn.speech.tones import SAMPLING_RATE, SECONDS, WORDS, tone_clips

TORCH_SEED, BATCH_SEED, HELD_OUT_SEED = 0, 1, 2
N_HELD_OUT = 300
VOCAB = ("<|endoftext|>", "<|startoftranscript|>", *WORDS)       # id 0 ends, 1 starts
MODEL = dict(vocab_size=len(VOCAB), d_model=64, encoder_layers=2, decoder_layers=2,
             encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=256,
             decoder_ffn_dim=256, num_mel_bins=80, max_source_positions=SECONDS * 50,
             max_target_positions=16, decoder_start_token_id=1, pad_token_id=0,
             bos_token_id=0, eos_token_id=0, begin_suppress_tokens=None, suppress_tokens=None,
             dropout=0.0)
# A curriculum: clips of at most 1 + step // ramp words. Without it the model sat at the loss
# of knowing how many words were said but not which (1.78 after 750 steps, lr 3e-3 or 1e-3):
# with one-word clips first it learns what each word sounds like, then the order.
TRAIN = dict(steps=1200, batch=32, lr=1e-3, warmup=50, weight_decay=0.01, pool=3000, ramp=150)
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "xattn" / "speech" / "toy-digits"
FILES = ["README.md", "config.json", "generation_config.json", "metrics.json",
         "model.safetensors", "preprocessor_config.json", "tokenizer.json"]
FRONT = FrontEnd(chunk_length=SECONDS)


def write_tokenizer(folder: Path) -> None:
    """tokenizer.json: one token a word (WordLevel, split on spaces), the two specials."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(VOCAB)},
                                     unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.add_special_tokens(list(VOCAB[:2]))
    tok.save(str(folder / "tokenizer.json"))


def write_settings(folder: Path, alignment_heads=()) -> None:
    """preprocessor_config.json (the 2-s window) and generation_config.json (start, end,
    the start token never written, no end of text first, the heads that tell time)."""
    (folder / "preprocessor_config.json").write_text(json.dumps({
        "feature_extractor_type": "WhisperFeatureExtractor", "feature_size": 80,
        "sampling_rate": SAMPLING_RATE, "n_fft": 400, "hop_length": 160,
        "chunk_length": SECONDS, "n_samples": SECONDS * SAMPLING_RATE,
        "nb_max_frames": SECONDS * 100, "padding_value": 0.0, "return_attention_mask": False},
        indent=1) + "\n")
    (folder / "generation_config.json").write_text(json.dumps({
        "decoder_start_token_id": 1, "eos_token_id": 0, "pad_token_id": 0, "bos_token_id": 0,
        "suppress_tokens": [1], "begin_suppress_tokens": [0], "max_length": 16,
        "alignment_heads": [list(h) for h in alignment_heads]}, indent=1) + "\n")


def training_pool(n: int):
    """``n`` clips drawn with BATCH_SEED: their features (n, 80, 200) in float16 (computed once,
    by the NumPy front end the model is read with), decoder inputs and labels (n, 6)."""
    clips = tone_clips(n, BATCH_SEED)
    feats = np.stack([log_mel(c.audio, FRONT).astype(np.float16) for c in clips])
    inputs, labels = np.zeros((n, 6), np.int64), np.full((n, 6), -100)
    for row, c in enumerate(clips):
        ids = [VOCAB.index(w) for w in c.words]
        inputs[row, :len(ids) + 1] = [1, *ids]
        labels[row, :len(ids) + 1] = [*ids, 0]
    return feats, inputs, labels


def train(*, steps: int, batch: int, lr: float, warmup: int, weight_decay: float, pool: int,
          ramp: int):
    """The model, trained on batches drawn from the pool with BATCH_SEED, at step s among the
    clips of at most 1 + s // ramp words; and (step, mean loss) every 250 steps."""
    import torch
    from transformers import WhisperConfig, WhisperForConditionalGeneration

    torch.set_num_threads(1)
    torch.manual_seed(TORCH_SEED)
    model = WhisperForConditionalGeneration(WhisperConfig(**MODEL))
    feats, inputs, labels = training_pool(pool)
    n_words = (labels >= 2).sum(1)                                     # (pool,)
    rng = np.random.default_rng(BATCH_SEED)

    def loss_at(step: int):
        idx = rng.choice(np.flatnonzero(n_words <= 1 + step // ramp), size=batch)
        logits = model(input_features=torch.from_numpy(feats[idx].astype(np.float32)),
                       decoder_input_ids=torch.from_numpy(inputs[idx])).logits
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1),
                                                 torch.from_numpy(labels[idx]).flatten())

    return fit(model, loss_at, steps=steps, lr=lr, warmup=warmup, weight_decay=weight_decay)


def evaluate(model: Whisper, n: int = N_HELD_OUT, seed: int = HELD_OUT_SEED) -> dict:
    """Held-out clips through NumPy: exact transcriptions, and every head's on-time words by
    its attention peak and by the DTW path on it alone, and by the DTW path on the folder's
    alignment heads together (where it names some). A clip whose transcription did not end
    within 12 words counts its words as written, none on time by DTW."""
    counts: dict[str, TimingCounts] = {}
    heads = model.generation.alignment_heads
    exact, wrong, said = 0, [], 0
    for k, clip in enumerate(tone_clips(n, seed)):
        run = greedy(model, model.features(clip.audio), max_new_tokens=12)
        words = [VOCAB[t] for t in run.tokens if t != 0]
        exact += words == list(clip.words)
        if words != list(clip.words) and len(wrong) < 5:
            wrong.append({"clip": k, "said": clip.text, "written": " ".join(words)})
        said += len(clip.words)
        positions = len(clip.audio) // FRONT.hop_length // 2
        args = (run.cross_attentions, words, clip.words, clip.spans)
        got = {"peak": peak_counts(*args, TOLERANCES)}
        for name, which in (("dtw", None), ("alignment_heads", heads)):
            if name == "alignment_heads" and not heads:
                continue
            got[name] = dtw_counts(*args, positions, TOLERANCES, which) if run.finished else \
                TimingCounts(np.zeros((len(TOLERANCES), *((model.n_layers, model.n_heads)
                                                           if which is None else (1, 1))),
                                      np.int64), len(words), len(clip.words), TOLERANCES)
        counts = got if not counts else {key: counts[key] + got[key] for key in got}
    out = {"held_out": {"clips": n, "seed": seed, "words": said},
           "exact": {"correct": exact, "total": n, "rate": round(exact / n, 4),
                     "examples_wrong": wrong},
           "tolerances_s": list(TOLERANCES), "written": counts["peak"].written,
           "alignment_heads": [list(h) for h in heads]}
    for name, c in counts.items():
        out[f"{name}_on_time"] = c.on_time.tolist()
        out[f"{name}_f1"] = np.round(c.f1(), 4).tolist()
    return out


def best_heads(metrics: dict, k: int = 2) -> list[tuple[int, int]]:
    """The ``k`` heads whose DTW path alone puts most words on time at 100 ms (then 50 ms),
    (layer, head) from 0: what generation_config.json names as alignment heads."""
    on = np.array(metrics["dtw_on_time"])                               # (n_tol, L, H)
    order = sorted(np.ndindex(on.shape[1:]), key=lambda lh: (-on[1][lh], -on[0][lh], lh))
    return [(int(layer), int(head)) for layer, head in order[:k]]


def write_folder(model, folder: Path) -> None:
    """config.json and model.safetensors (save_pretrained), the tokenizer and the settings."""
    save_weights(model, folder)
    write_tokenizer(folder)
    write_settings(folder)


def finish(folder: Path, training: dict) -> dict:
    """Evaluate the folder, name its best two heads as alignment heads, evaluate again with
    them; write metrics.json and README.md."""
    first = evaluate(Whisper.from_folder(folder))
    write_settings(folder, best_heads(first))
    metrics = evaluate(Whisper.from_folder(folder))
    metrics["training"] = training
    return write_metrics(folder, metrics, model_card(metrics))


def model_card(m: dict) -> str:
    """README.md from metrics.json's contents."""
    t, ex, held = m["training"], m["exact"], m["held_out"]
    c = t["model"]
    tol = [f"{1000 * x:.0f} ms" for x in m["tolerances_s"]]
    peak, dtw = np.array(m["peak_f1"]), np.array(m["dtw_f1"])        # (n_tol, L, H)
    best = {name: np.unravel_index(np.argmax(f[-1]), f[-1].shape) for name, f in
            (("peak", peak), ("dtw", dtw))}
    lines = [
        "# toy-digits: a small Whisper that writes the words of synthesised tone sequences", "",
        "A `WhisperForConditionalGeneration` (transformers' architecture and layout) trained by "
        "`python -m scripts.train_toy_speech`; it runs in NumPy (`xattn.speech.Whisper."
        "from_folder`). Every number below is in `metrics.json` and recomputed from the shipped "
        "weights by `tests/test_toy_speech.py`.", "",
        "## Model", "",
        f"- {c['encoder_layers']} encoder and {c['decoder_layers']} decoder layers, d_model "
        f"{c['d_model']}, {c['decoder_attention_heads']} heads, feed-forward "
        f"{c['decoder_ffn_dim']}, {c['num_mel_bins']} mel bins; {t['parameters']:,} parameters "
        "stored, float32. Layers and heads count from 1 below, as on the page.",
        f"- Reads a {SECONDS}-s window (`preprocessor_config.json`: `chunk_length` {SECONDS}): "
        f"{SECONDS * 100} log-mel frames, {c['max_source_positions']} encoder positions of "
        "20 ms.",
        "- Vocabulary (`tokenizer.json`, one token a word): `<|endoftext|>` = 0, "
        "`<|startoftranscript|>` = 1, then " + ", ".join(WORDS) + ". Timestamps off, no "
        "language or task tokens: a transcription starts with token 1 alone.", "",
        "## Data and training", "",
        "- Clips from `xattn.speech.tones`: each word is its own pair of tones (300 Hz to "
        "3 kHz, 120 to 240 ms, each tone half the word), 1 to 5 words, word k somewhere in "
        "its own 380-ms slot (40 to 620 ms of silence between words), random loudness, a "
        "little white noise; every word's start and end are known to the sample.",
        f"- Training: a pool of {t['pool']:,} clips drawn with seed {t['batch_seed']}; "
        f"{t['steps']:,} steps of {t['batch']} clips from it, at step s only clips of at most "
        f"1 + s // {t['ramp']} words (a curriculum: without it the model learnt how many "
        "words were said but not which, loss 1.78 after 750 steps); AdamW (lr "
        f"{t['lr']}, weight decay "
        f"{t['weight_decay']}), {t['warmup']} warm-up steps then linear decay; no dropout; torch "
        f"seed {t['torch_seed']}; {t['seconds']} s of wall time on 1 thread of a shared 2-core "
        f"machine (torch {t['versions']['torch']}, transformers "
        f"{t['versions']['transformers']}).",
        "- Loss (mean over the last 250 steps): " + ", ".join(
            f"{loss} at {step}" for step, loss in t["loss"]) + ".",
        f"- Held out: {held['clips']} clips drawn with seed {held['seed']} ({held['words']:,} "
        "words), never trained on.", "",
        "## Held-out transcription", "",
        f"Exact transcriptions (greedy, NumPy): **{ex['correct']} / {ex['total']} = "
        f"{100 * ex['rate']:.1f} %**; {m['written']:,} words written for {held['words']:,} "
        "said.", "",
        "## Which heads tell time?", "",
        "Words written are matched to words said (longest common subsequence); F1 = 2 x "
        "on-time words / (written + said) over all held-out clips (`xattn.speech.timing`). "
        "**Peak**: a word is on time when the encoder position its row attends most (position "
        "j = j x 20 ms) lies within the tolerance of the word's span. **DTW**: when the start "
        "and the end that Whisper's `find_alignment` path gives it (that head alone) are each "
        "within the tolerance of the true ones.", ""]
    for name, f, title in (("peak", peak, "Peak"), ("dtw", dtw, "DTW path")):
        for k, label in enumerate(tol):
            lines += [f"### {title}, F1 at {label}", "",
                      *head_grid(f[k].tolist(), lambda v: f"{v:.3f}"), ""]
        layer, head = best[name]
        by = "peak" if name == "peak" else "DTW path"
        lines += [f"Best by {by} at {tol[-1]}: layer {layer + 1}, head {head + 1}, "
                  f"F1 {f[0][layer, head]:.3f} at {tol[0]}, {f[-1][layer, head]:.3f} at "
                  f"{tol[-1]}.", ""]
    if m["alignment_heads"]:
        heads = ", ".join(f"layer {a + 1} head {b + 1}" for a, b in m["alignment_heads"])
        f = np.array(m["alignment_heads_f1"])[:, 0, 0]
        lines += [f"`generation_config.json` names the two best heads by DTW as "
                  f"`alignment_heads` ({heads}), as Whisper's checkpoints do; their DTW path "
                  "together: F1 " + ", ".join(f"{v:.3f} at {label}" for v, label in
                                              zip(f, tol, strict=True)) + ".", "",
                  "Why DTW scores far below the peaks: the path gives every frame to some "
                  "token, so each word's DTW span runs from where the previous one ends (the "
                  "first from 0 s) and takes in the silence before it (40 to 620 ms here); "
                  "both ends within the tolerance is then rare. Whisper's `find_alignment` "
                  "does the same; its word timings are meant for speech, where silences are "
                  "short.", ""]
    lines += ["## Limits", "",
              "- It knows ten tone patterns, not speech: real audio gives nonsense.",
              "- Attention weights are not explanations; a head that tells time here may do "
              "something else on other clips.", ""]
    return "\n".join(lines)


def main(argv=None) -> None:
    run(ToyScript(__doc__, TRAIN, OUT, train, write_folder, finish, (TORCH_SEED, BATCH_SEED),
                  {"model": MODEL}), argv)


if __name__ == "__main__":
    main()
