"""The Decode view's query: at step t, the new position's query in every head of a layer and
its scores against every source key, whose softmax is the step's cross-attention row."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart, decode, run_app

from xattn.decoding import decoded
from xattn.encdec import load_encdec

pytestmark = pytest.mark.usefixtures("fresh_cache")
SRC = "the red cat sees the dog"


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("forced", [(), ((2, "chien"),)])
def test_a_step_s_query_makes_the_row_the_decoder_made(forced):
    model = load_encdec()
    d = decoded(model, model.tokenizer.encode(SRC), forced)
    for layer in range(model.n_layers):
        trace = d.layer_trace(layer)
        # the teacher-forced trace of the decoded output, row t: step t of the decoding
        np.testing.assert_allclose(softmax(trace.scaled_scores).transpose(1, 0, 2),
                                   d.rows[:, layer], atol=1e-6)
        attn = model.decoder_layers[layer].encoder_attn
        x = model.forward(d_src(model), d_tgt(model, d), logits=False).cross_inputs[layer]
        q = (x @ attn.W_Q + attn.b_Q).reshape(len(d.tokens), model.n_heads, -1)
        np.testing.assert_allclose(trace.q.transpose(1, 0, 2), q, atol=1e-5)


def d_src(model):
    return model.tokenizer.encode(SRC)


def d_tgt(model, d):
    return [model.tokenizer.encoder[p] for p in d.tokens]


@pytest.mark.parametrize("reads", ["false", "true"])
def test_the_view_shows_the_query_whose_scores_make_the_row_shown(reads):
    at = run_app({"view": "Decode", "weights": "model", "dstep": "2", "reads": reads,
                  "layer": "1", "words": "false"})       # pieces: the scores' own columns
    assert not at.exception, at.exception
    step = 3 if reads == "true" else 2              # the row read at the step after, or this one
    rows = decode(chart(at, "decode_rows")["data"][0]["z"])           # (L*H, S)
    query = chart(at, "decode_query")
    scores = decode(chart(at, "decode_scores")["data"][0]["z"])       # (H, S)
    model = load_encdec()
    n_heads = model.n_heads
    np.testing.assert_allclose(softmax(scores.astype(np.float64)), rows[:n_heads], atol=1e-5)
    q = decode(query["data"][0]["z"])                                 # (H, d_head)
    assert q.shape == (n_heads, model.d_model // n_heads)
    assert f"Step {step}'s query in layer 1" in query["layout"]["title"]["text"]
    d = decoded(model, model.tokenizer.encode(SRC))
    np.testing.assert_allclose(q, d.layer_trace(0).q[:, step], atol=1e-6)
