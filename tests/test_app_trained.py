"""The trained weights (``weights=trained``) under AppTest, in every view where they matter.

Figures are checked against an independent training run with the same config (training is
deterministic), so they show the very weights of `TrainResult.model` / `.untrained`.
"""

import re

import numpy as np
import pytest
import streamlit as st
from apptest_helpers import chart, decode, heads_chart, heatmaps, messages, run_app

from xattn.corpus import LEXICON, translate
from xattn.live import training as training_runs
from xattn.live.process import clear_all
from xattn.pairs import read_pair
from xattn.train import TrainConfig, embed_pair, train
from xattn.ui.weights.trained import DEFAULT_SRC


@pytest.fixture(scope="module", autouse=True)
def fresh_store():
    """The server keeps one training run per setting (``xattn.live.training.runs``): start and end
    empty."""
    st.cache_resource.clear(), clear_all()
    yield
    st.cache_resource.clear(), clear_all()


def trained_page(**query):
    at = run_app({"weights": "trained", **query})
    assert not at.exception, at.exception
    return at


def zs(at, key: str) -> list[np.ndarray]:
    fig = heads_chart(at) if key == "per_head" else chart(at, key)     # one chart per head
    return [decode(t["z"]) for t in heatmaps(fig)]


def assert_weights(at, key: str, model, result, pair) -> None:
    """The chart holds, head by head, the weights of ``model`` on ``pair``."""
    x_t, x_s = embed_pair(pair, result.embedder)
    _, expected = model(x_t, x_s)                                    # (n_heads, n_tgt, n_src)
    got = zs(at, key)
    assert len(got) == result.config.n_heads
    for h, z in enumerate(got):
        np.testing.assert_allclose(z, expected[h], atol=1e-6)


def tables(at, column: str) -> list:
    return [d.value for d in at.dataframe if column in d.value.columns]


def test_the_heads_view_trains_once_and_shows_the_trained_weights(trained):
    st.cache_resource.clear(), clear_all()
    at = trained_page()
    assert messages(at) == {"error": [], "warning": []}
    assert any("Trained just now" in c.value for c in at.caption)
    assert_weights(at, "per_head", trained.model, trained, translate(DEFAULT_SRC))
    banner = at.info[0].value
    assert re.fullmatch(r"Trained on the toy task for 100 steps: \d+\.\d% of held-out words "
                        r"aligned\.", banner)
    table = tables(at, "exact (right position)")[0].set_index("model")
    assert float(table.loc["trained", "word"].rstrip("%")) >= 90
    assert float(table.loc["untrained (random start)", "word"].rstrip("%")) < 40
    loss = decode(chart(at, "tr_loss")["data"][0]["y"])
    np.testing.assert_allclose(loss, trained.losses, rtol=1e-12)
    assert sum(len(t) for t in tables(at, "English")) == len(LEXICON)
    assert any("Gold alignment: `le` → `the`" in c.value for c in at.caption)


def test_gold_cells_are_marked_in_every_head():
    at = trained_page()
    pair = translate(DEFAULT_SRC)
    marks = [t for t in heads_chart(at)["data"] if t["type"] == "scatter"]
    assert len(marks) == 4 and [m["head"] for m in marks] == [1, 2, 3, 4]   # one a head
    cells = set(zip(marks[0]["y"], marks[0]["x"], strict=True))
    assert cells == {(f"{i}: {pair.target[i]}", f"{j}: {pair.source[j]}")
                     for i, j in enumerate(pair.alignment)}


def test_a_second_visitor_gets_the_shared_run_without_training(monkeypatch):
    trained_page()
    calls = []
    original = training_runs.train
    monkeypatch.setattr(training_runs, "train", lambda *a, **k: calls.append(1) or original(*a, **k))
    at = trained_page()
    assert not calls and any("shared run" in c.value for c in at.caption)


def test_changing_heads_in_the_sidebar_changes_the_number_of_heatmaps():
    at = trained_page()
    at.select_slider(key="tr_heads").set_value(2).run()
    assert not at.exception
    result = train(TrainConfig(n_heads=2))
    assert_weights(at, "per_head", result.model, result, translate(DEFAULT_SRC))


def test_head_statistics_say_which_head_learned_what(trained):
    at = trained_page(view="Head statistics")
    lines = [m.value for m in at.markdown if "argmaxes on the gold word" in m.value]
    assert lines and lines[0].count("**Head ") == 4
    by_head = tables(at, "untrained_word")
    assert len(by_head) == 1 and len(by_head[0]) == 4 and by_head[0]["word_accuracy"].max() > 90
    assert len(tables(at, "gold_weight")[0]) == 4          # this pair, per head


