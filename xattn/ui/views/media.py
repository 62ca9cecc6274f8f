"""What the views draw beside the heatmaps for audio and images, and the labs that score them.

- `media_panel` (the Heads view): for a clip, a play control and the spectrogram under the
  heatmaps with each token's moment (the peak of its row, mean over the layer's heads); for an
  image, the image under each token's attention, per head and their mean.
- `time_lab` (the Alignment view on a clip): every head scored against word timings (timing F1
  of its attention peaks at 50 and 100 ms), and the path Whisper's word timestamps follow
  (median filter + DTW over the chosen heads), drawn over their attention.
- `image_lab` (the Alignment view on an image): where the characters' boxes are known (the
  built-in example), the share of characters whose token's attention peak falls on them.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.figures.media import (
    dtw_figure,
    glyph_hits,
    overlay_figure,
    spectrogram_figure,
    timing_figure,
)
from xattn.literal import md_code
from xattn.live.compute import derived, figure
from xattn.sources import Attention
from xattn.speech.alignment import TOLERANCES, dtw_path, head_timing, token_starts
from xattn.speech.wavfile import wav_bytes
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import page_lang

__all__ = ["media_panel", "time_lab", "image_lab", "MOSAIC_ROWS"]

MOSAIC_ROWS = 8          # output tokens in the image overlays


def media_panel(a: Attention, layer: int) -> None:
    """The clip or the image under the Heads view's heatmaps (nothing for text)."""
    m = a.media
    if m is None:
        return
    if m.kind == "audio":
        _audio_panel(a, layer)
    else:
        _image_panel(a, layer)


def _audio_panel(a: Attention, layer: int) -> None:
    m = a.media
    st.markdown(_("**The clip** ({origin}), as the columns cover it: play it, and see where "
                  "each token looks (▼: the peak of its row, mean over this layer's heads).",
                  origin=m.origin))
    audio = derived((a.key, "wav"), lambda: wav_bytes(m.samples, m.rate))
    st.audio(audio, format="audio/wav")
    frame = m.seconds_per_position / 2

    def make():
        mean = a.layer(layer).mean(axis=0)                                # (n_tgt, n_src)
        peaks = [(a.tgt_tokens[r], (int(np.argmax(mean[r])) + 0.5) * m.seconds_per_position)
                 for r in m.text_rows]
        return spectrogram_figure(m.spectrogram, frame, peaks, m.words, lang=lang)
    lang = page_lang()
    fig = figure((a.key, layer, "spectrogram", lang), make)
    show_chart(fig, key="spectrogram", name="spectrogram",
               alt=_("Log-mel spectrogram of the clip with each token's attention peak "
                     "marked."))
    if m.words:
        st.caption(_("Outlined: the words of the built-in clip, where they really are. The "
                     "*Alignment* view scores every head against them."))


def _image_panel(a: Attention, layer: int) -> None:
    m = a.media
    rows = list(range(len(a.tgt_tokens)))[:MOSAIC_ROWS]
    lang = page_lang()
    fig = figure((a.key, layer, "overlays", lang), lambda: overlay_figure(
        m.image, m.boxes, a.layer(layer), a.tgt_tokens, rows, lang=lang))
    st.markdown(_("**The image** ({origin}) under each token's attention: a row per output "
                  "token, a column per head and their mean; the brighter a patch, the more "
                  "that head looks at it when writing that token (each picture scaled to its "
                  "own maximum; the CLS token is not drawn).", origin=m.origin))
    show_chart(fig, key="overlays", name="overlays",
               alt=_("The image with each token's attention per head painted over its "
                     "patches."))
    st.caption(_("Layer {layer}: the first {n} of {total} tokens.",
                 layer=layer + 1, n=len(rows), total=len(a.tgt_tokens)))


