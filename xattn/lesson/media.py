"""The lesson's questions on a speech or an image model's page (the built-in clip or image):
where the model reads a letter (a tap on the image), which head tells time (a head) and when
a head hears a word (a tap on the clip's time strip).

Each reads only the `Attention` of the step's model (``xattn.media``: its ``media`` holds the
image and its patch grid, or the clip and its words' timings) and returns a ``Told``, as
``xattn.lesson.tell``'s questions do; ``xattn.lesson.computed`` lists them. Their words are
said in the context's language (``xattn.words``); a head's name (``L1 H2``) and a time bin's
("0.90–1.00 s") are the options a phone taps, the same in every language.
"""

from __future__ import annotations

import base64

import numpy as np

from xattn.classroom.question import Question
from xattn.classroom.taps import time_bin_labels
from xattn.lesson._told import Told
from xattn.lesson._words import token_name
from xattn.words import listed, number, say, sentences

__all__ = ["tap_letter", "timing_head", "tap_time", "patch_of_peak", "image_url", "head_label",
           "time_bins", "bin_of_peak", "spectrogram_url"]

IMAGE_SIDE = 160             # the phone's copy of the image: at most this many pixels a side
STRIP_BINS = 20              # a tap_time question's time bins: at most this many over the clip
STRIP_SIZE = (24, 120)       # the phone's copy of the spectrogram: (height, width) at most
STRIP_LEVELS = 8             # its grey levels (a few kB as a PNG, whatever the clip's noise)


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
    note = "" if letter <= n_tgt else say("The model wrote {n} tokens: the question asks "
                                          "about the last, not token {letter}.", n=n_tgt,
                                          letter=letter)
    last = a.n_layers
    return Told({"token": name, "layer": say("layer {layer}", layer=last)},
                say("Writing {token}, the last layer's heads (averaged) look most at the patch "
                    "in row {row}, column {col} (weight {weight:.3f} of the patches' "
                    "{total:.3f}).", token=name, row=r + 1, col=c + 1, weight=float(w[r, c]),
                    total=float(w.sum())),
                say("Tap where the model reads {token} (output token {i}): the peak of layer "
                    "{layer}'s heads averaged; within one patch counts.", token=name, i=i + 1,
                    layer=last),
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
    table = listed(f"{head_label(lyr, h)} {number(float(f1[lyr, h]), '.2f')}"
                   for lyr in range(a.n_layers) for h in range(a.n_heads))
    said = dict(n=len(audio.words), table=table, best=ties[0], f1=best)
    return Told({"best": ties[0], "words": str(len(audio.words))},
                say("Timing F1 at 100 ms of each head's attention peaks against the {n} words' "
                    "times: {table}. Best: **{best}** ({f1:.2f}).", **said) if len(ties) == 1
                else say("Timing F1 at 100 ms of each head's attention peaks against the {n} "
                         "words' times: {table}. Best: **{best}** ({f1:.2f}), tied with "
                         "{ties}.", ties=listed(ties[1:]), **said),
                say("Which head tells time? (its attention peaks land nearest the words)"),
                Question("head", labels), ties[0], also=tuple(ties[1:]), layer=layer)


def time_bins(n_src: int, max_bins: int = STRIP_BINS) -> tuple[int, int]:
    """``(n_bins, per_bin)``: ``n_src`` encoder positions cut into at most ``max_bins`` bins
    of ``per_bin`` positions each (the last one may run past the clip's end)."""
    per_bin = -(-n_src // max_bins)
    return -(-n_src // per_bin), per_bin


def bin_of_peak(a, layer: int, head: int, row: int) -> tuple[int, np.ndarray]:
    """The time bin (`time_bins`) where ``head`` of ``layer`` (from 0) peaks for output token
    ``row``, and that head's row over the bins, each bin its strongest position's weight
    (so the largest bin is the peak's)."""
    w = a.layer(layer)[head, row]                                          # (n_src,)
    n_bins, per_bin = time_bins(len(w))
    padded = np.zeros(n_bins * per_bin, np.float32)
    padded[:len(w)] = w
    return int(np.argmax(w)) // per_bin, padded.reshape(n_bins, per_bin).max(axis=1)


def spectrogram_url(spectrogram: np.ndarray, size: tuple[int, int] = STRIP_SIZE) -> str:
    """A log-mel ``spectrogram`` (n_mels, n_frames) as a small grey PNG ``data:`` URL, low
    frequencies at the bottom, louder darker, in `STRIP_LEVELS` greys: what a tap_time
    question sends each phone to draw its strip over (1-2 kB)."""
    import io

    from PIL import Image

    spec = np.asarray(spectrogram, np.float32)[::-1]              # (n_mels, n_frames), low last
    h, w = min(size[0], spec.shape[0]), min(size[1], spec.shape[1])
    rows = np.array_split(np.arange(spec.shape[0]), h)
    cols = np.array_split(np.arange(spec.shape[1]), w)
    small = np.array([[spec[r][:, c].mean() for c in cols] for r in rows])        # (h, w)
    lo, hi = float(small.min()), float(small.max())
    level = np.floor((small - lo) / max(hi - lo, 1e-9) * (STRIP_LEVELS - 1) + 0.5)
    grey = (255 - level * (200 // (STRIP_LEVELS - 1))).astype(np.uint8)   # silence light
    out = io.BytesIO()
    Image.fromarray(grey, mode="L").save(out, format="PNG", optimize=True)
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def _said(a, i: int, k: int) -> str:
    """Where the clip says output token ``i`` (the ``k``-th text token), where its words'
    timings are known and the model wrote each word said ("" otherwise)."""
    words, rows = a.media.words, a.media.text_rows
    if not words or len(words) != len(rows) or words[k].word != a.tgt_tokens[i].strip():
        return ""
    return say("The clip says it from {start:.2f} to {end:.2f} s.",
               start=float(words[k].start), end=float(words[k].end))


def tap_time(a, layer: int, *, word: int = 3, head: int = 2) -> Told:
    """"Tap when the model hears its ``word``-th word" (from 1, among the text tokens it
    wrote; the last when it wrote fewer): the truth is the time bin where ``head`` (from 1)
    of the page's ``layer`` peaks for that token; a tap within one bin is right."""
    audio = a.media
    rows = audio.text_rows or tuple(range(len(a.tgt_tokens)))
    k = min(word, len(rows)) - 1
    i, h = rows[k], min(head, a.n_heads) - 1
    name, label = token_name(a.tgt_tokens, i), head_label(layer, h)
    truth, w = bin_of_peak(a, layer, h, i)
    n_bins, per_bin = time_bins(a.layer(layer).shape[-1])
    q = Question("tap_time", time_bin_labels(n_bins, per_bin * audio.seconds_per_position),
                 image=spectrogram_url(audio.spectrogram))
    peak = int(np.argmax(a.layer(layer)[h, i]))
    note = "" if word <= len(rows) else say("The model wrote {n} words: the question asks "
                                            "about the last, not word {word}.", n=len(rows),
                                            word=word)
    peaks = say("Writing {token}, {head} peaks at {time:.2f} s (weight {weight:.3f}), in the "
                "bin {bin}.", token=name, head=label,
                time=float(peak * audio.seconds_per_position),
                weight=float(a.layer(layer)[h, i, peak]), bin=q.choices[truth])
    return Told({"token": name, "head": label, "bin": q.choices[truth]},
                sentences(peaks, _said(a, i, k)),
                say("Tap when the model hears {token} (word {k} it wrote): where {head} "
                    "peaks; within one time bin counts.", token=name, k=k + 1, head=label),
                q, truth, note, layer=layer, head=h, weights=tuple(float(x) for x in w))
