"""The lesson's questions on a speech or an image model's page (the built-in clip or image):
where the model reads a letter (a tap on the image) and which head tells time (a head).

Each reads only the `Attention` of the step's model (``xattn.media``: its ``media`` holds the
image and its patch grid, or the clip and its words' timings) and returns a ``Told``, as
``xattn.lesson.tell``'s questions do; ``xattn.lesson.computed`` lists them.
"""

from __future__ import annotations

import base64

import numpy as np

from xattn.classroom.question import Question
from xattn.lesson._told import Told
from xattn.lesson._words import token_name

__all__ = ["tap_letter", "timing_head", "patch_of_peak", "image_url", "head_label"]

IMAGE_SIDE = 160             # the phone's copy of the image: at most this many pixels a side


def image_url(image: np.ndarray, side: int = IMAGE_SIDE) -> str:
    """``image`` (height, width, 3) uint8 as a PNG ``data:`` URL, shrunk (nearest pixel) to
    at most ``side`` pixels a side: what a tap question sends each phone (a few kB)."""
    from xattn.vision.pngfile import png_bytes

    img = np.asarray(image, np.uint8)
    step = max(1, -(-max(img.shape[:2]) // side))
    return "data:image/png;base64," + base64.b64encode(png_bytes(
        np.ascontiguousarray(img[::step, ::step]))).decode()


def patch_of_peak(a, row: int) -> tuple[tuple[int, int], np.ndarray]:
    """The patch (row, column) where output token ``row`` looks most in the last decoder
    layer, its heads averaged, and that layer's averaged weights over the patches (rows ×
    columns, CLS and distillation left out)."""
    grid = a.media.grid
    n_special = len(a.src_tokens) - grid[0] * grid[1]
    w = a.layer(a.n_layers - 1)[:, row, n_special:].mean(axis=0).reshape(grid)
    return tuple(int(k) for k in np.unravel_index(int(np.argmax(w)), w.shape)), w


def tap_letter(a, layer: int, *, letter: int = 3) -> Told:
    """"Tap where the model reads its ``letter``-th output token" (from 1; the last when it
    wrote fewer): the truth is the patch of the attention peak of that token, the heads of
    the last layer averaged; a tap within one patch is right."""
    n_tgt = len(a.tgt_tokens)
    i = min(letter, n_tgt) - 1
    name = token_name(a.tgt_tokens, i)
    (r, c), w = patch_of_peak(a, i)
    n_rows, n_cols = w.shape
    q = Question("tap", tuple(str(k + 1) for k in range(n_cols)),
                 rows=tuple(str(k + 1) for k in range(n_rows)), image=image_url(a.media.image))
    note = "" if letter <= n_tgt else (f"The model wrote {n_tgt} tokens: the question asks "
                                       f"about the last, not token {letter}.")
    last = a.n_layers
    return Told({"token": name, "layer": f"layer {last}"},
                f"Writing {name}, the last layer's heads (averaged) look most at the patch in "
                f"row {r + 1}, column {c + 1} (weight {w[r, c]:.3f} of the patches' "
                f"{w.sum():.3f}).",
                f"Tap where the model reads {name} (output token {i + 1}): the peak of layer "
                f"{last}'s heads averaged; within one patch counts.",
                q, (r, c), note, layer=last - 1, head=-1,
                weights=tuple(float(x) for x in w.ravel()))


def head_label(layer: int, head: int) -> str:
    """A head's name on a pill: ``"L1 H2"`` (both from 1)."""
    return f"L{layer + 1} H{head + 1}"


def timing_head(a, layer: int) -> Told:
    """"Which head tells time?": among every layer's heads, the one whose attention peaks
    land nearest the clip's words (the best timing F1 at 100 ms, ``xattn.speech.alignment``;
    heads that tie are just as right)."""
    from xattn.speech.alignment import TOLERANCES, head_timing

    audio = a.media
    rows = audio.text_rows or tuple(range(len(a.tgt_tokens)))
    f1 = head_timing(a.weights, audio.seconds_per_position, audio.words, rows=rows,
                     tolerances=TOLERANCES)[:, :, TOLERANCES.index(0.10)]     # (L, H)
    best = float(f1.max())
    ties = [head_label(int(lyr), int(h)) for lyr, h in zip(*np.nonzero(f1 >= best - 1e-9),
                                                           strict=True)]
    labels = tuple(head_label(lyr, h) for lyr in range(a.n_layers) for h in range(a.n_heads))
    table = ", ".join(f"{head_label(lyr, h)} {f1[lyr, h]:.2f}" for lyr in range(a.n_layers)
                      for h in range(a.n_heads))
    return Told({"best": ties[0], "words": str(len(audio.words))},
                f"Timing F1 at 100 ms of each head's attention peaks against the "
                f"{len(audio.words)} words' times: {table}. Best: **{ties[0]}** ({best:.2f})"
                + (f", tied with {', '.join(ties[1:])}." if len(ties) > 1 else "."),
                "Which head tells time? (its attention peaks land nearest the words)",
                Question("head", labels), ties[0], also=tuple(ties[1:]), layer=layer)
