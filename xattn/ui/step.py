"""Step through one head and one target token: every number from query to output row."""

from __future__ import annotations

from functools import partial

import numpy as np
import pyarrow as pa
import streamlit as st

from xattn.embedder import ToyEmbedder
from xattn.figures import clickable_head_figure, saturation_figure, weights_bar_figure
from xattn.literal import md_code
from xattn.pipeline import EMBEDDER_SEED, MAX_HEADS, Run
from xattn.sources import Attention
from xattn.steps import row_entropy, saturation, stages
from xattn.ui.compute import derived
from xattn.ui.controls import chart_config, token_label
from xattn.ui.params import bool_param, int_param, text_param
from xattn.ui.state import PageState

PICK_KEY = "step_pick"
CLICKED = "_step_clicked"     # (target label, source column) of the last clicked cell
STEP_HEAD = int_param("step_head", 1, 1, MAX_HEADS, "the head")
STEP_TGT = text_param("step_tgt", "", 200, "the target token")  # default: the first
SQRT = bool_param("sqrt", True, "the division by √d_head")


def _on_pick(labels: list[str]) -> None:
    """A clicked cell selects its target row (the head stays) and marks its source column;
    runs before the widgets."""
    points = st.session_state.get(PICK_KEY, {}).get("selection", {}).get("points", [])
    if points:
        i, j = (int(v) for v in points[0]["customdata"][:2])
        if 0 <= i < len(labels):
            st.session_state["step_tgt"] = labels[i]
            st.session_state[CLICKED] = (labels[i], j)


