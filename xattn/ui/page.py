"""The whole page: controls, the computation (cached), and the views in tabs."""

from __future__ import annotations

import streamlit as st

from xattn.literal import md_code
from xattn.pipeline import Settings
from xattn.ui.analysis import ablation_view, stats_view
from xattn.ui.compare import compare_view
from xattn.ui.compute import cached_run
from xattn.ui.controls import settings_from_controls
from xattn.ui.export import export_view
from xattn.ui.heads import heads_view
from xattn.ui.lines import lines_view
from xattn.ui.params import choice_param
from xattn.ui.state import PageState, page_state
from xattn.ui.step import step_view
from xattn.ui.trained import trained_view

# Each view: (function, what it needs: "run" = this run's result and the page state, "state" =
# the page state only, None = nothing). Only the open view's code runs.
VIEWS = {
    "Heads": (lambda r, state: heads_view(r), "run"),
    "Step through": (step_view, "run"),
    "Head statistics": (lambda r, state: stats_view(r), "run"),
    "Switch heads off": (ablation_view, "run"),
    "Lines": (lines_view, "run"),
    "Compare": (compare_view, "run"),
    "Trained vs random": (trained_view, "state"),
    "Export": (lambda r, state: export_view(r), "run"),
    "How to read this": (lambda: st.markdown(HOW_TO_READ), None),
}
VIEW = choice_param("view", "Heads", tuple(VIEWS), "the view")


HOW_TO_READ = """
**Rows and columns.** Each heatmap is one head. A row is a *target* token (the decoder's query:
the word being produced); a column is a *source* token (the encoder's key: a word of the
sentence being translated). The colour of a cell is how much that target token looks at that
source token. Every row sums to 1: attention shares one unit of "looking" among the source
tokens.

**What a head outputs.** Each target token receives the weighted average of the source tokens'
*value* vectors, using its row of weights. The heads' results are put side by side and mixed by
$W^O$ into the output: one vector of `d_model` numbers per target token.

**Masking.** A masked source token may not be looked at: its weight is exactly 0 (marked with a
grey cross) and the rest of the row shares the whole unit. Padding masks hide filler tokens of a
batch; *wait-k* lets target token *i* see only the first *i + k* source tokens, as a simultaneous
interpreter who must speak before the sentence ends; a *local window* allows only source tokens
near the diagonal. If every source token is masked for a target token, that row has nothing to
attend to: its weights and output are all zero.

**These weights are random.** Nothing here was trained. The token vectors come from a hash of
each word, and the projection matrices from the seed: change the seed and every pattern changes.
Any resemblance to a word alignment is chance (or spelling, in the n-gram embedder, or position,
with positional encoding). The *Trained vs random* view shows what training changes.

**Attention is not explanation.** Even in a trained model, a high weight says where a head
looked, not why the model produced its output: values can be small, other heads and layers mix
the result, and different weights can give the same output (Jain and Wallace 2019; Wiegreffe
and Pinter 2019). Read the pictures as *what the mechanism does*, not as reasons.
"""


def main() -> None:
    st.set_page_config(page_title="xattn · multi-head cross-attention", page_icon="🔍",
                       layout="wide")
    state = page_state()
    try:
        _page(state)
    finally:
        state.write_url()   # also after an interrupted run: the link follows the controls


def _page(state: PageState) -> None:
    st.title("Multi-head cross-attention, head by head")
    st.caption("How a decoder (the target sentence) looks up the encoder's output (the source "
               "sentence). Type two sentences; every control is in the link, so a shared URL "
               "shows the same picture.")
    notice_area = st.container()   # filled last, once every control of this run is drawn
    settings = settings_from_controls(state)
    _views(state, settings)
    with notice_area:
        for notice in state.finish():
            if notice.kind == "link":
                st.warning(notice.text, icon=":material/link:")
            else:
                st.info(notice.text, icon=":material/sync:")


def _views(state: PageState, settings: Settings) -> None:
    result = None
    try:
        result = cached_run(settings)
    except ValueError as err:
        st.error(f"{err}", icon=":material/error:")
        st.info("The page keeps working: change the sentences or the settings and it redraws.")
    if result is not None and len(result.empty_rows):
        rows = ", ".join(md_code(f"{i}: {result.tgt_tokens[i]}") for i in result.empty_rows[:12])
        more = f" and {len(result.empty_rows) - 12} more" if len(result.empty_rows) > 12 else ""
        st.warning(f"Every source token is masked for target token(s) {rows}{more}. Those rows "
                   "have nothing to attend to, so their weights and output are all zero. Unmask "
                   "a source token (sidebar, Masking) to give them something to look at.",
                   icon=":material/warning:")
    state.value("view")
    tabs = st.tabs(list(VIEWS), key="view", on_change="rerun")
    for tab, (view, needs) in zip(tabs, VIEWS.values(), strict=True):
        if not tab.open:
            continue
        with tab:
            if needs == "run" and result is None:
                st.info("This view appears once the sentences above are valid.")
            elif needs == "run":
                view(result, state)
            elif needs == "state":
                view(state)
            else:
                view()
