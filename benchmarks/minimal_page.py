"""The floor for benchmarks/first_screen.py: a Streamlit page holding one Plotly heatmap.

    python -m streamlit run benchmarks/minimal_page.py    # from the repository root

An 8 x 7 heatmap and nothing else, keyed ``head_1`` like the app's first chart, so one selector
(``.st-key-head_1 g.hm image``) finds the first drawn heatmap in both. ``?figure=app`` draws the
app's own default charts instead (four heads, 8 x 7 tokens, one chart each, in columns) and
nothing else: the difference to the plain heatmap is the figures, the difference to the app is
everything around them.
"""

import numpy as np
import plotly.graph_objects as go
import streamlit as st

if st.query_params.get("figure") == "app":
    from xattn.figures import head_figure
    from xattn.pipeline import Settings, run

    r = run(Settings())
    for h, col in enumerate(st.columns(len(r.weights))):
        with col:
            st.plotly_chart(head_figure(r.weights[h], r.src_tokens, r.tgt_tokens, head=h),
                            key=f"head_{h + 1}")
else:
    z = np.random.default_rng(0).random((8, 7))      # (n_tgt, n_src), like one head
    st.plotly_chart(go.Figure(go.Heatmap(z=z, zmin=0, zmax=1, colorscale="Viridis")),
                    key="head_1")
