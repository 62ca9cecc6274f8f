"""Two settings side by side, with the same sentences: what changes and what does not."""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.figures import per_head_figure
from xattn.metrics import head_statistics
from xattn.pipeline import Run, head_choices
from xattn.ui.controls import chart_config, keep_valid

BIND = "query-params"


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


def compare_view(r: Run, compute) -> None:
    """``compute(settings) -> Run`` is the page's cached computation."""
    s = r.settings
    st.markdown("Left: the settings in the sidebar. Right: the same sentences, tokens, mask and "
                "token vectors, with another seed or another number of heads.")
    a, b = st.columns(2)
    seed_b = int(a.number_input("Seed of B", 0, 2**31 - 1, s.seed + 1, key="cmp_seed",
                                bind=BIND))
    choices = head_choices(s.d_model)
    default = 8 if 8 in choices and s.n_heads != 8 else choices[0]
    keep_valid("cmp_heads", choices, default)
    heads_b = int(b.select_slider("Heads of B", choices, value=default, key="cmp_heads",
                                  bind=BIND))
    other = compute(s.replace(seed=seed_b, n_heads=heads_b))
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

