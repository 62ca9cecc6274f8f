"""The page's controls, each bound to a URL query parameter of the same name as its key.

A shared link therefore reproduces the exact view. Streamlit drops a URL value that is not a
valid choice and uses the default; ``url_notices`` compares what the URL asked for with what the
widgets hold and says so in the page.
"""

from __future__ import annotations

import streamlit as st

from xattn.embedder import EMBEDDER_MODES
from xattn.export import IMAGE_FORMATS, toolbar_config
from xattn.masks import MASK_MODES
from xattn.pipeline import D_MODEL_CHOICES, MAX_TOKENS, Settings, head_choices
from xattn.tokenize import TOKENIZER_MODES, tokenize

DEFAULTS = Settings()
BIND = "query-params"
MAX_CHARS = 2000
MAX_SEED = 2**31 - 1

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


def keep_valid(key: str, options, default=None) -> None:
    """Before a bound widget whose options depend on another control renders: drop a value it
    no longer offers (heads after d_model changed, padded tokens after the sentence changed).

    Streamlit would show the default but leave the old value in the URL, so the link would no
    longer reproduce the page. Changed through session state, the URL follows.
    """
    if key not in st.session_state:
        return
    value = st.session_state[key]
    options = list(options)
    if isinstance(value, (list, tuple)):
        kept = [v for v in value if v in options]
        if kept == list(value):
            return
        st.session_state[key] = kept
    elif value in options:
        return
    else:
        st.session_state[key] = default if default is not None else options[0]
    st.session_state.setdefault("_adjusted", set()).add(key)


def sentence_inputs() -> tuple[str, str]:
    """The two sentences, side by side at the top of the page."""
    left, right = st.columns(2)
    src = left.text_input("Source sentence (encoder: keys and values)", DEFAULTS.src, key="src",
                          bind=BIND, max_chars=MAX_CHARS,
                          help=f"The sentence being translated. Up to {MAX_TOKENS} tokens.")
    tgt = right.text_input("Target sentence (decoder: queries)", DEFAULTS.tgt, key="tgt",
                           bind=BIND, max_chars=MAX_CHARS,
                           help=f"The translation being produced. Up to {MAX_TOKENS} tokens.")
    return src, tgt


def _default_heads(d_model: int) -> int:
    choices = head_choices(d_model)
    return DEFAULTS.n_heads if DEFAULTS.n_heads in choices else choices[-1]


def model_controls() -> dict:
    st.sidebar.header("Model")
    d_model = st.sidebar.select_slider(
        "d_model (width of every token vector)", D_MODEL_CHOICES, value=DEFAULTS.d_model,
        key="d_model", bind=BIND)
    choices = head_choices(d_model)
    keep_valid("heads", choices, _default_heads(d_model))
    n_heads = st.sidebar.select_slider(
        "Number of heads h", choices, value=_default_heads(d_model), key="heads", bind=BIND,
        help=f"Only divisors of d_model = {d_model}: each head gets d_head = d_model / h.")
    seed = st.sidebar.number_input(
        "Seed of the random weights", 0, MAX_SEED, DEFAULTS.seed, step=1, key="seed", bind=BIND,
        help="Same seed, same numbers, on every machine.")
    st.sidebar.header("Tokens to vectors")
    tokenizer = st.sidebar.selectbox(
        "Tokenizer", TOKENIZER_MODES, key="tok", bind=BIND,
        help="words: punctuation split off, <s>-like tags kept whole; whitespace: split on "
             "spaces only; chars: one token per character.")
    embedder = st.sidebar.radio("Embedder", EMBEDDER_MODES, key="emb", bind=BIND,
                                captions=[EMBEDDER_LABELS[m] for m in EMBEDDER_MODES])
    positional = st.sidebar.toggle("Add positional encoding", DEFAULTS.positional, key="pos",
                                   bind=BIND, help="Sinusoidal positions (Vaswani et al. 2017): "
                                   "a repeated word gets a different vector at each position.")
    return dict(d_model=int(d_model), n_heads=int(n_heads), seed=int(seed), tokenizer=tokenizer,
                embedder=embedder, positional=bool(positional))


