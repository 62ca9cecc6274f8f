"""The Streamlit views: the only part of xattn that imports streamlit."""