def _reading_rows(a: Attention) -> tuple[list[int], list[int]]:
    """(rows, tokens): for each text token with a next step, the row of the step that reads
    it (Whisper's DTW rows: after its prompt, up to the end token)."""
    text = list(a.media.text_rows)
    pairs = [(r + 1, r) for r in text if r + 1 < len(a.tgt_tokens)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _default_heads(a: Attention, scores) -> list[tuple[int, int]]:
    m = a.media
    if m.alignment_heads:
        return [tuple(h) for h in m.alignment_heads]
    if scores is not None:
        flat = np.argsort(-scores[..., -1], axis=None, kind="stable")[:3]
        return [tuple(int(i) for i in np.unravel_index(k, scores.shape[:2])) for k in flat]
    return [(layer, h) for layer in range(a.n_layers // 2, a.n_layers)
            for h in range(a.n_heads)]


def time_lab(a: Attention, layer: int) -> None:
    """The alignment lab for time (the Alignment view on a clip)."""
    m = a.media
    st.markdown(_("**Which heads tell time?** Each output token's row has a peak, a moment of "
                  "the clip. A head tells time when its peaks fall on the words: **timing F1** "
                  "counts a peak within 50 ms (or 100 ms) of a word's middle as a hit, each "
                  "word once (precision over peaks, recall over words). Whisper's word "
                  "timestamps come from a few such heads: their rows, normalised over tokens "
                  "and median-filtered, averaged, then a DTW path through them."))
    rows_shown = {"writes": _("the step that writes each token"),
                  "reads": _("the step that reads it (Whisper's DTW rows)")}
    reading = st.radio(_("Rows"), ("writes", "reads"), key="time_rows", horizontal=True,
                       format_func=rows_shown.get,
                       help=_("Row i of the heatmaps is the step that writes token i; the step "
                              "after it reads that token, and is what Whisper aligns.")
                       ) == "reads"
    rows, tokens = _reading_rows(a) if reading else (list(m.text_rows), list(m.text_rows))
    if not rows:
        st.info(_("The model wrote no text token here, so there is nothing to time."))
        return
    scores = None
    if m.words:
        scores = derived((a.key, "timing", reading), lambda: head_timing(
            a.weights, m.seconds_per_position, m.words, rows, TOLERANCES))
        best = np.unravel_index(int(np.argmax(scores[..., -1])), scores.shape[:2])
        st.markdown(_("Timing F1 of every head on the {n} words of the clip (50 ms / 100 ms; "
                      "colour: 100 ms). Best: layer {layer}, head {head} ({f50} / {f100}).",
                      n=len(m.words), layer=best[0] + 1, head=best[1] + 1,
                      f50=f"{scores[best][0]:.2f}", f100=f"{scores[best][1]:.2f}"))
    else:
        st.info(_("Word timings are known for the built-in clip only: an uploaded clip gets "
                  "the DTW path, not the timing F1."))
    options = [f"L{i + 1} H{h + 1}" for i in range(a.n_layers) for h in range(a.n_heads)]
    default = [f"L{i + 1} H{h + 1}" for i, h in _default_heads(a, scores)
               if i < a.n_layers and h < a.n_heads]
    picked = st.multiselect(_("Heads whose attention the DTW path follows"), options,
                            default=default, key="dtw_heads",
                            help=_("By default the folder's alignment_heads (OpenAI chose them "
                                   "by inspection), else the three best by timing F1, else "
                                   "every head of the second half of the layers."))
    chosen = [(int(p.split()[0][1:]) - 1, int(p.split()[1][1:]) - 1) for p in picked]
    if scores is not None:
        fig = figure((a.key, "timing_fig", reading, tuple(chosen), page_lang()),
                     lambda: timing_figure(scores, TOLERANCES, chosen=chosen, lang=page_lang()))
        show_chart(fig, key="timing_chart", name="timing-f1",
                   alt=_("Timing F1 of every layer and head at 50 and 100 ms."))
    if not chosen:
        st.info(_("Choose at least one head for the DTW path."))
        return
    raw = a.weights * (1 - m.padding)[..., None]        # the rows as the model gave them
    picked_rows = np.stack([raw[i, h][rows] for i, h in chosen])       # (k, n_rows, n_src)
    path = derived((a.key, "dtw", reading, tuple(chosen)),
                   lambda: dtw_path(picked_rows, picked_rows.shape[-1]))
    names = [a.tgt_tokens[t] for t in tokens]
    lang = page_lang()
    fig = figure((a.key, "dtw_fig", reading, tuple(chosen), lang), lambda: dtw_figure(
        path[2], path[0], path[1], names, m.seconds_per_position, m.words, lang=lang))
    show_chart(fig, key="dtw_chart", name="dtw-path",
               alt=_("The chosen heads' normalised attention with Whisper's DTW path over "
                     "it."))
    starts = token_starts(path[0], path[1], m.seconds_per_position)
    st.caption(_("Start of each token along the path:") + " " + ", ".join(
        f"{md_code(n)} {s:.2f} s" for n, s in zip(names, starts, strict=True)) + ".")


def image_lab(a: Attention, layer: int) -> None:
    """The Alignment view on an image: characters found by their token's attention."""
    m = a.media
    if not m.char_boxes:
        st.info(_("The alignment lab needs where each character is: known for the built-in "
                  "image only. The Heads view overlays each token's attention on the image."))
        return
    rows = list(range(len(a.tgt_tokens)))
    hits = derived((a.key, "glyphs"), lambda: glyph_hits(a.weights, m.boxes, m.char_boxes,
                                                         rows))
    st.markdown(_("**Which heads read the letters?** Character k of the word is written by "
                  "token k (a reader of characters); a head finds it when that token's "
                  "attention peak falls on a patch that overlaps the character's box. Shares "
                  "of the {n} characters found, per layer and head:", n=len(m.char_boxes)))
    table = {_("head {head}", head=h + 1): [f"{v:.0%}" for v in hits[:, h]]
             for h in range(a.n_heads)}
    st.dataframe(table, key="glyph_table", hide_index=False)
