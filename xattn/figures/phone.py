"""A Plotly figure as a chart a phone draws itself: a few kilobytes of numbers, no Plotly.

A student's phone in a class gets, after the reveal, the chart that answers the step's question.
Plotly's code is 4.7 MB, more than a lecture hall's Wi-Fi can give 200 phones at once, so the
phone's page draws its charts as SVG from a compact spec, and the spec is made from the very
figure the lecturer's page shows (`phone_chart`): the same numbers, the same labels, the same
outlined cells, never a second computation that could disagree.

A spec is a dict (JSON) with a ``title`` and ``panels``, one per pair of axes of the figure:

- ``{"kind": "heat", "x": [labels], "y": [labels], "z": [[...]], "zmin", "zmax", "reverse",
  "marks": [[row, col, "masked"|"outline"]], "text": [[...]] | None, "xtitle", "ytitle"}``;
- ``{"kind": "bars", "x": [labels], "series": [{"name", "y": [...], "text"}], "xtitle",
  "ytitle", "percent"}``;
- ``{"kind": "lines", "series": [{"name", "x": [...], "y": [...], "dash"}], "xtitle", "ytitle",
  "log"}``.

Numbers are rounded to ``DIGITS`` decimals, labels are plain text (Plotly's escaped text
unescaped; the phone sets them as text, never as HTML), and every spec carries ``alt``, the
chart's text alternative.

Examples
--------
>>> import plotly.graph_objects as go
>>> fig = go.Figure(go.Bar(x=["0: up", "1: down"], y=[3, 1]), layout=dict(
...     title=dict(text="The class"), xaxis=dict(tickvals=["0: up", "1: down"],
...     ticktext=["up", "down"])))
>>> spec = phone_chart(fig, alt="Bars of the class's answers.")
>>> spec["title"], spec["panels"][0]["x"], spec["panels"][0]["series"][0]["y"]
('The class', ['up', 'down'], [3.0, 1.0])
"""

from __future__ import annotations

import base64
import html
import math
import re

import numpy as np

__all__ = ["phone_chart", "DIGITS", "values"]

DIGITS = 3          # decimals kept: a weight to 0.001, as the page's hover shows it
_DTYPES = {"f4": np.float32, "f8": np.float64, "i1": np.int8, "u1": np.uint8, "i2": np.int16,
           "u2": np.uint16, "i4": np.int32, "u4": np.uint32}
_TAG = re.compile(r"<[^>]*>")


def values(value) -> np.ndarray:
    """A Plotly array (a list, an ndarray, or ``{"dtype", "bdata", "shape"}``) as an ndarray."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), _DTYPES[value["dtype"]])
        shape = value.get("shape")
        if shape:
            arr = arr.reshape(tuple(int(s) for s in str(shape).split(",")))
        return arr
    return np.asarray(value if value is not None else [])


def _text(value) -> str:
    """Plotly's text (escaped by ``xattn.literal.plotly_text``, ``<br>`` for line breaks) as
    the characters a reader sees."""
    return html.unescape(_TAG.sub(" ", str(value or "").replace("<br>", " "))).strip()


def _number(v) -> float | None:
    v = float(v)
    return round(v, DIGITS) + 0.0 if math.isfinite(v) else None


def _numbers(arr) -> list:
    arr = np.asarray(arr, dtype=float)
    return [_numbers(r) for r in arr] if arr.ndim > 1 else [_number(v) for v in arr]


def _title(obj) -> str:
    if isinstance(obj, dict):
        return _text(obj.get("text"))
    return _text(obj)


class _Axis:
    """One axis of the figure: its categories' labels (``tickvals`` → ``ticktext``) and
    title."""

    def __init__(self, spec: dict):
        spec = spec or {}
        vals, texts = spec.get("tickvals"), spec.get("ticktext")
        self.labels = {}
        if vals is not None and texts is not None and not isinstance(vals, dict):
            self.labels = {str(v): _text(t) for v, t in zip(vals, texts, strict=False)}
        self.title = _title(spec.get("title"))
        self.log = spec.get("type") == "log"
        self.percent = "%" in str(spec.get("tickformat", ""))

    def label(self, category) -> str:
        key = str(category)
        if key in self.labels:
            return self.labels[key]
        return _text(key.split(": ", 1)[1] if re.match(r"^\d+: ", key) else key)


def _axes(trace: dict) -> tuple[str, str]:
    return trace.get("xaxis", "x"), trace.get("yaxis", "y")


def _axis_spec(layout: dict, ref: str, letter: str) -> dict:
    suffix = ref[1:]                                    # "x2" -> "2"
    return layout.get(f"{letter}axis{suffix}", {})


def phone_chart(fig, *, alt: str) -> dict:
    """The phone's spec of ``fig`` (a ``go.Figure``, a ``FrozenFigure`` or the dict of either)
    with ``alt`` as its text alternative; see the module's docstring."""
    spec = fig if isinstance(fig, dict) else fig.to_dict()
    layout = spec.get("layout", {}) or {}
    if not isinstance(alt, str) or not alt.strip():
        raise ValueError(f"a phone chart needs a text alternative (alt); received {alt!r}.")
    panels: dict[tuple[str, str], dict] = {}
    names = _panel_names(layout)
    for trace in spec.get("data", []):
        where = _axes(trace)
        xs = _Axis(_axis_spec(layout, where[0], "x"))
        ys = _Axis(_axis_spec(layout, where[1], "y"))
        kind = trace.get("type", "scatter")
        if kind == "heatmap":
            panels[where] = _heat(trace, xs, ys, layout)
        elif kind == "bar":
            panel = panels.setdefault(where, {"kind": "bars", "x": None, "series": [],
                                              "xtitle": xs.title, "ytitle": ys.title,
                                              "percent": ys.percent})
            _bar(panel, trace, xs, ys)
        elif kind == "scatter" and where in panels and panels[where]["kind"] == "heat":
            _marks(panels[where], trace)
        elif kind == "scatter":
            panel = panels.setdefault(where, {"kind": "lines", "series": [], "xtitle": xs.title,
                                              "ytitle": ys.title, "log": xs.log,
                                              "percent": ys.percent})
            _line(panel, trace)
    for shape in layout.get("shapes", []) or []:
        where = (shape.get("xref", "x"), shape.get("yref", "y"))
        if shape.get("type") == "rect" and where in panels and panels[where]["kind"] == "heat":
            col = round((float(shape["x0"]) + float(shape["x1"])) / 2)
            row = round((float(shape["y0"]) + float(shape["y1"])) / 2)
            panels[where]["marks"].append([row, col, "outline"])
    out = []
    for where, panel in panels.items():
        if where in names:
            panel["name"] = names[where]
        out.append({k: v for k, v in panel.items() if not k.startswith("_")})
    return {"title": _title(layout.get("title")), "panels": out, "alt": alt.strip()}


