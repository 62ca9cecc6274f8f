"""The floor for benchmarks/first_screen.py: a Streamlit page holding one Plotly heatmap.

    python -m streamlit run benchmarks/minimal_page.py    # from the repository root

An 8 x 7 heatmap and nothing else; ``?figure=app`` in the URL draws the app's per-head figure.

Keyed ``per_head`` like the app's chart, so one selector (``.st-key-per_head g.hm image``) finds
the first drawn heatmap in both. With ``?figure=app`` the page draws the app's own default
per-head figure (4 heads, 8 x 7 tokens) and nothing else: the difference to the plain heatmap
is the figure, the difference to the app is everything around it.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

if st.query_params.get("figure") == "app":
    from xattn.figures import per_head_figure
    from xattn.pipeline import Settings, run

    r = run(Settings())
    fig = per_head_figure(r.weights, r.src_tokens, r.tgt_tokens, mask=r.mask)
else:
    z = np.random.default_rng(0).random((8, 7))      # (n_tgt, n_src), like one head
    fig = go.Figure(go.Heatmap(z=z, zmin=0, zmax=1, colorscale="Viridis"))
st.plotly_chart(fig, key="per_head")
