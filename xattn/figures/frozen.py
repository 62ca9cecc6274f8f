"""A figure converted once, shown many times: what a server keeps for figures that recur.

A page that redraws the same figure on every rerun (a class clicking through the same
settings) pays each time for Plotly's object tree (``go.Figure(...)``), the deep copy in
``Figure.to_dict`` and the base64 encoding of its arrays: about 1.7 ms per small heatmap, most
of a rerun's server time. `freeze` does that work once and keeps the result, Plotly's own
dict with its arrays already encoded; `FrozenFigure` hands it to anything that asks a figure
for ``to_dict()`` (``st.plotly_chart`` does), in a microsecond.
"""

from __future__ import annotations

import plotly.graph_objects as go

from xattn.cache import nbytes

__all__ = ["FrozenFigure", "freeze"]


class FrozenFigure(go.Figure):
    """A read-only figure made from ``go.Figure.to_dict()``'s output.

    Only ``to_dict`` / ``to_plotly_json`` are meant to be used (that is what ``st.plotly_chart``
    and ``plotly.io.to_json`` call); the dict is shared, never modified. For anything else,
    ``go.Figure(frozen.to_dict())`` makes an ordinary figure.

    Examples
    --------
    >>> fig = freeze(go.Figure(go.Heatmap(z=[[0.25, 0.75]]), layout=dict(title="head 1")))
    >>> fig.to_dict()["data"][0]["type"], fig.to_dict()["layout"]["title"]["text"]
    ('heatmap', 'head 1')
    >>> go.Figure(fig.to_dict()).data[0].z
    ([0.25, 0.75],)
    """

    __slots__ = ()

    def __init__(self, spec: dict) -> None:      # noqa: D107 -- no Plotly object tree
        if not (isinstance(spec, dict) and isinstance(spec.get("data"), list)
                and isinstance(spec.get("layout", {}), dict)):
            raise TypeError("FrozenFigure expects go.Figure.to_dict()'s output, a dict with a "
                            f"list 'data'; received {type(spec).__name__}.")
        object.__setattr__(self, "_spec", spec)

    def to_dict(self) -> dict:
        return self._spec

    def to_plotly_json(self) -> dict:
        return self._spec

    @property
    def nbytes(self) -> int:
        """Memory held (``xattn.cache.nbytes`` of the dict), for byte-bounded caches."""
        return nbytes(self._spec)

    def __repr__(self) -> str:
        return f"FrozenFigure({len(self._spec['data'])} traces)"


def freeze(fig: go.Figure) -> FrozenFigure:
    """``fig`` converted once (``to_dict``: arrays encoded as Plotly's typed-array specs)."""
    return FrozenFigure(fig.to_dict())
