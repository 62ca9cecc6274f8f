"""Compare: the chosen weights (A) beside one other set (B) on the same sentences.

B changes one thing at a time: another seed or head count for random weights, the untrained
start of the trained model, another layer of a model or file, or random weights on the same
tokens (how much of a pattern comes from training at all?).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from xattn.figures import add_gold_marks, per_head_figure
from xattn.metrics import head_statistics
from xattn.pipeline import MAX_HEADS, Settings, head_choices, run_tokens
from xattn.sources import Attention, random_attention, trained_attention
from xattn.ui.compute import cached_run, derived
from xattn.ui.controls import MAX_SEED, chart_config, nearest
from xattn.ui.params import choice_param, int_param
from xattn.ui.state import PageState

__all__ = ["compare_view"]

CHOICES = {  # B's options for each source of A: key -> label
    "random": {"seed": "another seed", "heads": "another number of heads",
               "trained": "the toy task's trained weights"},
    "trained": {"untrained": "its random start (before training)",
                "random": "random weights"},
    "model": {"layer": "another layer", "random": "random weights on the same words"},
    "file": {"layer": "another layer", "random": "random weights on the same words"},
}
CMP = choice_param("cmp", "", sorted({k for c in CHOICES.values() for k in c}), "B")
# -1: "not chosen", replaced by a default that depends on A (see _b_controls)
CMP_SEED = int_param("cmp_seed", -1, 0, MAX_SEED, "the seed of B")
CMP_HEADS = int_param("cmp_heads", -1, 1, MAX_HEADS, "the heads of B")
CMP_LAYER = int_param("cmp_layer", -1, 1, 99, "the layer of B")


def _column(a: Attention, layer: int, key: str, label: str) -> None:
    st.markdown(f"**{label}**: {a.describe(layer)}")
    weights = a.layer(layer)
    fig = per_head_figure(weights, list(a.src_tokens), list(a.tgt_tokens), mask=a.mask,
                          max_cols=2, title=f"{label}: {a.n_heads} heads")
    if a.gold is not None:
        add_gold_marks(fig, a.gold, a.src_tokens, a.tgt_tokens)
    st.plotly_chart(fig, key=key, config=chart_config(f"xattn-compare-{key}"),
                    alt=f"Heatmaps of {label}, one per head.")
    stats = head_statistics(weights, a.mask)
    st.caption(f"Mean confidence {np.nanmean(stats['confidence']):.3f} · mean spread "
               f"(normalised entropy) {np.nanmean(stats['normalised_entropy']):.3f}"
               + (f" · output norm {np.linalg.norm(a.output):.3f}" if a.output is not None
                  else ""))


def _random_like(a: Attention, seed: int, n_heads: int) -> Attention:
    settings = Settings(d_model=32, n_heads=n_heads, seed=seed)
    return random_attention(derived(("cmp-random", a.src_tokens, a.tgt_tokens, settings),
                                    lambda: run_tokens(list(a.src_tokens),
                                                       list(a.tgt_tokens), settings)))


def _b(a: Attention, layer: int, state: PageState) -> tuple[Attention, int, str] | None:
    """Draw B's controls; return B's weights, layer and what changed (Markdown)."""
    options = CHOICES[a.source]
    if a.n_layers == 1:
        options = {k: v for k, v in options.items() if k != "layer"}
    choice = state.value("cmp", list(options), why="for these weights")
    left, right = st.columns(2)
    left.selectbox("B is", list(options), key="cmp", format_func=options.get)
    if choice in ("seed", "heads", "random"):
        base_seed = a.context.settings.seed if a.source == "random" else 0
        seed = state.value("cmp_seed", default=(base_seed + 1) % (MAX_SEED + 1)
                           if choice == "seed" else base_seed)
        d_model = a.context.settings.d_model if a.source == "random" else 32
        heads = head_choices(d_model)
        n_heads = state.value("cmp_heads", heads, closest=nearest(heads),
                              default=min(heads, key=lambda h: abs(h - a.n_heads)),
                              why=f"with d_model {d_model} (heads must divide it)")
        if choice == "seed":
            right.number_input("Seed of B", 0, MAX_SEED, key="cmp_seed")
        elif choice == "heads":
            right.select_slider("Heads of B", heads, key="cmp_heads")
        else:
            c1, c2 = right.columns(2)
            c1.number_input("Seed of B", 0, MAX_SEED, key="cmp_seed")
            c2.select_slider("Heads of B", heads, key="cmp_heads")
        if a.source == "random":
            b = random_attention(cached_run(replace(a.context.settings, seed=seed,
                                                    n_heads=n_heads)))
        else:
            b = _random_like(a, seed, n_heads)
        what = {"seed": f"the seed ({a.context.settings.seed if a.source == 'random' else ''} "
                        f"→ {seed}): the projection matrices W_Q, W_K, W_V, W_O",
                "heads": f"the split into heads ({a.n_heads} → {n_heads} heads of d_head "
                         f"{d_model // n_heads})",
                "random": "the weights: random projections instead of these"}[choice]
        return b, 0, what
    if choice == "untrained":
        run, pair = a.context
        return (trained_attention(run, pair, untrained=True), 0,
                "training: the same module, before its first step")
    if choice == "trained":
        from xattn.ui.trained import default_trained
        b = default_trained(a)
        return (b, 0, "the weights: trained on the toy task") if b is not None else None
    layers = range(1, a.n_layers + 1)
    other = state.value("cmp_layer", layers, default=1 if layer != 0 else a.n_layers,
                        why=f"(there are {a.n_layers} layers)")
    right.select_slider("Layer of B", layers, key="cmp_layer")
    return a, other - 1, f"the layer ({layer + 1} → {other})"


def compare_view(a: Attention, layer: int, state: PageState) -> None:
    st.markdown("**A** is the weights chosen in the sidebar; **B** changes one thing. Same "
                "sentences, same tokens.")
    found = _b(a, layer, state)
    if found is None:
        return
    b, b_layer, what = found
    left, right = st.columns(2)
    with left:
        _column(a, layer, "compare_a", "A")
    with right:
        _column(b, b_layer, "compare_b", "B")
    same = np.array_equal(a.layer(layer), b.layer(b_layer))
    st.markdown(
        f"- **Changed:** {what}.\n"
        "- **Unchanged:** the tokens, and that every row of weights sums to 1.\n"
        + ("- The two pictures are identical.\n" if same else "")
        + ("- With random weights every pattern comes from the seed; more heads means each "
           "head works in fewer dimensions." if a.source == "random" else ""))
