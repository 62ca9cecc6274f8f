"""The Export view: every figure of the Heads view in one standalone HTML file."""

from __future__ import annotations

import streamlit as st

from xattn.export import standalone_html
from xattn.figures import average_figure, lines_figure, output_figure, per_head_figure
from xattn.pipeline import Run
from xattn.ui.heads import FORMULA, file_stem, shapes_text


def export_view(r: Run) -> None:
    st.markdown("Everything on the *Heads* tab in one HTML file that opens offline in any "
                "browser (Plotly's JavaScript is inside it): for slides, handouts and papers. "
                "Each chart in it has two download buttons in its toolbar: PNG (camera) and SVG "
                "(disk).")
    stem = file_stem(r)
    st.download_button("Download the figures as standalone HTML", lambda: export_page(r),
                       f"{stem}.html", "text/html", key="dl_html", on_click="ignore",
                       type="primary")
    st.caption("In the app itself, the camera button in each chart's toolbar saves a PNG or "
               "an SVG (choose in the sidebar, under Export), named after the view and the "
               f"settings, e.g. `{stem}-per-head.png`.")


def export_page(r: Run) -> str:
    """The standalone HTML file the Export view offers: every figure of the Heads view."""
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
