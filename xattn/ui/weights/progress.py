"""What the page shows while the live core works: a training's bar and live loss curve in two
Streamlit slots and a spinner while the page waits for another student's run
(``xattn.live.training`` calls them back), and a model's load in a status box
(`page_shown`, for ``xattn.live.prepared``)."""

from __future__ import annotations

import streamlit as st

from xattn.figures import loss_figure
from xattn.live.prepared import Shown
from xattn.live.training import Progress
from xattn.ui.charts import show_chart
from xattn.ui.i18n import page_lang

__all__ = ["page_progress", "page_shown"]

SHARED = ("Another student asked for this very setting moments ago; waiting for that run "
          "(queued or training), which everyone shares…")


def page_progress(bar_slot, curve_slot) -> Progress:
    """The `Progress` drawn in ``bar_slot`` (a progress bar) and ``curve_slot`` (the curve),
    in the page's language (read here: the curve may be drawn from the training's thread)."""
    lang = page_lang()

    def curve(losses: list, step: int, steps: int) -> None:
        loss = losses[-1]
        show_chart(loss_figure(losses, steps, lang=lang), key=None, where=curve_slot,
                   name="training-loss",
                   toolbar=False,
                   alt=f"Training loss, live: step {step} of {steps}, loss {loss:.4f}")

    return Progress(bar=bar_slot, curve=curve, shared=lambda: st.spinner(SHARED))


def page_shown() -> Shown:
    """A lesson step's weights made on this page: a model's load in a status box, a training's
    progress in two new slots."""
    from xattn.ui.weights.models import loaded_model

    return Shown(model=loaded_model, training=lambda: page_progress(st.empty(), st.empty()))
