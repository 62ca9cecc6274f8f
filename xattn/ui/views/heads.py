"""The Heads view: one heatmap per head, their average, the output, the formula, downloads.

Works on every weights source: a layers x heads overview first where there are layers, gold
marks where a gold alignment is known, the output representation where the source has one.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.attnfile import attention_to_bytes
from xattn.export import file_name, weights_csv
from xattn.figures import average_figure, head_figure, output_figure
from xattn.literal import md_code
from xattn.live.compute import derived, figure
from xattn.live.link import PRESENT
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import page_lang
from xattn.ui.look import FONT_SCALE
from xattn.ui.views.grid import colour_top, head_grid
from xattn.ui.views.media import media_panel
from xattn.ui.views.overview import layers_overview

FORMULA = (r"\begin{aligned} \mathrm{MultiHead}(Q, K, V) &= \mathrm{Concat}(\mathrm{head}_1, "
           r"\dots, \mathrm{head}_h)\, W^O \\ \mathrm{head}_i &= \mathrm{softmax}\!\left("
           r"\frac{Q W_i^Q (K W_i^K)^\top}{\sqrt{d_\text{head}}} + M\right) \\ &\qquad \cdot "
           r"V W_i^V \end{aligned}")


def file_stem(a: Attention, layer: int = 0) -> str:
    """A file name that says what is in the file: xattn-4heads-d32-seed0-the-black-cat."""
    words = " ".join(a.src_tokens[:4])
    what = a.meta.name + (f"-layer{layer + 1}" if a.n_layers > 1 else "")
    return file_name(f"xattn-{what} {words}").lower()


def text_alternative(weights: np.ndarray, mask, src_tokens, tgt_tokens) -> str:
    """For screen readers and print: the source token each target token attends to most.

    Markdown in which every token is a code span, so nothing a user typed is interpreted.
    """
    lines = []
    for h, head in enumerate(weights):
        pairs = []
        for i, row in enumerate(head):
            if (mask is not None and not mask[i].any()) or not row.any():
                pairs.append(f"{md_code(tgt_tokens[i])} → " + _("(nothing to attend to)"))
                continue
            j = int(np.argmax(row))
            pairs.append(f"{md_code(tgt_tokens[i])} → {md_code(src_tokens[j])} ({row[j]:.3f})")
        lines.append("- " + _("**Head {head}**:", head=h + 1) + " " + "; ".join(pairs))
    return "\n".join(lines)


def heads_view(a: Attention, layer: int, state) -> None:
    weights = a.layer(layer)
    stem = file_stem(a, layer)
    top = colour_top(weights, state)
    if a.n_layers > 1:
        focus = layers_overview(a, layer, state)
        if focus is not None:
            lang = page_lang()
            fig = figure((a.key, layer, "focus", focus, top, lang), lambda: head_figure(
                weights[focus], a.src_tokens, a.tgt_tokens, head=focus, mask=a.mask,
                title=_("Layer {l}, head {h}", l=layer + 1, h=focus + 1), zmax=top, colorbar=True,
                max_x_labels=64, lang=lang))
            show_chart(fig, key="focus_head", name=f"{stem}-head{focus + 1}",
                       alt=_("Heatmap of layer {layer}, head {head}.", layer=layer + 1,
                             head=focus + 1))
    if a.meta.details:
        st.caption(_("**Shapes:** {details}", details=a.meta.details))
    present = bool(state.shown(PRESENT))
    head_grid(a, layer, state, top=top, stem=stem, font_scale=FONT_SCALE if present else 1.0,
              max_cols=2 if present or state.narrow else 4)
    media_panel(a, layer)          # the clip or the image (nothing for text)
    notes = [_("Each heatmap is one head's softmax(Q W\\_Q (K W\\_K)ᵀ / √d\\_head + M): a row "
               "per target token (query), a column per source token (key); every row sums to "
               "1.")]
    if a.gold is not None:
        notes.append(_("◻ marks each target word's gold source word (the word it translates)."))
    if a.mask is not None and (~a.mask).any():
        notes.append(_("Grey crosses mark masked cells: that source token may not be attended "
                       "from that target token, so its weight is exactly 0 (a row with every "
                       "cell masked sums to 0)."))
    st.caption("  \n".join(notes))     # one element: each is a message on every rerun
    text = st.expander(_("Text description of the heatmaps (strongest source token per row)"),
                       key="heads_text", on_change="rerun")
    if text.open:      # drawn only when opened: nothing to build or send on other reruns
        with text:
            st.markdown(text_alternative(weights, a.mask, a.src_tokens, a.tgt_tokens))
    more = st.expander(_("The formula, the average over heads and the output"), key="heads_more",
                       on_change="rerun", icon=":material/functions:")
    if more.open:
        with more:
            formula(a)
            average_and_output(a, layer, top, stem)
    downloads(a, stem)


def average_and_output(a: Attention, layer: int, top: float, stem: str) -> None:
    """The heads' average and, where the source has it, the output representation."""
    weights = a.layer(layer)
    left, right = st.columns([2, 3])
    with left:
        lang = page_lang()
        fig = figure((a.key, layer, "average", top, lang), lambda: average_figure(
            weights, list(a.src_tokens), list(a.tgt_tokens), mask=a.mask, zmax=top, lang=lang))
        show_chart(fig, key="average", name=f"{stem}-average",
                   alt=_("Heatmap of the attention weights averaged over heads."))
    output = a.layers.output if a.layers is not None else None
    if output is not None:
        with right:
            fig = figure((a.key, layer, "output", lang),
                         lambda: output_figure(output, list(a.tgt_tokens), lang=lang))
            show_chart(fig, key="output", name=f"{stem}-output",
                       alt=_("Heatmap of the output representation: target tokens by "
                             "model dimensions."))


