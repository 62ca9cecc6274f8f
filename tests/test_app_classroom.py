"""The classroom under AppTest: lesson steps from their links, long sentences, sharing,
presenter mode, and the trial's findings each pinned."""

import numpy as np
import pytest
from apptest_helpers import (
    chart,
    heads_chart,
    messages,
    per_head_z,
    run_app,
)

from xattn.lesson import STEPS

pytestmark = pytest.mark.usefixtures("fresh_cache")

LONG = " ".join(f"w{i}" for i in range(40))


def prediction_widget(at):
    """The step's prediction (a row of pills or a number box keyed ``predict``, or the first
    of several keyed ``predict_part_*``: each head's job), or None."""
    for kind in ("button_group", "number_input"):
        found = [w for w in at.get(kind) if str(getattr(w, "key", "")).startswith("predict")]
        if found:
            return found[0]
    return None


@pytest.mark.parametrize("n", range(1, len(STEPS) + 1))
def test_every_lesson_step_opens_from_its_link_prepared_with_its_question(n):
    at = run_app({"view": "Lesson", "lesson": str(n)})
    assert not at.exception, at.exception
    step = STEPS[n - 1]
    texts = " ".join(m.value for m in at.markdown)
    question = step.question.split("«")[0]                   # before the words it fills in
    assert f"Step {n} of {len(STEPS)}: {step.title}" in texts and question in texts
    assert "«" not in texts                                   # every field filled
    answer = next(e for e in at.expander if e.label.startswith("Show the answer"))
    assert answer.markdown[0].value                           # computed, not empty
    assert prediction_widget(at) is not None                  # predict, then see
    for key, value in step.state.items():
        if key != "view":
            shown = at.session_state[key]
            assert (tuple(shown) if isinstance(shown, list) else shown) == value, key


def test_next_prepares_the_next_step_and_leaving_keeps_the_state():
    at = run_app({"view": "Lesson", "lesson": "4"})
    assert at.radio(key="mask").value == "wait-k"
    at.button(key="lesson_next").click().run()
    assert at.session_state["lesson"] == 5 and at.select_slider(key="heads").value == 8
    assert at.radio(key="mask").value == "none"              # step 5's own state
    at.number_input(key="seed").set_value(3).run()           # the class explores
    assert at.session_state["seed"] == 3 and at.session_state["lesson"] == 5


def test_a_shared_lesson_link_with_settings_keeps_them():
    at = run_app({"view": "Lesson", "lesson": "5", "heads": "8", "seed": "3"})
    assert at.number_input(key="seed").value == 3


def test_long_sentences_page_the_heads_and_scale_to_the_maximum():
    at = run_app({"src": LONG, "tgt": LONG, "d_model": "64", "heads": "16"})
    zs = per_head_z(at)
    assert 0 < len(zs) < 16                                   # a page of heads, not all 16
    assert at.session_state["hpage"] == 1
    fig = chart(at, "head_1")
    assert fig["layout"]["coloraxis"]["cmax"] == 1.0
    at = run_app({"src": LONG, "tgt": LONG, "d_model": "64", "heads": "16", "scale": "max",
                  "hpage": "2"})
    first_on_page_2 = int(heads_chart(at)["data"][0]["head"])
    assert first_on_page_2 > 1
    top = chart(at, f"head_{first_on_page_2}")["layout"]["coloraxis"]["cmax"]
    from xattn.pipeline import Settings, run
    w = run(Settings(src=LONG, tgt=LONG, d_model=64, n_heads=16)).weights
    assert top == pytest.approx(float(w.max()))               # the range spans the weights
    assert top < 1.0                                          # ... not the fixed 0..1 scale


def test_the_share_popover_holds_the_link_of_this_view():
    at = run_app({"heads": "8", "mask": "padding", "pad": "6: mat"})
    assert not at.code                                  # folded: drawn when opened
    at.session_state["share"] = True
    link = at.run().code[0].value
    assert link.startswith("http://localhost:8501/?")
    assert "heads=8" in link and "pad=6%3A+mat" in link and "mask=padding" in link


def test_presenter_mode_is_a_link_parameter_and_enlarges_chart_text():
    small = chart(run_app(), "head_1")["layout"]
    big = chart(run_app({"present": "1"}), "head_1")["layout"]
    assert big["font"]["size"] > small["font"]["size"]
    assert big["yaxis"]["tickfont"]["size"] > small["yaxis"]["tickfont"]["size"]


def test_chinese_words_typed_with_spaces_get_a_notice():
    at = run_app({"src": "我们 喜欢 猫", "tgt": "we like cats"})
    assert any("whitespace" in i.value and "single characters" in i.value for i in at.info)
    at = run_app({"src": "我们 喜欢 猫", "tgt": "we like cats", "tok": "whitespace"})
    assert not any("single characters" in i.value for i in at.info)


def test_the_wait_k_slider_runs_to_the_source_length():
    at = run_app({"mask": "wait-k"})
    assert at.slider(key="k").max == 7                         # "the black cat sat on the mat"
    at = run_app({"mask": "wait-k", "k": "20"})
    assert at.slider(key="k").value == 7 and "`k=20`" in messages(at)["warning"][0]


def test_step_through_shows_x_i_and_the_columns_of_w_q():
    from xattn.pipeline import Settings, run

    at = run_app({"view": "Step through", "step_head": "2", "step_tgt": "1: chat"})
    r = run(Settings())
    inputs = next(e for e in at.expander if e.label.startswith("0. Where q_i comes from"))
    x = inputs.dataframe[0].value
    np.testing.assert_allclose(x.iloc[0].to_numpy(dtype=float), r.decoder_state[1].round(3),
                               atol=1e-9)
    w_q = inputs.dataframe[1].value                            # rows of W_Q, head 2's columns
    np.testing.assert_allclose(w_q.iloc[:, 1:].to_numpy(dtype=float),
                               r.module().W_Q[:, 8:16].round(3), atol=1e-9)
    assert "shape 8 ·" in " ".join(m.value for m in at.markdown)   # not "(8,)"


def test_a_prediction_is_checked_against_the_numbers_on_screen():
    at = run_app({"view": "Lesson", "lesson": "2"})             # the sum of a row: a number
    at.number_input(key="predict").set_value(0.5).run()
    answer = next(e for e in at.expander if e.label.startswith("Show the answer"))
    assert answer.markdown[0].value == "**Off by 0.5**: you said 0.5; the page shows 1.000."
    at.button(key="lesson_next").click().run()                 # a new step, a new prediction
    assert "predict" not in at.session_state or at.session_state["predict"] is None
    at = run_app({"view": "Lesson", "lesson": "9"})             # a choice, as pills
    widget = prediction_widget(at)
    widget.set_value("It goes down").run()
    answer = next(e for e in at.expander if e.label.startswith("Show the answer"))
    assert answer.markdown[0].value.startswith("**Right**")
