"""The page's shared controls: the two sentences and the sidebar, each a URL parameter.

Each control is declared once as a `Param` (``xattn.ui.state``); the widget shows the value
`PageState.value` resolved for it, so a shared link reproduces the exact view.
"""

from __future__ import annotations

import re
from dataclasses import replace

import streamlit as st

from xattn.embedder import EMBEDDER_MODES
from xattn.export import IMAGE_FORMATS, toolbar_config
from xattn.masks import MASK_MODES
from xattn.pipeline import D_MODEL_CHOICES, MAX_HEADS, MAX_TOKENS, Settings, head_choices
from xattn.tokenize import TOKENIZER_MODES
from xattn.ui.compute import tokens_of
from xattn.ui.params import bool_param, choice_param, int_param, list_param, text_param
from xattn.ui.state import PageState, text_value

DEFAULTS = Settings()
MAX_CHARS = 2000       # per sentence: 64 tokens of up to ~30 characters
MAX_SEED = 2**31 - 1   # the seed box's range; the library takes seeds up to 2**63 - 1

# Bound widgets write their option's text into the URL, so options stay short words and the
# explanations go into captions.
MASK_LABELS = {
    "none": "every target token sees every source token",
    "padding": "hide chosen source tokens",
    "wait-k": "target i sees the first i + k source tokens",
    "window": "a band around the diagonal",
}
EMBEDDER_LABELS = {
    "token": "one random vector per word",
    "ngram": "character n-grams: similar spellings, similar vectors",
}
_LABEL = re.compile(r"(\d{1,4}): (.*)", re.S)


def token_label(position: int, token: str) -> str:
    """How a link and a picker name one token: ``"6: mat"`` (positions from 0)."""
    return f"{position}: {token}"


def parse_label(text: str) -> tuple[int, str]:
    """``"6: mat"`` to ``(6, "mat")``; ValueError (completing "which ...") otherwise."""
    match = _LABEL.fullmatch(text)
    if not match:
        raise ValueError("is not of the form `position: token` (e.g. `6: mat`)")
    return int(match.group(1)), match.group(2)


def _label(text: str) -> str:
    parse_label(text)
    return text


SRC = text_param("src", DEFAULTS.src, MAX_CHARS, "the source sentence")
TGT = text_param("tgt", DEFAULTS.tgt, MAX_CHARS, "the target sentence")
D_MODEL = int_param("d_model", DEFAULTS.d_model, 1, max(D_MODEL_CHOICES), "d_model")
HEADS = int_param("heads", DEFAULTS.n_heads, 1, MAX_HEADS, "the number of heads")
SEED = int_param("seed", DEFAULTS.seed, 0, MAX_SEED, "the seed")
TOK = choice_param("tok", DEFAULTS.tokenizer, TOKENIZER_MODES, "the tokenizer")
EMB = choice_param("emb", DEFAULTS.embedder, EMBEDDER_MODES, "the embedder")
POS = bool_param("pos", DEFAULTS.positional, "positional encoding")
MASK = choice_param("mask", DEFAULTS.mask_mode, MASK_MODES, "the mask")
PAD = list_param("pad", _label, what="the masked source tokens")
K = int_param("k", DEFAULTS.wait_k, 1, MAX_TOKENS, "k")
WINDOW = int_param("window", DEFAULTS.window, 0, 16, "the window")
IMG = choice_param("img", "png", ("png", "svg"), "the image format")
SCALE = choice_param("scale", "fixed", ("fixed", "max"), "the colour scale")
PRESENT = bool_param("present", False, "presenter mode")


def sentence_inputs(state: PageState, *, translate: bool = False) -> tuple[str, str]:
    """The two sentences, side by side at the top of the page; ``translate``: an empty target
    means "let the model translate"."""
    left, right = st.columns(2)
    src, tgt = text_value(state, "src", MAX_CHARS), text_value(state, "tgt", MAX_CHARS)
    left.text_input("Source sentence (encoder: keys and values)", key="src",
                    max_chars=MAX_CHARS,
                    help=f"The sentence being translated. Up to {MAX_TOKENS} tokens.")
    if translate:
        right.text_input("Target sentence (decoder: queries), optional", key="tgt",
                         max_chars=MAX_CHARS, placeholder="empty: the model translates",
                         help="The translation whose attention is shown (teacher forcing). "
                              "Empty: the model translates the source first.")
    else:
        right.text_input("Target sentence (decoder: queries)", key="tgt", max_chars=MAX_CHARS,
                         help=f"The translation being produced. Up to {MAX_TOKENS} tokens.")
    return src, tgt


def nearest(options):
    """The option nearest to a number (the larger one on a tie): 16 heads with d_model 12
    become 12, not the default."""
    return lambda value: min(options, key=lambda o: (abs(o - value), -o))


