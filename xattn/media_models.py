"""Which model folders are speech or image models (``MEDIA_KINDS``), the toy ones shipped in
the package (``SHIPPED_MEDIA``), each model's built-in input (`example_of`) and loading one
(`load_media`). ``xattn.media`` turns a model's pass into the views' record."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from xattn.encdec.files import present, read_json
from xattn.literal import md_code
from xattn.record import Said
from xattn.words import N_, say, speaking

__all__ = ["MEDIA_KINDS", "SHIPPED_MEDIA", "Example", "example_of", "media_kind",
           "media_folder", "load_media"]

MEDIA_KINDS = {"whisper": "audio", "vision-encoder-decoder": "image"}
# The toy models trained here and shipped in the package (docs/models.md): offered on every
# server by these names, with no download and no allow-list entry.
SHIPPED_MEDIA = {"toy-digits": Path(__file__).parent / "speech" / "toy-digits",
                 "toy-reader": Path(__file__).parent / "vision" / "toy-reader"}


def media_folder(name: str):
    """The folder of model ``name``: a shipped toy model's own, else the name itself."""
    return SHIPPED_MEDIA.get(name, name) if isinstance(name, str) else name


def media_kind(name: str) -> str | None:
    """"audio" for a Whisper folder, "image" for a VisionEncoderDecoder folder, else None
    (anything else, or a name that is no folder here: never raises)."""
    try:
        path = Path(media_folder(name)) / "config.json"
        if not present(path):
            return None
        kind = read_json(path, 1 << 20).get("model_type")
    except (OSError, ValueError, TypeError, AttributeError):
        return None
    return MEDIA_KINDS.get(kind) if isinstance(kind, str) else None


@dataclass(frozen=True)
class Example:
    """A model's built-in input: a clip (``samples`` at ``rate``, each word's timing in
    ``words``) or an image (``image``, each letter's pixel box in ``boxes``), and its words;
    ``said``: ``origin`` as a message of the ``lesson`` catalog, for a page in its language."""

    origin: str
    samples: np.ndarray | None = None
    rate: int = 16000
    words: tuple | None = None
    image: np.ndarray | None = None
    boxes: tuple | None = None
    said: Said | None = None


def _example(origin: Said, **given) -> Example:
    """An example whose origin is said in English (its ``origin``) and kept as a message."""
    with speaking("en"):
        return Example(say(origin.msgid, **origin.values), said=origin, **given)


EXAMPLE_SEED = 0   # the toy models' example: the first clip or word this seed draws


def example_of(name: str, kind: str) -> Example:
    """The built-in input of model ``name`` (``kind`` "audio" or "image"): for a shipped toy
    model, an input drawn as it was trained on (tone words in its 2-s window; capitals of its
    bitmap font, one per patch), whose truth the model can read; for any other folder, the
    general example (three tone words; the word "cat" drawn with a font)."""
    if kind == "audio":
        from xattn.speech.example import WordTiming
        if name == "toy-digits":
            from xattn.speech import tones
            clip = tones.tone_clip(np.random.default_rng(EXAMPLE_SEED))
            words = tuple(WordTiming(w, a, b)
                          for w, (a, b) in zip(clip.words, clip.spans, strict=True))
            return _example(Said(N_("the built-in example, the tone words “{words}”"),
                                 {"words": " ".join(clip.words)}),
                            samples=clip.audio, rate=tones.SAMPLING_RATE, words=words)
        from xattn.speech.example import tone_clip
        clip = tone_clip()
        return _example(Said(N_("the built-in example")), samples=clip.samples,
                        rate=clip.rate, words=clip.words)
    if name == "toy-reader":
        from xattn.vision.glyphs import word_image
        drawn = word_image(np.random.default_rng(EXAMPLE_SEED), (32, 96), lengths=(3, 6),
                           scales=(2,), max_left=2, max_top=2, lines=2)
        return _example(Said(N_("the built-in example, the word “{word}”"),
                             {"word": drawn.text}), image=drawn.image, boxes=drawn.boxes)
    from xattn.vision.example import rendered_word
    word = rendered_word()
    return _example(Said(N_("the built-in example, the word “{word}”"), {"word": word.text}),
                    image=word.image, boxes=word.boxes)


def load_media(name: str, *, allowed=None):
    """The model of a speech or image folder on the allow-list (``xattn.speech.Whisper`` or
    ``xattn.vision.VisionEncoderDecoder``), its weights memory-mapped.

    Raises
    ------
    ValueError
        Not allowed, not such a folder, or a file its reader refuses (one line).
    """
    from xattn.translator import check_allowed

    check_allowed(name, allowed, always=tuple(SHIPPED_MEDIA))
    kind = media_kind(name)
    if kind == "audio":
        from xattn.speech import Whisper
        return Whisper.from_folder(media_folder(name))
    if kind == "image":
        from xattn.vision import VisionEncoderDecoder
        return VisionEncoderDecoder.from_folder(media_folder(name))
    raise ValueError(f"{md_code(name)} is not a Whisper or VisionEncoderDecoder folder.")
