"""xattn: multi-head cross-attention, head by head. Start with `streamlit run app.py`.

The Streamlit page (xattn/ui/main.py) with what a class needs beside it: the phones' light
page and the rooms' live messages (xattn/server, standing on xattn/live like the page), through
st.App's public routes, middleware and lifespan (xattn/ui/serving.py: the page's side).
"""

import streamlit as st

from xattn.server import ROUTES, lifespan, middleware
from xattn.ui.serving import SCRIPT, upload_bytes, with_page

app = st.App(SCRIPT, routes=ROUTES, middleware=middleware(upload_bytes),
             lifespan=with_page(lifespan))
