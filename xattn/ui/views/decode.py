"""The Decode view: watch the model translate, one token at a time (``view=Decode``).

At step t the decoder has produced the target so far, reads its last token, and every layer's
cross-attention gives one new row per head; the output gives the next token's probabilities.
A step control (``dstep=``) walks through it, or plays it one step a second; *Force another
token* takes one of the candidates (or a typed word) instead, and the link keeps it
(``force=3: chien``). A toggle reads a word's alignment at the step that produces it or at
the step after, when the word is the decoder's input (Chen et al. 2020).
"""

from __future__ import annotations

import streamlit as st

from xattn.figures.decode import (
    candidates_figure,
    query_figure,
    query_scores_figure,
    rows_so_far_figure,
    step_rows_figure,
)
from xattn.figures.effects import lens_figure
from xattn.literal import md_code, plotly_text
from xattn.live.compute import derived
from xattn.live.link import DSTEP, FORCE, PRESENT, READS, parse_label, token_label
from xattn.sources import Attention
from xattn.ui.charts import show_chart
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext, page_lang
from xattn.ui.internals import fragment_run
from xattn.ui.look import FONT_SCALE
from xattn.ui.state import PageState

__all__ = ["decode_view"]

PLAY = "decode_play"          # a presenter's autoplay (not in the link: a link opens paused)


def _forced(state: PageState) -> tuple[tuple[int, str], ...]:
    labels = state.value(FORCE)
    return tuple(sorted(parse_label(label) for label in labels))


def _force(t: int, text: str, current: tuple) -> None:
    """Take ``text`` at step ``t``: forced tokens after ``t`` belong to another continuation
    and go."""
    kept = [token_label(s, w) for s, w in current if s < t]
    st.session_state[FORCE.key] = [*kept, token_label(t, text)]
    st.session_state[DSTEP.key] = t


def _force_chosen(t: int, taken: str, current: tuple) -> None:
    """*Force it*: the typed word, else the picked candidate, read when the button is clicked
    (a word typed and the button clicked at once arrive in the same rerun)."""
    typed = (st.session_state.get("force_typed") or "").strip()
    _force(t, typed or st.session_state.get("force_pick") or taken, current)


def decode_view(a: Attention, layer: int, state: PageState) -> None:
    decoder = a.translation.decoder if a.translation is not None else None
    if decoder is None:
        st.info(_("Decode needs a model that runs here in NumPy (the shipped model, or a "
                  "model folder of Marian, BART, mBART, M2M100, NLLB or T5): choose *Weights: "
                  "model* and such a model; files and the toy task's module do not "
                  "translate."), icon=":material/info:")
        return
    forced = _forced(state)
    try:
        d = derived(("decode", a.key, forced), lambda: decoder(forced))
    except ValueError as err:
        st.warning(_("A forced token cannot be used: {why} It is dropped.",
                     why=md_code(str(err))),
                   icon=":material/warning:")
        st.session_state[FORCE.key] = []
        d = derived(("decode", a.key, ()), lambda: decoder(()))
    n = d.n_steps
    t = state.value(DSTEP, range(n), closest=lambda v: n - 1, default=n - 1,
                    why=ngettext("(this translation has {n} step)",
                                 "(this translation has {n} steps)", n))
    present = bool(state.shown(PRESENT))
    scale = FONT_SCALE if present else 1.0
    # A projector shows the step's charts on its first screen: they come before the controls.
    charts = st.container() if present else None
    top, right = st.columns([3, 1], vertical_alignment="bottom")
    top.select_slider(_("Decoder step"), list(range(n)), key=DSTEP.key,
                      format_func=lambda s: f"{s}: {d.tokens[s]}",
                      help=_("Step t produces target token t; it reads the token before it."))
    playing = right.toggle(_("Play (a step a second)"), key=PLAY)
    reads = state.value(READS)
    st.toggle(_("Read each word at the step after it"), key=READS.key,
              help=_("The step after the one that produces a word reads it as the decoder's "
                     "input; its alignment can be read there (Chen et al. 2020)."))
    _so_far(d, t)
    row_step = t + 1 if reads else t
    narrow = bool(state.narrow)          # a lesson's column: the charts one under another
    with charts if charts is not None else st.container():
        _step_charts(a, d, t, row_step, reads, forced, scale, narrow)
    if row_step < n:
        _query(a, d, forced, layer, row_step, scale, narrow)
    layer_rows = d.rows[:, layer].mean(axis=1)                              # (n_steps, S)
    show_chart(rows_so_far_figure(layer_rows, [token_label(s, w) for s, w in
                                               enumerate(d.tokens)], d.src_tokens, t,
                                  title=_("Layer {l}, heads averaged: the rows so far",
                                          l=layer + 1),
                                  font_scale=scale, lang=page_lang()),
               key="decode_so_far", name=f"xattn-{a.meta.name}-decode-layer{layer + 1}",
               alt=_("Heatmap of the cross-attention rows made so far, one per step."))
    st.caption(_("Each row is the teacher-forced heatmap's row for the same output: decoding "
                 "makes them one by one.") + " " + (
                   _("Columns are the source's words (a word's pieces added up); the model "
                     "still produces one piece a step ({marker} starts a word).",
                     marker=d.marker) if d.words
                   else _("Subword pieces: {marker} starts a word.", marker=d.marker)))
    if playing:
        _play(n)


