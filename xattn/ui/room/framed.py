"""A warning on the lecturer's page when it runs inside another page (a frame).

A Hugging Face Space shows its app in a frame of huggingface.co. There, Safari (and any
browser that blocks cookies in frames of another site) keeps none of the app's cookies: the
page that drives a class forgets it on a reload and becomes a student's. At the app's own
address (``https://USER-SPACE.hf.space``) nothing is in the way. The server cannot tell
whether a page is framed; the browser can: this component (``st.components.v2``, JavaScript
in the page, no frame of its own) shows the warning where ``window.top`` is a page of another
site, with the address to open instead, and nothing anywhere else (a frame in a page of the
app's own site keeps its cookies).
"""

from __future__ import annotations

import streamlit as st

from xattn.ui.page_assets import page_asset

__all__ = ["framed_warning", "FRAMED"]

FRAMED = ("This page runs inside another page (a Hugging Face Space shows its app in a "
          "frame). Some browsers (Safari) keep no cookies in such a frame: reloaded there, "
          "this page forgets that it drives the class. Teach from the app's own address, "
          "{own}: the students' link and QR code point to the app itself, not to the page "
          "around it.")

_HTML = '<div class="xattn-framed" role="note" hidden></div>'
_CSS = """
.xattn-framed { background: #fff3cd; color: #664d03; border: 1px solid #ffe69c;
                border-radius: 0.5rem; padding: 0.75rem 1rem; font: inherit;
                line-height: 1.5; margin-top: 0.5rem; }
"""
_component = st.components.v2.component("xattn_framed", html=_HTML, css=_CSS,
                                        js=page_asset("framed.js"))


def framed_warning() -> None:
    """Say, on a page shown inside another page, to open the app at its own address."""
    _component(key="xattn_framed", data={"text": FRAMED})
