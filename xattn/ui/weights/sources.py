"""The Weights choice: random, trained, a real model or a file, each with its own controls.

`weights_source` draws the choice at the top of the sidebar, the chosen source's controls (and
only those: no control is silently ignored) and the sentence boxes, computes the weights
(cached) and returns an ``xattn.sources.Attention`` for the views, or None after saying on the
page what is missing and how to fix it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from xattn.literal import md_code
from xattn.live.compute import cached_run
from xattn.live.link import (
    D_MODEL,
    EMB,
    HEADS,
    LAYER,
    MASK,
    MODEL,
    PAD,
    POS,
    SEED,
    SINKS,
    SRC,
    TGT,
    TOK,
    TR_HEADS,
    TR_SEED,
    TR_SRC,
    TR_STEPS,
    TR_TGT,
    WEIGHTS,
    WINDOW,
    WORDS,
    K,
    Param,
)
from xattn.sources import SOURCES, Attention, default_layer, random_attention
from xattn.tokenize import splits_words
from xattn.ui.i18n import N_, ngettext
from xattn.ui.i18n import gettext as _
from xattn.ui.state import Notice, PageState
from xattn.ui.weights.controls import (
    mask_controls,
    model_controls,
    sentence_inputs,
    settings_from_parts,
)
from xattn.ui.weights.models import model_source
from xattn.ui.weights.trained import trained_source
from xattn.ui.weights.upload import FILE_KEY, file_source

__all__ = ["weights_source", "layer_control", "foreign_settings", "PageSource", "PAGE_SOURCES"]

def weights_choice(state: PageState) -> str:
    source = state.value(WEIGHTS)
    st.sidebar.radio(_("Weights"), SOURCES, key=WEIGHTS.key,
                     captions=[_(PAGE_SOURCES[s].caption) for s in SOURCES],
                     format_func={s: _(s) for s in _NAMES}.get,   # the link keeps the value
                     help=_("Where the attention weights come from. Every view shows the "
                            "chosen weights; the controls below belong to them."))
    return source


def weights_source(state: PageState) -> tuple[Attention | None, str]:
    """The weights to show and the chosen source; None when they cannot be computed (the page
    then already says why)."""
    source = weights_choice(state)
    make = PAGE_SOURCES[source].make
    if source != "file":        # a checked upload goes with the file weights (up to 6.3 MB)
        st.session_state.pop(FILE_KEY, None)
    foreign_settings(state, source)
    return make(state), source


def foreign_settings(state: PageState, source: str) -> None:
    """Say so when the link sets another weights source's settings (``tr_seed=7`` with random
    weights), which do nothing with the weights shown: never ignore a link's setting silently."""
    own = {p.key for p in PAGE_SOURCES[source].params}
    for other, page_source in PAGE_SOURCES.items():
        keys = [p.key for p in page_source.params if p.key in state.from_link
                and p.key not in own]
        if other != source and keys:
            names = ", ".join(md_code(k) for k in keys)
            state.notices.append(Notice("link", (
                f"The link sets {names}, a setting of the {other} weights, but it shows "
                f"{source} weights, so {'it does' if len(keys) == 1 else 'they do'} nothing "
                f"here. Choose {other} under Weights in the sidebar to use "
                f"{'it' if len(keys) == 1 else 'them'}.")))
            own |= set(keys)


def _random(state: PageState) -> Attention | None:
    src, tgt = sentence_inputs(state)
    model = model_controls(state)
    masks = mask_controls(state, src, model["tokenizer"])
    try:
        run = cached_run(settings_from_parts(src, tgt, model, masks))
    except ValueError as err:
        st.error(f"{err}", icon=":material/error:")
        st.info("The page keeps working: change the sentences or the settings and it redraws.")
        return None
    if model["tokenizer"] == "words" and (splits_words(src) or splits_words(tgt)):
        st.info("Chinese, Japanese and Korean words are split into single characters by the "
                "*words* tokenizer (it has no word segmenter). To keep the words you separated "
                "with spaces whole, choose the *whitespace* tokenizer (sidebar).",
                icon=":material/translate:")
    if len(run.empty_rows):
        rows = ", ".join(md_code(f"{i}: {run.tgt_tokens[i]}") for i in run.empty_rows[:12])
        more = f" and {len(run.empty_rows) - 12} more" if len(run.empty_rows) > 12 else ""
        st.warning(f"Every source token is masked for target token(s) {rows}{more}. Those rows "
                   "have nothing to attend to, so their weights and output are all zero. Unmask "
                   "a source token (sidebar, Masking) to give them something to look at.",
                   icon=":material/warning:")
    return random_attention(run, cached_run)


def layer_control(state: PageState, a: Attention) -> int:
    """The layer to show (from 0). Sources with several layers get a choice (``layer=``, from
    1); by default the second-to-last layer, where word alignment tends to be clearest."""
    if a.n_layers == 1:
        return 0
    layers = range(1, a.n_layers + 1)
    layer = state.value(LAYER, layers, default=default_layer(a.n_layers),
                        why=ngettext("(this model has {n} layer)",
                                     "(this model has {n} layers)", a.n_layers))
    st.sidebar.select_slider(_("Layer"), layers, key=LAYER.key,
                             help=_("Decoder layer whose cross-attention is shown. The layers "
                                    "× heads overview (Heads view) shows them all."))
    return layer - 1



@dataclass(frozen=True)
class PageSource:
    """What the page knows of one weights source, in one row of `PAGE_SOURCES`: the Weights
    choice's caption, the banner's icon, the function that draws its controls and returns its
    ``Attention`` (or None, having said why), and its settings in the link (declared in
    ``xattn.live.link``; a link that sets another source's settings is told they do nothing).
    Views never ask which source made the weights: a new source is its builder in
    ``xattn.sources`` and a row here."""

    caption: str
    icon: str
    make: Callable[[PageState], Attention | None]
    params: tuple[Param, ...]


_NAMES = (N_("random"), N_("trained"), N_("model"), N_("file"))   # SOURCES as the page says
PAGE_SOURCES = {
    "random": PageSource(
        N_("random projections from a seed: patterns from the seed, not from language"),
        ":material/casino:", _random,
        (SRC, TGT, D_MODEL, HEADS, SEED, TOK, EMB, POS, MASK, PAD, K, WINDOW)),
    "trained": PageSource(
        N_("the same module trained on a toy English→French task"), ":material/school:",
        trained_source, (TR_SRC, TR_TGT, TR_HEADS, TR_STEPS, TR_SEED)),
    "model": PageSource(
        N_("a real translation model, run in NumPy (by default one trained here on the toy "
           "task)"), ":material/translate:", model_source,
        (SRC, TGT, MODEL, WORDS, SINKS, LAYER)),
    "file": PageSource(
        N_("an .npz file of attention weights from any model"), ":material/description:",
        file_source, (LAYER,)),
}
if tuple(PAGE_SOURCES) != SOURCES:
    raise ValueError(f"PAGE_SOURCES must have a row for each of xattn.sources.SOURCES, in its "
                     f"order; expected {SOURCES}, received {tuple(PAGE_SOURCES)}.")