def mask_controls(src: str, tokenizer: str) -> dict:
    st.sidebar.header("Masking")
    mode = st.sidebar.radio("Which source tokens may each target token see?", MASK_MODES,
                            key="mask", bind=BIND, captions=[MASK_LABELS[m] for m in MASK_MODES])
    out = dict(mask_mode=mode)
    if mode == "padding":
        labels = [f"{j}: {t}" for j, t in enumerate(tokenize(src, tokenizer)[:MAX_TOKENS])]
        keep_valid("pad", labels)
        padded = st.sidebar.multiselect(
            "Source tokens to mask (padding)", labels, key="pad", bind=BIND,
            help="A masked source token gets weight exactly 0 from every target token. The "
                 "link names each one as position: token.")
        out["padded"] = tuple(sorted(labels.index(p) for p in padded))
    elif mode == "wait-k":
        out["wait_k"] = int(st.sidebar.slider("k", 1, MAX_TOKENS, DEFAULTS.wait_k, key="k",
                                              bind=BIND))
    elif mode == "window":
        out["window"] = int(st.sidebar.slider("Tokens either side of the diagonal", 0, 16,
                                              DEFAULTS.window, key="window", bind=BIND))
    st.sidebar.caption("Cross-attention masks keys (source tokens), e.g. padding. The causal "
                       "mask, which hides later tokens, belongs to the decoder's self-attention.")
    return out


def export_controls() -> None:
    st.sidebar.header("Export")
    st.sidebar.radio("Charts' camera button saves", ("png", "svg"), horizontal=True, key="img",
                     bind=BIND, help="The download button in the toolbar of every chart. SVG "
                     "stays sharp on slides and in papers.")


def chart_config(name: str) -> dict:
    """Plotly config for a chart: toolbar download in the chosen format, named ``name``."""
    fmt = st.session_state.get("img", "png")
    return toolbar_config(name, fmt if fmt in IMAGE_FORMATS else "png")


def requested_parameters() -> dict[str, list[str]]:
    """What the URL asks for, read before any widget can drop a refused value."""
    st.session_state["_adjusted"] = set()  # keys that keep_valid changes during this run
    return {key: st.query_params.get_all(key) for key in st.query_params}


def settings_from_controls() -> Settings:
    """Draw every control of the sidebar and the sentences; return the settings."""
    src, tgt = sentence_inputs()
    model = model_controls()
    masks = mask_controls(src, model["tokenizer"])
    export_controls()
    return DEFAULTS.replace(src=src, tgt=tgt, **model, **masks)


# Every URL parameter the page reads (the keys of its bound widgets), for the typo notice.
URL_PARAMETERS = ("src", "tgt", "d_model", "heads", "seed", "tok", "emb", "pos", "mask", "pad",
                  "k", "window", "img", "view", "step_head", "step_tgt", "scale", "off",
                  "lines_heads", "threshold", "cmp_seed", "cmp_heads", "tr_src", "tr_tgt",
                  "tr_heads", "tr_steps", "tr_seed")
STREAMLIT_PARAMETERS = ("embed", "embed_options")  # Streamlit's own: embedding the app


def _as_url(value) -> list[str]:
    values = value if isinstance(value, (list, tuple)) else [value]
    return [str(v).lower() for v in values]


def url_notices(requested: dict[str, list[str]]) -> list[str]:
    """Say which URL parameters were not valid, and what is shown instead.

    Call after every widget of the run is drawn: a refused value is replaced by the default.
    """
    notices = []
    adjusted = st.session_state.get("_adjusted", set())
    unknown = [key for key in requested
               if key not in URL_PARAMETERS and key not in STREAMLIT_PARAMETERS]
    if unknown:
        notices.append(f"The link has parameter(s) this page does not know: "
                       f"`{', '.join(unknown)[:80]}` (ignored). Known: "
                       f"{', '.join(URL_PARAMETERS)}.")
    for key, raw in requested.items():
        if key not in st.session_state or key == "view" or key in adjusted:
            continue
        value = st.session_state[key]
        if sorted(_as_url(value)) != sorted(v.lower() for v in raw):
            shown = ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else value
            notices.append(f"The link asked for `{key}={'&'.join(raw)[:60]}`, which is not a "
                           f"valid choice here; showing `{shown}` instead.")
    return notices
