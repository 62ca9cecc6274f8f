"""The app with parts left out, for benchmarks/first_screen.py: what the first heatmap waits for.

    python -m streamlit run benchmarks/app_variants.py    # from the repository root

``?variant=`` in the URL picks what is left out of the real page (``xattn.ui.page.main``):

- ``no_controls``: the sentence inputs and the sidebar (default settings instead);
- ``chart_only``: everything after the per-head chart in the Heads tab (shapes caption,
  text description, the KaTeX formula, the average and output charts, the downloads);
- ``both``: the two together: title, tabs and the chart.

Measurement only: the app is not changed, its page module's helpers are swapped for this run
(and put back at the start of every run, so variants never leak into each other).
"""

import streamlit as st

import xattn.ui.page as page
from xattn.figures import per_head_figure
from xattn.pipeline import Settings
from xattn.ui.controls import settings_from_controls
from xattn.ui.heads import heads_view

# Streamlit re-executes this script on every run while xattn.ui.page stays imported: the
# originals come from the modules that define them, never from the (swapped) page module.
ORIGINAL = (settings_from_controls, heads_view)


def chart_only(r) -> None:
    fig = per_head_figure(r.weights, r.src_tokens, r.tgt_tokens, mask=r.mask)
    st.plotly_chart(fig, key="per_head")


variant = st.query_params.get("variant", "")
page.settings_from_controls, page.heads_view = ORIGINAL
page.url_notices = lambda requested: []          # ?variant= is not one of the app's parameters
if variant in ("no_controls", "both"):
    page.settings_from_controls = Settings
if variant in ("chart_only", "both"):
    page.heads_view = chart_only
page.main()
