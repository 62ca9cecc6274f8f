"""Figures of what changes a model's next word (``xattn.encdec.effects``): attention beside the
measured effect of masking each source word and of switching each head off, and the logit
lens (what each decoder layer would predict)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from xattn.figures._style import (
    ACCENT,
    OKABE_ITO,
    axis_labels,
    base_layout,
    bottom_legend,
    category_axis,
    tick_font,
)
from xattn.figures.words import chart_words
from xattn.literal import plotly_text

__all__ = ["effects_figure", "head_effects_figure", "lens_figure"]

WEIGHT_COLOUR = ACCENT            # attention: viridis' blue
EFFECT_COLOUR = OKABE_ITO[3]      # the measured effect: vermilion (colour-blind safe pair)


def _bars(x, values, name: str, colour: str, hover: str) -> dict:
    return dict(type="bar", x=x, y=np.asarray(values, np.float64), name=name,
                marker=dict(color=colour), hovertemplate=hover)


def effects_figure(effects, layer: int, *, font_scale: float = 1.0,
                   lang: str = "en") -> go.Figure:
    """Per source word: the target word's attention in ``layer`` (heads averaged) beside the
    drop in the word's probability when that source word is masked from the cross-attention.

    Parameters
    ----------
    effects : xattn.encdec.effects.Effects
    layer : int
        The layer whose heads' average is drawn (from 0).
    lang : str, default "en"
        The language of the chart's words (the model's words stay as they are).
    """
    tr = chart_words(lang)
    x, x_text = labels = axis_labels(effects.src_words)
    attention = effects.attention[layer].mean(axis=0)                       # (S,)
    word = plotly_text(effects.tgt_words[effects.row])
    font = tick_font(len(x), font_scale)
    traces = [_bars(x, attention, tr("attention (layer {l}, heads averaged)", l=layer + 1),
                    WEIGHT_COLOUR, f"%{{x}}<br>{tr('weight')} %{{y:.3f}}<extra></extra>"),
              _bars(x, effects.drop, tr("drop in p({word}) when masked", word=word),
                    EFFECT_COLOUR, f"%{{x}} {tr('masked')}<br>{tr('probability drops by')} "
                                   "%{y:.3f}<extra></extra>")]
    layout = base_layout(tr("Looked at, and needed: {word}", word=word),
                         round(330 * font_scale), top=round(45 * font_scale),
                         font_scale=font_scale, barmode="group",
                         xaxis=category_axis(labels, title=tr("source word"), angle=-45,
                                             font=font),
                         yaxis=dict(range=[min(0.0, float(np.min(effects.drop))) - 0.02, 1.02],
                                    title=dict(text=tr("weight / drop"))),
                         legend=bottom_legend())
    return go.Figure(data=traces, layout=layout, _validate=False)


def head_effects_figure(effects, *, font_scale: float = 1.0, lang: str = "en") -> go.Figure:
    """Per head: its weight on the source word whose masking matters most, beside the drop
    in the target word's probability when the head is switched off (``lang``: the language
    of its words)."""
    tr = chart_words(lang)
    n_layers, n_heads, _ = effects.attention.shape
    x = [tr("L{l} h{h}", l=layer + 1, h=h + 1) for layer in range(n_layers) for h in range(n_heads)]
    key = int(np.argmax(effects.drop))
    src = plotly_text(effects.src_words[key])
    word = plotly_text(effects.tgt_words[effects.row])
    traces = [_bars(x, effects.attention[..., key].ravel(),
                    tr("the head's weight on {word}", word=src), WEIGHT_COLOUR,
                    f"%{{x}}<br>{tr('weight')} %{{y:.3f}}<extra></extra>"),
              _bars(x, effects.head_drop.ravel(), tr("drop in p({word}) when switched off",
                                                     word=word),
                    EFFECT_COLOUR, f"%{{x}} {tr('off')}<br>{tr('probability drops by')} "
                                   "%{y:.3f}<extra></extra>")]
    layout = base_layout(tr("Each head: its weight, the cost if off"),
                         round(330 * font_scale), top=round(45 * font_scale),
                         font_scale=font_scale, barmode="group",
                         xaxis=dict(type="category", title=dict(text=tr("layer and head")),
                                    tickangle=-45 if len(x) > 8 else 0,
                                    tickfont=dict(size=tick_font(len(x), font_scale))),
                         yaxis=dict(range=[min(0.0, float(np.min(effects.head_drop))) - 0.02,
                                           1.02], title=dict(text=tr("weight / drop"))),
                         legend=bottom_legend())
    return go.Figure(data=traces, layout=layout, _validate=False)


def lens_figure(lens, step: int, token: str, *, font_scale: float = 1.0,
                lang: str = "en") -> go.Figure:
    """At decoder step ``step``: each layer's probability of the token the model produced
    (``token``); each layer's label says what that layer alone would have chosen.

    Parameters
    ----------
    lens : xattn.encdec.effects.LogitLens
    lang : str, default "en"
        The language of the chart's words (the tokens stay as they are).
    """
    tr = chart_words(lang)
    n_layers = lens.chosen.shape[0]
    p = lens.chosen[:, step].astype(np.float64)
    y = [f"{tr('layer {l}', l=layer + 1)}: {plotly_text(str(lens.top_tokens[layer, step, 0]))} "
         f"{lens.top_probs[layer, step, 0]:.0%}" for layer in range(n_layers)]
    bar = dict(type="bar", orientation="h", x=p, y=y, text=[f"{v:.0%}" for v in p],
               textangle=0, textposition=["inside" if v >= 0.25 else "outside" for v in p],
               insidetextanchor="end", constraintext="none", cliponaxis=False,
               insidetextfont=dict(color="#ffffff"), marker=dict(color=ACCENT),
               hovertemplate="%{y}<br>p(" + plotly_text(token) + ") = %{x:.3f}<extra></extra>")
    layout = base_layout(tr("Each layer's guess: p({token})", token=plotly_text(token)),
                         round((90 + 44 * n_layers) * font_scale), top=round(40 * font_scale),
                         font_scale=font_scale,
                         margin=dict(l=10, r=round(24 * font_scale), t=round(40 * font_scale),
                                     b=10),
                         xaxis=dict(range=[0, 1.02], tickformat=".0%",
                                    title=dict(text=tr("p(the token produced)"))),
                         yaxis=dict(type="category", autorange="reversed",
                                    tickfont=dict(size=tick_font(n_layers, font_scale))))
    return go.Figure(data=[bar], layout=layout, _validate=False)
