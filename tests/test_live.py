"""xattn/live: a class's step made with no page. What a page shows while a step's weights are
made is a callback (`Shown`, `Progress`); without one, the same weights come silently."""

from __future__ import annotations

import contextlib
import threading

import numpy as np
import pytest

from xattn.lesson import DEFAULT, LESSONS, read_lesson
from xattn.live import models
from xattn.live.link import lesson_setting
from xattn.live.prepared import Shown, StepUnavailable, prepared_attention
from xattn.live.process import clear_all, process_wide
from xattn.live.training import Progress

SHIPPED = read_lesson((LESSONS / f"{DEFAULT}.toml").read_bytes(), DEFAULT, page=lesson_setting)


def step_of(weights: str):
    return next(s for s in SHIPPED.steps if s.state.get("weights") == weights)


class Bar:
    """A page's progress bar: records what it is told."""

    def __init__(self):
        self.texts = []

    def progress(self, value, text=""):
        self.texts.append(text)
        return self                  # the element later steps update, as Streamlit's slot

    def empty(self):
        self.texts.append("emptied")


def test_a_model_step_loads_through_the_pages_callback_and_gives_the_same_weights():
    asked = []

    def load(name):
        asked.append(name)
        return models.loaded_model(name)

    shown = Shown(model=load, training=lambda: pytest.fail("a model step trained"))
    a = prepared_attention(step_of("model"), shown=shown)
    assert asked == ["toy-en-fr"]
    silent = prepared_attention(step_of("model"))
    np.testing.assert_array_equal(a.layer(0), silent.layer(0))


def test_a_trained_step_draws_its_training_in_the_pages_progress_once():
    clear_all()                               # no stored run: this call trains
    bar, curves = Bar(), []
    shown = Shown(model=lambda name: pytest.fail("a trained step loaded a model"),
                  training=lambda: Progress(bar=bar, curve=lambda *args: curves.append(args),
                                            shared=contextlib.nullcontext))
    a = prepared_attention(step_of("trained"), shown=shown)
    assert bar.texts[0] == "Training…" and bar.texts[-1] == "emptied" and curves
    losses, step, steps = curves[-1]
    assert step == steps == len(losses)
    again = Bar()                             # stored now: nothing to show
    shown = Shown(model=pytest.fail, training=lambda: Progress(again, print, print))
    b = prepared_attention(step_of("trained"), shown=shown)
    assert again.texts == [] and np.array_equal(a.layer(0), b.layer(0))


def test_a_model_that_cannot_load_is_one_line():
    shown = Shown(model=lambda name: "its files are gone.", training=pytest.fail)
    with pytest.raises(StepUnavailable, match="cannot be used: its files are gone"):
        prepared_attention(step_of("model"), shown=shown)


def test_a_process_wide_value_is_made_once_for_threads_at_once():
    made = []

    @process_wide()
    def slow(n):
        made.append(n)
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(slow(1))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert made == [1] and len({id(g) for g in got}) == 1


@pytest.mark.parametrize("bad", [0, -1, True, 2.5, "3"])
def test_a_bound_that_is_not_a_whole_number_is_refused(bad):
    with pytest.raises(ValueError, match=f"max_entries must be a whole number >= 1 or None; "
                                         f"received {bad!r}"):
        process_wide(max_entries=bad)
