"""Audio and images as a modality of a model folder: which folders are speech or image models,
loading one, and its cross-attention on one clip or image as the views' ``Attention``.

A Whisper folder (``model_type: whisper``) reads a clip; a VisionEncoderDecoder folder
(``vision-encoder-decoder``) reads an image. Their cross-attention becomes the one record every
view draws (``xattn.record.Attention``): rows are the output tokens the model produced
(greedy), columns are moments of the clip (Whisper's encoder positions of 20 ms, cut to the
clip and each row rescaled to sum to 1; the weight left on the padding after the clip is
``Audio.padding``) or regions of the image (CLS, then the patches row by row, each with its
pixel box). The record's ``media`` (`Audio` or `Picture`) holds what the views draw beside
the heatmaps: the samples and spectrogram, the image and the boxes. Its ``layers`` open each
decoder layer (trace, heads switched off) and its ``translation.decoder`` decodes step by step
with tokens forced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from xattn.decoding import Decoded
from xattn.encdec.decode import DecodeStep, decode_step
from xattn.literal import md_code
from xattn.media_models import (
    MEDIA_KINDS,
    SHIPPED_MEDIA,
    Example,
    example_of,
    load_media,
    media_folder,
    media_kind,
)
from xattn.record import Attention, Layers, Meta, Said, Translation
from xattn.sources import labelled
from xattn.words import N_

__all__ = ["MEDIA_KINDS", "SHIPPED_MEDIA", "Audio", "Picture", "Example", "example_of",
           "media_kind", "media_folder",
           "load_media", "speech_attention", "image_attention", "time_labels", "patch_labels"]

MAX_NEW_TOKENS = 32


@dataclass(frozen=True, eq=False)
class Audio:
    """A clip as a Whisper model heard it.

    Attributes
    ----------
    samples : ndarray of float32
        Mono, at ``rate`` Hz, as given (before padding to the model's chunk).
    rate : int
    spectrogram : ndarray of shape (n_mels, 2 * n_positions)
        The log-mel features of the part of the clip the columns cover (10 ms frames).
    seconds_per_position : float
        0.02 for Whisper: each encoder position covers two frames.
    words : tuple of xattn.speech.example.WordTiming, or None
        Each word's timing, where known (the built-in example).
    padding : ndarray of shape (n_layers, n_heads, n_tgt)
        The weight each row put on the padding after the clip (the columns left out).
    alignment_heads : tuple of (int, int)
        The folder's (layer, head) pairs for word timing (``generation_config.json``), from 0.
    text_rows : tuple of int
        The rows that are text (not the end token or another special token).
    origin : str
        "the built-in example" or the upload's name.
    encoder_output : ndarray of shape (max_source_positions, d_model)
        The clip encoded once: each layer's trace, heads switched off and decoding reuse it
        (held here, so that a cache counts its bytes).
    """

    samples: np.ndarray
    rate: int
    spectrogram: np.ndarray
    seconds_per_position: float
    words: tuple | None
    padding: np.ndarray
    alignment_heads: tuple[tuple[int, int], ...]
    text_rows: tuple[int, ...]
    origin: str
    encoder_output: np.ndarray | None = None
    kind: str = "audio"


@dataclass(frozen=True, eq=False)
class Picture:
    """An image as a VisionEncoderDecoder model read it.

    Attributes
    ----------
    image : ndarray of shape (height, width, 3), uint8
    boxes : tuple of (x0, y0, x1, y1) or None
        Each encoder position's pixels in ``image`` (None for CLS and distillation).
    grid : (int, int)
        Patches per column and per row.
    char_boxes : tuple of (x0, y0, x1, y1), or None
        Each character's box, where known (the built-in example).
    origin : str
    encoder_output : ndarray of shape (n_src, d_source)
        The image encoded once (as `Audio.encoder_output`).
    """

    image: np.ndarray
    boxes: tuple
    grid: tuple[int, int]
    char_boxes: tuple | None
    origin: str
    encoder_output: np.ndarray | None = None
    kind: str = "image"


def time_labels(n: int, seconds: float) -> tuple[str, ...]:
    """Column names of ``n`` positions of ``seconds`` each: "0.00s", "0.02s", ..."""
    return tuple(f"{i * seconds:.2f}s" for i in range(n))


def patch_labels(n_special: int, grid: tuple[int, int]) -> tuple[str, ...]:
    """Column names of a ViT's positions: "CLS" (and "DIST"), then "r1c1", "r1c2", ..."""
    special = ("CLS", "DIST")[:n_special]
    return special + tuple(f"r{r + 1}c{c + 1}" for r in range(grid[0]) for c in range(grid[1]))


def _pieces(model, ids) -> list[str]:
    tok = model.tokenizer
    if tok is None:
        return [f"<{i}>" for i in ids]
    if hasattr(tok, "id_to_piece"):
        return list(tok.id_to_piece(list(ids)))
    return [tok.id_to_token(int(i)) or f"<{i}>" for i in ids]


def _piece_id(model, text: str, vocab: int) -> int:
    """The id of a forced token given as its piece ("<12>" where the folder has no
    tokenizer)."""
    text = text.strip()
    if text.startswith("<") and text.endswith(">") and text[1:-1].isdigit():
        i = int(text[1:-1])
        if i < vocab:
            return i
    tok = model.tokenizer
    inner = getattr(tok, "tok", tok)
    found = None if inner is None else inner.token_to_id(text)
    if found is None:
        raise ValueError(f"{md_code(text[:30])} is not a token of this model: give a piece "
                         "as the Decode view lists it.")
    return int(found)


# ---------------------------------------------------------------------- speech
def _speech_steps(model, enc, prompt, forced: dict, max_new: int, top_k: int = 5):
    """Greedy decoding as ``xattn.speech.decode.greedy`` (the same suppressed tokens) after
    ``prompt``, with ``forced`` {step: id}, keeping each step's options."""
    gen = model.generation
    always = np.asarray(gen.suppress_tokens, np.int64)
    first = np.asarray(gen.suppress_tokens + gen.begin_suppress_tokens, np.int64)
    caches, past, new, steps = [None] * model.n_layers, 0, list(prompt), []
    for t in range(max_new):
        y, _, w, caches = model.decoder(model.embed(new, past), enc, caches)
        past += len(new)
        logits = model.logits(y[-1:])[0].astype(np.float64)
        logits[first if t == 0 else always] = -np.inf
        steps.append(decode_step(t, logits, w[:, :, -1], forced.get(t), top_k, None))
        if steps[-1].token_id == gen.eos_token_id:
            break
        new = [steps[-1].token_id]
    return steps


def _cut(rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows (..., S) cut to the first ``n`` columns and rescaled to sum to 1, and the weight
    that was on the rest."""
    kept = rows[..., :n]
    total = kept.sum(axis=-1, keepdims=True)
    return kept / np.where(total > 0, total, 1), np.clip(1 - total[..., 0], 0, 1)


def _origin(origin: str, said: Said | None) -> Said | str:
    """What a label says the input is: ``said`` (a message, said in the reader's language),
    the default example's message, or ``origin`` as it is (an upload's name)."""
    if said is not None:
        return said
    return Said(N_("the built-in example")) if origin == "the built-in example" else origin


def speech_attention(model, samples, *, words=None, origin: str = "the built-in example",
                     rate: int = 16000, said: Said | None = None) -> Attention:
    """A Whisper model's cross-attention on a clip: rows the tokens it produced (greedy,
    timestamps off, as ``xattn.speech.greedy``), columns the encoder positions the clip
    covers. The clip is encoded once: every view's trace, heads switched off and decoding
    reuse the encoder's output."""
    from xattn.speech.decode import detect_language
    from xattn.speech.wavfile import resample

    front, gen = model.front, model.generation
    audio = resample(samples, rate, front.sampling_rate)
    features = model.features(audio)
    enc = model.encode(features)                                          # (S, d_model)
    prompt = tuple(gen.prompt(language=detect_language(model, enc)) if gen.detects_language
                   else gen.prompt())
    max_new = min(MAX_NEW_TOKENS, model.config.max_target_positions - len(prompt))
    steps = _speech_steps(model, enc, prompt, {}, max_new)
    seconds = 2 * front.hop_length / front.sampling_rate
    n_src = model.config.max_source_positions
    n = max(1, min(n_src, math.ceil(len(audio) / front.sampling_rate / seconds)))
    ids = tuple(s.token_id for s in steps)
    rows = np.stack([s.cross_attention for s in steps], axis=2).astype(np.float32)
    weights, padding = _cut(rows, n)                                      # (L, H, T, n)
    src = time_labels(n, seconds)
    tgt = tuple(_pieces(model, ids))
    specials = {gen.eos_token_id, *gen.suppress_tokens}
    text_rows = tuple(i for i, t in enumerate(ids) if t not in specials and
                      not (tgt[i].startswith("<|") and tgt[i].endswith("|>")))
    media = Audio(np.asarray(samples, np.float32), rate, features[:, :2 * n], seconds, words,
                  padding, tuple(gen.alignment_heads), text_rows, origin, enc)
    plain = _light(steps)             # Decode without forced tokens: these, and the rows above
    del steps

    def inputs_of(made: tuple) -> np.ndarray:
        """Each layer's cross-attention input for the rows producing ``made`` (L, T, d)."""
        read = list(prompt + made[:-1])
        _, inputs, _, _ = model.decoder(model.embed(read), enc, [None] * model.n_layers)
        return inputs[:, len(prompt) - 1:]

    def tracer(made: tuple):
        def trace(layer: int, scale: bool = True):
            return model.decoder_layers[layer].encoder_attn.trace(
                inputs_of(made)[layer], enc, scale=scale)
        return trace

    def ablate(layer: int, heads_off=()):
        from xattn.ablation import ablation
        return ablation(model.decoder_layers[layer].encoder_attn, inputs_of(ids)[layer], enc,
                        None, heads_off)

    def inputs(layer: int):
        from xattn._floats import to_float32
        attn = model.decoder_layers[layer].encoder_attn
        return inputs_of(ids)[layer], to_float32(attn.W_Q), attn.b_Q

    def decoder(forced=()):
        chosen = {int(t): _piece_id(model, text, model.config.vocab_size) for t, text in forced}
        if not chosen:
            return _decoded(model, plain, src, time_labels(n_src, seconds), n, tracer(ids),
                            weights.transpose(2, 0, 1, 3))
        made = _speech_steps(model, enc, prompt, chosen, max_new)
        return _decoded(model, made, src, time_labels(n_src, seconds), n,
                        tracer(tuple(s.token_id for s in made)))

    d = model.config.d_model
    label, sentences = labelled(
        Said(N_("{model}: a speech model (Whisper) run in NumPy, hearing {origin} "
                "({seconds:.2f} s)."), {"model": md_code(model.name),
                                         "origin": _origin(origin, said),
                                         "seconds": len(audio) / front.sampling_rate}),
        Said(N_("Rows: the tokens it wrote; columns: moments of the clip.")))
    return Attention(
        weights, src, tgt, np.ones(weights.shape[2:], dtype=bool), "model", label,
        Meta(name=Path(model.name).name or "whisper", about=f"Model {model.name} on {origin}",
             model=model.name, tgt_text=" ".join(tgt),
             details=f"{model.n_layers} decoder layers × {model.n_heads} heads, d_model {d} · "
                     f"weights ({model.n_layers}, {model.n_heads}, {len(tgt)}, {n}) = layers × "
                     f"heads × tokens × positions of {seconds * 1000:.0f} ms (of "
                     f"{n_src}: the clip's, rows rescaled)"),
        layers=Layers(tracer(ids), ablate, inputs, rescalable=True,
                      tokens=(time_labels(n_src, seconds), tgt), d_model=d,
                      d_head=d // model.n_heads),
        translation=Translation(decoder=decoder), media=media, said=sentences)


# ---------------------------------------------------------------------- images
def _image_steps(model, sources, forced: dict, max_new: int, top_k: int = 5):
    """``xattn.vision.decode.decode``'s loop (greedy, a key/value cache) on keys and values
    already projected (``model.sources(enc)``), with ``forced`` {step: id}."""
    c = model.config.decoder
    caches, produced, steps = [None] * model.n_layers, [], []
    for t in range(max_new):
        y = model.embed([produced[-1] if produced else c.decoder_start_token_id], past=t)
        y, _, w, caches = model.decoder(y, sources, caches, t)           # w: (L, h, 1, S)
        steps.append(decode_step(t, model.logits(y[-1:])[0], w[:, :, -1], forced.get(t), top_k,
                           None))
        produced.append(steps[-1].token_id)
        if produced[-1] == c.eos_token_id:
            break
    return steps


def image_attention(model, image, *, char_boxes=None,
                    origin: str = "the built-in example", said: Said | None = None) -> Attention:
    """A VisionEncoderDecoder model's cross-attention on an image (height, width, 3) uint8:
    rows the tokens it produced (greedy, as ``xattn.vision.decode``), columns CLS (DIST) and
    the patches. The image is encoded once (`Picture.encoder_output`)."""
    from xattn.vision.model import ImagePass

    e, c = model.config.encoder, model.config.decoder
    enc = model.encode(model.pixel_values(image))                        # (S, d_source)
    max_new = min(MAX_NEW_TOKENS, c.max_position_embeddings)
    steps = _image_steps(model, model.sources(enc), {}, max_new)
    ids = tuple(s.token_id for s in steps)
    weights = np.stack([s.cross_attention for s in steps], axis=2).astype(np.float32)
    plain = _light(steps)
    del steps
    src, tgt = patch_labels(e.n_special, e.grid), tuple(_pieces(model, ids))
    boxes = tuple(model.boxes(np.asarray(image).shape))
    media = Picture(np.asarray(image, np.uint8), boxes, tuple(e.grid), char_boxes, origin, enc)

    def teacher(made: tuple) -> ImagePass:
        """A teacher-forced pass on ``made`` over the encoded image (``model.forward``)."""
        y = model.embed([c.decoder_start_token_id, *made[:-1]])
        y, inputs, w, _ = model.decoder(y, model.sources(enc), [None] * model.n_layers, 0)
        return ImagePass(tuple(made), enc, inputs, w, y, None, None)

    def tracer(made: tuple):
        def trace(layer: int, scale: bool = True):
            return model.layer_trace(teacher(made), layer, scale=scale)
        return trace

    def ablate(layer: int, heads_off=()):
        return model.layer_ablation(teacher(ids), layer, heads_off)

    def inputs(layer: int):
        from xattn._floats import to_float32
        attn = model.cross(layer)
        return teacher(ids).cross_inputs[layer], to_float32(attn.W_Q), attn.b_Q

    def decoder(forced=()):
        chosen = {int(t): _piece_id(model, text, c.vocab_size) for t, text in forced}
        if not chosen:
            return _decoded(model, plain, src, src, len(src), tracer(ids),
                            weights.transpose(2, 0, 1, 3))
        made = _image_steps(model, model.sources(enc), chosen, max_new)
        return _decoded(model, made, src, src, len(src),
                        tracer(tuple(s.token_id for s in made)))

    d = c.d_model
    height, width = np.asarray(image).shape[:2]
    label, sentences = labelled(
        Said(N_("{model}: an image-to-text model (VisionEncoderDecoder) run in NumPy, reading "
                "{origin} ({width} × {height} px)."), {"model": md_code(model.name),
                                                        "origin": _origin(origin, said),
                                                        "width": width, "height": height}),
        Said(N_("Rows: the tokens it wrote; columns: patches of the image.")))
    return Attention(
        weights, src, tgt, np.ones(weights.shape[2:], dtype=bool), "model", label,
        Meta(name=Path(model.name).name or "vision", about=f"Model {model.name} on {origin}",
             model=model.name, tgt_text=" ".join(tgt),
             details=f"{model.n_layers} decoder layers × {model.n_heads} heads, d_model {d} · "
                     f"weights ({model.n_layers}, {model.n_heads}, {len(tgt)}, {len(src)}) = "
                     f"layers × heads × tokens × positions ({e.n_special} special + "
                     f"{e.grid[0]} × {e.grid[1]} patches)"),
        layers=Layers(tracer(ids), ablate, inputs, rescalable=True, d_model=d,
                      d_head=d // model.n_heads),
        translation=Translation(decoder=decoder), media=media, said=sentences)


def _light(steps) -> tuple[DecodeStep, ...]:
    """The steps without their cross-attention rows (kept in the record's weights): what
    Decode needs again of a decoding with nothing forced, a few numbers a step."""
    return tuple(replace(s, cross_attention=None) for s in steps)


def _decoded(model, steps: list[DecodeStep] | tuple, src, src_full, n: int, layer_trace,
             rows: np.ndarray | None = None):
    """``xattn.decoding.Decoded`` from decoding steps, rows cut to the first ``n`` columns
    (``rows``: already cut, (T, L, H, n), for steps kept without theirs)."""
    if rows is None:
        rows = np.stack([s.cross_attention for s in steps]).astype(np.float32)  # (T, L, H, S)
        rows, _ = _cut(rows, n)
    ids = [s.token_id for s in steps]
    eos = getattr(getattr(model, "generation", None), "eos_token_id", None)
    if eos is None:
        eos = model.config.decoder.eos_token_id
    return Decoded(tuple(src), tuple(_pieces(model, ids)), tuple(s.forced for s in steps),
                   tuple(s.probability for s in steps),
                   tuple(tuple(zip(_pieces(model, s.top_ids.tolist()), s.top_probs.tolist(),
                                   strict=True)) for s in steps),
                   rows, bool(ids) and ids[-1] == eos, layer_trace, tuple(src_full))
