"""xattn: multi-head cross-attention, head by head. Start with `streamlit run app.py`."""

from xattn.ui.page import main

main()
