"""The Training view: the toy model's training as a time-lapse (``xattn.timelapse``).

A step control (``tstep=`` in the link) walks through about twenty snapshots of one run: every
head's weights on the probe pair "the red cat sees the dog" at that step, with the gold word
marked, the held-out loss and words aligned over the run, and per head whether it aligns by
meaning (the swapped noun and adjective) or by position (the right one of two "the").
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.figures.timelapse import head_curves_figure, run_curves_figure
from xattn.live.compute import derived
from xattn.live.link import PRESENT, TSTEP
from xattn.record import Meta
from xattn.sources import Attention, snapshot_label
from xattn.timelapse import PROBE_SENTENCE
from xattn.ui.charts import show_chart
from xattn.ui.i18n import N_, ngettext, page_lang
from xattn.ui.i18n import gettext as _
from xattn.ui.look import FONT_SCALE
from xattn.ui.state import PageState
from xattn.ui.views.grid import head_grid

__all__ = ["training_view", "onset_lines"]

LEVEL = 0.5          # a head "aligns" once half of the held-out words find their gold word


def onset_lines(tl) -> list[str]:
    """One sentence per head: when it starts aligning, and by meaning or by position."""
    onset = tl.onset(LEVEL)
    last = {k: tl.by_head[k][-1] for k in ("moved_accuracy", "repeated_accuracy")}
    lines = []
    for h, step in enumerate(onset.tolist()):
        moved, repeated = last["moved_accuracy"][h], last["repeated_accuracy"][h]
        cue = _(N_("by meaning and by position") if min(moved, repeated) >= 0.75 else
                N_("by meaning") if moved >= repeated + 0.2 else
                N_("by position") if repeated >= moved + 0.2 else
                N_("by both cues, neither reliably"))
        said = dict(head=h + 1, level=f"{LEVEL:.0%}", cue=cue, moved=f"{moved:.0%}",
                    repeated=f"{repeated:.0%}")
        lines.append(_("**Head {head}** reaches {level} of held-out words at step {step}; at "
                       "the end it aligns {cue} (moved words {moved}, repeated words "
                       "{repeated}).", step=step, **said) if step >= 0 else
                     _("**Head {head}** never reaches {level} of held-out words alone; at the "
                       "end it aligns {cue} (moved words {moved}, repeated words {repeated}).",
                       **said))
    return lines


def training_view(a: Attention, layer: int, state: PageState) -> None:
    if a.toy is None or a.toy.timelapse is None:
        st.info(_("The time-lapse belongs to the toy task's trained weights: choose *Weights: "
                  "trained* in the sidebar to watch its heads learn."), icon=":material/info:")
        return
    tl = a.toy.timelapse()
    n = len(tl.steps)
    k = state.value(TSTEP, range(n), closest=lambda v: n - 1, default=n - 1,
                    why=ngettext("(this run has {n} snapshot)", "(this run has {n} snapshots)", n))
    present = bool(state.shown(PRESENT))
    scale = FONT_SCALE if present else 1.0
    # A projector shows the heads on its first screen: they come before the step control.
    heads = st.container() if present else None
    steps = {i: _("step {step}", step=tl.steps[i]) for i in range(n)}
    st.select_slider(_("Training step"), list(range(n)), key=TSTEP.key, format_func=steps.get,
                     help=_("Snapshots of this run, from its random start (step 0) to the "
                            "end."))
    step = int(tl.steps[k])
    left, middle, right = st.columns(3)
    left.metric(_("Step (of {last})", last=int(tl.steps[-1])), f"{step}",
                help=_("Adam updates done when this snapshot was taken."))
    middle.metric(_("Held-out loss"), f"{tl.loss[k]:.4f}")
    right.metric(_("Words aligned"), f"{tl.word_accuracy[k]:.0%}",
                 help=_("Held out: of {n} sentences never trained on, the share of French "
                        "words whose strongest attention (heads averaged) falls on their gold "
                        "English word.", n=tl.n_heldout))
    frame = _frame(a, tl, k)
    caption = _("Every head on {sentence} at step {step}; ◻ marks each French word's gold "
                "English word.", sentence=repr(PROBE_SENTENCE), step=step)
    with heads if heads is not None else st.container():
        if heads is None:
            st.caption(caption)
        head_grid(frame, 0, state, top=1.0, stem=f"xattn-{a.meta.name}-step{step}",
                  font_scale=scale, max_cols=2 if present or state.narrow else 4,
                  legend_below=present)
        if heads is not None:
            st.caption(caption)
    show_chart(run_curves_figure(tl, step, font_scale=scale, lang=page_lang()), key="tl_run",
               name=f"xattn-{a.meta.name}-run",
               alt=_("Line chart over the training steps of the held-out loss and the share "
                     "of held-out words aligned."))
    show_chart(head_curves_figure(tl, step, font_scale=scale, lang=page_lang()), key="tl_heads",
               name=f"xattn-{a.meta.name}-heads",
               alt=_("Line chart over the training steps, per head, of the accuracy on "
                     "moved words (meaning) and on repeated words (position)."))
    st.caption(_("Solid: accuracy on the moved words (the swapped noun and adjective, which "
                 "only meaning finds); dashed: on the repeated words (the right one of two "
                 "\"the\", which only position finds). A head in the legend shows or hides "
                 "both its lines."))
    st.markdown("\n".join(f"- {line}" for line in onset_lines(tl)))


def _frame(a: Attention, tl, k: int) -> Attention:
    """Snapshot ``k`` as a record the head grid draws (the probe pair, its gold marks)."""
    def make() -> Attention:
        probe = tl.probe
        weights = np.asarray(tl.weights[k])[None]                  # (1, n_heads, T, S)
        label, said = snapshot_label(int(tl.steps[k]))
        return Attention(weights, tuple(probe.source), tuple(probe.target),
                         np.ones(weights.shape[2:], bool), "trained", label,
                         Meta(name=f"{a.meta.name}-step"), gold=probe.alignment_matrix(),
                         said=said)
    return derived(("timelapse-frame", a.key, k), make)
