"""A Streamlit page built to fail the accessibility gate (served by tests/test_accessibility.py).

As it is: a caption and chart text in Streamlit's own colours (3.88:1 and 3.72:1), light grey
text (2.3:1), an image without a text alternative and a heading that skips a level; the gate
must report each. With ``?fixed=1`` only the caption and the chart are drawn, under the page's
own CSS (``xattn.ui.look``), and the gate must find nothing: the fix is what passes.
Constant text only.
"""

import plotly.graph_objects as go
import streamlit as st

from xattn.ui.look import page_style

FIXED = st.query_params.get("fixed") == "1"
# A 1 x 1 grey PNG.
PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAAAAAA6fptVAAAACklEQVR4nGNoAAAAggCBd81ytgAAAABJRU5ErkJggg=="

if FIXED:
    page_style(False)
st.title("A page that fails")
st.caption("A caption, in the colour Streamlit gives captions.")
st.plotly_chart(go.Figure(go.Bar(x=["one", "two"], y=[1, 2])), key="chart",
                alt="Two bars, one and two.")
if not FIXED:
    st.markdown('<p style="color: #b0b0b0">Light grey text on white.</p>',
                unsafe_allow_html=True)
    st.markdown(f'<img src="data:image/png;base64,{PIXEL}" width="24" height="24">',
                unsafe_allow_html=True)
    st.markdown("### A heading under the h1, skipping h2")
