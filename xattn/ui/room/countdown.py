"""A round's countdown on the host's page, updated by the browser (no rerun of the page)."""

from __future__ import annotations

import math
import time

import streamlit as st

from xattn.ui.page_assets import page_asset

__all__ = ["countdown"]


def countdown(ends_at: float) -> None:
    """A countdown to ``ends_at`` (seconds since the epoch, the store's clock) that the
    browser updates every quarter second: no rerun of the page. Constant HTML and numbers
    only."""
    left = max(0.0, ends_at - time.time())
    ident = f"xattn-countdown-{int(ends_at * 1000)}"
    st.html(
        f'<div role="timer" aria-live="off" style="font-size:1.35rem;font-weight:700;'
        f'text-align:right;font-variant-numeric:tabular-nums" id="{ident}" '
        f'data-left="{left:.3f}">⏱ {_clock(left)}</div>'
        f"<script>{page_asset('countdown.js').replace('/*ID*/', ident)}</script>",
        unsafe_allow_javascript=True)


def _clock(seconds: float) -> str:
    s = math.ceil(seconds)
    return f"{s // 60}:{s % 60:02d}"
