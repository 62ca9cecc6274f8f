"""The Heads view: one heatmap per head, their average, the tensor shapes, the output, downloads."""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.export import file_name, weights_csv
from xattn.figures import average_figure, output_figure, per_head_figure
from xattn.literal import md_code
from xattn.pipeline import Run, run_npz
from xattn.ui.controls import chart_config

FORMULA = (r"\begin{aligned} \mathrm{MultiHead}(Q, K, V) &= \mathrm{Concat}(\mathrm{head}_1, "
           r"\dots, \mathrm{head}_h)\, W^O \\ \mathrm{head}_i &= \mathrm{softmax}\!\left("
           r"\frac{Q W_i^Q (K W_i^K)^\top}{\sqrt{d_k}} + M\right) V W_i^V \end{aligned}")


def file_stem(r: Run) -> str:
    """A file name that says what is in the file: xattn-4heads-d32-seed0-the-black-cat."""
    s = r.settings
    return file_name(f"xattn-{s.n_heads}heads-d{s.d_model}-seed{s.seed} "
                     + " ".join(r.src_tokens[:4])).lower()


def shapes_text(r: Run) -> str:
    s = r.settings
    n_src, n_tgt, d_head = len(r.src_tokens), len(r.tgt_tokens), s.d_model // s.n_heads
    return (f"encoder output ({n_src}, {s.d_model}) · decoder state ({n_tgt}, {s.d_model}) · "
            f"per head Q ({n_tgt}, {d_head}), K and V ({n_src}, {d_head}) · weights "
            f"({s.n_heads}, {n_tgt}, {n_src}) = heads × target × source · output "
            f"({n_tgt}, {s.d_model})")


def text_alternative(weights: np.ndarray, mask: np.ndarray, src_tokens, tgt_tokens) -> str:
    """For screen readers and print: the source token each target token attends to most.

    Markdown in which every token is a code span, so nothing a user typed is interpreted.
    """
    lines = []
    for h, head in enumerate(weights):
        pairs = []
        for i, row in enumerate(head):
            if not mask[i].any():
                pairs.append(f"{md_code(tgt_tokens[i])} → (nothing to attend to)")
                continue
            j = int(np.argmax(row))
            pairs.append(f"{md_code(tgt_tokens[i])} → {md_code(src_tokens[j])} ({row[j]:.3f})")
        lines.append(f"- **Head {h + 1}**: " + "; ".join(pairs))
    return "\n".join(lines)


def heads_view(r: Run) -> None:
    st.caption(f"**Shapes in this run:** {shapes_text(r)}")
    stem = file_stem(r)
    fig = per_head_figure(r.weights, r.src_tokens, r.tgt_tokens, mask=r.mask)
    st.plotly_chart(fig, key="per_head", config=chart_config(f"{stem}-per-head"),
                    alt="Heatmaps of cross-attention weights, one per head; a text version "
                        "is in the expander below.")
    if (~r.mask).any():
        st.caption("Grey crosses mark masked cells: that source token may not be attended "
                   "from that target token, so its weight is exactly 0.")
    with st.expander("Text description of the heatmaps (strongest source token per row)"):
        st.markdown(text_alternative(r.weights, r.mask, r.src_tokens, r.tgt_tokens))
    st.markdown(f"**The formula.** $Q$ = decoder state (target), $K = V$ = encoder output "
                f"(source), $d_k = d_{{model}} / h = {r.settings.d_model // r.settings.n_heads}$, "
                "and $M$ is 0 where a key may be attended and $-\\infty$ where it is masked.")
    st.latex(FORMULA)
    left, right = st.columns([2, 3])
    with left:
        st.plotly_chart(average_figure(r.weights, r.src_tokens, r.tgt_tokens, mask=r.mask),
                        key="average", config=chart_config(f"{stem}-average"),
                        alt="Heatmap of the attention weights averaged over heads.")
    with right:
        st.plotly_chart(output_figure(r.output, r.tgt_tokens), key="output",
                        config=chart_config(f"{stem}-output"),
                        alt="Heatmap of the output representation: target tokens by model "
                            "dimensions.")
    downloads(r, stem)


def downloads(r: Run, stem: str) -> None:
    st.markdown("**Download the numbers**")
    a, b, _ = st.columns([1, 1, 2])
    a.download_button("Weights as CSV", lambda: weights_csv(r.weights, r.src_tokens,
                                                            r.tgt_tokens),
                      f"{stem}-weights.csv", "text/csv", key="dl_csv", on_click="ignore",
                      help="Long format: head, tgt_pos, tgt_token, src_pos, src_token, weight. "
                           "Heads count from 1, positions from 0. A token a spreadsheet would "
                           "read as a formula (=, +, -, @ first) gets a ' in front.")
    b.download_button("Everything as .npz", lambda: run_npz(r), f"{stem}.npz",
                      "application/octet-stream", key="dl_npz", on_click="ignore",
                      help="NumPy archive: weights, output, mask, inputs, tokens (exactly as "
                           "typed), settings.")
