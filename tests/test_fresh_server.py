"""A fresh server process, many students at once: the first sessions of a new process (every
process behind the load balancer starts empty) must not see each other's half-done imports.

Twelve sessions opening different views at the same moment on a new process used to get
``partially initialized module 'pandas' has no attribute 'Series'`` from ``go.Figure``. Each
trial starts a new server and opens twelve links at once over Streamlit's own protocol.
"""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode

import pytest

from devtools.browser import ARTIFACTS, StreamlitServer
from devtools.protocol import load_page, run_async
from xattn.live.link import VIEW_NAMES

LINKS = [urlencode({"view": v}) for v in VIEW_NAMES] + [
    urlencode({"weights": "trained", "view": "Head statistics"}),
    urlencode({"view": "Lesson", "lesson": "8"}), urlencode({"heads": "8", "view": "Lines"})]


async def _all_at_once(port: int) -> list:
    return await asyncio.gather(*(load_page(port, q, timeout=300) for q in LINKS))


@pytest.mark.parametrize("trial", range(2))
def test_twelve_students_on_a_new_process_get_their_pages(trial):
    with StreamlitServer(log=ARTIFACTS / f"fresh-server-{trial}.log") as server:
        loads = run_async(_all_at_once(server.port))
    problems = {q: load.problems for q, load in zip(LINKS, loads, strict=True) if load.problems}
    assert not problems, problems
    assert all(load.elements > 5 for load in loads)
