"""Step through one head and one target token: every number from query to output row."""

from __future__ import annotations

from functools import partial

import numpy as np
import pyarrow as pa
import streamlit as st

from xattn.figures import clickable_head_figure, saturation_figure, weights_bar_figure
from xattn.literal import md_code
from xattn.live.compute import derived
from xattn.live.link import PRESENT, SQRT, STEP_HEAD, STEP_SRC, STEP_TGT, token_label
from xattn.sources import Attention
from xattn.steps import row_entropy, stages
from xattn.ui.charts import show_chart
from xattn.ui.i18n import N_, ngettext, page_lang
from xattn.ui.i18n import gettext as _
from xattn.ui.look import FONT_SCALE
from xattn.ui.page_assets import page_asset
from xattn.ui.state import PageState

PICK_KEY = "step_pick"
NONE = N_("none")             # the source picker's "no column marked"
# xattn.steps' stage titles, as the catalogs' messages (translated where drawn)
STAGES = (N_("Query of this target token"), N_("Keys of the source tokens"),
          N_("Weighted values"), N_("Head output"), N_("All heads side by side"),
          N_("Output row"))

# One tap on a phone must pick a cell. Plotly selects the point under the *last hover*
# (``gd._hoverdata``) and only then works out the point under the click; a finger gives no hover
# before its tap (Plotly cancels the touch's mouse events), so the first tap only showed the
# cell's label and every later tap picked the previously tapped cell. Clickmode, hovermode and
# dragmode cannot change that order, and Streamlit sets clickmode and dragmode for charts with
# ``on_select``. So where a finger lands on this chart, Plotly gets the hover a mouse would have
# given it. Installed once per page (tabs, reruns and redraws keep the one document listener);
# its empty element is hidden so that it leaves no gap under the chart.
TAP_HOVER_JS = ('<style>[data-testid="stElementContainer"]:has(script.xattn-tap-hover) '
                '{ display: none; }</style><script class="xattn-tap-hover">'
                + page_asset("tap_hover.js").replace("/*PICK_KEY*/", PICK_KEY) + "</script>")


def _on_pick(tgt_labels: list[str], src_labels: list[str]) -> None:
    """A clicked cell selects its target row and its source column (the head stays); runs
    before the widgets."""
    points = st.session_state.get(PICK_KEY, {}).get("selection", {}).get("points", [])
    if points:
        i, j = (int(v) for v in points[0]["customdata"][:2])
        if 0 <= i < len(tgt_labels) and 0 <= j < len(src_labels):
            st.session_state[STEP_TGT.key] = tgt_labels[i]
            st.session_state[STEP_SRC.key] = src_labels[j]


ROW_PX = {False: 35, True: 44}   # a table row, in pixels: normal text, presenter mode (19 px)


def _table(values: np.ndarray, row_labels: list[str] | None = None, *,
           first: str = "token", max_rows: int = 64, row_px: int = 35) -> None:
    """Numbers to 3 decimals, every row in view (no scroll up to ``max_rows``); columns are
    dimensions, narrow so that many fit (the rest scroll sideways)."""
    arr = np.atleast_2d(np.asarray(values, dtype=float))
    data = {f"d{k}": arr[:, k].round(3) for k in range(arr.shape[1])}
    config = {f"d{k}": st.column_config.NumberColumn(f"d{k}", format="%.3f", width=60)
              for k in range(arr.shape[1])}
    # An Arrow table straight from the columns: through pandas, a 256-dimension table took
    # 10 ms to convert (d_model 256, lesson step 8, has eight of them on one page).
    table = pa.table(data if row_labels is None else {first: list(row_labels), **data})
    st.dataframe(table, hide_index=True, column_config=config, row_height=row_px,
                 height=row_px * (min(len(arr), max_rows) + 1) + 3)
    if arr.shape[1] > 12:
        st.caption(_("{n} dimensions: scroll the table sideways for the rest.",
                     n=arr.shape[1]))


