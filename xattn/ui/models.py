"""The real-model weights: a translation model from the deployer's allow-list.

A model is loaded once per server (shared by every session, one pass at a time) and never by a
name a link makes up: the link can only pick a name from ``xattn.models.allowed_models()``. A
failed load is remembered for a few minutes, so that an offline server does not retry (and
wait) on every click.

Loads are serialised: four students opening a model link at once get one load, the others
wait for it (concurrent loads of transformers models broke each other, and imports of torch
and transformers from several threads at once raised ImportError). A model is kept only after
a first pass worked, so a broken load is never cached for the whole class.
"""

from __future__ import annotations

import threading
import time

import numpy as np
import streamlit as st

from xattn.literal import md_code
from xattn.sources import Attention, model_attention
from xattn.ui.compute import derived
from xattn.ui.controls import sentence_inputs
from xattn.ui.link import MODEL, SINKS, WORDS
from xattn.ui.state import PageState

__all__ = ["model_source", "loaded_model"]
RETRY_AFTER = 300.0      # seconds before a failed load is tried again


_LOADING = threading.Lock()   # one load at a time, imports included


@st.cache_resource(show_spinner=False)
def _models() -> dict:
    """name: LoadedModel, or (message, time) of the last failure. Shared by every session."""
    return {}


def _known(name: str):
    """The loaded model or the recent failure's message; None when it must be (re)loaded."""
    found = _models().get(name)
    if isinstance(found, tuple):
        return found[0] if time.monotonic() - found[1] <= RETRY_AFTER else None
    return found


def loaded_model(name: str):
    """The loaded model, or the message saying why it cannot be loaded."""
    found = _known(name)
    if found is not None:
        return found
    with st.status(f"Loading {name} (the first time: a download of about 300 MB)…") as status:
        with _LOADING:                    # others wait here, then find the model loaded
            found = _known(name)
            if found is None:
                found = _load(name)
                _models()[name] = found if not isinstance(found, str) else (
                    found, time.monotonic())
        failed = isinstance(found, str)
        status.update(label=f"Could not load {name}" if failed else f"Loaded {name}",
                      state="error" if failed else "complete", expanded=False)
    return found


def _load(name: str):
    """Load ``name`` and run one pass on it (the model, or why not); called under the lock."""
    from xattn.models import ModelUnavailable, cross_attention, load_model, use_threads

    try:
        use_threads(1)
        loaded = load_model(name)
        cross_attention(loaded, "a test.", "a test.")      # kept only once a pass works
    except (ModelUnavailable, ValueError, TypeError) as err:
        return str(err)
    except Exception as err:  # noqa: BLE001  (a broken load must not be cached as a model)
        return f"loading failed ({type(err).__name__}: {err})."
    return loaded


def _controls(state: PageState) -> tuple[str, bool, bool] | None:
    from xattn.models import allowed_models, missing_packages

    sb = st.sidebar
    sb.header("Translation model")
    missing = missing_packages()
    if missing:
        sb.error(missing, icon=":material/error:")
        st.warning(f"Real models need extra packages on the server: {missing} The other weights "
                   "(random, trained, a file) work as they are.", icon=":material/warning:")
        return None
    allowed = list(allowed_models())
    name = state.value(MODEL, allowed, why="(the server's list of models)")
    sb.selectbox("Model", allowed, key=MODEL.key,
                 help="From the list this server allows (set by whoever deployed it); a link "
                      "can only pick one of these.")
    words = state.value(WORDS)
    sb.toggle("Whole words (not subword pieces)", key=WORDS.key,
              help="Attention to a word = the sum over its pieces; from a word = the mean over "
                   "its pieces.")
    sinks = state.value(SINKS)
    sb.toggle("Hide sink tokens and renormalise", key=SINKS.key,
              help="Real models park much of their attention on </s> and punctuation. Hiding "
                   "them drops those columns and rescales each row to sum to 1.")
    return name, words, sinks


def model_source(state: PageState) -> Attention | None:
    """A real model's cross-attention on the typed sentences (translating when the target is
    empty), or None after saying what is missing."""
    from xattn.models import cross_attention

    chosen = _controls(state)
    src, tgt = sentence_inputs(state, translate=True)
    if chosen is None:
        return None
    name, words, sinks = chosen
    loaded = loaded_model(name)
    if isinstance(loaded, str):
        st.error(f"The model {md_code(name)} cannot be used: {loaded}", icon=":material/error:")
        return None
    if not src.strip():
        st.error("The source sentence is empty: type at least one word.", icon=":material/error:")
        return None
    try:
        result = derived(("model", name, src, tgt, words),
                         lambda: cross_attention(loaded, src, tgt or None, words=words))
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

    if hidden and a.hidden is not None:
        st.caption(f"Hidden: special tokens and punctuation took {a.hidden.mean():.1%} of the "
                   "weight (all layers, heads and rows); the rest is scaled to sum to 1.")
        return
    sinks = sink_columns(list(result.src_tokens))
    if sinks.any():
        mass = float(np.asarray(result.weights)[..., sinks].sum(axis=-1).mean())
        names = ", ".join(md_code(t) for t, s in zip(result.src_tokens, sinks, strict=True) if s)
        st.caption(f"The sink tokens {names} take {mass:.1%} of the weight (all layers, heads "
                   "and rows): models park attention there. *Hide sink tokens* (sidebar) drops "
                   "them.")
