"""A figure converted once, shown many times: what a server keeps for figures that recur.

A page that redraws the same figure on every rerun (a class clicking through the same
settings) pays each time for Plotly's object tree (``go.Figure(...)``), the deep copy in
``Figure.to_dict`` and the base64 encoding of its arrays: about 1.7 ms per small heatmap, most
of a rerun's server time. `freeze` does that work once and keeps the result, Plotly's own
dict with its arrays already encoded; `FrozenFigure` hands it to anything that asks a figure
for ``to_dict()`` (``st.plotly_chart`` does), in a microsecond.
"""

from __future__ import annotations

import base64
import re

import numpy as np
import plotly.graph_objects as go

from xattn.cache import nbytes

__all__ = ["FrozenFigure", "freeze", "frozen", "narrowed", "right_to_left"]

# Plotly's typed-array names (plotly.js ``dtype``) of the NumPy dtypes the figures hold
_DTYPES = {"float32": "f4", "float64": "f8", "int8": "i1", "uint8": "u1", "int16": "i2",
           "uint16": "u2", "int32": "i4", "uint32": "u4"}
_NOT_ARRAYS = {"geojson", "layer", "layers", "range"}        # as Plotly: never typed arrays


class FrozenFigure(go.Figure):
    """A read-only figure made from ``go.Figure.to_dict()``'s output.

    Only ``to_dict`` / ``to_plotly_json`` work (that is what ``st.plotly_chart`` and
    ``plotly.io.to_json`` call); the dict is shared, never modified. Anything else a figure
    has (``.data``, ``update_layout``, ``show``, ...) raises a TypeError that says so, instead
    of failing somewhere inside Plotly: ``go.Figure(frozen.to_dict())`` makes an ordinary
    figure.

    Examples
    --------
    >>> fig = freeze(go.Figure(go.Heatmap(z=[[0.25, 0.75]]), layout=dict(title="head 1")))
    >>> fig.to_dict()["data"][0]["type"], fig.to_dict()["layout"]["title"]["text"]
    ('heatmap', 'head 1')
    >>> go.Figure(fig.to_dict()).data[0].z
    ([0.25, 0.75],)
    >>> fig.update_layout(height=100)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: A FrozenFigure is read-only and has only to_dict() and to_plotly_json(); ...
    """

    __slots__ = ()
    _ALLOWED = frozenset({"to_dict", "to_plotly_json", "nbytes", "_spec", "__class__",
                          "__repr__", "__init__", "__setattr__", "__reduce_ex__"})

    def __getattribute__(self, name: str):
        if name.startswith("__") and name != "__getitem__" or name in FrozenFigure._ALLOWED:
            return object.__getattribute__(self, name)
        raise TypeError(f"A FrozenFigure is read-only and has only to_dict() and "
                        f"to_plotly_json(); received a request for {name!r}. Make an ordinary "
                        "figure with go.Figure(frozen.to_dict()).")

    def __init__(self, spec: dict) -> None:      # noqa: D107 -- no Plotly object tree
        if not (isinstance(spec, dict) and isinstance(spec.get("data"), list)
                and isinstance(spec.get("layout", {}), dict)):
            raise TypeError("FrozenFigure expects go.Figure.to_dict()'s output, a dict with a "
                            f"list 'data'; received {type(spec).__name__}.")
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict:
        return object.__getattribute__(self, "_spec")

    def to_plotly_json(self) -> dict:
        return object.__getattribute__(self, "_spec")

    @property
    def nbytes(self) -> int:
        """Memory held (``xattn.cache.nbytes`` of the dict), for byte-bounded caches."""
        return nbytes(self.to_dict())

    def __repr__(self) -> str:
        return f"FrozenFigure({len(self.to_dict()['data'])} traces)"


def freeze(fig: go.Figure) -> FrozenFigure:
    """``fig`` converted once (``to_dict``: arrays encoded as Plotly's typed-array specs)."""
    return FrozenFigure(fig.to_dict())


def frozen(data: list[dict], layout: dict) -> FrozenFigure:
    """``freeze(go.Figure(data=data, layout=layout, _validate=False))``, made without the
    figure: the traces' NumPy arrays encoded as ``to_dict`` encodes them, the template
    converted once per template. About 0.1 ms for a small heatmap instead of 0.8 ms.

    Examples
    --------
    >>> from xattn.figures._style import TEMPLATE
    >>> trace, layout = dict(type="heatmap", z=np.eye(2, dtype=np.float32)), dict(
    ...     height=200, template=TEMPLATE)
    >>> frozen([trace], layout).to_dict() == freeze(go.Figure([trace], layout)).to_dict()
    True
    """
    layout = dict(layout)
    if isinstance(layout.get("template"), go.layout.Template):
        layout["template"] = _template_dict(layout["template"])
    return FrozenFigure({"data": [_encoded(t) for t in data], "layout": _encoded(layout)})


_TEMPLATES: dict[int, tuple[go.layout.Template, dict]] = {}


