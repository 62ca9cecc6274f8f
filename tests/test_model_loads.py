"""A class opening a model link at once: one load per model, the others wait for it, and a
model whose first pass failed is never kept for the whole class.

Four students opening a ``weights=model`` link at the same moment used to load the model four
times at once (transformers models broke each other: "Tensor on device cpu is not on the
expected device meta"), and the broken model stayed cached until a restart. These drive
``xattn.live.models.loaded_model`` from several threads, as Streamlit's script threads do.
"""

from __future__ import annotations

import threading

import pytest

from xattn.encdec import SHIPPED_MODEL, EncoderDecoder
from xattn.live import models

STUDENTS = 4


@pytest.fixture
def no_models_yet():
    models._models.clear()
    yield
    models._models.clear()


def test_students_opening_a_model_at_once_share_one_load(no_models_yet, monkeypatch):
    looked = []                     # every look into the shared models, by any thread
    lock = threading.Lock()
    known, load = models._known, models._load

    def counted_known(name):
        with lock:
            looked.append(name)
        return known(name)

    loads = []

    def slow_load(name):
        loads.append(name)
        # The first load holds the others back until each of them has looked and found nothing
        # (STUDENTS first looks, plus this loader's second look under the lock): they all asked
        # while it was loading.
        assert wait_until(lambda: len(looked) >= STUDENTS + 1)
        return load(name)

    monkeypatch.setattr(models, "_known", counted_known)
    monkeypatch.setattr(models, "_load", slow_load)
    got = [None] * STUDENTS

    def student(k):
        got[k] = models.loaded_model(SHIPPED_MODEL)

    threads = [threading.Thread(target=student, args=(k,)) for k in range(STUDENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert loads == [SHIPPED_MODEL]                        # one load for the whole class
    assert all(isinstance(m, EncoderDecoder) for m in got)
    assert all(m is got[0] for m in got)                   # ... and every student has it


def test_a_model_whose_first_pass_fails_is_not_kept(no_models_yet, monkeypatch):
    real = models.cross_attention
    calls = []

    def first_pass_fails(*args, **kwargs):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("Tensor on device cpu is not on the expected device meta!")
        return real(*args, **kwargs)

    monkeypatch.setattr(models, "cross_attention", first_pass_fails)
    first = models.loaded_model(SHIPPED_MODEL)
    assert isinstance(first, str) and first.startswith("loading failed (RuntimeError: Tensor")
    assert not isinstance(models._models()[SHIPPED_MODEL], EncoderDecoder)
    # Within RETRY_AFTER the failure is said again at once, without a new load ...
    assert models.loaded_model(SHIPPED_MODEL) == first and len(calls) == 1
    # ... after it, the next student's visit loads the model afresh, and it works.
    monkeypatch.setattr(models, "RETRY_AFTER", -1.0)
    again = models.loaded_model(SHIPPED_MODEL)
    assert isinstance(again, EncoderDecoder) and len(calls) == 2
    assert models._models()[SHIPPED_MODEL] is again


def wait_until(condition, seconds: float = 60.0) -> bool:
    done = threading.Event()
    for _ in range(int(seconds / 0.01)):
        if condition():
            return True
        done.wait(0.01)
    return False
