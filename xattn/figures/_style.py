"""The look every figure shares: template, colours, token axes, layout.

Figures are built from plain dicts and ``go.Figure(..., _validate=False)``: Plotly's property
validation costs more than the maths on every click (150 ms for 16 heads of 64 x 64). Without
validation a template *name* would reach plotly.js as a bare string, which it ignores, so the
template object itself goes into every layout; it also makes figures look the same inside and
outside Streamlit (which changes Plotly's default template).
"""

from __future__ import annotations

import re

import plotly.colors
import plotly.graph_objects as go
import plotly.io as pio

from xattn._checks import check_tokens
from xattn.literal import plotly_text

__all__ = ["TEMPLATE", "COLORSCALE", "COLOR_STOPS", "OUTPUT_COLORSCALE", "MASK_COLOUR",
           "GOLD_COLOUR", "HIGHLIGHT", "ACCENT", "OKABE_ITO", "DASHES", "TICK_CHARS", "axis_labels",
           "tick_font", "category_axis", "base_layout", "subplot_ref"]


def _slim(name: str, traces: tuple[str, ...], drop: tuple[str, ...]) -> go.layout.Template:
    """Plotly's template ``name`` with only what these figures use: its defaults for the trace
    types drawn here, its layout without the polar, ternary, 3-D and map parts. Every figure
    carries its template (see above), and the full one is 7 kB of JSON, most of a small
    heatmap's, built, copied and sent with every chart; this one is about 1.5 kB."""
    full = pio.templates[name].to_plotly_json()
    data = {t: full["data"][t] for t in traces}
    layout = {k: v for k, v in full["layout"].items() if k not in drop}
    return go.layout.Template(data=data, layout=layout)


TEMPLATE = _slim("plotly_white", ("heatmap", "scatter", "bar"),
                 ("polar", "ternary", "scene", "geo", "colorscale"))
COLORSCALE = "Viridis"            # perceptually uniform and colour-blind safe: the weights
COLOR_STOPS = tuple(plotly.colors.sequential.Viridis)   # its colours, low to high (a legend)
OUTPUT_COLORSCALE = "Cividis"     # the same for signed values (the output representation)
MASK_COLOUR = "rgba(190, 190, 190, 0.95)"
GOLD_COLOUR = "#ff2d55"           # gold-alignment outlines: stands out on every viridis colour
HIGHLIGHT = "#ff7f0e"             # the selected row or column
ACCENT = "#3b528b"                # single-series bars and lines (viridis' blue)
# Okabe & Ito (2008), colour-blind safe; yellow and black last (weak on white / reads as text).
OKABE_ITO = ("#E69F00", "#56B4E9", "#009E73", "#D55E00", "#0072B2", "#CC79A7", "#F0E442",
             "#000000")
DASHES = ("solid", "dash", "dot")  # heads 9-16 dashed, 17-24 dotted: colours repeat after 8
TICK_CHARS = 16                   # longer tokens are cut on the axis; hover shows them whole


def axis_labels(tokens) -> tuple[list[str], list[str]]:
    """Category names and tick texts for a token axis.

    Categories are ``"position: token"`` (unique, so a repeated word keeps its own row or
    column; shown whole in hover); tick texts are the token alone, cut to `TICK_CHARS`. Both
    are literal text for Plotly (`xattn.literal.plotly_text`).

    Examples
    --------
    >>> categories, ticks = axis_labels(["<s>", "the", "x" * 20])
    >>> categories[0], ticks
    ('0: &lt;s&gt;', ['&lt;s&gt;', 'the', 'xxxxxxxxxxxxxxx…'])
    """
    tokens = check_tokens(tokens, None, "tokens")
    categories = [f"{i}: {plotly_text(t)}" for i, t in enumerate(tokens)]
    ticks = [plotly_text(t if len(t) <= TICK_CHARS else t[: TICK_CHARS - 1] + "…")
             for t in tokens]
    return categories, ticks


def tick_font(n_tokens: int, scale: float = 1.0) -> int:
    """Tick label size: smaller as the axis holds more tokens (12, 10 or 9 px), times ``scale``."""
    size = 12 if n_tokens <= 16 else 10 if n_tokens <= 40 else 9
    return round(size * scale)


def category_axis(labels: tuple[list[str], list[str]], *, title: str | None = None,
                  reverse: bool = False, angle: int | None = None, font: int = 12,
                  **extra) -> dict:
    """A categorical axis of tokens: every category in order, ticks from `axis_labels`."""
    categories, ticks = labels
    axis = dict(type="category", tickmode="array", tickvals=categories, ticktext=ticks,
                tickfont=dict(size=font), showgrid=False, **extra)
    if title:
        axis["title"] = dict(text=title, font=dict(size=max(12, font)))
    if reverse:
        axis["autorange"] = "reversed"
    if angle is not None:
        axis["tickangle"] = angle
    return axis


def subplot_ref(k: int, letter: str) -> str:
    """How a trace names the axis of subplot ``k`` (0-based): ``x``, ``x2``, ...; its layout
    key is the same with "axis" inserted (``xaxis``, ``xaxis2``)."""
    return letter + ("" if k == 0 else str(k + 1))


def bottom_legend(**extra) -> dict:
    """A horizontal legend at the bottom of the figure (``yref="container"``): Plotly reserves
    its height below the x axis title, however many rows it wraps into on a narrow screen, so
    the two never overlap (a legend at a paper ``y`` below the plot does on a phone)."""
    return dict(orientation="h", yref="container", y=0, yanchor="bottom", x=0,
                xanchor="left", **extra)


_AXIS = re.compile(r"[xy]axis[0-9]*")


def _plain(part) -> dict:
    """A layout part (a dict, a Plotly object, a title's text or None) as a new dict."""
    if isinstance(part, str):
        return {"text": part}
    return dict(part.to_plotly_json() if hasattr(part, "to_plotly_json") else part or {})


def _sized(part, key: str, size: int) -> dict:
    """``part`` with its ``key`` font ``size`` px unless it says its own."""
    out = _plain(part)
    out[key] = {"size": size, **_plain(out.get(key))}
    return out


def base_layout(title: str | None, height: int, *, top: int = 40, font_scale: float = 1.0,
                **extra) -> dict:
    """The layout every figure starts from. ``title`` is trusted text (never a raw token)."""
    layout = dict(template=TEMPLATE, height=int(height),
                  margin=dict(l=10, r=10, t=top, b=10),
                  font=dict(size=round(12 * font_scale)),
                  hoverlabel=dict(font=dict(family="monospace")))
    if title:
        layout["title"] = dict(text=title, x=0.01, xanchor="left",
                               font=dict(size=round(15 * font_scale)))
    # Streamlit's chart theme draws tick labels and legends at 12 px whatever the layout's
    # font: each says its own size (what ``extra`` says itself is kept)
    size = round(12 * font_scale)
    for name in ("xaxis", "yaxis", *(k for k in extra if _AXIS.fullmatch(k))):
        extra[name] = _sized(extra.get(name), "tickfont", size)
    if extra.get("legend"):
        legend = _sized(extra["legend"], "font", size)
        if legend.get("title"):
            legend["title"] = _sized(legend["title"], "font", size)
        extra["legend"] = legend
    layout.update(extra)
    return layout
