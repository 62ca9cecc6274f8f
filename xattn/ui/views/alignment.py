"""The Alignment lab (``view=Alignment``): which layer and head align words, measured.

Every head and every layer's average over its heads is scored by the alignment error rate
(AER, with precision and recall) against gold word alignments: the toy corpus's, over 256
held-out sentences, for the weights that can run on them (the trained toy module, the shipped
translation model), or a gold file for the pair on screen (any weights: Pharaoh ``i-j`` /
``i?j`` or NAACL lines, zero- or one-based as the user says). Published results of other
models stand apart, labelled as references.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.alignlab import (
    PUBLISHED_AER,
    PUBLISHED_FINDINGS,
    REFERENCE_LABEL,
    GoldFileError,
    indexing_warnings,
    leave_out,
    read_gold,
    score_heads,
    unscored_specials,
)
from xattn.figures.alignment import aer_figure
from xattn.literal import md_code, show_value
from xattn.live.compute import derived
from xattn.live.link import AL_GOLD, AL_METHOD, AL_THRESHOLD, PRESENT, READS
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import N_, ngettext, page_lang
from xattn.ui.i18n import gettext as _
from xattn.ui.look import FONT_SCALE
from xattn.ui.state import PageState
from xattn.words import full_stop, listed, number

__all__ = ["alignment_view"]

METHOD_NAMES = {"target_argmax": N_("each target word's strongest source word"),   # English:
                "source_argmax": N_("each source word's strongest target word"),  # translated
                "intersection": N_("both (the links the two agree on)"),          # where drawn
                "threshold": N_("every weight above a threshold")}

# ``xattn.alignlab.METHOD_DESCRIPTIONS``' English, marked for the catalog (a test holds them
# equal), said as the method's help
METHOD_HELP = {
    "target_argmax": N_("Each target word links to the source word it attends most."),
    "source_argmax": N_("Each source word links to the target word that attends it most."),
    "intersection": N_("Only links that are both: the largest weight of their row and of "
                       "their column."),
    "threshold": N_("Every weight above the threshold."),
}


def alignment_view(a: Attention, layer: int, state: PageState) -> None:
    if a.media is not None:        # a clip or an image: scored in time or on the glyphs
        from xattn.ui.views.media import image_lab, time_lab
        (time_lab if a.media.kind == "audio" else image_lab)(a, layer)
        return
    # A projector shows the chart on its first screen: it comes before the explanation.
    first = st.container() if state.shown(PRESENT) else None
    st.markdown(_("How well does attention align words? Each head's weights become links "
                  "(below), compared with gold links: **AER** = 1 − (|A∩S| + |A∩P|) / (|A| + "
                  "|S|) for the links A, the sure gold links S and the possible ones P (Och and "
                  "Ney 2003); lower is better. The average of a layer's heads is scored too."))
    options = {"corpus": _("the toy corpus, 256 held-out sentences"),
               "file": _("a gold file for the pair on screen")}
    if a.heldout is None:
        options.pop("corpus")
    left, right = st.columns(2)
    gold = state.value(AL_GOLD, list(options), why=_("for these weights"))
    left.radio(_("Gold alignment"), list(options), key=AL_GOLD.key, format_func=options.get,
               help=_("The toy corpus knows every word's translation; a file brings the gold "
                      "of another language pair."))
    method = state.value(AL_METHOD)
    methods = {k: _(v) for k, v in METHOD_NAMES.items()}
    right.selectbox(_("Links from a head's weights"), list(METHOD_NAMES), key=AL_METHOD.key,
                    format_func=methods.get, help=_(METHOD_HELP[method]) if method in METHOD_HELP
                    else "")
    threshold = None
    if method == "threshold":
        threshold = state.value(AL_THRESHOLD)
        right.slider(_("Threshold"), 0.01, 0.99, step=0.01, key=AL_THRESHOLD.key)
    reading = False
    if a.translation is not None:
        reading = bool(state.value(READS))
        st.toggle(_("Read each word at the step after it"), key=READS.key,
                  help=_("The step after the one that produces a word reads it as the "
                         "decoder's input; its alignment can be read there (Chen et al. "
                         "2020)."))
    examples = (_corpus(a, reading) if gold == "corpus" else _file(a, layer, reading))
    if not examples:
        return
    scores = derived(("aer", a.key, gold, reading, method, threshold, _file_id()),
                     lambda: score_heads(examples, method=method, threshold=threshold))
    _results(a, scores, state, first)
    _references()


def _corpus(a: Attention, reading: bool) -> list:
    with st.spinner(_("Scoring 256 held-out sentences…")):
        return derived(("heldout", a.key, reading), lambda: a.heldout(reading))


def _file_id() -> str:
    up = st.session_state.get("gold_upload")
    return "" if up is None else f"{up.file_id}:{st.session_state.get('gold_first')}:" \
        f"{st.session_state.get('gold_format')}:{st.session_state.get('gold_order')}"


def _file(a: Attention, layer: int, reading: bool) -> list:
    """The uploaded gold of the pair on screen, against these weights (every layer)."""
    c1, c2, c3 = st.columns(3)
    fmt = c1.radio(_("Format"), ("pharaoh", "naacl"), key="gold_format", horizontal=True,
                   format_func={"pharaoh": "Pharaoh (i-j, i?j)",
                                "naacl": "NAACL (sentence src tgt S|P)"}.get)
    first = c2.radio(_("Positions count from"), (0, 1), key="gold_first", horizontal=True,
                     index=None, help=_("Say it: gold files are usually one-based, and "
                                        "reading them as zero-based is the classic mistake."))
    order = c3.radio(_("Each link is"), ("src-tgt", "tgt-src"), key="gold_order",
                     horizontal=True)
    up = st.file_uploader(_("Gold alignment (the first pair is the pair on screen)"),
                          type=["txt", "talp", "naacl", "align", "gold"], key="gold_upload")
    if up is None or first is None:
        st.info(_("Upload a gold file and say whether its positions count from 0 or from 1."),
                icon=":material/upload_file:")
        return []
    try:
        gold = read_gold(up.getvalue(), format=fmt, first_index=first, order=order)
    except GoldFileError as err:
        n = len(err.problems)
        st.error(ngettext("The file {name} cannot be read ({n} problem, one a line below).",
                          "The file {name} cannot be read ({n} problems, one a line below).",
                          n, name=md_code(up.name)), icon=":material/error:")
        st.code("\n".join(err.problems[:20]), language=None, wrap_lines=True)
        return []
    if not gold.pairs:
        st.error(_("The file holds no sentence pair."), icon=":material/error:")
        return []
    n_tgt, n_src = a.weights.shape[2:]
    for warning in indexing_warnings(gold, tokens=[(a.tgt_tokens, a.src_tokens)]):
        st.warning(show_value(warning, 400), icon=":material/warning:")
    weights = np.asarray(a.weights)                                    # (L, H, T, S)
    if reading:
        weights = np.concatenate([weights[:, :, 1:], np.zeros_like(weights[:, :, :1])], 2)
    try:
        gold.pairs[0].matrices(n_tgt, n_src)
    except ValueError as err:
        st.error(md_code(str(err)), icon=":material/error:")
        return []
    rows, cols = unscored_specials(gold.pairs[0], a.src_tokens, a.tgt_tokens)
    _unscored_note(a, rows, cols)
    return [(leave_out(weights, rows, cols), gold.pairs[0])]


def _unscored_note(a: Attention, rows: np.ndarray, cols: np.ndarray) -> None:
    """Which special tokens are left out of the score (the gold links none of them)."""
    names = [md_code(t) for t, out in zip(a.src_tokens, cols, strict=True) if out]
    names += [md_code(t) for t, out in zip(a.tgt_tokens, rows, strict=True) if out
              and md_code(t) not in names]
    if names:
        st.caption(_("Not scored: {names} (special tokens, not words; the gold file links "
                     "none of them). A row of the target's special token makes no link, and no "
                     "head's link goes to the source's.", names=", ".join(names)))


def _and(items: list[str]) -> str:
    """``items`` as "a, b and c" in the page's language."""
    if len(items) == 1:
        return items[0]
    return _("{items} and {last}", items=listed(items[:-1], lang=page_lang()), last=items[-1])


