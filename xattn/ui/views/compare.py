"""Compare: the chosen weights (A) beside one other set (B) on the same sentences.

B changes one thing at a time, chosen among what A's record offers: another seed or head
count (weights with a seed: ``variant``), the untrained start (``untrained``), another layer,
random weights on the same tokens (weights without a seed), or the toy task's trained weights
on the same words (how much of a pattern comes from training at all?).
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn._checks import counted
from xattn.figures import per_head_figure
from xattn.live.compute import derived
from xattn.live.link import CMP, CMP_HEADS, CMP_LAYER, CMP_SEED, MAX_SEED, PRESENT
from xattn.metrics import head_statistics
from xattn.pipeline import Settings, head_choices, run_tokens
from xattn.sources import Attention, random_attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import N_, lesson_says, ngettext, page_lang, said_label
from xattn.ui.i18n import gettext as _
from xattn.ui.look import FONT_SCALE
from xattn.ui.state import PageState
from xattn.ui.weights.controls import nearest
from xattn.ui.weights.trained import default_trained

__all__ = ["compare_view", "choices"]

LABELS = {           # (English: translated where drawn)
    "seed": N_("another seed"), "heads": N_("another number of heads"),
    "trained": N_("the toy task's trained weights"),
    "untrained": N_("its random start (before training)"),
    "random": N_("random weights on the same words"), "layer": N_("another layer"),
}
ORDER = ("layer", "seed", "heads", "untrained", "random", "trained")   # the first: default
TOY_D_MODEL = 32     # random weights on the same words: the toy task's width


def choices(a: Attention) -> dict[str, str]:
    """What B may be for weights ``a``: key -> label, from what ``a``'s record offers."""
    toy = a.toy is not None
    offered = {"layer": a.n_layers > 1, "seed": a.recipe is not None,
               "heads": a.recipe is not None,
               "untrained": toy and a.toy.untrained is not None,
               "random": a.recipe is None, "trained": not toy}
    return {k: LABELS[k] for k in ORDER if offered[k]}


def _column(a: Attention, layer: int, key: str, label: str, font_scale: float) -> None:
    st.markdown(f"**{label}**: {said_label(a, layer)}")
    weights = a.layer(layer)
    fig = per_head_figure(weights, list(a.src_tokens), list(a.tgt_tokens), mask=a.mask,
                          max_cols=2, title=f"{label}: {counted(a.n_heads, 'head')}", gold=a.gold,
                          font_scale=font_scale, lang=page_lang())
    show_chart(fig, key=key, name=f"xattn-compare-{key}",
               alt=_("Heatmaps of {label}, one per head.", label=label))
    stats = head_statistics(weights, a.mask)
    output = a.layers.output if a.layers is not None else None
    st.caption(_("Mean confidence {confidence} · mean spread (normalised entropy) {spread}",
                 confidence=f"{np.nanmean(stats['confidence']):.3f}",
                 spread=f"{np.nanmean(stats['normalised_entropy']):.3f}")
               + (" · " + _("output norm {norm}", norm=f"{np.linalg.norm(output):.3f}")
                  if output is not None else ""))


def _random_like(a: Attention, seed: int, n_heads: int) -> Attention:
    settings = Settings(d_model=TOY_D_MODEL, n_heads=n_heads, seed=seed)
    return random_attention(derived(("cmp-random", a.src_tokens, a.tgt_tokens, settings),
                                    lambda: run_tokens(list(a.src_tokens),
                                                       list(a.tgt_tokens), settings)))


def _b(a: Attention, layer: int, state: PageState) -> tuple[Attention, int, str] | None:
    """Draw B's controls; return B's weights, layer and what changed (Markdown)."""
    options = choices(a)
    choice = state.value(CMP, list(options), why=_("for these weights"))
    left, right = st.columns(2)
    shown = {k: _(v) for k, v in options.items()}
    left.selectbox(_("B is"), list(options), key=CMP.key, format_func=shown.get)
    if choice in ("seed", "heads", "random"):
        base_seed = a.recipe.seed if a.recipe is not None else 0
        seed = state.value(CMP_SEED, default=(base_seed + 1) % (MAX_SEED + 1)
                           if choice == "seed" else base_seed)
        d_model = a.layers.d_model if a.recipe is not None else TOY_D_MODEL
        heads = head_choices(d_model)
        n_heads = state.value(CMP_HEADS, heads, closest=nearest(heads),
                              default=min(heads, key=lambda h: abs(h - a.n_heads)),
                              why=_("with d_model {d_model} (heads must divide it)",
                                    d_model=d_model))
        if choice == "seed":
            right.number_input(_("Seed of B"), 0, MAX_SEED, key=CMP_SEED.key)
        elif choice == "heads":
            right.select_slider(_("Heads of B"), heads, key=CMP_HEADS.key)
        else:
            c1, c2 = right.columns(2)
            c1.number_input(_("Seed of B"), 0, MAX_SEED, key=CMP_SEED.key)
            c2.select_slider(_("Heads of B"), heads, key=CMP_HEADS.key)
        b = a.recipe.variant(seed, n_heads) if a.recipe is not None else \
            _random_like(a, seed, n_heads)
        what = (_("the seed ({was} → {now}): the projection matrices W_Q, W_K, W_V, W_O",
                  was=base_seed, now=seed) if choice == "seed" else
                ngettext("the split into heads ({was} → {n} head of d_head {d_head})",
                         "the split into heads ({was} → {n} heads of d_head {d_head})",
                         n_heads, was=a.n_heads, d_head=d_model // n_heads)
                if choice == "heads" else
                _("the weights: random projections instead of these"))
        return b, 0, what
    if choice == "untrained":
        return a.toy.untrained(), 0, _("training: the same module, before its first step")
    if choice == "trained":
        b = default_trained(a)
        return (b, 0, _("the weights: trained on the toy task")) if b is not None else None
    layers = range(1, a.n_layers + 1)
    other = state.value(CMP_LAYER, layers, default=1 if layer != 0 else a.n_layers,
                        why=ngettext("(there is {n} layer)", "(there are {n} layers)", a.n_layers))
    right.select_slider(_("Layer of B"), layers, key=CMP_LAYER.key)
    return a, other - 1, _("the layer ({was} → {now})", was=layer + 1, now=other)


def compare_view(a: Attention, layer: int, state: PageState) -> None:
    st.markdown(_("**A** is the weights chosen in the sidebar; **B** changes one thing. Same "
                  "sentences, same tokens."))
    found = _b(a, layer, state)
    if found is None:
        return
    b, b_layer, what = found
    left, right = st.columns(2)
    scale = FONT_SCALE if state.shown(PRESENT) else 1.0
    with left:
        _column(a, layer, "compare_a", "A", scale)
    with right:
        _column(b, b_layer, "compare_b", "B", scale)
    same = np.array_equal(a.layer(layer), b.layer(b_layer))
    st.markdown(
        "- " + _("**Changed:** {what}.", what=what) + "\n"
        "- " + _("**Unchanged:** the tokens, and that every row of weights sums to 1.") + "\n"
        + ("- " + _("The two pictures are identical.") + "\n" if same else "")
        + (f"- {lesson_says(a.meta.caveat)}" if a.meta.caveat else ""))
