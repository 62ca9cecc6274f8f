"""The page's shared controls: the two sentences and the sidebar, each a URL parameter.

Each control's parameter is declared in ``xattn.live.link``; the widget shows the value
`PageState.value` resolved for it, so a shared link reproduces the exact view.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from xattn.embedder import EMBEDDER_MODES
from xattn.live import link
from xattn.live.compute import tokens_of
from xattn.live.link import MAX_SEED, parse_label, token_label
from xattn.masks import MASK_MODES
from xattn.pipeline import D_MODEL_CHOICES, MAX_TOKENS, Settings, head_choices
from xattn.tokenize import TOKENIZER_MODES
from xattn.ui.i18n import N_, language_picker, ngettext
from xattn.ui.i18n import gettext as _
from xattn.ui.state import PageState, text_value

# Bound widgets write their option's text into the URL, so options stay short words and the
# explanations go into captions.
# (English: each is translated where drawn)
MASK_LABELS = {
    "none": N_("every target token sees every source token"),
    "padding": N_("hide chosen source tokens"),
    "wait-k": N_("target i sees the first i + k source tokens"),
    "window": N_("a band around the diagonal"),
}
EMBEDDER_LABELS = {
    "token": N_("one random vector per word"),
    "ngram": N_("character n-grams: similar spellings, similar vectors"),
}


def sentence_inputs(state: PageState, *, translate: bool = False,
                    defaults: tuple[str, str] | None = None) -> tuple[str, str]:
    """The two sentences, side by side at the top of the page; ``translate``: an empty target
    means "let the model translate"; ``defaults``: this page's own example (a model that
    knows only the toy task's words), left out of the link while shown."""
    left, right = st.columns(2)
    src_default, tgt_default = defaults or (None, None)
    src = text_value(state, link.SRC, default=src_default)
    tgt = text_value(state, link.TGT, default=tgt_default)
    left.text_input(_("Source sentence (encoder: keys and values)"), key=link.SRC.key,
                    max_chars=link.SRC.max_chars,
                    help=_("The sentence being translated. Up to {n} tokens.", n=MAX_TOKENS))
    if translate:
        right.text_input(_("Target sentence (decoder: queries), optional"), key=link.TGT.key,
                         max_chars=link.TGT.max_chars, placeholder=_("empty: the model translates"),
                         help=_("The translation whose attention is shown (teacher forcing). "
                                "Empty: the model translates the source first."))
    else:
        right.text_input(_("Target sentence (decoder: queries)"), key=link.TGT.key,
                         max_chars=link.TGT.max_chars,
                         help=_("The translation being produced. Up to {n} tokens.", n=MAX_TOKENS))
    return src, tgt


def nearest(options):
    """The option nearest to a number (the larger one on a tie): 16 heads with d_model 12
    become 12, not the default."""
    return lambda value: min(options, key=lambda o: (abs(o - value), -o))


def model_controls(state: PageState) -> dict:
    sb = st.sidebar
    sb.header(_("Random projections"))
    d_model = state.value(link.D_MODEL, D_MODEL_CHOICES, closest=nearest(D_MODEL_CHOICES),
                          why=_("(d_model is one of {values})",
                                  values=", ".join(map(str, D_MODEL_CHOICES))))
    sb.select_slider(_("d_model (width of every token vector)"), D_MODEL_CHOICES,
                     key=link.D_MODEL.key)
    choices = head_choices(d_model)
    n_heads = state.value(link.HEADS, choices, closest=nearest(choices),
                          why=_("with d_model {d_model} (heads must divide it)", d_model=d_model))
    sb.select_slider(_("Number of heads h"), choices, key=link.HEADS.key,
                     help=_("Only divisors of d_model = {d_model}: each head gets d_head = "
                            "d_model / h.", d_model=d_model))
    seed = state.value(link.SEED)
    sb.number_input(_("Seed of the random weights"), 0, MAX_SEED, step=1, key=link.SEED.key,
                    help=_("Same seed, same numbers, on every machine."))
    tokenizer, embedder = state.value(link.TOK), state.value(link.EMB)
    positional = state.value(link.POS)
    section = folded(state, _("Tokens to vectors"), "fold_tokens", (link.TOK, link.EMB, link.POS))
    if section is not None:
        section.selectbox(_("Tokenizer"), TOKENIZER_MODES, key=link.TOK.key,
                          help=_("words: punctuation split off, <s>-like tags kept whole; "
                                 "whitespace: split on spaces only; chars: one token per "
                                 "character."))
        section.radio(_("Embedder"), EMBEDDER_MODES, key=link.EMB.key,
                      captions=[_(EMBEDDER_LABELS[m]) for m in EMBEDDER_MODES])
        section.toggle(_("Add positional encoding"), key=link.POS.key,
                       help=_("Sinusoidal positions (Vaswani et al. 2017): a repeated word "
                              "gets a different vector at each position."))
    return dict(d_model=d_model, n_heads=n_heads, seed=seed, tokenizer=tokenizer,
                embedder=embedder, positional=positional)


