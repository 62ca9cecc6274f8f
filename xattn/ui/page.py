"""The whole page: controls, the computation (cached), and the views in tabs."""

from __future__ import annotations

import streamlit as st

from xattn.pipeline import Run, Settings, run
from xattn.ui.analysis import ablation_view, stats_view
from xattn.ui.compare import compare_view
from xattn.ui.controls import requested_parameters, settings_from_controls, url_notices
from xattn.ui.heads import heads_view
from xattn.ui.lines_view import export_view, lines_view
from xattn.ui.step import step_view


@st.cache_data(max_entries=512, show_spinner=False)
def cached_run(settings: Settings) -> Run:
    """One computation per distinct settings, shared by every student on the server.

    Keyed on the small ``Settings`` (strings and ints), never on arrays; bounded, because a
    classroom demo server has little memory.
    """
    return run(settings)


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


def _trained_view(_: Run) -> None:
    from xattn.ui.trained import trained_view  # imported when first opened: training code

    trained_view()


def main() -> None:
    st.set_page_config(page_title="xattn · multi-head cross-attention", page_icon="🔍",
                       layout="wide")
    st.title("Multi-head cross-attention, head by head")
    st.caption("How a decoder (the target sentence) looks up the encoder's output (the source "
               "sentence). Type two sentences; every control is in the link, so a shared URL "
               "shows the same picture.")
    requested = requested_parameters()
    settings = settings_from_controls()
    notice_area = st.container()  # filled last, once every widget (in any tab) is drawn
    _views(settings)
    with notice_area:
        for notice in url_notices(requested):
            st.warning(notice, icon=":material/link:")


def _views(settings: Settings) -> None:
    result = None
    try:
        result = cached_run(settings)
    except ValueError as err:
        st.error(f"{err}", icon=":material/error:")
        st.info("The page keeps working: change the sentences or the settings and it redraws.")
    if result is not None and len(result.empty_rows):
        rows = ", ".join(f"{i}: {result.tgt_tokens[i]}" for i in result.empty_rows[:12])
        st.warning(f"Every source token is masked for target token(s) {rows}. Those rows have "
                   "nothing to attend to, so their weights and output are all zero. Unmask a "
                   "source token (sidebar, Masking) to give them something to look at.",
                   icon=":material/warning:")
    views = {  # name: (view, whether it needs this run's result)
        "Heads": (heads_view, True),
        "Step through": (step_view, True),
        "Head statistics": (stats_view, True),
        "Switch heads off": (ablation_view, True),
        "Lines": (lines_view, True),
        "Compare": (lambda r: compare_view(r, cached_run), True),
        "Trained vs random": (_trained_view, False),
        "Export": (export_view, True),
        "How to read this": (lambda r: st.markdown(HOW_TO_READ), False),
    }
    # Bound to the URL, so a link opens on the same tab; only the open tab's code runs.
    tabs = st.tabs(list(views), key="view", bind="query-params")
    for tab, (view, needs_result) in zip(tabs, views.values(), strict=True):
        if not tab.open:
            continue
        with tab:
            if needs_result and result is None:
                st.info("This view appears once the sentences above are valid.")
            else:
                view(result)
