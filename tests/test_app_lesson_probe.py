"""Lesson steps 12 and 13 on the page, alone (no room): label each head and see the verdict
beside the measures; tap the source word whose masking matters and see the charts of the
measured effect. And the logit lens in Decode."""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import chart, decode, run_app

from xattn.jobs import head_jobs

pytestmark = pytest.mark.usefixtures("fresh_cache")


def pills(at, key: str):
    return next(w for w in at.get("button_group") if w.key == key)


def answer_text(at) -> str:
    box = next(e for e in at.expander if e.label.startswith("Show the answer"))
    return "\n".join(m.value for m in box.markdown)


def test_label_each_head_then_the_measures_decide():
    from test_lesson import shipped_attention

    at = run_app({"view": "Lesson", "lesson": "12"})
    assert not at.exception, at.exception
    a = shipped_attention()
    jobs = head_jobs(a, a.n_layers - 1)                       # the step opens the last layer
    assert [w.key for w in at.get("button_group")] == [f"predict_part_{k}"
                                                       for k in range(len(jobs))]
    assert "What is the job of each of the four heads of layer 2?" in \
        " ".join(m.value for m in at.markdown)
    wrong = next(j for j in ("spread out", "sink") if j != jobs[1].job and
                 j not in jobs[1].close)
    pills(at, "predict_part_0").set_value(jobs[0].job).run()
    pills(at, "predict_part_1").set_value(wrong).run()
    assert not at.exception, at.exception
    text = answer_text(at)
    assert text.startswith("**1 of 2 right** (2 not guessed): head 2: you said "
                           f"`{wrong}`, the measures say `{jobs[1].job}`.")
    assert f"| head 1 | {jobs[0].scores['sink']:.2f} |".replace("-", "−") in text
    at.button(key="lesson_next").click().run()                     # a new step: new picks
    at.button(key="lesson_prev").click().run()
    assert pills(at, "predict_part_0").value is None and not at.exception


def test_tap_the_word_whose_masking_matters_then_see_the_effect():
    at = run_app({"view": "Lesson", "lesson": "13"})
    assert not at.exception, at.exception
    assert at.query_params.get("dstep") in (None, "1", ["1"]) and \
        at.session_state["dstep"] == 1                       # Decode at the step of `chat`
    predict = pills(at, "predict")
    predict.set_value(6).run()                                # `</s>`: where the heads look
    text = answer_text(at)
    assert text.startswith("**Not this time**: you chose `</s>`; the page shows `cat`.")
    assert "**They disagree**" in text
    drop = chart(at, "lesson_answer_chart_0")["data"][1]
    assert drop["name"].startswith("drop in p(chat)")
    y = decode(drop["y"])
    assert int(np.argmax(y)) == 2 and y[6] < 0.05
    heads = chart(at, "lesson_answer_chart_1")["data"]
    assert len(decode(heads[1]["y"])) == 8                      # every layer's heads


def test_decode_shows_each_layer_s_guess():
    from xattn.encdec import load_encdec
    from xattn.encdec.effects import logit_lens

    model = load_encdec()
    src = model.tokenizer.encode("the red cat sees the dog")
    tgt = model.tokenizer.encode("le chat rouge voit le chien", side="target")
    lens = logit_lens(model, src, tgt)
    at = run_app({"weights": "model", "view": "Decode", "dstep": "1"})
    assert not at.exception, at.exception
    bars = chart(at, "decode_lens")["data"][0]
    np.testing.assert_allclose(decode(bars["x"]), lens.chosen[:, 1], atol=1e-6)
    assert bars["y"][-1].startswith(f"layer {model.n_layers}: ▁chat")
    assert any("logit lens" in c.value for c in at.caption)


def test_step_10_s_answer_follows_the_link_rule_chosen_on_the_page():
    """Issue 44, F6: the lecturer picks *intersection* in the Alignment view's sidebar; the
    answer's AERs, its words and its chart are those of that rule (they kept the step's
    `target_argmax`: chart 0.000, answer 0.002)."""
    from test_lesson import shipped_attention

    from xattn.alignlab import score_heads

    at = run_app({"view": "Lesson", "lesson": "10"})
    assert at.selectbox(key="links").value == "target_argmax"
    at.selectbox(key="links").set_value("intersection").run()
    assert not at.exception, at.exception
    text = answer_text(at)
    scores = score_heads(shipped_attention().heldout(False), method="intersection")
    aers = ", ".join(f"layer {k + 1}: {v:.3f}" for k, v in enumerate(scores.layer_aer))
    assert f"has AER {aers} (lower is better; links: links that are the strongest both " \
           "ways)" in text
    (heatmap,) = chart(at, "lesson_answer_chart_0")["data"]      # layer × (heads, average)
    np.testing.assert_allclose(decode(heatmap["z"])[:, -1], scores.layer_aer, atol=1e-6)