def _keep_tokens(labels: list[str]):
    """Map a padded token to the current sentence: the same position and token, else the same
    token at the nearest position, else nothing."""
    by_token: dict[str, list[int]] = {}
    for label in labels:
        j, token = parse_label(label)
        by_token.setdefault(token, []).append(j)

    def closest(label: str) -> str | None:
        i, token = parse_label(label)
        places = by_token.get(token)
        return None if not places else token_label(min(places, key=lambda j: abs(j - i)), token)
    return closest


def mask_controls(state: PageState, src: str, tokenizer: str) -> dict:
    sb = st.sidebar
    sb.header(_("Masking"))
    mode = state.value(link.MASK)
    sb.radio(_("Which source tokens may each target token see?"), MASK_MODES, key=link.MASK.key,
             captions=[_(MASK_LABELS[m]) for m in MASK_MODES])
    out = dict(mask_mode=mode)
    tokens = tokens_of(src, tokenizer)[:MAX_TOKENS]
    if mode == "padding":
        labels = [token_label(j, t) for j, t in enumerate(tokens)]
        padded = state.value(link.PAD, labels, closest=_keep_tokens(labels),
                             why=_("in the source sentence"))
        sb.multiselect(_("Source tokens to mask (padding)"), labels, key=link.PAD.key,
                       placeholder=_("choose source tokens"),
                       help=_("A masked source token gets weight exactly 0 from every target "
                              "token. The link names each one as position: token."))
        out["padded"] = tuple(sorted(parse_label(p)[0] for p in padded))
    elif mode == "wait-k":
        top = max(1, len(tokens))
        k = state.value(link.K, range(1, top + 1), closest=lambda v: min(max(v, 1), top),
                        why=ngettext("for a source of {n} token (k runs from 1 to {n})",
                                     "for a source of {n} tokens (k runs from 1 to {n})", top))
        if top > 1:
            sb.slider("k", 1, top, key=link.K.key,
                      help=_("Target token i (from 0) may see the first i + k source tokens, "
                             "as a simultaneous interpreter who starts after k words."))
        out["wait_k"] = k
    elif mode == "window":
        out["window"] = state.value(link.WINDOW)
        sb.slider(_("Tokens either side of the diagonal"), 0, 16, key=link.WINDOW.key)
    sb.caption(_("Cross-attention masks keys (source tokens), e.g. padding. The causal mask, "
                 "which hides later tokens, belongs to the decoder's self-attention."))
    return out


def display_values(state: PageState) -> None:
    """How the page looks (presenter mode, colour scale, image format), read before anything
    is drawn so that every part of the page draws for it; `display_controls` shows them."""
    state.value(link.PRESENT), state.value(link.SCALE), state.value(link.IMG)


def display_controls(state: PageState) -> None:
    """How the page looks: its language, presenter mode, colour scale, image format (sidebar,
    *Display*); their values read by `display_values` (the language by ``i18n.setup``)
    first."""
    section = folded(state, _("Display: language, presenter mode, colour scale"),
                     "fold_display", (link.PRESENT, link.SCALE, link.IMG, link.LANG))
    if section is None:
        return
    language_picker(section)
    section.toggle(_("Presenter mode (projector)"), key=link.PRESENT.key,
                   help=_("Bigger text and charts, the sidebar folded away, the heatmaps on "
                          "the first screen. Share the link with present=1 to open it this "
                          "way."))
    section.radio(_("Colour scale"), ("fixed", "max"), key=link.SCALE.key, horizontal=True,
                  format_func={"fixed": _("0 to 1"), "max": _("0 to the maximum")}.get,
                  help=_("0 to 1: a colour means the same weight in every head and picture. "
                         "0 to the maximum: with 40 tokens every weight is about 1/40, and "
                         "this shows the pattern anyway."))
    section.radio(_("Charts' camera button saves"), ("png", "svg"), horizontal=True,
                  key=link.IMG.key,
                  help=_("The download button in the toolbar of every chart. SVG stays "
                         "sharp on slides and in papers."))


def folded(state: PageState, label: str, key: str, controls: tuple):
    """A sidebar section folded away until opened, whose controls are drawn only then (a
    first visit's browser loads no code for them). It opens by itself when one of its
    ``controls`` leaves its default (a shared link, a lesson step, another control): what
    shapes the picture is never hidden. The section, or None while it is folded."""
    changed = any(state.drawn[p.key] != state.defaults[p.key] for p in controls)
    memory = state.memory.setdefault(key, {})
    if changed and not memory.get("changed"):
        st.session_state[key] = True
    memory["changed"] = changed
    section = st.sidebar.expander(label, key=key, on_change="rerun")
    return section if section.open else None


def settings_from_parts(src: str, tgt: str, model: dict, masks: dict) -> Settings:
    """The settings of the random weights from what the controls returned."""
    return replace(Settings(), src=src, tgt=tgt, **model, **masks)
