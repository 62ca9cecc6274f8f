"""Step through one head and one target token: every number from query to output row."""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.embedder import ToyEmbedder
from xattn.pipeline import EMBEDDER_SEED, Run, Settings
from xattn.stepfigures import clickable_head_figure, saturation_figure, weights_bar_figure
from xattn.steps import row_entropy, saturation, stages
from xattn.ui.controls import chart_config, keep_valid

BIND = "query-params"
PICK_KEY = "step_pick"


def _labels(tokens: list[str]) -> list[str]:
    return [f"{i}: {t}" for i, t in enumerate(tokens)]


def _on_pick() -> None:
    """A clicked cell selects its target row (and head stays): store it before widgets render."""
    points = st.session_state.get(PICK_KEY, {}).get("selection", {}).get("points", [])
    labels = st.session_state.get("_step_tgt_labels", [])
    if points and labels:
        i = int(points[0]["customdata"][0])
        if 0 <= i < len(labels):
            st.session_state["step_tgt"] = labels[i]


@st.cache_data(max_entries=64, show_spinner=False)
def _saturation_curve(s: Settings, mask_bytes: bytes, n_tgt: int, n_src: int,
                      src: tuple[str, ...], tgt: tuple[str, ...]) -> dict:
    mask = np.frombuffer(mask_bytes, dtype=bool).reshape(n_tgt, n_src)

    def embed(tokens):
        return lambda d: ToyEmbedder(d, seed=EMBEDDER_SEED, positional=s.positional,
                                     mode=s.embedder).embed(list(tokens))

    top = max(1, 512 // s.n_heads)
    d_heads = tuple(d for d in (1, 2, 4, 8, 16, 32, 64, 128) if d <= top)
    return saturation(embed(tgt), embed(src), mask, s.n_heads, s.seed, d_heads)


def _table(values: np.ndarray, row_labels: list[str] | None = None) -> None:
    arr = np.atleast_2d(np.asarray(values, dtype=float))
    data = {f"dim {k}": arr[:, k].round(3) for k in range(arr.shape[1])}
    st.dataframe(data if row_labels is None else {"token": row_labels, **data},
                 hide_index=True, height=min(36 * (len(arr) + 1) + 4, 260))


def step_view(r: Run) -> None:
    s = r.settings
    tgt_labels = _labels(r.tgt_tokens)
    st.session_state["_step_tgt_labels"] = tgt_labels
    st.markdown("Pick a head and a target token (or click a cell of the heatmap) and follow one "
                "row of weights from the query vector to the output row. Every number is from "
                "this run.")
    c1, c2, c3 = st.columns([1, 2, 2])
    keep_valid("step_head", range(1, s.n_heads + 1))
    keep_valid("step_tgt", tgt_labels)
    head = int(c1.selectbox("Head", list(range(1, s.n_heads + 1)), key="step_head",
                            bind=BIND)) - 1
    label = c2.selectbox("Target token (query)", tgt_labels, key="step_tgt", bind=BIND)
    i = tgt_labels.index(label)
    scaled = c3.toggle("Divide scores by √d_head", True, key="scale", bind=BIND,
                       help="Switch off to see the softmax saturate: a few keys take all "
                            "the weight as d_head grows.")
    mha = r.module()
    trace = mha.trace(r.decoder_state, r.encoder_output, r.mask, scale=scaled)
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            clickable_head_figure(trace.weights[head], r.src_tokens, r.tgt_tokens, head=head,
                                  selected=i, mask=r.mask),
            key=PICK_KEY, on_select=_on_pick, selection_mode="points",
            config=chart_config(f"xattn-head{head + 1}-step"),
            alt=f"Heatmap of head {head + 1}; click a cell to choose its target token.")
    with right:
        allowed = r.mask[i]
        st.plotly_chart(weights_bar_figure(trace.weights[head, i], r.src_tokens,
                                           allowed=allowed,
                                           title=f"Weights of '{r.tgt_tokens[i]}' (head "
                                                 f"{head + 1})"),
                        key="step_bar", config=chart_config(f"xattn-head{head + 1}-weights"),
                        alt="Bar chart of the softmax weights of the chosen target token.")
        _entropy_note(r, trace, head, i, scaled)
    _stages(r, trace, head, i)
    with st.expander("Why divide by √d_head? Entropy as d_head grows"):
        curve = _saturation_curve(s, r.mask.tobytes(), *r.mask.shape, tuple(r.src_tokens),
                                  tuple(r.tgt_tokens))
        st.plotly_chart(saturation_figure(curve, s.d_model // s.n_heads), key="saturation",
                        config=chart_config("xattn-saturation"),
                        alt="Line chart: mean normalised entropy against d_head, scaled and "
                            "unscaled.")
        st.caption("Dot products of random d_head-dimensional vectors grow like √d_head; "
                   "dividing by √d_head keeps the softmax from collapsing onto one key.")


def _entropy_note(r: Run, trace, head: int, i: int, scaled: bool) -> None:
    allowed = r.mask[i]
    if not allowed.any():
        st.warning("This target token has no source token to attend to: every key is masked, "
                   "so its weights and output are all zero.")
        return
    h = row_entropy(trace.weights[head, i], allowed)
    n = int(allowed.sum())
    st.metric("Entropy of this row", f"{h:.3f} nats",
              help=f"0 = all weight on one source token; log({n}) = {np.log(n):.3f} = spread "
                   f"evenly over the {n} allowed tokens.")
    st.caption(f"Scaling is {'on' if scaled else 'off'}: scores × {trace.scale:.3f}.")


def _stages(r: Run, trace, head: int, i: int) -> None:
    src_labels = _labels(r.src_tokens)
    q, k, dots, scaled, mask, weights, weighted, out, concat, y = stages(trace, head, i)
    st.markdown(f"**1. {q.title}** · shape {q.shape} · ${q.formula}$")
    _table(q.values)
    st.markdown(f"**2. {k.title}** · shape {k.shape} · ${k.formula}$")
    _table(k.values, src_labels)
    st.markdown("**3–6. From dot products to weights**, one row per source token · shape "
                f"{dots.shape} each")
    st.dataframe({
        "source token": src_labels,
        "3. dot product q·k": np.round(dots.values, 4),
        "4. scaled score": np.round(scaled.values, 4),
        "5. mask M": ["0 (may attend)" if m else "−∞ (masked)" for m in mask.values],
        "6. softmax weight": np.round(weights.values, 4),
    }, hide_index=True)
    st.latex(rf"{scaled.formula} \qquad {weights.formula} \quad (z = \text{{score}} + M)")
    st.markdown(f"**7. {weighted.title}** · shape {weighted.shape} · ${weighted.formula}$")
    _table(weighted.values, src_labels)
    st.markdown(f"**8. {out.title}**, the column sums of step 7 · shape {out.shape} · "
                f"${out.formula}$")
    _table(out.values)
    d_head = r.settings.d_model // r.settings.n_heads
    st.markdown(f"**9. {concat.title}** · shape {concat.shape} · ${concat.formula}$ — head "
                f"{head + 1} fills dimensions {head * d_head}..{(head + 1) * d_head - 1}")
    _table(concat.values)
    st.markdown(f"**10. {y.title}** · shape {y.shape} · ${y.formula}$: $W^O$ mixes all heads "
                "into the output row of this target token")
    _table(y.values)