def _step_charts(a: Attention, d, t: int, row_step: int, reads: bool, forced: tuple,
                 scale: float, narrow: bool = False) -> None:
    """Step ``row_step``'s row in every layer and head, beside step ``t``'s candidates (below
    them in a ``narrow`` column)."""
    left, mid = (st.container(), st.container()) if narrow else st.columns([3, 2])
    with left:
        if row_step < d.n_steps:
            token = plotly_text(token_label(t, d.tokens[t]))
            title = (_("Step {s}, reading {token}: every layer and head", s=row_step,
                       token=token) if reads else
                     _("Step {s}, producing {token}: every layer and head", s=row_step,
                       token=token))
            show_chart(step_rows_figure(d.rows[row_step], d.src_tokens, title=title,
                                        font_scale=scale, lang=page_lang()),
                       key="decode_rows", name=f"xattn-{a.meta.name}-decode-step{row_step}",
                       alt=_("Heatmap: one row per layer and head, the cross-attention of "
                             "this decoder step over the source words.") if d.words else
                       _("Heatmap: one row per layer and head, the cross-attention of this "
                         "decoder step over the source pieces."))
        else:
            st.info(_("{token} is the last token: no step reads it.",
                      token=md_code(d.tokens[t])))
    with mid:
        show_chart(candidates_figure(d.top[t], d.tokens[t], forced=d.forced[t],
                                     font_scale=scale, lang=page_lang()),
                   key="decode_top", name=f"xattn-{a.meta.name}-decode-top",
                   alt=_("Bar chart of the five most likely tokens at this step."))
        _force_controls(d, t, forced)
        _lens(a, d, t, forced, scale)


def _lens(a: Attention, d, t: int, forced: tuple, scale: float) -> None:
    """The logit lens at step ``t``: where in the stack the token is decided."""
    if d.lens is None:
        return
    lens = derived(("decode_lens", a.key, forced), d.lens)
    show_chart(lens_figure(lens, t, d.tokens[t], font_scale=scale, lang=page_lang()),
               key="decode_lens",
               name=f"xattn-{a.meta.name}-decode-lens{t}",
               alt=_("Bar chart: for each decoder layer, the probability of {token} if the "
                     "model stopped after that layer, with the token that layer would choose.",
                     token=repr(d.tokens[t])))
    st.caption(_("The logit lens: each decoder layer's output through the output projection, "
                 "as if the model stopped there, each layer read as the last one is (through "
                 "the stack's final norm where the model has one); the last row is the model's "
                 "own output."))