def _panel_names(layout: dict) -> dict:
    """Subplot titles (annotations placed over a subplot's axes) by axes pair."""
    names = {}
    for note in layout.get("annotations", []) or []:
        ref = (note.get("xref", ""), note.get("yref", ""))
        if ref[0].startswith("x") and ref[0].endswith("domain"):
            names[(ref[0].split(" ")[0], ref[1].split(" ")[0])] = _text(note.get("text"))
    return names


def _heat(trace: dict, xs: _Axis, ys: _Axis, layout: dict) -> dict:
    z = values(trace.get("z"))
    if z.ndim == 1:
        z = z[None, :]
    x = trace.get("x")
    y = trace.get("y")
    x = list(x) if x is not None and not isinstance(x, dict) else list(range(z.shape[1]))
    y = list(y) if y is not None and not isinstance(y, dict) else list(range(z.shape[0]))
    scale = layout.get(trace.get("coloraxis", ""), {}) if trace.get("coloraxis") else {}
    zmin = trace.get("zmin", scale.get("cmin", float(np.nanmin(z)) if z.size else 0.0))
    zmax = trace.get("zmax", scale.get("cmax", float(np.nanmax(z)) if z.size else 1.0))
    text = trace.get("text")
    panel = {"kind": "heat", "x": [xs.label(c) for c in x], "y": [ys.label(c) for c in y],
             "z": _numbers(z), "zmin": _number(zmin), "zmax": _number(zmax),
             "reverse": bool(trace.get("reversescale") or scale.get("reversescale")),
             "marks": [], "xtitle": xs.title, "ytitle": ys.title,
             "_x": [str(c) for c in x], "_y": [str(c) for c in y]}
    if trace.get("name"):
        panel["name"] = _text(trace["name"])
    if text is not None and trace.get("texttemplate"):
        panel["text"] = [[_text(t) for t in row] for row in values(text).tolist()]
    return panel


def _marks(panel: dict, trace: dict) -> None:
    symbol = str((trace.get("marker") or {}).get("symbol", ""))
    kind = "masked" if symbol.startswith("x") else "outline"
    cols = {c: j for j, c in enumerate(panel["_x"])}
    rows = {r: i for i, r in enumerate(panel["_y"])}
    for xv, yv in zip(trace.get("x") or [], trace.get("y") or [], strict=False):
        if str(xv) in cols and str(yv) in rows:
            panel["marks"].append([rows[str(yv)], cols[str(xv)], kind])


def _bar(panel: dict, trace: dict, xs: _Axis, ys: _Axis) -> None:
    horizontal = trace.get("orientation") == "h"
    cats, vals = (trace.get("y"), trace.get("x")) if horizontal else (trace.get("x"),
                                                                       trace.get("y"))
    cats = values(cats).tolist() if isinstance(cats, dict) else list(cats or [])
    axis = ys if horizontal else xs
    labels = [axis.label(c) for c in cats]
    if panel["x"] is None:
        panel["x"] = labels
    series = {"name": _text(trace.get("name")), "y": _numbers(values(vals))}
    if trace.get("text") is not None and not isinstance(trace.get("text"), str):
        series["text"] = [_text(t) for t in trace["text"]]
    panel["series"].append(series)


def _line(panel: dict, trace: dict) -> None:
    x = values(trace.get("x"))
    y = values(trace.get("y"))
    dash = (trace.get("line") or {}).get("dash", "solid")
    panel["series"].append({"name": _text(trace.get("name")), "x": _numbers(x),
                            "y": _numbers(y), "dash": dash != "solid"})