def _num(x: float, spec: str) -> str:
    return number(float(x), spec, page_lang())


def best_text(scores) -> str:
    """The best layer and head in one line of Markdown, in the page's language; ties named
    as ties."""
    n_layers = scores.aer.shape[0]
    layers = list(scores.best_layers)
    best = layers[0]
    rates = _("AER {aer}, precision {precision}, recall {recall}",
              aer=_num(scores.layer_aer[best], ".3f"),
              precision=_num(scores.layer_precision[best], ".2f"),
              recall=_num(scores.layer_recall[best], ".2f"))
    if len(layers) == 1:
        text = _("**Best layer: {layer}** of {n} (its heads' average: {rates})",
                 layer=best + 1, n=n_layers, rates=rates)
    elif len(layers) == n_layers:
        text = ngettext("**No best layer: all {n} tie** (each average: {rates})",
                        "**No best layer: all {n} tie** (each average: {rates})",
                        n_layers, rates=rates)
    else:
        text = _("**Best layers, tied: {layers}** of {n} (each average: {rates})",
                 layers=_and([str(k + 1) for k in layers]), n=n_layers, rates=rates)
    heads = list(scores.best_heads)
    if not heads:
        return full_stop(text, lang=page_lang())
    aer = _num(scores.aer[heads[0]], ".3f")
    named = [_("layer {layer}, head {head}", layer=lay + 1, head=h + 1) for lay, h in heads]
    if len(heads) == 1:
        return text + " · " + _("best head: {head} (AER {aer}).", head=named[0], aer=aer)
    shown = _and(named) if len(named) <= 4 else ngettext(
        "{heads} and {n} more", "{heads} and {n} more", len(named) - 4,
        heads=listed(named[:4], lang=page_lang()))
    return text + " · " + ngettext("{n} heads tie for best (AER {aer}): {heads}.",
                                   "{n} heads tie for best (AER {aer}): {heads}.",
                                   len(heads), aer=aer, heads=shown)