def formula(a: Attention) -> None:
    d_head = f" = {a.layers.d_head}" if a.layers is not None and a.layers.d_head else ""
    # the LaTeX's braces stay out of the messages (a message's {names} are filled)
    st.markdown(_("**The formula.** $Q$ = decoder state (target), $K = V$ = encoder output "
                  "(source),") + f" $d_\\text{{head}} = d_\\text{{model}} / h{d_head}$, "
                + _("and $M$ is 0 where a key may be attended and $-\\infty$ where it is "
                    "masked."))
    st.latex(FORMULA)


def attention_npz(a: Attention) -> bytes:
    """The ``.npz`` download: the attention file format (it uploads back as *file* weights),
    plus what reproduces the weights where the source knows it (random weights: output, mask,
    inputs, settings; trained: the gold alignment)."""
    return attention_to_bytes(a.weights, list(a.src_tokens), list(a.tgt_tokens),
                              model=a.meta.model or None, extra=dict(a.meta.extras),
                              src_text=a.meta.src_text or None,
                              tgt_text=a.meta.tgt_text or None)


SMALL_DOWNLOAD = 2_000     # weights; the CSV then holds up to ~100 kB (long words), the .npz ~30 kB


def prepared(a: Attention, kind: str, make):
    """A download's data: for a small file its bytes, made once per server; for a larger one
    the function that makes them when the button is clicked.

    Bytes go with the page and belong to the session for as long as it lives (sessions on one
    setting share one stored file, and the cache's bytes: Streamlit keeps a file once per
    content). A file made on click belongs to the session that clicked until its page's next
    full run (``xattn/ui/internals/deferred_downloads.py``; stock Streamlit 1.67 lets two other runs
    delete it before the browser fetches it). Above ``SMALL_DOWNLOAD`` weights a session of a
    setting of its own would hold 0.1 to several MB for nothing until it is clicked.
    """
    if a.weights.size > SMALL_DOWNLOAD:
        return make
    if not a.key:
        return _as_bytes(make())
    return derived((a.key, kind), lambda: _as_bytes(make()))


def _as_bytes(data: str | bytes) -> bytes:
    """Text as the UTF-8 bytes Streamlit would encode it to for every session that sends it."""
    return data.encode("utf-8") if isinstance(data, str) else data


def downloads(a: Attention, stem: str) -> None:
    row = st.container(horizontal=True)      # one block: each block is a message per rerun
    layers = "layer, " if a.n_layers > 1 else ""          # the CSV's columns: code
    weights = a.weights if a.n_layers > 1 else a.weights[0]
    csv = prepared(a, "csv", lambda: weights_csv(weights, a.src_tokens, a.tgt_tokens))
    row.download_button(_("Download the weights as CSV"), csv, f"{stem}-weights.csv",
                        "text/csv", key="dl_csv", on_click="ignore",
                        help=_("Long format: {columns}. Heads count from 1, positions from 0. "
                               "A token a spreadsheet would read as a formula (=, +, -, @ "
                               "first) gets a ' in front.",
                               columns=f"{layers}head, tgt_pos, tgt_token, src_pos, src_token, "
                                       "weight"))
    npz = prepared(a, "npz", lambda: attention_npz(a))
    row.download_button(_("Download everything as .npz"), npz, f"{stem}.npz",
                        "application/octet-stream", key="dl_npz", on_click="ignore",
                        help=_("NumPy archive in the attention file format (it uploads back "
                               "as Weights: file), tokens exactly as typed."))