def test_compare_puts_the_untrained_start_beside_the_trained_weights(trained):
    at = trained_page(view="Compare")
    assert at.selectbox(key="cmp").value == "untrained"
    pair = translate(DEFAULT_SRC)
    assert_weights(at, "compare_a", trained.model, trained, pair)
    assert_weights(at, "compare_b", trained.untrained, trained, pair)
    assert "training" in at.markdown[-1].value


@pytest.mark.parametrize("query,named", [
    ({"tr_src": "the purple cat sees the mat"}, ["`purple`", "`mat` (did you mean `cat`?)"]),
    ({"tr_src": "The red kat sees the dog."}, ["`kat` (did you mean `cat`?)"]),
    ({"tr_tgt": "le chat rouge voit le chein"}, ["French `chein` (did you mean `chien`?)"]),
    ({"tr_src": "the <b>cat</b> sleeps"}, ["`<b>`", "`</b>`"]),
])
def test_words_outside_the_lexicon_get_a_warning_naming_them(query, named):
    at = trained_page(**query)
    warnings = messages(at)["warning"]
    assert len(warnings) == 1 and "Words outside the lexicon" in warnings[0]
    assert all(n in warnings[0] for n in named), warnings[0]
    assert chart(at, "tr_loss")                                  # training still shown
    assert any("appears once the weights" in i.value for i in at.info)


@pytest.mark.parametrize("src,message", [
    ("the cat the dog", "expected a verb at word 3; received 'the' (determiner)"),
    ("the cat sees", "expected a determiner at word 4; received the end of the sentence"),
    (" ".join(["the cat sleeps"] * 9), "at most 24 words"),
])
def test_sentences_the_grammar_cannot_translate_show_the_reason(src, message):
    at = trained_page(tr_src=src)
    errors = messages(at)["error"]
    assert len(errors) == 1 and message in errors[0]
    at.text_input(key="tr_src").set_value("a sad king follows the pink horse").run()
    assert not messages(at)["error"] and len(zs(at, "per_head")) == 4


def test_typed_french_is_aligned_through_the_lexicon_and_unaligned_words_are_named(trained):
    at = trained_page(tr_src="the cat sleeps", tr_tgt="le chien dort")
    assert not messages(at)["warning"]
    assert any("`chien`" in c.value and "no gold mark" in c.value for c in at.caption)
    pair = read_pair("the cat sleeps", "le chien dort")
    assert pair.alignment == (0, None, 2)
    assert_weights(at, "per_head", trained.model, trained, pair)
    marks = [t for t in heads_chart(at)["data"] if t["type"] == "scatter"]
    assert marks[0]["y"] == ["0: le", "2: dort"]


def test_a_bad_url_value_falls_back_and_the_page_says_so_once():
    at = trained_page(tr_heads="3", tr_steps="7")
    warnings = messages(at)["warning"]
    assert sum("tr_heads=3" in w for w in warnings) == 1
    assert sum("tr_steps=7" in w for w in warnings) == 1
    assert len(zs(at, "per_head")) == 4


def test_views_that_need_projections_work_on_trained_weights(trained):
    at = trained_page(view="Step through", step_head="2", step_tgt="1: chat")
    pair = translate(DEFAULT_SRC)
    x_t, x_s = embed_pair(pair, trained.embedder)
    tr = trained.model.trace(x_t, x_s)
    np.testing.assert_allclose(decode(chart(at, "step_bar")["data"][0]["y"]), tr.weights[1, 1],
                               rtol=1e-6)
    at = trained_page(view="Switch heads off", off=["1"])
    assert any(m.label == "Change with heads 1 off" for m in at.metric)


def test_the_training_view_walks_through_the_run_and_the_link_keeps_the_step(trained):
    from apptest_helpers import per_head_z

    from xattn.timelapse import PROBE
    from xattn.train import embed_pair

    at = run_app({"weights": "trained", "view": "Training", "tstep": "0"})
    assert not at.exception, at.exception
    x_t, x_s = embed_pair(PROBE, trained.embedder)
    np.testing.assert_allclose(per_head_z(at), trained.untrained(x_t, x_s)[1], rtol=1e-5)
    assert at.query_params["tstep"] in ("0", ["0"])
    last = len(trained.timelapse.steps) - 1
    at.select_slider(key="tstep").set_value(last).run()
    np.testing.assert_allclose(per_head_z(at), trained.model(x_t, x_s)[1], rtol=1e-5)
    text = " ".join(m.value for m in at.markdown)
    assert "**Head 1**" in text and ("by meaning" in text or "by position" in text)


def test_the_export_of_trained_weights_animates_the_run(trained):
    from xattn.alignment import evaluate
    from xattn.corpus import translate
    from xattn.sources import trained_attention
    from xattn.ui.views.export import export_page

    page = export_page(trained_attention(evaluate(trained, 1.0), translate(DEFAULT_SRC)))
    assert "Training as a time-lapse" in page and '"frames"' in page and "Play" in page
