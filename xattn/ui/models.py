"""The real-model weights: a translation model from the deployer's allow-list.

A model is loaded once per server (shared by every session, one pass at a time) and never by a
name a link makes up: the link can only pick a name from ``xattn.models.allowed_models()``. A
failed load is remembered for a few minutes, so that an offline server does not retry (and
wait) on every click.
"""

from __future__ import annotations

import time

import numpy as np
import streamlit as st

from xattn.literal import md_code
from xattn.sources import Attention, model_attention
from xattn.ui.compute import derived
from xattn.ui.controls import sentence_inputs
from xattn.ui.params import bool_param, text_param
from xattn.ui.state import PageState

__all__ = ["model_source", "loaded_model"]

MODEL = text_param("model", "", 300, "the model")          # "": the first allowed
WORDS = bool_param("words", True, "whole words")
SINKS = bool_param("sinks", False, "hiding sink tokens")
RETRY_AFTER = 300.0      # seconds before a failed load is tried again


@st.cache_resource(show_spinner=False)
def _models() -> dict:
    """name: LoadedModel, or (message, time) of the last failure. Shared by every session."""
    return {}


def loaded_model(name: str):
    """The loaded model, or the message saying why it cannot be loaded."""
    from xattn.models import ModelUnavailable, load_model, use_threads

    found = _models().get(name)
    if found is not None and not (isinstance(found, tuple)
                                  and time.monotonic() - found[1] > RETRY_AFTER):
        return found[0] if isinstance(found, tuple) else found
    with st.status(f"Loading {name} (the first time: a download of about 300 MB)…") as status:
        try:
            use_threads(1)
            loaded = load_model(name)
        except (ModelUnavailable, ValueError, TypeError) as err:
            _models()[name] = (str(err), time.monotonic())
            status.update(label=f"Could not load {name}", state="error")
            return str(err)
        status.update(label=f"Loaded {name}", state="complete", expanded=False)
    _models()[name] = loaded
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
    name = state.value("model", allowed, why="(the server's list of models)")
    sb.selectbox("Model", allowed, key="model",
                 help="From the list this server allows (set by whoever deployed it); a link "
                      "can only pick one of these.")
    words = state.value("words")
    sb.toggle("Whole words (not subword pieces)", key="words",
              help="Attention to a word = the sum over its pieces; from a word = the mean over "
                   "its pieces.")
    sinks = state.value("sinks")
    sb.toggle("Hide sink tokens and renormalise", key="sinks",
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
