"""Head statistics and head ablation: what each head does, and what it contributes."""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.figures import ablation_figure, measure_figure
from xattn.live.compute import derived
from xattn.live.link import OFF, PRESENT
from xattn.metrics import MEASURES, head_statistics
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import N_, lesson_says, ngettext, page_lang
from xattn.ui.i18n import gettext as _
from xattn.ui.look import FONT_SCALE
from xattn.ui.state import PageState
from xattn.ui.views.heads import file_stem
from xattn.ui.weights.trained import gold_statistics

# xattn.metrics.MEASURES' names and descriptions as the catalogs' messages (English, said in
# the page's language where drawn; tests/test_app_page_languages.py checks they are MEASURES')
MEASURE_WORDS = {
    "normalised_entropy": (N_("spread (normalised entropy)"), N_(
        "How spread out a target token's attention is: 0 = all on one source token, 1 = evenly "
        "over every source token it may see.")),
    "effective_keys": (N_("effective number of source tokens"), N_(
        "About how many source tokens a target token really looks at (exp of the entropy).")),
    "confidence": (N_("confidence (mean row maximum)"), N_(
        "Average weight of each target token's strongest source token: 1 = one clear choice, "
        "1/n_src = no preference (Voita et al. 2019).")),
    "diagonal_alignment": (N_("diagonal alignment"), N_(
        "How close attention stays to the diagonal that pairs the start of the target with the "
        "start of the source and the end with the end (1 = on it).")),
    "monotonicity": (N_("monotonicity"), N_(
        "Share of steps to the next target token in which the most-attended source token does "
        "not move backwards (1 = reads the source left to right).")),
}


def stats_view(a: Attention, layer: int, state: PageState) -> None:
    weights = a.layer(layer)
    stats = derived(("stats", a.key, layer), lambda: head_statistics(weights, a.mask))
    table = {_("head"): [_("head {head}", head=h + 1) for h in stats["head"]]}
    table.update({_(m.name): np.round(stats[k], 3) for k, m in MEASURES.items()})
    st.dataframe(table, hide_index=True)
    scale = FONT_SCALE if state.shown(PRESENT) else 1.0
    stem = file_stem(a, layer)
    columns = st.columns(2 if state.shown(PRESENT) or state.narrow else len(MEASURES))
    for k, (key, m) in enumerate(MEASURES.items()):   # columns stack on a phone
        show_chart(measure_figure(stats, key, m.short, font_scale=scale, lang=page_lang()),
                   key=f"stats_{key}",
                   name=f"{stem}-{key}", where=columns[k % len(columns)],
                   alt=_("Bar chart of the {measure}, one bar per head.", measure=_(m.name)))
    st.markdown("\n".join(f"- **{_(m.name)}**: {_(m.description)}" for m in MEASURES.values()))
    st.caption(_("Means are over target tokens that have at least one source token to "
                 "attend to.") + (f" {lesson_says(a.meta.caveat)}" if a.meta.caveat else ""))
    if a.toy is not None and a.toy.scores is not None:
        gold_statistics(derived(("scores", a.key), a.toy.scores), stats)


def ablation_view(a: Attention, layer: int, state: PageState) -> None:
    if a.layers is None or a.layers.ablate is None:
        st.info(_("Switching heads off is not available for these weights: {why} It needs "
                  "the heads' outputs and W_O (random, trained or model weights).",
                  why=a.why_no_projections), icon=":material/info:")
        return
    n_heads = a.n_heads
    st.markdown(_("Switch heads off (their output is multiplied by 0 before $W^O$, as in "
                  "Michel, Levy and Neubig 2019) and see how much the output changes:")
                + " $\\lVert Y - Y_{\\text{ablated}} \\rVert / \\lVert Y \\rVert$.")
    heads = range(1, n_heads + 1)
    off = state.value(OFF, heads, why=ngettext("(there is {n} head)",
                                               "(there are {n} heads)", n_heads))
    st.multiselect(_("Heads to switch off"), heads, key=OFF.key,
                   placeholder=_("choose heads by number"))
    alone = derived(("ablation", a.key, layer, ()), lambda: a.layers.ablate(layer, ()))
    order = np.argsort(-np.nan_to_num(alone.per_head, nan=-1.0), kind="stable")   # most first
    shown = tuple(h - 1 for h in off) or (int(order[0]),)
    res = derived(("ablation", a.key, layer, shown), lambda: a.layers.ablate(layer, shown))
    left, right = st.columns([1, 2])
    with left:
        st.dataframe({_("head"): [_("head {head}", head=h + 1) for h in order],
                      _("output change when switched off alone"): [
                          f"{alone.per_head[h]:.1%}" for h in order],
                      _("note"): [_("most important") if k == 0 else ""
                                  for k in range(n_heads)]},
                     hide_index=True)
        if off:
            st.metric(_("Change with heads {heads} off", heads=", ".join(map(str, off))),
                      f"{res.chosen:.1%}")
            if len(off) == n_heads:
                st.caption(_("Every head is off: the output is all zeros (a change of "
                             "100%).") if np.isclose(res.chosen, 1) else
                           _("Every head is off: what is left is the output projection's "
                             "bias."))
        else:
            st.caption(_("Sorted by importance. The chart shows head {head}, the most "
                         "important; choose heads above to switch off a set of your own.",
                         head=order[0] + 1))
    tgt_tokens = (a.layers.tokens or (a.src_tokens, a.tgt_tokens))[1]
    with right:
        show_chart(ablation_figure(res, list(tgt_tokens), [h + 1 for h in shown],
                                   lang=page_lang()),
                   key="ablation_chart", name="xattn-ablation",
                   alt=_("Bar chart of the relative output change per target token."))
    st.caption(_("Weights of the remaining heads do not change: a head's gate scales its "
                 "output, not its attention. A change near 0 % means the output barely depends "
                 "on that head; the changes of single heads do not add up, since norms are not "
                 "additive.")
               + (" " + _("With {n} layers, the output is that of layer {layer}'s "
                          "cross-attention alone.", n=a.n_layers, layer=layer + 1)
                  if a.n_layers > 1 else ""))
