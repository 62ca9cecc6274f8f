"""The real-model weights: a translation model from the deployer's allow-list.

The default is the model trained here on the toy task and shipped in the repository
(``xattn.encdec``, ``toy-en-fr``): no torch, no download, offline. A deployer adds models with
``XATTN_MODELS``; ``xattn.backends`` runs each with the back end that reads it (a model folder
in NumPy, a hub name through transformers where torch is installed). A link can only pick a
name from that list, and the page never asks which back end runs it.

A model is loaded once per server (shared by every session). Loads are serialised: four
students opening a model link at once get one load, the others wait for it (concurrent loads
of transformers models broke each other, and imports of torch and transformers from several
threads at once raised ImportError). A model is kept only after a first pass worked, so a
broken load is never cached for the whole class; a failed load is remembered for a few
minutes, so that an offline server does not retry (and wait) on every click, unless the
model's files changed on disk since it failed: a deployer who puts valid weights back over a
truncated file is served them on the next click, without a restart.
"""

from __future__ import annotations

import threading
import time

from xattn.live.compute import clear_caches
from xattn.live.process import process_wide
from xattn.translator import ModelUnavailable, cross_attention

__all__ = ["loaded_model", "known", "load_note", "attention_of", "TOY_PAIR", "RETRY_AFTER"]
RETRY_AFTER = 300.0      # seconds before a failed load is tried again
# The shipped model knows the toy task's 39 English words only: its own example, translated.
TOY_PAIR = ("the red cat sees the dog", "")


_LOADING = threading.Lock()   # one load at a time, imports included


@process_wide()
def _models() -> dict:
    """name: LoadedModel, or (message, time) of the last failure. Shared by every session
    (the files either was read from are `_files`)."""
    return {}


@process_wide()
def _files() -> dict:
    """name: its folder's files as they were when the loaded model was read (`files_now`)."""
    return {}


def _known(name: str):
    """The loaded model or the recent failure's message; None when it must be (re)loaded
    (also when the model's files changed on disk since it was loaded: the new ones are
    read, the old mapping, a private snapshot, kept serving until then)."""
    found = _models().get(name)
    if found is None or _changed(name):      # a failure too: valid files may be back
        return None
    if isinstance(found, tuple):
        return found[0] if time.monotonic() - found[1] <= RETRY_AFTER else None
    return found


def _changed(name: str) -> bool:
    from xattn.backends import files_now

    return _files().get(name) != files_now(name)


def known(name: str):
    """The loaded model or the recent failure's message; None when it must be (re)loaded
    (also when the model's files changed on disk since it was loaded: the new ones are
    read, the old mapping, a private snapshot, kept serving until then)."""
    return _known(name)


def loaded_model(name: str):
    """The loaded model, or the message saying why it cannot be loaded (loaded now, silently,
    if it is not yet: a page shows the loading with ``xattn.ui.weights.models.loaded_model``)."""
    found = _known(name)
    return found if found is not None else _load_once(name)


def load_note(name: str) -> str:
    """What a page says of a load about to start, after "Loading NAME": the first download,
    or files changed on disk since the model was loaded."""
    from xattn.backends import backend_for  # the models' code: imported once a model is asked
    from xattn.media import media_kind

    backend = backend_for(name)
    first = " (the first time: a download of about 300 MB)" if backend and backend.downloads \
        and media_kind(name) is None else ""
    before = _models().get(name)
    if before is not None and not isinstance(before, tuple):
        first = " again: its files changed on disk since it was loaded"
    return first


def _load_once(name: str):
    """The model loaded by this call or by another that held the lock first."""
    from xattn.backends import files_now

    with _LOADING:                    # others wait here, then find the model loaded
        found = _known(name)
        if found is None:
            before = _models().pop(name, None)
            if before is not None and not isinstance(before, tuple):
                clear_caches()        # what was computed from the old files goes with them
            files = files_now(name)
            found = _load(name)
            _models()[name] = found if not isinstance(found, str) else (found, time.monotonic())
            _files()[name] = files
    return found


def _load(name: str):
    """Load ``name`` and run one pass on it (the model, or why not); called under the lock."""
    try:
        from xattn.backends import load_translator
        from xattn.media import media_kind

        kind = media_kind(name)
        if kind is not None:                      # a speech or image folder
            return _media_pass(name, kind)
        loaded = load_translator(name)
        cross_attention(loaded, "a test.", "a test.")      # kept only once a pass works
    except (ModelUnavailable, ValueError, TypeError) as err:
        return str(err)
    except Exception as err:  # noqa: BLE001  (a broken load must not be cached as a model)
        return f"loading failed ({type(err).__name__}: {err})."
    return loaded


def _media_pass(name: str, kind: str):
    """A speech or image model, kept only once a pass on its built-in example worked."""
    from xattn.media import load_media

    model = load_media(name)
    example_attention(model, kind, name)
    return model


def example_attention(model, kind: str, name: str = ""):
    """A speech (``kind`` "audio") or image model's attention on its built-in example
    (`xattn.media.example_of`: a shipped toy model's own, drawn as it was trained; else the
    tone clip with its words' timings, or the word "cat" with its letters' boxes): what a
    lesson step on such a model shows."""
    from xattn.media import example_of, image_attention, speech_attention

    ex = example_of(name, kind)
    if kind == "audio":
        return speech_attention(model, ex.samples, words=ex.words, rate=ex.rate,
                                origin=ex.origin)
    return image_attention(model, ex.image, char_boxes=ex.boxes, origin=ex.origin)


def attention_of(loaded, src: str, tgt: str | None, words: bool):
    """The model's cross-attention on a pair (``xattn.translator.cross_attention``)."""
    return cross_attention(loaded, src, tgt, words=words)