def model_controls(state: PageState) -> dict:
    sb = st.sidebar
    sb.header("Random projections")
    d_model = state.value("d_model", D_MODEL_CHOICES, closest=nearest(D_MODEL_CHOICES),
                          why=f"(d_model is one of {', '.join(map(str, D_MODEL_CHOICES))})")
    sb.select_slider("d_model (width of every token vector)", D_MODEL_CHOICES, key="d_model")
    choices = head_choices(d_model)
    n_heads = state.value("heads", choices, closest=nearest(choices),
                          why=f"with d_model {d_model} (heads must divide it)")
    sb.select_slider("Number of heads h", choices, key="heads",
                     help=f"Only divisors of d_model = {d_model}: each head gets d_head = "
                          "d_model / h.")
    seed = state.value("seed")
    sb.number_input("Seed of the random weights", 0, MAX_SEED, step=1, key="seed",
                    help="Same seed, same numbers, on every machine.")
    tokenizer, embedder, positional = state.value("tok"), state.value("emb"), state.value("pos")
    section = folded(state, "Tokens to vectors", "fold_tokens", ("tok", "emb", "pos"))
    if section is not None:
        section.selectbox("Tokenizer", TOKENIZER_MODES, key="tok",
                          help="words: punctuation split off, <s>-like tags kept whole; "
                               "whitespace: split on spaces only; chars: one token per "
                               "character.")
        section.radio("Embedder", EMBEDDER_MODES, key="emb",
                      captions=[EMBEDDER_LABELS[m] for m in EMBEDDER_MODES])
        section.toggle("Add positional encoding", key="pos",
                       help="Sinusoidal positions (Vaswani et al. 2017): a repeated word gets a "
                            "different vector at each position.")
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
    sb.header("Masking")
    mode = state.value("mask")
    sb.radio("Which source tokens may each target token see?", MASK_MODES, key="mask",
             captions=[MASK_LABELS[m] for m in MASK_MODES])
    out = dict(mask_mode=mode)
    tokens = tokens_of(src, tokenizer)[:MAX_TOKENS]
    if mode == "padding":
        labels = [token_label(j, t) for j, t in enumerate(tokens)]
        padded = state.value("pad", labels, closest=_keep_tokens(labels),
                             why="in the source sentence")
        sb.multiselect("Source tokens to mask (padding)", labels, key="pad",
                       placeholder="choose source tokens",
                       help="A masked source token gets weight exactly 0 from every target "
                            "token. The link names each one as position: token.")
        out["padded"] = tuple(sorted(parse_label(p)[0] for p in padded))
    elif mode == "wait-k":
        top = max(1, len(tokens))
        k = state.value("k", range(1, top + 1), closest=lambda v: min(max(v, 1), top),
                        why=f"for a source of {top} tokens (k runs from 1 to {top})")
        if top > 1:
            sb.slider("k", 1, top, key="k",
                      help="Target token i (from 0) may see the first i + k source tokens, as "
                           "a simultaneous interpreter who starts after k words.")
        out["wait_k"] = k
    elif mode == "window":
        out["window"] = state.value("window")
        sb.slider("Tokens either side of the diagonal", 0, 16, key="window")
    sb.caption("Cross-attention masks keys (source tokens), e.g. padding. The causal mask, "
               "which hides later tokens, belongs to the decoder's self-attention.")
    return out


def display_controls(state: PageState) -> None:
    """How the page looks: presenter mode, colour scale, image format (sidebar, *Display*)."""
    state.value("present"), state.value("scale"), state.value("img")
    section = folded(state, "Display: presenter mode, colour scale", "fold_display",
                     ("present", "scale", "img"))
    if section is None:
        return
    section.toggle("Presenter mode (projector)", key="present",
                   help="Bigger text and charts, the sidebar folded away, the heatmaps on the "
                        "first screen. Share the link with present=1 to open it this way.")
    section.radio("Colour scale", ("fixed", "max"), key="scale", horizontal=True,
                  format_func={"fixed": "0 to 1", "max": "0 to the maximum"}.get,
                  help="0 to 1: a colour means the same weight in every head and picture. 0 to "
                       "the maximum: with 40 tokens every weight is about 1/40, and this shows "
                       "the pattern anyway.")
    section.radio("Charts' camera button saves", ("png", "svg"), horizontal=True, key="img",
                  help="The download button in the toolbar of every chart. SVG stays sharp "
                       "on slides and in papers.")


def folded(state: PageState, label: str, key: str, controls: tuple[str, ...]):
    """A sidebar section folded away until opened, whose controls are drawn only then (a
    first visit's browser loads no code for them). It opens by itself when one of its
    ``controls`` leaves its default (a shared link, a lesson step, another control): what
    shapes the picture is never hidden. The section, or None while it is folded."""
    changed = any(state.drawn[k] != state.defaults[k] for k in controls)
    memory = state.memory.setdefault(key, {})
    if changed and not memory.get("changed"):
        st.session_state[key] = True
    memory["changed"] = changed
    section = st.sidebar.expander(label, key=key, on_change="rerun")
    return section if section.open else None


def chart_config(name: str) -> dict:
    """Plotly config for a chart: toolbar download in the chosen format, named ``name``."""
    fmt = st.session_state.get("img", "png")
    return toolbar_config(name, fmt if fmt in IMAGE_FORMATS else "png")


def settings_from_parts(src: str, tgt: str, model: dict, masks: dict) -> Settings:
    """The settings of the random weights from what the controls returned."""
    return replace(DEFAULTS, src=src, tgt=tgt, **model, **masks)
