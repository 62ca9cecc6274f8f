"""The class's misconception histogram: for each named misconception whose answer the step
has, the share of the class that gave it (``xattn.lesson.misconceptions.class_misconceptions``).

One horizontal bar per misconception, its name on the axis (trusted text: the names are the
library's, never a sentence's) and its share and count as the bar's text, so the chart reads
without colour.
"""

from __future__ import annotations

import plotly.graph_objects as go

from xattn.figures._style import ACCENT, base_layout
from xattn.figures.words import N_, chart_words

__all__ = ["misconceptions_figure", "ALT"]

ALT = N_("Horizontal bar chart: for each named misconception whose answer this step has, the "
         "share of the class whose prediction was that answer.")


def _wrapped(name: str, width: int) -> str:
    """A misconception's name (the library's own text) on lines of about ``width``."""
    lines = [""]
    for word in name.split(" "):
        if lines[-1] and len(lines[-1]) + 1 + len(word) > width:
            lines.append(word)
        else:
            lines[-1] = f"{lines[-1]} {word}".strip()
    return "<br>".join(lines)


def misconceptions_figure(shares, *, font_scale: float = 1.0,
                          label_chars: int = 40, lang: str = "en") -> go.Figure:
    """Bars of ``shares`` (``Share`` records, most given first: drawn top down).

    Parameters
    ----------
    shares : list of xattn.lesson.misconceptions.Share
    label_chars : int
        The names wrap at spaces to lines of about this many characters (a narrow column:
        fewer).
    lang : str, default "en"
        The language of the chart's words (the names are said by their caller).
    """
    tr = chart_words(lang)
    shown = list(reversed(shares))                      # a horizontal bar chart draws upwards
    y = [_wrapped(s.distractor.name, label_chars) for s in shown]
    x = [100 * s.share for s in shown]
    answered = shares[0].answered if shares else 0
    bar = dict(type="bar", orientation="h", x=x, y=y, marker=dict(color=ACCENT),
               text=[f"{s.share:.0%} ({s.count})" for s in shown], textposition="outside",
               cliponaxis=False, hovertemplate="%{y}: %{x:.0f} %<extra></extra>")
    row = round((34 if label_chars >= 40 else 48) * font_scale)       # px a bar (its lines)
    layout = base_layout(tr.plural("Why were they wrong? ({n} answer)",
                                   "Why were they wrong? ({n} answers)", answered),
                         90 + row * max(1, len(y)), font_scale=font_scale,
                         xaxis=dict(title=dict(text=tr("% of the class")), range=[0, 119],
                                    ticksuffix=" %"),
                         yaxis=dict(automargin=True))
    return go.Figure(data=[bar], layout=layout, _validate=False)
