"""A lesson step's prepared page, computed apart from any page: the weights a class's room
asks about, and the question of every step on them.

A room's questions are made when it opens (``lesson_questions``), and each student's page
draws the same step on the same weights (``xattn.ui.answers.class_step``), so both read
``prepared_attention``: the step's own settings, everything else at its default.
"""

from __future__ import annotations

import streamlit as st

from xattn.classroom import NO_QUESTION, Question
from xattn.corpus import translate
from xattn.lesson import STEPS, Step
from xattn.pipeline import Settings
from xattn.sources import Attention, random_attention, trained_attention
from xattn.train import TrainConfig
from xattn.ui.compute import cached_run
from xattn.ui.link import TR_SRC, parse_label
from xattn.ui.training_runs import obtain

__all__ = ["prepared_attention", "lesson_questions"]


def prepared_attention(step: Step, *, show: bool = True) -> Attention:
    """The weights of ``step``'s prepared page (its own settings, everything else default):
    what a class's room asks about before the host opens the step. ``show``: the page's run
    shows a model loading or a training's progress (False: the server's own threads, where
    there is no page to show it on)."""
    s = step.state
    if s.get("weights") == "model":
        from xattn.marian import SHIPPED_MODEL
        from xattn.sources import model_attention
        from xattn.ui.models import TOY_PAIR, attention_of, loaded_model

        model = loaded_model(SHIPPED_MODEL, show=show)
        return model_attention(attention_of(model, s.get("src", TOY_PAIR[0]),
                                            s.get("tgt") or None, True), loaded=model)
    if s.get("weights") == "trained":
        if show:
            bar, curve = st.empty(), st.empty()
            run, _ = obtain(TrainConfig(), bar, curve)
            bar.empty(), curve.empty()
        else:
            run, _ = obtain(TrainConfig(), None, None)
        return trained_attention(run, translate(TR_SRC.default))
    settings = Settings(d_model=s.get("d_model", 32), n_heads=s.get("heads", 4),
                        mask_mode=s.get("mask", "none"), wait_k=s.get("k", 3),
                        padded=tuple(parse_label(p)[0] for p in s.get("pad", ())))
    return random_attention(cached_run(settings), cached_run)


def lesson_questions() -> list[Question]:
    """The question of every step on its prepared page, for a new room."""
    slot = st.empty()            # loading a model or training draws here: cleared after
    with slot.container(), st.spinner("Starting the class…"):
        questions = [_question(step, prepared_attention(step)) for step in STEPS]
    slot.empty()
    return questions


def _question(step: Step, a: Attention) -> Question:
    """What a room asks on ``step``: its question on the layer its page shows."""
    return step.tell(a, step.layer(a.n_layers)).question or NO_QUESTION
