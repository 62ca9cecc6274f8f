"""The Streamlit page's script: ``app.py``'s ``st.App`` runs it for every browser session
(``AppTest.from_file`` takes it too)."""

from xattn.ui.page import main

main()
