"""The real-model weights on the page: the sidebar's model, the sentences, and the load shown
in a status box (``xattn.live.models`` loads each model once per server)."""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.literal import md_code
from xattn.live import models
from xattn.live.compute import derived
from xattn.live.link import MODEL, SINKS, WORDS
from xattn.live.models import TOY_PAIR, attention_of
from xattn.sources import Attention, model_attention
from xattn.ui.i18n import gettext as _
from xattn.ui.state import PageState
from xattn.ui.weights.controls import sentence_inputs

__all__ = ["model_source", "loaded_model", "TOY_PAIR"]


def loaded_model(name: str, *, show: bool = True):
    """The loaded model, or the message saying why it cannot be loaded. ``show``: a page's
    run shows the loading in a status box (False: nothing shown)."""
    found = models.known(name)
    if found is not None or not show:
        return found if found is not None else models.loaded_model(name)
    first = models.load_note(name)
    slot = st.empty()
    with slot.status(_("Loading {name}{first}…", name=name, first=first)) as status:
        found = models.loaded_model(name)
        failed = isinstance(found, str)
        status.update(label=_("Could not load {name}", name=name) if failed else
                      _("Loaded {name}", name=name),
                      state="error" if failed else "complete", expanded=False)
    if not failed:
        slot.empty()         # loaded: the page goes on as if it always had been (a projector's
    return found             # first screen has no room for a finished box)


def _model_choice(state: PageState) -> str:
    sb = st.sidebar
    sb.header(_("Model"))
    from xattn.backends import offered_models

    offered = offered_models()
    name = state.value(MODEL, offered, why=_("(the server's list of models)"))
    sb.selectbox(_("Model"), offered, key=MODEL.key,
                 help=_("From the list this server allows (set by whoever deployed it); a "
                        "link can only pick one of these. toy-en-fr: trained here on the toy "
                        "English→French task, run in NumPy. A Whisper folder reads audio, a "
                        "VisionEncoderDecoder folder reads an image."))
    return name


def _controls(state: PageState, name: str) -> tuple[bool, bool]:
    sb = st.sidebar
    words = state.value(WORDS)
    sb.toggle(_("Whole words (not subword pieces)"), key=WORDS.key,
              help=_("Attention to a word = the sum over its pieces; from a word = the mean "
                     "over its pieces."))
    sinks = state.value(SINKS)
    sb.toggle(_("Hide sink tokens and renormalise"), key=SINKS.key,
              help=_("Real models park much of their attention on </s> and punctuation. "
                     "Hiding them drops those columns and rescales each row to sum to 1."))
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
        st.caption(_("The model's own translation (greedy): {text}. Each row is the step "
                     "that produces its target token.", text=md_code(result.tgt_text)))
    _sink_note(result, a, sinks)
    return a


def _sink_note(result, a: Attention, hidden: bool) -> None:
    from xattn.subwords import sink_columns

    if hidden and a.translation.hidden is not None:
        st.caption(_("Hidden: special tokens and punctuation took {share} of the weight (all "
                     "layers, heads and rows); the rest is scaled to sum to 1.",
                     share=f"{a.translation.hidden.mean():.1%}"))
        return
    sinks = sink_columns(list(result.src_tokens))
    if sinks.any():
        mass = float(np.asarray(result.weights)[..., sinks].sum(axis=-1).mean())
        names = ", ".join(md_code(t) for t, s in zip(result.src_tokens, sinks, strict=True) if s)
        st.caption(_("The sink tokens {names} take {share} of the weight (all layers, heads "
                     "and rows): models park attention there. *Hide sink tokens* (sidebar) "
                     "drops them.", names=names, share=f"{mass:.1%}"))
