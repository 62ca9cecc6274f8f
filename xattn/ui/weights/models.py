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

import numpy as np
import streamlit as st

from xattn.literal import md_code
from xattn.sources import Attention, model_attention
from xattn.translator import ModelUnavailable, cross_attention
from xattn.ui.compute import clear_caches, derived
from xattn.ui.link import MODEL, SINKS, WORDS
from xattn.ui.state import PageState
from xattn.ui.weights.controls import sentence_inputs

__all__ = ["model_source", "loaded_model"]
RETRY_AFTER = 300.0      # seconds before a failed load is tried again
# The shipped model knows the toy task's 39 English words only: its own example, translated.
TOY_PAIR = ("the red cat sees the dog", "")


_LOADING = threading.Lock()   # one load at a time, imports included


@st.cache_resource(show_spinner=False)
def _models() -> dict:
    """name: LoadedModel, or (message, time) of the last failure. Shared by every session
    (the files either was read from are `_files`)."""
    return {}


@st.cache_resource(show_spinner=False)
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


def loaded_model(name: str, *, show: bool = True):
    """The loaded model, or the message saying why it cannot be loaded. ``show``: a page's
    run shows the loading (False: the server's own threads, with no page)."""
    found = _known(name)
    if found is not None:
        return found
    if not show:
        return _load_once(name)
    from xattn.backends import backend_for  # the models' code: imported once a model is asked
    from xattn.media import media_kind

    backend = backend_for(name)
    first = " (the first time: a download of about 300 MB)" if backend and backend.downloads \
        and media_kind(name) is None else ""
    before = _models().get(name)
    if before is not None and not isinstance(before, tuple):
        first = " again: its files changed on disk since it was loaded"
    slot = st.empty()
    with slot.status(f"Loading {name}{first}…") as status:
        found = _load_once(name)
        failed = isinstance(found, str)
        status.update(label=f"Could not load {name}" if failed else f"Loaded {name}",
                      state="error" if failed else "complete", expanded=False)
    if not failed:
        slot.empty()         # loaded: the page goes on as if it always had been (a projector's
    return found             # first screen has no room for a finished box)


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

        if media_kind(name) is not None:          # a speech or image folder
            from xattn.ui.weights.media import load_checked
            return load_checked(name)
        loaded = load_translator(name)
        cross_attention(loaded, "a test.", "a test.")      # kept only once a pass works
    except (ModelUnavailable, ValueError, TypeError) as err:
        return str(err)
    except Exception as err:  # noqa: BLE001  (a broken load must not be cached as a model)
        return f"loading failed ({type(err).__name__}: {err})."
    return loaded


def attention_of(loaded, src: str, tgt: str | None, words: bool):
    """The model's cross-attention on a pair (``xattn.translator.cross_attention``)."""
    return cross_attention(loaded, src, tgt, words=words)


def _model_choice(state: PageState) -> str:
    sb = st.sidebar
    sb.header("Model")
    from xattn.backends import offered_models

    offered = offered_models()
    name = state.value(MODEL, offered, why="(the server's list of models)")
    sb.selectbox("Model", offered, key=MODEL.key,
                 help="From the list this server allows (set by whoever deployed it); a link "
                      "can only pick one of these. toy-en-fr: trained here on the toy "
                      "English→French task, run in NumPy. A Whisper folder reads audio, a "
                      "VisionEncoderDecoder folder reads an image.")
    return name


def _controls(state: PageState, name: str) -> tuple[bool, bool]:
    sb = st.sidebar
    words = state.value(WORDS)
    sb.toggle("Whole words (not subword pieces)", key=WORDS.key,
              help="Attention to a word = the sum over its pieces; from a word = the mean over "
                   "its pieces.")
    sinks = state.value(SINKS)
    sb.toggle("Hide sink tokens and renormalise", key=SINKS.key,
              help="Real models park much of their attention on </s> and punctuation. Hiding "
                   "them drops those columns and rescales each row to sum to 1.")
    return words, sinks


def model_source(state: PageState) -> Attention | None:
    """A real model's cross-attention on the typed sentences (translating when the target is
    empty), or None after saying what is wrong."""
    from xattn.encdec import SHIPPED_MODEL
    from xattn.media import media_kind

    name = _model_choice(state)
    if media_kind(name) is not None:      # audio or an image: its own input, no sentences
        from xattn.ui.weights.media import media_source
        return media_source(state, name)
    words, sinks = _controls(state, name)
    src, tgt = sentence_inputs(state, translate=True,
                               defaults=TOY_PAIR if name == SHIPPED_MODEL else None)
    loaded = loaded_model(name)
    if isinstance(loaded, str):
        st.error(f"The model {md_code(name)} cannot be used: {loaded}", icon=":material/error:")
        return None
    if not src.strip():
        st.error("The source sentence is empty: type at least one word.", icon=":material/error:")
        return None
    try:
        result = derived(("model", name, src, tgt, words),
                         lambda: attention_of(loaded, src, tgt or None, words))
    except ValueError as err:
        st.error(f"{err}", icon=":material/error:")
        return None
    a = model_attention(result, hide_sinks=sinks, loaded=loaded)
    if result.translated:
        st.caption(f"The model's own translation (greedy): {md_code(result.tgt_text)}. Each row "
                   "is the step that produces its target token.")
    _sink_note(result, a, sinks)
    return a


def _sink_note(result, a: Attention, hidden: bool) -> None:
    from xattn.subwords import sink_columns

    if hidden and a.translation.hidden is not None:
        st.caption(f"Hidden: special tokens and punctuation took {a.translation.hidden.mean():.1%}"
                   " of the "
                   "weight (all layers, heads and rows); the rest is scaled to sum to 1.")
        return
    sinks = sink_columns(list(result.src_tokens))
    if sinks.any():
        mass = float(np.asarray(result.weights)[..., sinks].sum(axis=-1).mean())
        names = ", ".join(md_code(t) for t, s in zip(result.src_tokens, sinks, strict=True) if s)
        st.caption(f"The sink tokens {names} take {mass:.1%} of the weight (all layers, heads "
                   "and rows): models park attention there. *Hide sink tokens* (sidebar) drops "
                   "them.")
