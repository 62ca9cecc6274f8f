"""A real translation model (``weights=model``) under AppTest: the shipped toy model by default
(NumPy, no torch), and a tiny random Marian (no download) on the server's allow-list, run in
NumPy from its folder or through transformers. The tiny model's tests skip with the reason
where torch is missing (it is made by transformers), and fail instead in CI
(XATTN_REQUIRE_MODELS=1)."""

import numpy as np
import pytest
from apptest_helpers import chart, decode, heads_chart, heatmaps, messages, run_app

from xattn.live.compute import clear_caches

SRC, TGT = "the cat sat on the mat.", "le chat est assis."


TINY = [""]      # the tiny model's folder, set by the fixture


@pytest.fixture(autouse=True)
def fresh(tiny_model):
    clear_caches()
    TINY[0] = tiny_model
    return tiny_model


def model_page(**query):
    at = run_app({"weights": "model", "model": query.pop("model", None) or TINY[0], "src": SRC,
                  "tgt": TGT, **query})
    assert not at.exception, at.exception
    return at


def expected(tiny_model, *, tgt=TGT, words=True):
    """What the page computes for the tiny model's folder: in NumPy (``xattn.encdec``, equal
    to transformers to 1e-5: tests/test_marian*.py)."""
    from xattn.encdec import cross_attention, load_encdec

    return cross_attention(load_encdec(tiny_model, allowed=[tiny_model]), SRC, tgt, words=words)


def expected_torch(tiny_model, *, tgt=TGT):
    from xattn.torch_models import cross_attention, load_model

    return cross_attention(load_model(tiny_model, allowed=[tiny_model]), SRC, tgt)


def zs(at, key="per_head"):
    fig = heads_chart(at) if key == "per_head" else chart(at, key)     # one chart per head
    return [decode(t["z"]) for t in heatmaps(fig)]


def test_the_page_shows_the_model_s_chosen_layer_and_says_which(tiny_model):
    at = model_page()
    r = expected(tiny_model)
    banner = at.info[0].value
    assert banner == f"`{tiny_model}`: a trained translation model. Layer 1 of 2."
    np.testing.assert_allclose(zs(at), r.weights[0], rtol=1e-5)  # layer 1 default
    overview = chart(at, "overview_pick")
    assert len(heatmaps(overview)) == 2 * 4                          # layers x heads
    at.select_slider(key="layer").set_value(2).run()
    np.testing.assert_allclose(zs(at), r.weights[1], rtol=1e-5)
    assert at.info[0].value.endswith("Layer 2 of 2.") and at.query_params["layer"] == "2"


def test_opening_a_head_of_the_overview_draws_it_large(tiny_model):
    at = model_page(layer="2", focus="3")
    big = decode(heatmaps(chart(at, "focus_head"))[0]["z"])
    np.testing.assert_allclose(big, expected(tiny_model).weights[1, 2], rtol=1e-5)


def test_without_a_target_the_model_translates_first(tiny_model):
    at = model_page(tgt="")
    r = expected(tiny_model, tgt=None)
    assert any("The model's own translation (greedy)" in c.value for c in at.caption)
    assert r.translated and "The target is the model's own translation." in at.info[0].value
    np.testing.assert_allclose(zs(at), r.weights[0], rtol=1e-5)


def test_pieces_and_hidden_sinks(tiny_model):
    at = model_page(words="false")
    pieces = expected(tiny_model, words=False)
    assert heatmaps(heads_chart(at))[0]["x"][0] == f"0: {pieces.src_pieces[0]}"
    at = model_page(sinks="true")
    x = heatmaps(heads_chart(at))[0]["x"]
    assert not any(label.endswith(": </s>") for label in x)
    assert any("Hidden: special tokens and punctuation took" in c.value for c in at.caption)


def test_a_model_outside_the_allow_list_falls_back_with_a_notice(tiny_model):
    at = model_page(model="evil/model-that-downloads-gigabytes")
    warning = messages(at)["warning"]
    assert len(warning) == 1 and "`model=evil/model-that-downloads-gigabytes`" in warning[0]
    assert at.selectbox(key="model").value == "toy-en-fr"      # the first offered
    assert len(zs(at)) == 4


@pytest.mark.parametrize("view,key", [("Step through", "step_bar"),
                                      ("Switch heads off", "ablation_chart"),
                                      ("Head statistics", "stats_confidence"), ("Lines", "lines"),
                                      ("Compare", "compare_b")])
def test_every_view_works_on_a_model(view, key):
    at = model_page(view=view)
    assert chart(at, key)


def test_without_torch_the_shipped_model_and_converted_folders_still_run(monkeypatch):
    from dataclasses import replace

    import xattn.backends

    numpy, torch = xattn.backends.BACKENDS
    missing = replace(torch, missing=lambda: "torch is not installed: pip install -r "
                                             "requirements-models.txt")
    monkeypatch.setattr(xattn.backends, "BACKENDS", (numpy, missing))
    at = run_app({"weights": "model"})
    assert not at.exception and not messages(at)["error"]
    offered = at.selectbox(key="model").options
    assert offered[0] == "toy-en-fr" and TINY[0] in offered     # a folder runs in NumPy
    assert not any("opus-mt" in o for o in offered)              # a hub name needs torch
    assert "toy-en-fr" in at.info[0].value


def test_a_name_that_is_not_a_numpy_folder_runs_through_transformers(tiny_model, monkeypatch,
                                                                      request):
    from dataclasses import replace

    import xattn.backends
    from xattn.live import models

    numpy, torch = xattn.backends.BACKENDS
    shipped_only = replace(numpy, reads=lambda name: name == "toy-en-fr")
    monkeypatch.setattr(xattn.backends, "BACKENDS", (shipped_only, torch))
    models._models().clear()                 # loaded again, through transformers
    request.addfinalizer(models._models().clear)
    at = model_page()
    np.testing.assert_allclose(zs(at), expected_torch(tiny_model).weights[0], rtol=1e-5)
    at.session_state["view"] = "Step through"
    at.run()
    assert not at.exception
    assert any("cannot be switched off here" in c.value for c in at.caption)


SHIPPED = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=120)
at.query_params["weights"] = "model"
at.run()
print(json.dumps({"exception": [str(e.value) for e in at.exception],
                  "banner": at.info[0].value, "captions": [c.value for c in at.caption],
                  "torch": "torch" in sys.modules, "transformers": "transformers" in sys.modules}))
"""


def test_the_shipped_model_is_the_default_and_needs_no_torch():
    """What the demo link and an offline classroom show for weights=model: the model trained
    here, translating the toy sentence, with neither torch nor transformers imported."""
    import json
    import subprocess
    import sys

    from apptest_helpers import APP

    out = subprocess.run([sys.executable, "-c", SHIPPED, APP], check=True, capture_output=True,
                         text=True, timeout=600).stdout
    page = json.loads(out.strip().splitlines()[-1])
    assert page["exception"] == [] and not page["torch"] and not page["transformers"]
    assert page["banner"].startswith("`toy-en-fr`: a translation model trained here")
    assert any("`le chat rouge voit le chien`" in c for c in page["captions"])


def test_a_layer_the_model_does_not_have_falls_back_with_a_notice():
    at = model_page(layer="9")
    warning = messages(at)["warning"]
    assert len(warning) == 1 and "`layer=9`" in warning[0] and "2 layers" in warning[0]
    assert at.info[0].value.endswith("Layer 1 of 2.")
