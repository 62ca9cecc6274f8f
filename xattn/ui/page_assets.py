"""The Streamlit page's own scripts and styles, read from ``xattn/ui/assets/`` (files that ESLint
and a reader can open, not strings in Python): the components.v2 modules ``follow.js``,
``claim.js`` and ``framed.js``, the scripts ``countdown.js`` and ``tap_hover.js`` (a marker
filled in by their reader), and ``join.css``. The phones' page has its own, served by
``xattn/server`` (``xattn.server.scripts``)."""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["page_asset"]


@cache
def page_asset(name: str) -> str:
    """The text of ``xattn/ui/assets/NAME`` (e.g. ``"follow.js"``); `FileNotFoundError` if
    none."""
    if not isinstance(name, str):
        raise TypeError(f"a page asset's name is a str, received {type(name).__name__}")
    return (resources.files("xattn.ui") / "assets" / name).read_text(encoding="utf-8")
