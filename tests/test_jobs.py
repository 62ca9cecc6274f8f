"""Each head's job (``xattn.jobs``): every measure re-derived with plain loops, the job the
largest score, on the shipped model, the trained module and random weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xattn.jobs import CLOSE, JOBS, MAX_HEADS, head_jobs
from xattn.pipeline import Settings, run
from xattn.sources import random_attention


def shipped():
    from xattn.marian import cross_attention, load_marian
    from xattn.sources import model_attention

    model = load_marian()
    return model_attention(cross_attention(model, "the red cat sees the dog"), loaded=model)


def plain_measures(w: np.ndarray, src_tokens) -> tuple[float, float, float]:
    """Sink share, monotonicity and mean normalised entropy of one head (T, S), by loops."""
    sinks = [j for j, t in enumerate(src_tokens) if t in ("</s>", "<pad>", ".", ",", "!", "?")]
    sink = sum(sum(w[i, j] for j in sinks) for i in range(len(w))) / len(w)
    best = [int(np.argmax(row)) for row in w]
    mono = sum(b >= a for a, b in zip(best, best[1:], strict=False)) / (len(best) - 1)
    ent = [-sum(p * math.log(p) for p in row if p > 0) / math.log(len(row)) for row in w]
    return sink, mono, sum(ent) / len(ent)


def test_the_shipped_model_s_heads_by_hand():
    from xattn.alignlab import score_heads

    a = shipped()
    layer = a.n_layers - 1
    jobs = head_jobs(a, layer)
    aer = score_heads(a.heldout(False)).aer                                 # held-out gold
    assert [j.name for j in jobs] == [f"head {h + 1}" for h in range(a.n_heads)]
    for j in jobs:
        sink, mono, spread = plain_measures(a.layer(layer)[j.head], a.src_tokens)
        assert (j.sink, j.monotonicity, j.spread) == pytest.approx((sink, mono, spread),
                                                                  abs=1e-5)
        assert j.aligned == pytest.approx(1 - aer[layer, j.head]) and j.held_out
        scores = {"follows position": mono * (1 - spread), "aligns words": j.aligned,
                  "sink": sink, "spread out": spread}
        assert j.job == max(scores, key=scores.get)
        assert set(j.close) == {k for k, v in scores.items()
                                if k != j.job and v >= scores[j.job] - CLOSE}
    # The shipped model's last layer: the aligning head of its card, and a sink.
    assert {j.job for j in jobs} >= {"aligns words", "sink"}


def test_trained_weights_use_their_held_out_gold(trained):
    from xattn.alignment import evaluate
    from xattn.corpus import translate
    from xattn.sources import trained_attention

    a = trained_attention(evaluate(trained, 1.0), translate("the red cat sees the dog"))
    jobs = head_jobs(a)
    assert all(j.held_out and j.aligned is not None and j.sink == 0 for j in jobs)
    assert any(j.job == "aligns words" for j in jobs)


def test_random_weights_cannot_align_and_spread_out():
    a = random_attention(run(Settings(n_heads=16, d_model=64)))
    jobs = head_jobs(a)
    assert len(jobs) == MAX_HEADS                               # the first eight of sixteen
    assert all(j.aligned is None and j.job != "aligns words" for j in jobs)
    assert all(j.scores["aligns words"] < 0 for j in jobs)
    assert all(j.job in JOBS for j in jobs)