def _results(a: Attention, scores, state: PageState, first=None) -> None:
    """The best layer and head, the AER chart (in ``first`` when given: a projector's first
    screen, the best line after it), and the table."""
    scale = FONT_SCALE if state.shown(PRESENT) else 1.0
    where = first if first is not None else st.container()
    if scores.best_layer >= 0 and first is None:
        where.markdown(best_text(scores))
    show_chart(aer_figure(scores, font_scale=scale, lang=page_lang()), key="aer_chart", where=where,
               name=f"xattn-{a.meta.name}-aer",
               alt=_("Heatmap of the alignment error rate of every layer and head, and of "
                     "each layer's average; lower is better."))
    if scores.best_layer >= 0 and first is not None:
        where.markdown(best_text(scores))
    n = scores.n_pairs
    st.caption(ngettext("Over {n} sentence pair. The last column is each layer's heads "
                        "averaged; outlined: the best layer's average (solid) and the best "
                        "head (dotted), every one of them on a tie.",
                        "Over {n} sentence pairs. The last column is each layer's heads "
                        "averaged; outlined: the best layer's average (solid) and the best "
                        "head (dotted), every one of them on a tie.", n)
               if scores.best_layer >= 0 else
               ngettext("Over {n} sentence pair. The last column is each layer's heads "
                        "averaged.", "Over {n} sentence pairs. The last column is each "
                        "layer's heads averaged.", n))
    n_layers, n_heads = scores.aer.shape
    rows = [(_("layer {layer}", layer=lay + 1),
             _("head {head}", head=h + 1) if h < n_heads else _("average"), *(
        (scores.aer[lay, h], scores.precision[lay, h], scores.recall[lay, h]) if h < n_heads
        else (scores.layer_aer[lay], scores.layer_precision[lay], scores.layer_recall[lay])))
        for lay in range(n_layers) for h in range(n_heads + 1)]
    heads = (_("layer"), _("head"), "AER", _("precision"), _("recall"))
    table = dict(zip(heads, map(list, zip(*rows, strict=True)), strict=True))
    with st.expander(_("Every head: AER, precision, recall")):
        st.dataframe(table, hide_index=True, column_config={
            k: st.column_config.NumberColumn(format="%.3f") for k in heads[2:]})


# The published findings' and label's English (``xattn.alignlab.references``, a library
# module without the page's catalog), marked for the ``app`` catalog and said where drawn;
# tests/test_app_alignment.py checks they are the library's own words.
FINDING_WORDS = (
    N_("In a vanilla 6-layer transformer, the average over the heads of the penultimate "
       "decoder layer (layer 5 of 6) aligns best of all layers."),
    N_("A target word's alignment is read better at the step where it is the decoder's input "
       "(step i+1) than where it is produced."),
)
REFERENCE_WORDS = N_("Published results of other models on other test sets, for reference: "
                     "not measured by this page.")


def _references() -> None:
    with st.expander(_("Published results, for reference (not measured here)")):
        st.caption(_(REFERENCE_LABEL))
        st.markdown("\n".join(f"- {_(f.claim)} ({f.citation})" for f in PUBLISHED_FINDINGS))
        st.dataframe({_("system"): [r.system for r in PUBLISHED_AER],
                      _("test set"): [r.test_set for r in PUBLISHED_AER],
                      _("AER (%)"): [r.aer for r in PUBLISHED_AER],
                      _("source"): [r.citation for r in PUBLISHED_AER]}, hide_index=True)
