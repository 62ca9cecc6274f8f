"""The page's own CSS: phones (the formula fits, every tab in view), presenter mode (big
text, compact top, every tab in view). Constant text only: nothing a user typed ever reaches
a style sheet."""

from __future__ import annotations

import streamlit as st

__all__ = ["page_style", "FONT_SCALE"]

FONT_SCALE = 1.35         # chart text in presenter mode

_ALWAYS = """
<style>
/* A phone: the formula shrinks and scrolls instead of being cut off. */
@media (max-width: 640px) {
  .katex-display { font-size: 0.78em; overflow-x: auto; overflow-y: hidden; }
  h1 { font-size: 1.7rem !important; }
  [data-testid="stLayoutWrapper"]:has(> .st-key-banner) { min-width: 100%; }  /* share: below */
  [data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; row-gap: 0.2rem; }  /* all in sight */
}
</style>
"""

_PRESENTER = """
<style>
html { font-size: 19px; }                                   /* every rem-sized text */
.block-container, [data-testid="stMainBlockContainer"] {
  padding-top: 3.6rem !important; max-width: 100% !important; }   /* just below the header */
h1 { font-size: 1.7rem !important; padding-top: 0 !important; }
.st-key-subtitle { display: none; }
[data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; row-gap: 0.2rem; }  /* all tabs */
</style>
"""


def page_style(present: bool) -> None:
    """Add the page's CSS (presenter mode's too when ``present``)."""
    st.markdown(_ALWAYS + (_PRESENTER if present else ""), unsafe_allow_html=True)