def _query(a: Attention, d, forced: tuple, layer: int, s: int, scale: float,
           narrow: bool = False) -> None:
    """Step ``s``'s query in ``layer`` (every head) and its scores against the source keys:
    what the row above is the softmax of."""
    trace = derived(("decode_trace", a.key, forced, layer), lambda: d.layer_trace(layer))
    q, scores = trace.q[:, s], trace.scaled_scores[:, s]          # (h, d_head), (h, S)
    d_head = q.shape[-1]
    left, right = (st.container(), st.container()) if narrow else st.columns([2, 3])
    show_chart(query_figure(q, title=_("Step {s}'s query in layer {l}: q = x W_Q + b_Q", s=s,
                                       l=layer + 1),
                            font_scale=scale, lang=page_lang()),
               key="decode_query", where=left, name=f"xattn-{a.meta.name}-decode-query{s}",
               alt=_("Heatmap of the query of decoder step {step} in layer {layer}: one row "
                     "per head, {n} numbers each.", step=s, layer=layer + 1, n=d_head))
    divided = "" if trace.scale == 1.0 else f" / √{d_head}"     # T5 does not divide
    show_chart(query_scores_figure(scores, d.src_pieces or d.src_tokens,
                                   title=_("Its scores q · k{divided}: softmax makes the row",
                                           divided=divided),
                                   font_scale=scale, lang=page_lang()),
               key="decode_scores", where=right, name=f"xattn-{a.meta.name}-decode-scores{s}",
               alt=_("Heatmap of the scores of decoder step {step}'s query against every "
                     "source key in layer {layer}, one row per head.", step=s,
                     layer=layer + 1))
    st.caption(_("x is the decoder's state at this position as layer {layer}'s cross-attention "
                 "reads it (the token before, after the layers below and this layer's "
                 "self-attention over the tokens so far). Each head compares its part of the "
                 "query with every source piece's key; the softmax of a head's scores is its "
                 "row in the chart above.", layer=layer + 1)
               + (" " + _("It is over pieces: a word's weight there is the sum of its pieces'.")
                  if d.words else ""))


def _so_far(d, t: int) -> None:
    """The target so far, the newest token in bold (each piece or word literal)."""
    ending = "" if t < d.n_steps - 1 else (" " + _("(the end)") if d.finished else
                                           " " + _("(the length limit)"))
    mark = " " + _("(forced)")
    if d.words:
        shown = [(lambda m: f"**{m}**" if newest else m)(md_code(w) + (mark if forced else ""))
                 for w, newest, forced in d.words_so_far(t)]
        st.markdown(_("**So far** ({n} of {total} pieces, in words):", n=t + 1,
                      total=d.n_steps) + " " + " ".join(shown) + ending)
        return
    words = [md_code(w) + (mark if d.forced[s] else "") for s, w in
             enumerate(d.tokens[:t + 1])]
    words[-1] = f"**{words[-1]}**"
    st.markdown(_("**So far** ({n} of {total} tokens):", n=t + 1, total=d.n_steps) + " "
                + " ".join(words) + ending)


def _force_controls(d, t: int, forced: tuple) -> None:
    options = [p for p, _ in d.top[t] if p != d.tokens[t]]
    with st.popover(_("Force another token"), icon=":material/alt_route:"):
        st.selectbox(_("Instead of {token} at step {step}", token=md_code(d.tokens[t]),
                       step=t), options, key="force_pick", format_func=lambda p: p)
        st.text_input(_("or type a word or piece"), key="force_typed", max_chars=40)
        st.button(_("Force it"), key="force_go", on_click=_force_chosen,
                  args=(t, d.tokens[t], forced))
    if forced:
        st.button(_("Clear the forced tokens"), key="force_clear",
                  on_click=lambda: st.session_state.__setitem__(FORCE.key, []))


@st.fragment(run_every=1.0)
def _play(n: int) -> None:
    """While *Play* is on, one step a second (on the fragment's own timer: the full run that
    draws the page, and its step slider, leaves the step alone); the last step stops it."""
    if not fragment_run():
        return
    step = st.session_state.get(DSTEP.key, 0)
    if not st.session_state.get(PLAY) or not isinstance(step, int):
        return
    st.session_state[DSTEP.key] = 0 if step >= n - 1 else step + 1
    if step + 1 >= n - 1:
        st.session_state[PLAY] = False
    st.rerun(scope="app")

