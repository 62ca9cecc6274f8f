"""The Export view: every figure of the Heads view in one standalone HTML file."""

from __future__ import annotations

import streamlit as st

from xattn.export import standalone_html
from xattn.figures import average_figure, lines_figure, output_figure, per_head_figure
from xattn.figures.timelapse import timelapse_animation
from xattn.literal import md_code
from xattn.sources import Attention
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import page_lang
from xattn.ui.views.heads import file_stem


def export_view(a: Attention, layer: int, state) -> None:
    st.markdown(_("Everything on the *Heads* tab in one HTML file that opens offline in any "
                  "browser (Plotly's JavaScript is inside it): for slides, handouts and papers. "
                  "Each chart in it has two download buttons in its toolbar: PNG (camera) and "
                  "SVG (disk)."))
    stem = file_stem(a, layer)
    st.download_button(_("Download the figures as standalone HTML"),
                       lambda: export_page(a, layer),
                       f"{stem}.html", "text/html", key="dl_html", on_click="ignore",
                       type="primary")
    st.caption(_("In the app itself, the camera button in each chart's toolbar saves a PNG or "
                 "an SVG (choose in the sidebar, under Display), named after the view and the "
                 "settings, e.g. {name}.", name=md_code(stem + "-head1.png")))


def export_page(a: Attention, layer: int = 0) -> str:
    """The standalone HTML file the Export view offers: every figure of the Heads view (in
    English, whatever the page's language: a file outlives the page)."""
    weights, src, tgt = a.layer(layer), list(a.src_tokens), list(a.tgt_tokens)
    lang = page_lang()
    per_head = per_head_figure(weights, src, tgt, mask=a.mask, gold=a.gold, lang=lang)
    figures = [("One heatmap per head", per_head),
               ("Average over heads", average_figure(weights, src, tgt, mask=a.mask,
                                                     lang=lang)),
               ("Lines view", lines_figure(weights, src, tgt, mask=a.mask, lang=lang))]
    if a.layers is not None and a.layers.output is not None:
        figures.append(("Output representation", output_figure(a.layers.output, tgt,
                                                               lang=lang)))
    if a.toy is not None and a.toy.timelapse is not None:
        figures.append(("Training as a time-lapse (press Play)",
                        timelapse_animation(a.toy.timelapse(), lang=lang)))
    return standalone_html(figures, title="xattn: multi-head cross-attention",
                           description=describe(a, layer), name=file_stem(a, layer),
                           formula=True)


def describe(a: Attention, layer: int) -> str:
    """Plain text (escaped by the page): what the figures show and how they were made."""
    lines = [f"Source tokens: {' '.join(a.src_tokens)}",
             f"Target tokens: {' '.join(a.tgt_tokens)}", a.provenance(layer)]
    if a.meta.details:
        lines.append(f"Shapes: {a.meta.details}.")
    return "\n\n".join(line for line in lines if line)