def _template_dict(template: go.layout.Template) -> dict:
    """A template as ``to_dict`` writes it, converted once (shared: never modified)."""
    known = _TEMPLATES.get(id(template))
    if known is None or known[0] is not template:
        known = _TEMPLATES[id(template)] = (template, template.to_plotly_json())
    return known[1]


def _encoded(value):
    """``value`` with every NumPy array as Plotly's typed-array spec ({dtype, bdata, shape}),
    like ``Figure.to_dict``; dicts and lists are copied, other values shared."""
    if isinstance(value, dict):
        return {k: v if k in _NOT_ARRAYS else _encoded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_encoded(v) for v in value)
    if isinstance(value, np.ndarray) and value.size and str(value.dtype) in _DTYPES:
        spec = {"dtype": _DTYPES[str(value.dtype)],
                "bdata": base64.b64encode(np.ascontiguousarray(value)).decode("ascii")}
        if value.ndim > 1:
            spec["shape"] = str(value.shape)[1:-1]
        return spec
    return value


def narrowed(fig, *, width_chars: int = 30, font: int = 12) -> FrozenFigure:
    """``fig`` (a figure or a `FrozenFigure`) for a narrow column, two charts side by side on
    a projector: its title wrapped at spaces to ``width_chars`` a line (the title is trusted
    text, already escaped: only spaces become line breaks) in a ``font``-px title, the top
    margin made room for, and the x axis's tick labels turned so that neighbours do not run
    into each other. The traces are shared, not copied.

    Examples
    --------
    >>> fig = freeze(go.Figure(go.Bar(x=["a"], y=[1]),
    ...                        layout=dict(title="The class's predictions (31 answers)")))
    >>> narrowed(fig, width_chars=20).to_dict()["layout"]["title"]["text"]
    "The class's<br>predictions (31<br>answers)"
    """
    spec = fig.to_dict()
    layout = dict(spec.get("layout", {}))
    title = dict(layout.get("title") or {})
    lines, line = [], ""
    for word in str(title.get("text") or "").split(" "):
        if line and len(line) + 1 + len(word) > width_chars:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    if lines:
        title["text"] = "<br>".join(lines)
        title["font"] = {**title.get("font", {}), "size": font}
        layout["title"] = title
        margin = dict(layout.get("margin") or {})
        margin["t"] = max(margin.get("t", 40), 16 + (font + 4) * len(lines))
        layout["margin"] = margin
    xaxis = dict(layout.get("xaxis") or {})
    xaxis["tickangle"] = -45
    xaxis["tickfont"] = {**xaxis.get("tickfont", {}), "size": min(
        font, xaxis.get("tickfont", {}).get("size", font))}
    layout["xaxis"] = xaxis
    return FrozenFigure({**spec, "layout": layout})


_RTL_LETTER = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")


def right_to_left(fig) -> FrozenFigure:
    """``fig`` (a figure or a `FrozenFigure`) with each title holding right-to-left letters
    (a layout's, an axis's, a colour bar's or legend's, and the annotations that name
    subplots) put in a right-to-left embedding (U+202B … U+202C, each line of it): an Arabic
    title with an English term in brackets, ``المصدر (key)``, then reads right to left
    whatever the direction of the page around the chart, its brackets in place. Only titles:
    the traces (the model's tokens, the numbers) are shared, not copied or changed.

    Examples
    --------
    >>> fig = right_to_left(freeze(go.Figure(layout=dict(title="المصدر (key)",
    ...                                                   xaxis_title="source (key)"))))
    >>> [fig.to_dict()["layout"][k]["title"]["text"] if k != "title" else
    ...  fig.to_dict()["layout"]["title"]["text"] for k in ("title", "xaxis")]
    ['\\u202bالمصدر (key)\\u202c', 'source (key)']
    """
    spec = fig.to_dict()

    def embed(text):
        if not isinstance(text, str) or not _RTL_LETTER.search(text):
            return text
        return "<br>".join(f"\u202b{line}\u202c" if _RTL_LETTER.search(line) else line
                           for line in text.split("<br>"))

    def titled(value):
        if isinstance(value, dict):
            return {k: (titled(v) if k != "text" else embed(v)) for k, v in value.items()}
        return value

    def walk(layout: dict) -> dict:
        out = {}
        for key, value in layout.items():
            if key == "title":
                out[key] = titled(value) if isinstance(value, dict) else embed(value)
            elif key == "annotations" and isinstance(value, (list, tuple)):
                out[key] = [dict(a, text=embed(a.get("text"))) if isinstance(a, dict) else a
                            for a in value]
            elif isinstance(value, dict) and key != "template":
                out[key] = walk(value)
            else:
                out[key] = value
        return out

    data = [dict(t, colorbar=walk(t["colorbar"])) if isinstance(t, dict)
            and isinstance(t.get("colorbar"), dict) else t for t in spec.get("data", [])]
    return FrozenFigure({**spec, "data": data, "layout": walk(dict(spec.get("layout", {})))})