def step_view(a: Attention, layer: int, state: PageState) -> None:
    layers = a.layers
    if layers is None:
        st.info(_("Step through is not available for these weights: {why} It needs the "
                  "projections W_Q, W_K, W_V, W_O (random, trained or model weights).",
                  why=a.why_no_projections), icon=":material/info:")
        return
    src_tokens, tgt_tokens = layers.tokens or (a.src_tokens, a.tgt_tokens)
    present = bool(state.shown(PRESENT))
    row_px, font_scale = ROW_PX[present], FONT_SCALE if present else 1.0
    tgt_labels = [token_label(i, t) for i, t in enumerate(tgt_tokens)]
    src_labels = [token_label(j, t) for j, t in enumerate(src_tokens)]
    st.markdown(_("Pick a head, a target token and, to follow one weight, a source token (or "
                  "click a cell of the heatmap), and follow one row of weights from the query "
                  "vector to the output row.") + " "
                + (_("Every number is from these weights, at the level of subword pieces.")
                   if layers.tokens else _("Every number is from these weights.")))
    c1, c2, c3, c4 = st.columns([1, 2, 2, 2])
    heads = range(1, a.n_heads + 1)
    head = state.value(STEP_HEAD, heads, why=ngettext("(there is {n} head)",
                                                      "(there are {n} heads)", a.n_heads)) - 1
    c1.selectbox(_("Head"), heads, key=STEP_HEAD.key)
    label = state.value(STEP_TGT, tgt_labels, why=_("in the target sentence"))
    c2.selectbox(_("Target token (query)"), tgt_labels, key=STEP_TGT.key)
    marked = state.value(STEP_SRC, ["", *src_labels], why=_("in the source sentence"))
    c3.selectbox(_("Source token (key) to follow"), ["", *src_labels], key=STEP_SRC.key,
                 format_func=lambda v: v or _(NONE),
                 help=_("Marks one column: its weight is highlighted in the chart and tables. "
                        "Clicking a cell of the heatmap chooses its row and column."))
    i = tgt_labels.index(label)
    column = src_labels.index(marked) if marked else None
    scaled = True
    if layers.rescalable:
        scaled = state.value(SQRT)
        c4.toggle(_("Divide scores by √d_head"), key=SQRT.key,
                  help=_("Switch off to see the softmax saturate: a few keys take all the "
                         "weight as d_head grows."))
    trace = derived(("trace", a.key, layer, scaled), lambda: layers.trace(layer, scaled))
    if not layers.rescalable:
        c4.caption(_("This model does not divide its scores by √d_head (T5 learns the scale "
                     "into its weights).") if trace.scale == 1.0 else
                   _("These weights' division by √d_head cannot be switched off here: their "
                     "projections are read from the model as it runs."))
    mask = trace.mask
    left, right = st.columns([3, 2])
    with left:
        show_chart(
            clickable_head_figure(trace.weights[head], list(src_tokens), list(tgt_tokens),
                                  head=head, selected=i, mask=mask, column=column,
                                  font_scale=font_scale, lang=page_lang()),
            key=PICK_KEY, on_select=partial(_on_pick, tgt_labels, src_labels),
            selection_mode="points", name=f"xattn-head{head + 1}-step",
            alt=_("Heatmap of head {head}; click a cell, or use the pickers above, to choose "
                  "its target token and source token.", head=head + 1))
        st.html(TAP_HOVER_JS, unsafe_allow_javascript=True)   # no user text in it
    with right:
        show_chart(weights_bar_figure(trace.weights[head, i], list(src_tokens),
                                      allowed=mask[i], query=tgt_tokens[i], head=head,
                                      marked=column, font_scale=font_scale, lang=page_lang()),
                   key="step_bar", name=f"xattn-head{head + 1}-weights",
                   alt=_("Bar chart of the softmax weights of the chosen target token."))
        _entropy_note(mask, trace, head, i, scaled)
    if layers.inputs is not None:
        inputs = derived(("inputs", a.key, layer), lambda: layers.inputs(layer))
        _inputs(inputs, tgt_tokens[i], head, i, trace.q.shape[-1], row_px)
    else:
        st.caption(_("A real model adds a bias to each projection: q_i = x_i W_Q + b_Q (this "
                     "model's inputs are not kept here)."))
    _stages(list(src_tokens), trace, head, i, column, row_px)
    if a.recipe is not None:
        _saturation(a, trace.q.shape[-1], font_scale)


def _saturation(a: Attention, d_head: int, scale: float) -> None:
    with st.expander(_("Why divide by √d_head? Entropy as d_head grows")):
        show_chart(saturation_figure(derived(("saturation", a.key), a.recipe.saturation), d_head,
                                     font_scale=scale, lang=page_lang()),
                   key="saturation", name="xattn-saturation",
                   alt=_("Line chart: mean normalised entropy against d_head, scaled and "
                         "unscaled."))
        st.caption(_("Dot products of random d_head-dimensional vectors grow like √d_head; "
                     "dividing by √d_head keeps the softmax from collapsing onto one key."))


def _entropy_note(mask, trace, head: int, i: int, scaled: bool) -> None:
    allowed = mask[i]
    if not allowed.any():
        st.warning(_("This target token has no source token to attend to: every key is "
                     "masked, so its weights and output are all zero."))
        return
    h = row_entropy(trace.weights[head, i], allowed)
    n = int(allowed.sum())
    st.metric(_("Entropy of this row"), f"{h:.3f} nats",
              help=_("0 = all weight on one source token; log({n}) = {log} = spread evenly "
                     "over the {n} allowed tokens.", n=n, log=f"{np.log(n):.3f}"))
    on = scaled and trace.scale != 1.0            # T5 never scales: its factor is 1
    scale = f"{trace.scale:.3f}"
    st.caption(_("Scaling is on: scores × {scale}.", scale=scale) if on else
               _("Scaling is off: scores × {scale}.", scale=scale))


