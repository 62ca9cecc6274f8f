"""The CSV download of a busy class: a student's file must still be there when the browser
fetches it, however many other students clicked meanwhile.

Streamlit 1.67 deletes a file made on click (a deferred download) once two script runs of any
session end before the fetch (``benchmarks/download_race.py``); the page sends small files
with the page instead. Spoken over Streamlit's own websocket protocol against a real server
(``benchmarks.students.Session``), like the browser does, without a browser.
"""

from __future__ import annotations

import csv
import io
import random

import numpy as np
import pytest

from benchmarks.download_race import race
from benchmarks.students import Session, Stats
from devtools.browser import ARTIFACTS, StreamlitServer
from devtools.protocol import http_get, run_async
from xattn.pipeline import Settings, run


@pytest.fixture(scope="module")
def server():
    """One server for the module (the browser tests' own ``server`` fixture needs Chromium)."""
    with StreamlitServer(log=ARTIFACTS / "downloads-server.log") as srv:
        yield srv


def test_a_small_csv_survives_other_students_clicks(server):
    results = dict(run_async(race(server.url, {"heads": "8", "seed": "3"})))
    assert results == {"sent with the page: fetched at once": 200,
                       "sent with the page: fetched after two runs of another session": 200}


def test_the_csv_holds_the_weights_of_the_students_own_settings(server):
    async def fetch(url: str) -> bytes:
        session = Session(0, url, Stats(), random.Random(0), download=False,
                          query={"src": "a = b", "tgt": "x y"})
        session.values.update(heads=2, seed=9)
        async with session.connected() as tab:
            await session.rerun(tab)
            assert session.csv_url, "the small CSV comes with the page"
            status, _, _, body = await http_get(await session.csv_location(tab),
                                                session.cookies)
        assert status == 200
        return body

    body = run_async(fetch(server.url))
    rows = list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
    w = run(Settings(src="a = b", tgt="x y", n_heads=2, seed=9)).weights
    assert len(rows) == w.size
    assert {r["src_token"] for r in rows} == {"a", "'=", "b"}    # a formula is defused
    got = np.array([float(r["weight"]) for r in rows]).reshape(w.shape)
    np.testing.assert_allclose(got, w, atol=1e-6)
