"""The lines view (as in BertViz and Tensor2Tensor), and export of the figures for slides."""

from __future__ import annotations

import streamlit as st

from xattn.export import standalone_html
from xattn.figures import average_figure, output_figure, per_head_figure
from xattn.lines import lines_figure
from xattn.pipeline import Run
from xattn.ui.controls import chart_config, keep_valid
from xattn.ui.heads import FORMULA, file_stem, shapes_text

BIND = "query-params"


def lines_view(r: Run) -> None:
    n_heads = r.settings.n_heads
    labels = [str(h) for h in range(1, n_heads + 1)]
    a, b = st.columns([2, 1])
    keep_valid("lines_heads", labels)
    chosen = a.multiselect("Heads to draw (empty = all)", labels, key="lines_heads", bind=BIND,
                           placeholder="all heads")
    threshold = b.slider("Hide lines below weight", 0.0, 0.5, 0.05, 0.01, key="threshold",
                         bind=BIND)
    heads = [int(h) - 1 for h in chosen] or list(range(n_heads))
    fig = lines_figure(r.weights, r.src_tokens, r.tgt_tokens, heads=heads,
                       threshold=float(threshold), mask=r.mask)
    st.plotly_chart(fig, key="lines", config=chart_config(f"{file_stem(r)}-lines"),
                    alt="Lines from each target token to the source tokens it attends to, one "
                        "colour per head, more opaque for larger weights.")
    st.caption("Each line joins a target token (left) to a source token (right); the stronger "
               "the weight, the more opaque the line. Click a head in the legend to hide it.")


def export_view(r: Run) -> None:
    st.markdown("Everything on the *Heads* tab in one HTML file that opens offline in any "
                "browser (Plotly's JavaScript is inside it): for slides, handouts and papers. "
                "Each chart in it has two download buttons in its toolbar: PNG (camera) and SVG "
                "(disk).")
    stem = file_stem(r)
    st.download_button("Download the figures as standalone HTML", lambda: _html(r),
                       f"{stem}.html", "text/html", key="dl_html", on_click="ignore",
                       type="primary")
    st.caption("In the app itself, the camera button in each chart's toolbar saves a PNG or "
               "an SVG (choose in the sidebar, under Export), named after the view and the "
               f"settings, e.g. `{stem}-per-head.png`.")


def _html(r: Run) -> str:
    figures = [
        ("One heatmap per head", per_head_figure(r.weights, r.src_tokens, r.tgt_tokens,
                                                  mask=r.mask)),
        ("Average over heads", average_figure(r.weights, r.src_tokens, r.tgt_tokens,
                                              mask=r.mask)),
        ("Lines view", lines_figure(r.weights, r.src_tokens, r.tgt_tokens, mask=r.mask)),
        ("Output representation", output_figure(r.output, r.tgt_tokens)),
    ]
    s = r.settings
    description = (f"Source: {s.src} | Target: {s.tgt} | d_model {s.d_model}, {s.n_heads} "
                   f"heads, seed {s.seed}, tokenizer {s.tokenizer}, embedder {s.embedder}, "
                   f"positions {'on' if s.positional else 'off'}, mask {s.mask_mode}. "
                   f"Shapes: {shapes_text(r)}. Formula: {FORMULA}")
    return standalone_html(figures, title="xattn: multi-head cross-attention",
                           description=description)
