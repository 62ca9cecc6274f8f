"""A speech or image model's input: the built-in example, or an uploaded WAV or PNG.

The model source hands a Whisper or VisionEncoderDecoder folder here (``xattn.media``): the
sidebar offers an upload (checked from its header before any decoding: ``read_wav``,
``read_png``); without one the page shows the built-in example synthesised in code (tone
words whose timings are known; a word rendered with Pillow's font), so it works offline. An
upload is checked once and kept by the session that uploaded it; the weights are cached per
model and input (a digest of the bytes).
"""

from __future__ import annotations

import hashlib

import numpy as np
import streamlit as st

from xattn.literal import md_code
from xattn.live.compute import derived
from xattn.live.link import SINKS, SRC, TGT, WORDS
from xattn.media import example_of, image_attention, media_kind, speech_attention
from xattn.sources import Attention
from xattn.speech.wavfile import MAX_SECONDS, MAX_WAV_BYTES, read_wav
from xattn.ui.i18n import gettext as _
from xattn.ui.state import Notice, PageState
from xattn.vision.pngfile import MAX_PNG_BYTES, MAX_PNG_PIXELS, read_png

__all__ = ["media_source", "UPLOAD_KEY"]

UPLOAD_KEY = "media_upload"
_HELD = "_xattn_media_upload"       # session state: (file_id, decoded input or its problem)
RATE = 16000


def _limits(kind: str) -> str:
    """What an upload may be, in the page's language."""
    if kind == "audio":
        return _("a WAV file (PCM or float) of at most {mb} MB and {seconds} s; the model hears "
                 "the clip from its start", mb=f"{MAX_WAV_BYTES / 1e6:.0f}",
                 seconds=f"{MAX_SECONDS:.0f}")
    return _("a PNG file of at most {mb} MB and {millions} million pixels",
             mb=f"{MAX_PNG_BYTES / 1e6:.0f}", millions=f"{MAX_PNG_PIXELS / 1e6:.0f}")


def _key(name: str, kind: str, given) -> tuple:
    """The cache key of a model's weights on the example (``given`` None) or an upload."""
    return ("media", name, kind, "example" if given is None else given[2])


def _attention(model, name: str, kind: str, given) -> Attention:
    """The weights of ``model`` on its example (``given`` None) or on (name, decoded)."""
    if given is None:
        ex = example_of(name, kind)
        if kind == "audio":
            return speech_attention(model, ex.samples, words=ex.words, rate=ex.rate,
                                    origin=ex.origin, said=ex.said)
        return image_attention(model, ex.image, char_boxes=ex.boxes, origin=ex.origin,
                               said=ex.said)
    if kind == "audio":
        return speech_attention(model, given[1], origin=md_code(given[0]), rate=RATE)
    return image_attention(model, given[1], origin=md_code(given[0]))


def _upload(kind: str):
    """The sidebar's upload: None (none: the example), (name, samples or image), or a
    problem's text."""
    upload = st.sidebar.file_uploader(
        _("Your own WAV clip (optional)") if kind == "audio" else
        _("Your own PNG image (optional)"), type=["wav"] if kind == "audio" else ["png"],
        key=UPLOAD_KEY, max_upload_size=max(MAX_WAV_BYTES, MAX_PNG_BYTES) // 10**6,
        help=_("Without a file the page shows the built-in example. Up to {limits}.",
               limits=_limits(kind)))
    if upload is None:
        st.session_state.pop(_HELD, None)
        return None
    held = st.session_state.get(_HELD)
    if held is None or held[0] != (upload.file_id, kind):
        data = upload.getvalue()
        try:
            value = (upload.name, read_wav(data, RATE) if kind == "audio" else read_png(data),
                     hashlib.blake2b(data, digest_size=16).hexdigest())
        except (ValueError, TypeError) as err:
            value = f"{err}"
        held = ((upload.file_id, kind), value)
        st.session_state[_HELD] = held
    return held[1]


def _unused_settings(state: PageState, kind: str) -> None:
    """Say so when the link sets the sentences or the text models' toggles, which a speech or
    image model does not read (never ignore a link's setting silently)."""
    keys = [p.key for p in (SRC, TGT, WORDS, SINKS) if p.key in state.from_link]
    if keys:
        names = ", ".join(md_code(k) for k in keys)
        what = "a clip" if kind == "audio" else "an image"
        state.notices.append(Notice("link", (
            f"The link sets {names}, a setting of the text models, but this model reads "
            f"{what}, so {'it does' if len(keys) == 1 else 'they do'} nothing here.")))


def media_source(state: PageState, name: str) -> Attention | None:
    """The weights of a speech or image model on the example or an upload, or None after
    saying what is wrong."""
    from xattn.ui.weights.models import loaded_model

    kind = media_kind(name)
    _unused_settings(state, kind)
    st.sidebar.header(_("Audio clip") if kind == "audio" else _("Image"))
    given = _upload(kind)
    if isinstance(given, str):
        st.error(_("The uploaded file cannot be read: {why} Upload {limits}.", why=given,
                   limits=_limits(kind)), icon=":material/error:")
        return None
    loaded = loaded_model(name)
    if isinstance(loaded, str):
        st.error(_("The model {name} cannot be used: {why}", name=md_code(name), why=loaded),
                 icon=":material/error:")
        return None
    try:
        a = derived(_key(name, kind, given), lambda: _attention(loaded, name, kind, given))
    except ValueError as err:
        st.error(f"{err}", icon=":material/error:")
        return None
    if kind == "audio":
        m = a.media
        pad = float(np.mean(m.padding))
        clip = len(m.samples) / m.rate
        window = len(a.layers.tokens[0]) * m.seconds_per_position
        heard = (_("The model hears the first {window} s of this {clip} s clip (its window): "
                   "the rest is left out.", window=f"{window:g}", clip=f"{clip:.1f}")
                 if clip > window + 1e-6 else
                 _("Columns stop where the clip ends: the rows put {share} of their weight on "
                   "the silence Whisper pads every clip with, and are rescaled to sum to 1.",
                   share=f"{pad:.1%}"))
        st.caption(_("The model's own transcription (greedy): {text}. Each row is the step "
                     "that writes its token.", text=md_code(a.meta.tgt_text)) + " " + heard)
    else:
        st.caption(_("The model's own reading (greedy): {text}. Each row is the step that "
                     "writes its token; columns are the image's patches.",
                     text=md_code(a.meta.tgt_text)))
    return a
