"""xattn: multi-head cross-attention, head by head. Start with `streamlit run app.py`.

The Streamlit page (xattn/ui/main.py) with what a class needs beside it: the phones' light
page and the rooms' live messages (xattn/ui/server), through st.App's public routes,
middleware and lifespan.
"""

import streamlit as st

from xattn.ui.server import MIDDLEWARE, ROUTES, SCRIPT, lifespan

app = st.App(SCRIPT, routes=ROUTES, middleware=MIDDLEWARE, lifespan=lifespan)