def _saturation_curve(r: Run) -> dict:
    """Entropy against d_head, scaled and not, for random weights of this run's shape."""
    s = r.settings

    def embed(tokens):
        return lambda d: ToyEmbedder(d, seed=EMBEDDER_SEED, positional=s.positional,
                                     mode=s.embedder).embed(list(tokens))

    top = max(1, 512 // s.n_heads)
    d_heads = tuple(d for d in (1, 2, 4, 8, 16, 32, 64, 128) if d <= top)
    return derived(("saturation", s), lambda: saturation(
        embed(r.tgt_tokens), embed(r.src_tokens), r.mask, s.n_heads, s.seed, d_heads))


def _table(values: np.ndarray, row_labels: list[str] | None = None, *,
           first: str = "token", max_rows: int = 64) -> None:
    """Numbers to 3 decimals, every row in view (no scroll up to ``max_rows``); columns are
    dimensions, narrow so that many fit (the rest scroll sideways)."""
    arr = np.atleast_2d(np.asarray(values, dtype=float))
    data = {f"d{k}": arr[:, k].round(3) for k in range(arr.shape[1])}
    config = {f"d{k}": st.column_config.NumberColumn(f"d{k}", format="%.3f", width=60)
              for k in range(arr.shape[1])}
    # An Arrow table straight from the columns: through pandas, a 256-dimension table took
    # 10 ms to convert (d_model 256, lesson step 8, has eight of them on one page).
    table = pa.table(data if row_labels is None else {first: list(row_labels), **data})
    st.dataframe(table, hide_index=True, column_config=config,
                 height=35 * (min(len(arr), max_rows) + 1) + 3)
    if arr.shape[1] > 12:
        st.caption(f"{arr.shape[1]} dimensions: scroll the table sideways for the rest.")


def step_view(a: Attention, layer: int, state: PageState) -> None:
    if a.trace is None:
        st.info(f"Step through is not available for these weights: {a.why_no_projections} It "
                "needs the projections W_Q, W_K, W_V, W_O (random, trained or model weights).",
                icon=":material/info:")
        return
    src_tokens, tgt_tokens = a.trace_tokens or (a.src_tokens, a.tgt_tokens)
    tgt_labels = [token_label(i, t) for i, t in enumerate(tgt_tokens)]
    st.markdown("Pick a head and a target token (or click a cell of the heatmap) and follow one "
                "row of weights from the query vector to the output row. Every number is from "
                "these weights" + (", at the level of subword pieces." if a.trace_tokens
                                    else "."))
    c1, c2, c3 = st.columns([1, 2, 2])
    heads = range(1, a.n_heads + 1)
    head = state.value("step_head", heads, why=f"(there are {a.n_heads} heads)") - 1
    c1.selectbox("Head", heads, key="step_head")
    label = state.value("step_tgt", tgt_labels, why="in the target sentence")
    c2.selectbox("Target token (query)", tgt_labels, key="step_tgt")
    i = tgt_labels.index(label)
    column = column_of(st.session_state.get(CLICKED), label)     # a click on this row only
    scaled = True
    if a.source == "model":
        c3.caption("A trained model divides by √d_head as it was trained: the scaling cannot be "
                   "switched off here.")
    else:
        scaled = state.value("sqrt")
        c3.toggle("Divide scores by √d_head", key="sqrt",
                  help="Switch off to see the softmax saturate: a few keys take all the weight "
                       "as d_head grows.")
    trace = derived(("trace", a.key, layer, scaled), lambda: a.trace(layer, scaled))
    mask = trace.mask
    left, right = st.columns([3, 2])
    with left:
        st.plotly_chart(
            clickable_head_figure(trace.weights[head], list(src_tokens), list(tgt_tokens),
                                  head=head, selected=i, mask=mask,
                                  column=column),
            key=PICK_KEY, on_select=partial(_on_pick, tgt_labels), selection_mode="points",
            config=chart_config(f"xattn-head{head + 1}-step"),
            alt=f"Heatmap of head {head + 1}; click a cell to choose its target token.")
    with right:
        st.plotly_chart(weights_bar_figure(trace.weights[head, i], list(src_tokens),
                                           allowed=mask[i], query=tgt_tokens[i], head=head,
                                           marked=column),
                        key="step_bar", config=chart_config(f"xattn-head{head + 1}-weights"),
                        alt="Bar chart of the softmax weights of the chosen target token.")
        _entropy_note(mask, trace, head, i, scaled)
    if a.inputs is not None:
        _inputs(a.inputs(layer), tgt_tokens[i], head, i, trace.q.shape[-1])
    else:
        st.caption("A real model adds a bias to each projection: q_i = x_i W_Q + b_Q.")
    _stages(list(src_tokens), trace, head, i, column)
    if a.source == "random":
        _saturation(a.context)


def _saturation(r: Run) -> None:
    with st.expander("Why divide by √d_head? Entropy as d_head grows"):
        s = r.settings
        st.plotly_chart(saturation_figure(_saturation_curve(r), s.d_model // s.n_heads),
                        key="saturation", config=chart_config("xattn-saturation"),
                        alt="Line chart: mean normalised entropy against d_head, scaled and "
                            "unscaled.")
        st.caption("Dot products of random d_head-dimensional vectors grow like √d_head; "
                   "dividing by √d_head keeps the softmax from collapsing onto one key.")


def _entropy_note(mask, trace, head: int, i: int, scaled: bool) -> None:
    allowed = mask[i]
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


def column_of(clicked, label: str) -> int | None:
    """The clicked source column, if the click was on this target row."""
    return clicked[1] if clicked and clicked[0] == label else None


def _inputs(inputs, token: str, head: int, i: int, d_head: int) -> None:
    """Step 0: x_i and the W_Q columns of this head, so q_i = x_i W_Q^h can be checked."""
    x, w_q = inputs
    cols = slice(head * d_head, (head + 1) * d_head)
    with st.expander(f"0. Where q_i comes from: x_i (the vector of {md_code(token)}) times the "
                     f"columns {cols.start}..{cols.stop - 1} of W_Q"):
        st.markdown(f"$x_i$ · {x.shape[1]} numbers: the token's embedding (plus its position)")
        _table(x[i])
        st.markdown(f"$W^Q_h$ · {x.shape[1]} × {d_head}: head {head + 1}'s columns of $W^Q$; "
                    "each number of $q_i$ is $x_i$ times one column")
        _table(w_q[:, cols], [str(r) for r in range(x.shape[1])], first="row", max_rows=16)


def _stages(src_tokens: list[str], trace, head: int, i: int, column: int | None) -> None:
    src_labels = [token_label(j, t) + (" ◀ clicked" if j == column else "")
                  for j, t in enumerate(src_tokens)]
    q, k, dots, scaled, mask, weights, weighted, out, concat, y = stages(trace, head, i)
    st.markdown(f"**1. {q.title}** · shape {q.shape} · ${q.formula}$")
    _table(q.values)
    st.markdown(f"**2. {k.title}** · shape {k.shape} · ${k.formula}$")
    _table(k.values, src_labels)
    st.markdown("**3–6. From dot products to weights**, one row per source token · shape "
                f"{dots.shape} each")
    st.dataframe({
        "source token": src_labels,
        "3. dot product q·k": np.round(dots.values, 3),
        "4. scaled score": np.round(scaled.values, 3),
        "5. mask M": ["0 (may attend)" if m else "−∞ (masked)" for m in mask.values],
        "6. softmax weight": np.round(weights.values, 3),
    }, hide_index=True, height=35 * (len(src_labels) + 1) + 3,
        column_config={c: st.column_config.NumberColumn(format="%.3f") for c in (
            "3. dot product q·k", "4. scaled score", "6. softmax weight")})
    st.latex(rf"{scaled.formula} \qquad {weights.formula} \quad (z = \text{{score}} + M)")
    st.markdown(f"**7. {weighted.title}** · shape {weighted.shape} · ${weighted.formula}$")
    _table(weighted.values, src_labels)
    st.markdown(f"**8. {out.title}**, the column sums of step 7 · shape {out.shape} · "
                f"${out.formula}$")
    _table(out.values)
    d_head = trace.q.shape[-1]
    st.markdown(f"**9. {concat.title}** · shape {concat.shape} · ${concat.formula}$ — head "
                f"{head + 1} fills dimensions {head * d_head}..{(head + 1) * d_head - 1}")
    _table(concat.values)
    st.markdown(f"**10. {y.title}** · shape {y.shape} · ${y.formula}$: $W^O$ mixes all heads "
                "into the output row of this target token")
    _table(y.values)