def _inputs(inputs, token: str, head: int, i: int, d_head: int, row_px: int) -> None:
    """Step 0: x_i, the W_Q columns of this head (and its bias), so q_i = x_i W_Q^h (+ b_Q^h)
    can be checked by hand."""
    x, w_q, b_q = inputs
    cols = slice(head * d_head, (head + 1) * d_head)
    said = dict(token=md_code(token), first=cols.start, last=cols.stop - 1)
    with st.expander(
            _("0. Where q_i comes from: x_i (the vector of {token}) times the columns "
              "{first}..{last} of W_Q plus the bias b_Q", **said) if b_q is not None else
            _("0. Where q_i comes from: x_i (the vector of {token}) times the columns "
              "{first}..{last} of W_Q", **said)):
        st.markdown("$x_i$ · " + _("{n} numbers: the token's vector as this layer reads it",
                                   n=x.shape[1]))
        _table(x[i], row_px=row_px)
        st.markdown(f"$W^Q_h$ · {x.shape[1]} × {d_head}: " + (
            _("head {head}'s columns of $W^Q$; each number of $q_i$ is $x_i$ times one column, "
              "plus that column's bias", head=head + 1) if b_q is not None else
            _("head {head}'s columns of $W^Q$; each number of $q_i$ is $x_i$ times one column",
              head=head + 1)))
        _table(np.asarray(w_q[:, cols], dtype=float), [str(r) for r in range(x.shape[1])],
               first="row", max_rows=16, row_px=row_px)
        if b_q is not None:
            st.markdown("$b^Q_h$ · " + _("{n} numbers: head {head}'s part of the bias",
                                         n=d_head, head=head + 1))
            _table(np.asarray(b_q[cols], dtype=float), row_px=row_px)


def _stages(src_tokens: list[str], trace, head: int, i: int, column: int | None,
            row_px: int) -> None:
    src_labels = [token_label(j, t) + (" ◀ " + _("followed") if j == column else "")
                  for j, t in enumerate(src_tokens)]
    shape = _("shape")
    q, k, dots, scaled, mask, weights, weighted, out, concat, y = stages(trace, head, i)
    st.markdown(f"**1. {_(q.title)}** · {shape} {q.shape} · ${q.formula}$")
    _table(q.values, row_px=row_px)
    st.markdown(f"**2. {_(k.title)}** · {shape} {k.shape} · ${k.formula}$")
    _table(k.values, src_labels, row_px=row_px)
    st.markdown(_("**3–6. From dot products to weights**, one row per source token · shape "
                  "{shape} each", shape=dots.shape))
    numbers = (_("3. dot product q·k"), _("4. scaled score"), _("6. softmax weight"))
    st.dataframe({
        _("source token"): src_labels,
        numbers[0]: np.round(dots.values, 3),
        numbers[1]: np.round(scaled.values, 3),
        _("5. mask M"): [_("0 (may attend)") if m else _("−∞ (masked)") for m in mask.values],
        numbers[2]: np.round(weights.values, 3),
    }, hide_index=True, row_height=row_px, height=row_px * (len(src_labels) + 1) + 3,
        column_config={c: st.column_config.NumberColumn(format="%.3f") for c in numbers})
    st.latex(rf"{scaled.formula} \qquad {weights.formula} \quad (z = \text{{score}} + M)")
    st.markdown(f"**7. {_(weighted.title)}** · {shape} {weighted.shape} · "
                f"${weighted.formula}$")
    _table(weighted.values, src_labels, row_px=row_px)
    st.markdown(f"**8. {_(out.title)}**, " + _("the column sums of step 7") + f" · {shape} "
                f"{out.shape} · ${out.formula}$")
    _table(out.values, row_px=row_px)
    d_head = trace.q.shape[-1]
    st.markdown(f"**9. {_(concat.title)}** · {shape} {concat.shape} · ${concat.formula}$ — "
                + _("head {head} fills dimensions {first}..{last}", head=head + 1,
                    first=head * d_head, last=(head + 1) * d_head - 1))
    _table(concat.values, row_px=row_px)
    st.markdown(f"**10. {_(y.title)}** · {shape} {y.shape} · ${y.formula}$: "
                + _("$W^O$ mixes all heads into the output row of this target token"))
    _table(y.values, row_px=row_px)
