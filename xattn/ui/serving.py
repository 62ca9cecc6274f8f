"""What the page gives ``app.py`` to compose with the phones' server (``xattn.server``): its
script, the largest upload it takes, and its lifespan around the server's."""

from __future__ import annotations

from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st

from xattn.ui import internals

__all__ = ["SCRIPT", "upload_bytes", "with_page"]

SCRIPT = str(Path(__file__).resolve().parent / "main.py")   # the page ``st.App`` runs


def upload_bytes() -> int:
    """The largest file the page takes: Streamlit's ``server.maxUploadSize`` (MiB), in bytes
    (the server's body caps, ``xattn.server.bodies``, allow it on an upload)."""
    return int(st.get_option("server.maxUploadSize")) << 20


def with_page(lifespan):
    """``lifespan`` (the server's: ``xattn.server.live``) with the page's patches of
    Streamlit's internals installed first (``xattn.ui.internals``)."""
    @asynccontextmanager
    async def both(app):
        internals.install()
        async with lifespan(app):
            yield
    return both
