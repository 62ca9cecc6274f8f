"""Head statistics and head ablation: what each head does, and what it contributes."""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.ablation import ablation
from xattn.figures import ablation_figure, statistics_figure
from xattn.metrics import MEASURE_DESCRIPTIONS, head_statistics
from xattn.pipeline import MAX_HEADS, Run
from xattn.ui.compute import derived
from xattn.ui.controls import chart_config
from xattn.ui.params import list_param, whole_number
from xattn.ui.state import PageState

OFF = list_param("off", whole_number(1, MAX_HEADS), what="the heads switched off")
MEASURE_NAMES = {
    "normalised_entropy": "spread (normalised entropy)",
    "effective_keys": "effective number of source tokens",
    "confidence": "confidence (mean row maximum)",
    "diagonal_alignment": "diagonal alignment",
    "monotonicity": "monotonicity",
}

SHORT_NAMES = {"normalised_entropy": "spread", "effective_keys": "effective tokens",
               "confidence": "confidence", "diagonal_alignment": "diagonal",
               "monotonicity": "monotonicity"}


def stats_view(r: Run) -> None:
    stats = derived(("stats", r.settings), lambda: head_statistics(r.weights, r.mask))
    table = {"head": [f"head {h + 1}" for h in stats["head"]]}
    table.update({MEASURE_NAMES[k]: np.round(stats[k], 3) for k in MEASURE_NAMES})
    st.dataframe(table, hide_index=True)
    st.plotly_chart(statistics_figure(stats, SHORT_NAMES), key="stats_chart",
                    config=chart_config(f"xattn-head-statistics-seed{r.settings.seed}"),
                    alt="Bar charts of the five head statistics, one bar per head.")
    st.markdown("\n".join(f"- **{MEASURE_NAMES[k]}**: {MEASURE_DESCRIPTIONS[k]}"
                          for k in MEASURE_NAMES))
    st.caption("Means are over target tokens that have at least one source token to attend to. "
               "With random weights these numbers describe the seed, not language.")


def ablation_view(r: Run, state: PageState) -> None:
    n_heads = r.settings.n_heads
    st.markdown("Switch heads off (their output is multiplied by 0 before $W^O$, as in Michel, "
                "Levy and Neubig 2019) and see how much the output changes: "
                "$\\lVert Y - Y_{\\text{ablated}} \\rVert / \\lVert Y \\rVert$.")
    labels = [str(h) for h in range(1, n_heads + 1)]
    off = state.value("off", range(1, n_heads + 1), why=f"(there are {n_heads} heads)")
    st.multiselect("Heads to switch off", range(1, n_heads + 1), key="off",
                   placeholder="choose heads by number")
    heads_off = tuple(h - 1 for h in off)
    res = derived(("ablation", r.settings, heads_off), lambda: ablation(
        r.module(), r.decoder_state, r.encoder_output, r.mask, heads_off=heads_off))
    a, b = st.columns([1, 2])
    with a:
        st.dataframe({"head switched off alone": [f"head {h}" for h in labels],
                      "relative output change": np.round(res.per_head, 3)}, hide_index=True)
        if heads_off:
            st.metric(f"Change with heads {', '.join(map(str, off))} off", f"{res.chosen:.1%}")
            if len(heads_off) == n_heads:
                st.caption("Every head is off: the output is all zeros (a change of 100%).")
        else:
            st.info("Choose heads above to see the change for that set and per target token.")
    with b:
        st.plotly_chart(ablation_figure(res, r.tgt_tokens, [h + 1 for h in heads_off]),
                        key="ablation_chart", config=chart_config("xattn-ablation"),
                        alt="Bar chart of the relative output change per target token.")
    st.caption("Weights of the remaining heads do not change: a head's gate scales its output, "
               "not its attention. A change near 0 means the output barely depends on that "
               "head; the changes of single heads do not add up, since norms are not additive.")
