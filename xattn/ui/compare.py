"""Two settings side by side, with the same sentences: what changes and what does not."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st

from xattn.figures import per_head_figure
from xattn.metrics import head_statistics
from xattn.pipeline import MAX_HEADS, Run, head_choices
from xattn.ui.compute import cached_run
from xattn.ui.controls import MAX_SEED, chart_config, nearest
from xattn.ui.params import int_param
from xattn.ui.state import PageState

# -1: "not chosen", replaced by a default that depends on setting A (see compare_view)
CMP_SEED = int_param("cmp_seed", -1, 0, MAX_SEED, "the seed of B")
CMP_HEADS = int_param("cmp_heads", -1, 1, MAX_HEADS, "the heads of B")


def _column(r: Run, key: str, label: str) -> None:
    s = r.settings
    st.markdown(f"**{label}**: {s.n_heads} heads, d_model {s.d_model}, seed {s.seed}")
    fig = per_head_figure(r.weights, r.src_tokens, r.tgt_tokens, mask=r.mask, max_cols=2,
                          title=f"{label}: {s.n_heads} heads, seed {s.seed}")
    st.plotly_chart(fig, key=key, config=chart_config(f"xattn-compare-{key}"),
                    alt=f"Heatmaps of setting {label}, one per head.")
    stats = head_statistics(r.weights, r.mask)
    st.caption(f"Mean confidence {np.nanmean(stats['confidence']):.2f} · mean spread "
               f"(normalised entropy) {np.nanmean(stats['normalised_entropy']):.2f} · output "
               f"norm {np.linalg.norm(r.output):.2f}")


def compare_view(r: Run, state: PageState) -> None:
    s = r.settings
    st.markdown("Left: the settings in the sidebar. Right: the same sentences, tokens, mask and "
                "token vectors, with another seed or another number of heads.")
    a, b = st.columns(2)
    seed_b = state.value("cmp_seed", default=(s.seed + 1) % (MAX_SEED + 1))
    a.number_input("Seed of B", 0, MAX_SEED, key="cmp_seed")
    choices = head_choices(s.d_model)
    heads_b = state.value("cmp_heads", choices, closest=nearest(choices), default=s.n_heads,
                          why=f"with d_model {s.d_model} (heads must divide it)")
    b.select_slider("Heads of B", choices, key="cmp_heads")
    other = cached_run(replace(s, seed=seed_b, n_heads=heads_b))
    left, right = st.columns(2)
    with left:
        _column(r, "compare_a", "A")
    with right:
        _column(other, "compare_b", "B")
    same_inputs = np.array_equal(r.encoder_output, other.encoder_output)
    st.markdown(
        f"- **Unchanged:** the tokens, the token vectors (identical: {same_inputs}), the mask, "
        "and the fact that every row sums to 1.\n"
        f"- **Changed:** the projection matrices W^Q, W^K, W^V, W^O"
        + (f" (seed {s.seed} → {seed_b})" if seed_b != s.seed else "")
        + (f", and the split into heads ({s.n_heads} heads of d_head {s.d_model // s.n_heads} "
           f"→ {heads_b} heads of d_head {s.d_model // heads_b})" if heads_b != s.n_heads else "")
        + ". With random weights every pattern comes from the seed; more heads means each "
        "head works in fewer dimensions.")

