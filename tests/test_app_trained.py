"""The "Trained vs random" view under AppTest, run on its own (a two-line script) and in the page.

Figures are checked against an independent training run with the same config (training is
deterministic), so they show the very weights of `TrainResult.untrained` / `.model`.
"""

import re

import numpy as np
import pytest
import streamlit as st
from apptest_helpers import chart, decode, heatmaps, messages, run_app
from streamlit.testing.v1 import AppTest

from xattn.corpus import LEXICON, translate
from xattn.pairs import read_pair
from xattn.train import TrainConfig, embed_pair, train
from xattn.ui import _store
from xattn.ui.trained import DEFAULT_SRC

SCRIPT = """
from xattn.ui.state import page_state
from xattn.ui.trained import trained_view
state = page_state()
trained_view(state)
state.write_url()
"""


@pytest.fixture(scope="module", autouse=True)
def fresh_store():
    """The view keeps one training run per setting in st.cache_resource: start and end empty."""
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.fixture(scope="module")
def default_result():
    return train(TrainConfig(n_heads=4, steps=100, seed=0))


def run_view(query: dict | None = None) -> AppTest:
    at = AppTest.from_string(SCRIPT, default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def zs(at: AppTest, key: str) -> list[np.ndarray]:
    return [decode(t["z"]) for t in heatmaps(chart(at, key))]


def assert_pair_figures(at: AppTest, result, pair) -> None:
    """Both charts hold, head by head, the weights of the untrained and trained models."""
    x_t, x_s = embed_pair(pair, result.embedder)
    for key, model in (("tr_untrained", result.untrained), ("tr_trained", result.model)):
        _, expected = model(x_t, x_s)                                 # (n_heads, n_tgt, n_src)
        got = zs(at, key)
        assert len(got) == result.config.n_heads
        for h, z in enumerate(got):
            np.testing.assert_allclose(z, expected[h], atol=1e-6)


def tables(at: AppTest, column: str) -> list:
    """The st.dataframe tables holding ``column``: "English" (lexicon), "normalised_entropy"
    (this pair, untrained then trained), "untrained_word" (held-out, by head)."""
    return [d.value for d in at.dataframe if column in d.value.columns]


def heldout_accuracy(at: AppTest) -> float:
    metric = next(m for m in at.metric if m.label.startswith("Held-out word accuracy"))
    return float(metric.value.rstrip("%")) / 100


def test_default_view_trains_once_and_shows_both_models_on_the_same_pair(default_result):
    st.cache_resource.clear()
    at = run_view()
    assert not at.exception
    assert messages(at) == {"error": [], "warning": []}
    assert any("Trained just now" in c.value for c in at.caption)
    assert_pair_figures(at, default_result, translate(DEFAULT_SRC))
    assert heldout_accuracy(at) >= 0.9
    table = tables(at, "exact (right position)")[0].set_index("model")
    assert float(table.loc["trained", "word"].rstrip("%")) >= 90
    assert float(table.loc["untrained (random start)", "word"].rstrip("%")) < 40
    loss = decode(chart(at, "tr_loss")["data"][0]["y"])
    np.testing.assert_allclose(loss, default_result.losses, rtol=1e-12)
    head_lines = [m.value for m in at.markdown if "argmaxes on the gold word" in m.value]
    assert head_lines and head_lines[0].count("**Head ") == 4
    by_head = tables(at, "untrained_word")
    assert len(by_head) == 1 and len(by_head[0]) == 4 and by_head[0]["word_accuracy"].max() > 90
    assert [len(t) for t in tables(at, "normalised_entropy")] == [4, 4]
    assert sum(len(t) for t in tables(at, "English")) == len(LEXICON)


def test_gold_cells_are_marked_in_every_head():
    at = run_view()
    pair = translate(DEFAULT_SRC)
    fig = chart(at, "tr_trained")
    marks = [t for t in fig["data"] if t["type"] == "scatter"]
    assert len(marks) == 4 and {m["xaxis"] for m in marks} == {"x", "x2", "x3", "x4"}
    cells = set(zip(marks[0]["y"], marks[0]["x"], strict=True))
    assert cells == {(f"{i}: {pair.target[i]}", f"{j}: {pair.source[j]}")
                     for i, j in enumerate(pair.alignment)}


def test_a_second_visitor_gets_the_shared_run_without_training(monkeypatch):
    run_view()
    calls = []
    original = _store.train
    monkeypatch.setattr(_store, "train", lambda *a, **k: calls.append(1) or original(*a, **k))
    at = run_view()
    assert not at.exception and not calls
    assert any("shared run" in c.value for c in at.caption)


def test_changing_heads_changes_the_number_of_heatmaps():
    at = run_view()
    at.select_slider(key="tr_heads").set_value(2).run()
    assert not at.exception
    assert_pair_figures(at, train(TrainConfig(n_heads=2)), translate(DEFAULT_SRC))
    assert [len(t) for t in tables(at, "normalised_entropy")] == [2, 2]


@pytest.mark.parametrize("query,named", [
    ({"tr_src": "the purple cat sees the mat"}, ["`purple`", "`mat` (did you mean `cat`?)"]),
    ({"tr_src": "The red kat sees the dog."}, ["`kat` (did you mean `cat`?)"]),
    ({"tr_tgt": "le chat rouge voit le chein"}, ["French `chein` (did you mean `chien`?)"]),
    ({"tr_src": "the <b>cat</b> sleeps"}, ["`<b>`", "`</b>`"]),
])
def test_words_outside_the_lexicon_get_a_warning_naming_them(query, named):
    at = run_view(query)
    assert not at.exception
    warnings = messages(at)["warning"]
    assert len(warnings) == 1 and "Words outside the lexicon" in warnings[0]
    assert all(n in warnings[0] for n in named)
    assert "replace them" in warnings[0]
    assert len(at.get("plotly_chart")) == 1 and chart(at, "tr_loss")  # training still shown
    assert heldout_accuracy(at) >= 0.9


@pytest.mark.parametrize("src,message", [
    ("the cat the dog", "expected a verb at word 3; received 'the' (determiner)"),
    ("the cat sees", "expected a determiner at word 4; received the end of the sentence"),
    ("", "Type an English sentence"),
    (" ".join(["the cat sleeps"] * 9), "at most 24 words"),
])
def test_sentences_the_grammar_cannot_translate_show_the_reason(src, message):
    at = run_view({"tr_src": src} if src else None)
    if not src:
        at.text_input(key="tr_src").set_value("").run()
    assert not at.exception
    errors = messages(at)["error"]
    assert len(errors) == 1 and message in errors[0]
    at.text_input(key="tr_src").set_value("a sad king follows the pink horse").run()
    assert not messages(at)["error"] and len(zs(at, "tr_trained")) == 4


def test_typed_french_is_aligned_through_the_lexicon_and_unaligned_words_are_named(
        default_result):
    at = run_view({"tr_src": "the cat sleeps", "tr_tgt": "le chien dort"})
    assert not at.exception and not messages(at)["warning"]
    assert "`chien`" in at.info[0].value
    pair = read_pair("the cat sleeps", "le chien dort")
    assert pair.alignment == (0, None, 2)
    assert_pair_figures(at, default_result, pair)
    marks = [t for t in chart(at, "tr_trained")["data"] if t["type"] == "scatter"]
    assert marks[0]["y"] == ["0: le", "2: dort"]


def test_a_bad_url_value_falls_back_and_the_page_says_so_once():
    at = run_app({"view": "Trained vs random", "tr_heads": "3", "tr_steps": "7"})
    assert not at.exception
    warnings = messages(at)["warning"]
    assert sum("tr_heads=3" in w for w in warnings) == 1
    assert sum("tr_steps=7" in w for w in warnings) == 1
    assert len(zs(at, "tr_trained")) == 4


def test_the_page_opens_on_the_trained_tab():
    at = run_app({"view": "Trained vs random"})
    assert not at.exception
    assert len(zs(at, "tr_trained")) == 4
    assert re.fullmatch(r"\d+\.\d%", next(m.value for m in at.metric
                                          if m.label.startswith("Held-out")))
