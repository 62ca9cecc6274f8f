"""Figures of training as a time-lapse (``xattn.timelapse``): curves over the run, and every
head's weights on the probe pair as an animation for the standalone export."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import ACCENT, OKABE_ITO, base_layout, bottom_legend
from xattn.figures.heads import per_head_figure
from xattn.figures.words import chart_words

__all__ = ["run_curves_figure", "head_curves_figure", "timelapse_animation"]


def _marker(step: int) -> dict:
    return dict(type="line", x0=step, x1=step, yref="paper", y0=0, y1=1,
                line=dict(color="#555555", dash="dot", width=1.5))


def run_curves_figure(tl, current: int | None = None, *, font_scale: float = 1.0,
                      lang: str = "en") -> go.Figure:
    """The held-out loss (log scale, left) and the share of held-out words aligned (right)
    at every snapshot; a dotted line at the step ``current`` (an Adam step); ``font_scale``
    enlarges the text (presenter mode); ``lang``: the language of its words."""
    tr = chart_words(lang)
    steps = tl.steps.tolist()
    traces = [dict(type="scatter", mode="lines+markers", x=steps, y=tl.loss,
                   name=tr("held-out loss"), line=dict(color=ACCENT),
                   hovertemplate=f"{tr('step')} %{{x}}<br>{tr('loss')} %{{y:.4f}}"
                                 "<extra></extra>"),
              dict(type="scatter", mode="lines+markers", x=steps, y=tl.word_accuracy,
                   yaxis="y2", name=tr("held-out words aligned"),
                   line=dict(color=OKABE_ITO[3], dash="dash"),
                   hovertemplate=f"{tr('step')} %{{x}}<br>%{{y:.0%}} {tr('aligned')}"
                                 "<extra></extra>")]
    layout = base_layout(tr("The run: loss and words aligned"), round(300 * font_scale),
                         top=round(50 * font_scale), font_scale=font_scale,
                         xaxis=dict(title=dict(text=tr("training step (Adam update)"))),
                         yaxis=dict(title=dict(text=tr("held-out loss")), type="log", dtick=1),
                         yaxis2=dict(title=dict(text=tr("words aligned")), overlaying="y",
                                     side="right", range=[0, 1.02], tickformat=".0%",
                                     tickmode="array", tickvals=[0, 0.25, 0.5, 0.75, 1],
                                     showgrid=False, automargin=True),
                         legend=bottom_legend(),
                         shapes=[_marker(current)] if current is not None else [])
    return go.Figure(data=traces, layout=layout, _validate=False)


def head_curves_figure(tl, current: int | None = None, *, font_scale: float = 1.0,
                       lang: str = "en") -> go.Figure:
    """Per head, over the run: accuracy on *moved* words (the swapped noun and adjective,
    which only meaning finds; solid) and on *repeated* words (the right one of two "the",
    which only position finds; dashed). One legend entry per head (it shows and hides both of
    the head's lines); the legend's title says which line is which. ``lang``: the
    language of its words."""
    tr = chart_words(lang)
    steps = tl.steps.tolist()
    moved, repeated = tl.by_head["moved_accuracy"], tl.by_head["repeated_accuracy"]
    traces = []
    for h in range(moved.shape[1]):
        colour = OKABE_ITO[h % len(OKABE_ITO)]
        name = tr("head {h}", h=h + 1)
        for values, what, dash in ((moved, tr("meaning (moved words)"), "solid"),
                                   (repeated, tr("position (repeated words)"), "dash")):
            traces.append(dict(type="scatter", mode="lines", x=steps, y=values[:, h],
                               name=name, legendgroup=f"head {h + 1}",
                               showlegend=dash == "solid",
                               line=dict(color=colour, dash=dash, width=2),
                               hovertemplate=f"{name}, {what}<br>{tr('step')} %{{x}}: "
                                             "%{y:.0%}<extra></extra>"))
    layout = base_layout(tr("Each head: by meaning or by position?"), round(340 * font_scale),
                         top=round(50 * font_scale), font_scale=font_scale,
                         xaxis=dict(title=dict(text=tr("training step (Adam update)"))),
                         yaxis=dict(title=dict(text=tr("held-out accuracy")), range=[0, 1.02],
                                    tickformat=".0%"),
                         legend=bottom_legend(font=dict(size=round(11 * font_scale)),
                                              tracegroupgap=0, title=dict(
                             text=tr("solid: by meaning · dashed: by position"), side="top")),
                         shapes=[_marker(current)] if current is not None else [])
    return go.Figure(data=traces, layout=layout, _validate=False)


def timelapse_animation(tl, *, lang: str = "en") -> go.Figure:
    """Every head's weights on the probe pair, one frame per snapshot, with a play button and
    a slider (for the standalone HTML export, where Plotly animates offline); ``lang``: the
    language of its words."""
    tr = chart_words(lang)
    src, tgt = list(tl.probe.source), list(tl.probe.target)
    fig = per_head_figure(tl.weights[-1], src, tgt, max_cols=4, gold=tl.probe.alignment_matrix(),
                          title=tr("Training, step by step: every head on the probe pair"),
                          lang=lang)
    n_heads = tl.weights.shape[1]
    names = [tr("step {s}", s=s) for s in tl.steps.tolist()]
    frames = [dict(name=name, data=[dict(type="heatmap", z=np.asarray(w[h], np.float32))
                                    for h in range(n_heads)], traces=list(range(n_heads)))
              for name, w in zip(names, tl.weights, strict=True)]
    slider = dict(active=len(frames) - 1, currentvalue=dict(prefix=tr("training") + " "),
                  pad=dict(t=40),
                  steps=[dict(label=name, method="animate",
                              args=[[name], dict(mode="immediate", frame=dict(duration=0,
                                                                              redraw=True))])
                         for name in names])
    play = dict(type="buttons", showactive=False, x=0, y=-0.08, xanchor="left",
                buttons=[dict(label=tr("Play"), method="animate",
                              args=[None, dict(frame=dict(duration=600, redraw=True),
                                               fromcurrent=False, transition=dict(duration=0))])])
    fig.update(frames=frames)
    fig.update_layout(sliders=[slider], updatemenus=[play],
                      height=fig.layout.height + 120, margin=dict(b=120))
    return fig
