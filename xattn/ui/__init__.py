"""The Streamlit views: the only part of xattn that imports streamlit (``xattn/live/`` holds
what a class's step is, ``xattn/server/`` the phones' routes; ``app.py`` composes them with
``xattn.ui.serving``)."""
