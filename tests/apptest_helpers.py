"""Shared helpers for AppTest tests: run the page, read Plotly charts back as arrays."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "xattn" / "ui" / "main.py")   # the script of app.py's st.App


def run_app(query: dict | None = None, **widget_values) -> AppTest:
    """Run the page once (app.py's script), seeded from URL query parameters."""
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def page(locale: str | None = None, **query) -> AppTest:
    """The app run once with ``query`` in its link and, given, the browser's ``locale``
    (``st.context.locale``; AppTest's own is None, which the page reads as English)."""
    at = AppTest.from_file(APP, default_timeout=120)
    if locale is not None:
        at.context["locale"] = locale
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def decode(value):
    """Plotly's typed-array JSON ({dtype, bdata, shape}) to an ndarray; lists pass through."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        if shape:
            dims = [int(n) for n in str(shape).split(",")] if isinstance(shape, str) else shape
            arr = arr.reshape(dims)
        return arr
    return np.asarray(value)


def chart(at: AppTest, key: str) -> dict:
    """The figure JSON of the plotly chart with this key."""
    return json.loads(at.get_by_key(key).proto.spec)


def heatmaps(fig: dict) -> list[dict]:
    return [t for t in fig["data"] if t["type"] == "heatmap"]


def messages(at: AppTest) -> dict[str, list[str]]:
    return {"error": [e.value for e in at.error], "warning": [e.value for e in at.warning]}


def heads_chart(at: AppTest) -> dict:
    """The Heads view's charts on the page (one per head, keys head_1, head_2, ...; a page of heads may start later) as one figure: the
    heatmaps of every head in order, then every other trace (mask crosses, gold marks), with
    each trace's ``head`` (from 1) added; the layout is head 1's."""
    figures = {}
    for h in range(1, 17):
        try:
            figures[h] = chart(at, f"head_{h}")
        except KeyError:
            continue
    if not figures:
        raise KeyError("no head_N chart on the page")
    data = [dict(t, head=h) for h, f in figures.items() for t in f["data"]
            if t["type"] == "heatmap"]
    data += [dict(t, head=h) for h, f in figures.items() for t in f["data"]
             if t["type"] != "heatmap"]
    return {"data": data, "layout": next(iter(figures.values()))["layout"]}


def per_head_z(at: AppTest) -> list[np.ndarray]:
    """The weights of every head the Heads view shows, in order."""
    return [decode(t["z"]) for t in heatmaps(heads_chart(at))]
