"""The page's own CSS: readable captions and chart text (WCAG 1.4.3 contrast), phones (the
formula fits, every tab in view), presenter mode (big text, compact top, every tab in view).
Constant text only: nothing a user typed ever reaches a style sheet.

``tests/test_accessibility.py`` checks every view with axe-core in Chromium."""

from __future__ import annotations

import streamlit as st

__all__ = ["page_style", "FONT_SCALE", "CAPTION_COLOUR", "CHART_TEXT_COLOUR"]

FONT_SCALE = 1.35         # chart text in presenter mode

# Streamlit draws captions (st.caption, the captions under radio options) in the text colour
# at opacity 0.6: #828180 on white, 3.88:1, under WCAG 1.4.3's 4.5:1 for text (and 3.66:1 on
# the sidebar). The theme has no key for it, so: opaque, a grey of 6.0:1 on white, 5.6:1 on
# the sidebar (#f8f8f7), 5.3:1 on a widget (#f1f0ee); code in a caption keeps its own colour.
CAPTION_COLOUR = "#65635f"
# Streamlit's chart theme writes the axis, legend, colour bar and bar-label text of every
# Plotly chart in its gray70, #808495: 3.72:1 on white. The same blue-grey, darker: 6.1:1.
# Only text in exactly that colour changes; a colour a figure sets itself is left alone.
# (Screen only: a chart's own camera button draws from the figure, without this sheet.)
CHART_TEXT_COLOUR = "#5f6270"

_ALWAYS = """
<style>
[data-testid="stCaptionContainer"] { opacity: 1; color: CAPTION_COLOUR; }
.js-plotly-plot text[style*="fill: rgb(128, 132, 149)"] { fill: CHART_TEXT_COLOUR !important; }
/* A section title inside a view (the lesson's step) is an h2 under the page's h1, drawn at
   the size of Streamlit's h3. */
[role="tabpanel"] h2 { font-size: 1.75rem; }
/* A display formula fits its column instead of scrolling: a box that scrolls without a
   focusable element is out of reach of the keyboard (WCAG 2.1.1; axe's
   scrollable-region-focusable). Its size follows the width of the nearest column, expander or
   page (the multi-head formula, the widest, is 24.4 em), and KaTeX's 2 px overhang (its
   .vlist-s) gets room. */
:is([data-testid="stExpanderDetails"], [data-testid="stColumn"],
    [data-testid="stMainBlockContainer"]):has(.katex-display) { container-type: inline-size; }
.katex-display > .katex { font-size: min(1.21em, calc(100cqi / 26)); padding-right: 2px; }
/* A table in a column (step 12's measures, the confidence split) shrinks to its column instead
   of running under the column beside it (issue 44: two tables overlapped at 1024 px). */
[data-testid="stColumn"]:has(table) { container-type: inline-size; }
[data-testid="stColumn"] [data-testid="stMarkdownContainer"] table {
  font-size: min(1em, calc(100cqi / 30)); max-width: 100%; }
[data-testid="stColumn"] [data-testid="stMarkdownContainer"] :is(th, td) {
  padding: 0.3em 0.45em; }
/* A prediction's answers (pills) wrap onto more lines instead of running off a phone. */
:is(.st-key-predict, [class*="st-key-predict-"]) [role="radiogroup"] {
  flex-wrap: wrap; }
/* Several predictions at once (a job per head): each row's four pills in one line, on a phone
   and in presenter mode's column too. */
[class*="st-key-predict_part_"] button { padding: 0 0.55rem; min-height: 2rem; }
[class*="st-key-predict_part_"] button p { font-size: 0.8rem; }
[class*="st-key-predict_part_"] [data-testid="stWidgetLabel"] { margin-bottom: 0; }
/* A code block's copy button shows without hover (a phone has none): the share link. */
[data-testid="stCode"] button { opacity: 1 !important; }
/* A phone: the formula shrinks (and scrolls if still too wide) instead of being cut off. */
@media (max-width: 640px) {
  .katex-display { font-size: 0.78em; overflow-x: auto; overflow-y: hidden; }
  h1 { font-size: 1.7rem !important; }
  [data-testid="stLayoutWrapper"]:has(> .st-key-banner) { min-width: 100%; }  /* share: below */
  [data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; row-gap: 0.2rem; }  /* all in sight */
  .modebar-container { display: none; }   /* no toolbar over a chart's title: nothing to hover */
}
</style>
""".replace("CAPTION_COLOUR", CAPTION_COLOUR).replace("CHART_TEXT_COLOUR", CHART_TEXT_COLOUR)

_PRESENTER = """
<style>
html { font-size: 19px; }                                   /* every rem-sized text */
.block-container, [data-testid="stMainBlockContainer"] {
  padding-top: 3.6rem !important; max-width: 100% !important; }   /* just below the header */
h1 { font-size: 1.35rem !important; padding: 0 0 0.35rem !important; }
.st-key-subtitle { display: none; }
[data-testid="stMainBlockContainer"] [data-testid="stAlert"] p { font-size: 0.9rem; }
[data-testid="stTabs"] [role="tablist"] { flex-wrap: wrap; row-gap: 0.2rem; }  /* all tabs */
/* Half the space between blocks: a view's first chart starts on the first screen. */
[data-testid="stMainBlockContainer"] [data-testid="stVerticalBlock"] { gap: 0.4rem; }
/* Body text is 19 px: a widget's label (the prediction's question) and an expander's title
   too, which Streamlit draws at 0.875 rem; tabs and buttons keep it, so that they fit. */
[data-testid="stMain"] [data-testid="stWidgetLabel"] p,
[data-testid="stMain"] [data-testid="stExpander"] summary p { font-size: 1rem; }
/* ... but not a row's name among several predictions ("head 1"): the rows must fit */
[data-testid="stMain"] [class*="st-key-predict_part_"] [data-testid="stWidgetLabel"] p {
  font-size: 0.875rem; }
</style>
"""


def page_style(present: bool) -> None:
    """Add the page's CSS (presenter mode's too when ``present``)."""
    st.markdown(_ALWAYS + (_PRESENTER if present else ""), unsafe_allow_html=True)
