"""The dashboard under AppTest: default page, figures equal the library, controls, URL, errors."""

from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import (
    chart,
    decode,
    heads_chart,
    heatmaps,
    messages,
    per_head_z,
    run_app,
)

from xattn.pipeline import Settings, run

pytestmark = pytest.mark.usefixtures("fresh_cache")

def assert_figure_matches(at, settings: Settings):
    expected = run(settings)
    zs = per_head_z(at)
    assert len(zs) == settings.n_heads
    for h, z in enumerate(zs):
        np.testing.assert_allclose(z, expected.weights[h], rtol=1e-6, atol=1e-7)
    return expected


def test_default_page_draws_one_heatmap_per_head_equal_to_the_library():
    at = run_app()
    assert not at.exception
    assert messages(at) == {"error": [], "warning": []}
    expected = assert_figure_matches(at, Settings())
    fig = heads_chart(at)
    first = heatmaps(fig)[0]
    assert first["x"] == [f"{j}: {t}" for j, t in enumerate(expected.src_tokens)]
    assert first["y"][:2] == ["0: le", "1: chat"]
    assert fig["layout"]["coloraxis"]["cmin"] == 0 and fig["layout"]["coloraxis"]["cmax"] == 1
    assert "Viridis" in str(fig["layout"]["coloraxis"]["colorscale"]) or \
        fig["layout"]["coloraxis"]["colorscale"][0][1] == "#440154"
    assert "source (keys)" in str(fig["layout"]) and "target (queries)" in str(fig["layout"])
    assert any("(4, 8, 7) = heads × target × source" in c.value for c in at.caption)
    assert not at.get("latex")                      # folded: not built, not sent


@pytest.mark.parametrize(("query", "top"), [({}, 1.0), ({"scale": "max"}, None)])
def test_the_colour_legend_names_the_top_of_the_scale(query, top):
    at = run_app(query)
    assert not at.exception
    (bar,) = [m.value for m in at.markdown if "weight 0" in m.value]
    top = run(Settings()).weights.max() if top is None else top
    assert bar.endswith(f"<span>{top:.3f}</span></div>") and "linear-gradient" in bar
    # Markdown, not st.html: a first visitor's browser loads no extra scripts for it (the
    # page's one st.html is the join box's plain form, xattn/ui/room/typed.py)
    assert all("weight 0" not in str(h.proto) for h in at.get("html"))
    assert len(at.get("html")) <= 1


def test_the_folded_sections_are_drawn_when_opened():
    at = run_app()
    for key in ("average", "output"):
        with pytest.raises(KeyError):
            at.get_by_key(key)
    at.session_state["heads_more"] = True           # what opening the expander does
    at.session_state["heads_text"] = True
    at.run()
    assert not at.exception
    assert "MultiHead" in at.get("latex")[0].proto.body
    r = run(Settings())
    z = decode(heatmaps(chart(at, "average"))[0]["z"])
    np.testing.assert_allclose(z, r.weights.mean(axis=0), rtol=1e-6, atol=1e-7)
    assert heatmaps(chart(at, "output"))
    description = next(e for e in at.expander if e.label.startswith("Text description"))
    assert "**Head 4**" in description.markdown[0].value


@pytest.mark.parametrize("change", [
    {"heads": "8"}, {"seed": "7"}, {"d_model": "64", "heads": "16"}, {"tok": "chars"},
    {"emb": "ngram"}, {"pos": "false"},
])
def test_url_parameters_seed_the_widgets_and_the_figure(change):
    at = run_app(change)
    assert not at.exception and not messages(at)["warning"]
    fields = {"heads": ("n_heads", int), "seed": ("seed", int), "d_model": ("d_model", int),
              "tok": ("tokenizer", str), "emb": ("embedder", str),
              "pos": ("positional", lambda v: v == "true")}
    settings = replace(Settings(), **{fields[k][0]: fields[k][1](v) for k, v in change.items()})
    assert_figure_matches(at, settings)


def test_a_value_chosen_while_the_page_imposed_another_is_put_in_again():
    """A session's first run puts the link's values into its widgets; a value the user chose
    while that run was under way (a page reconnected to another process) reaches the server
    before the browser has drawn the page's older one, which it then shows. The next run puts
    the user's value in again (Chromium showed 4 heads on the slider, 8 in the figure)."""
    at = run_app()
    assert at.select_slider(key="heads").proto.set_value          # the link's 4, imposed
    at.select_slider(key="heads").set_value(8).run()
    heads = at.select_slider(key="heads")
    assert heads.value == 8 and heads.proto.set_value               # the user's 8, put in again
    assert len(per_head_z(at)) == 8
    at.number_input(key="seed").set_value(5).run()
    assert not at.select_slider(key="heads").proto.set_value        # ... and then left alone
    at.select_slider(key="heads").set_value(2).run()
    assert not at.select_slider(key="heads").proto.set_value        # a later choice too


def test_changing_heads_and_seed_through_their_keys_changes_the_figure():
    at = run_app()
    before = per_head_z(at)
    at.select_slider(key="heads").set_value(2).run()
    assert len(per_head_z(at)) == 2
    assert_figure_matches(at, Settings(n_heads=2))
    at.number_input(key="seed").set_value(5).run()
    after = assert_figure_matches(at, Settings(n_heads=2, seed=5))
    assert not np.allclose(after.weights[0], before[0][:, :])


def test_heads_offered_are_the_divisors_of_d_model():
    at = run_app({"d_model": "24"})
    assert at.select_slider(key="heads").options == ["1", "2", "3", "4", "6", "8", "12"]


def test_padding_a_source_token_zeroes_its_column_and_marks_it():
    at = run_app({"mask": "padding"})
    at.multiselect(key="pad").set_value(["2: cat", "6: mat"]).run()
    assert not at.exception
    zs = per_head_z(at)
    for z in zs:
        assert np.all(z[:, [2, 6]] == 0) and np.allclose(z.sum(axis=1), 1, atol=1e-6)
    assert_figure_matches(at, Settings(mask_mode="padding", padded=(2, 6)))
    marks = [t for t in heads_chart(at)["data"] if t["type"] == "scatter"]
    assert len(marks) == 4 and set(marks[0]["x"]) == {"2: cat", "6: mat"}


@pytest.mark.parametrize("mode,key,value,field", [("wait-k", "k", 2, "wait_k"),
                                                  ("window", "window", 0, "window")])
def test_wait_k_and_window_masks(mode, key, value, field):
    at = run_app({"mask": mode})
    at.slider(key=key).set_value(value).run()
    expected = assert_figure_matches(at, Settings(mask_mode=mode, **{field: value}))
    z = per_head_z(at)[0]
    assert np.all(z[~expected.mask] == 0)


def test_all_source_tokens_masked_explains_that_rows_have_nothing_to_attend_to():
    at = run_app({"mask": "padding", "src": "a b"})
    at.multiselect(key="pad").set_value(["0: a", "1: b"]).run()
    assert not at.exception
    warning = " ".join(messages(at)["warning"])
    assert "nothing to attend to" in warning and "0: le" in warning
    assert all(np.all(z == 0) for z in per_head_z(at))


@pytest.mark.parametrize("key,value,message", [
    ("src", "", "The source sentence is empty"),
    ("tgt", "   ", "The target sentence is empty"),
    ("src", " ".join(["w"] * 70), "The source sentence has 70 tokens; the limit is 64"),
    ("tgt", "x" * 65, None),  # one long word is one token: fine
])
def test_bad_sentences_show_an_error_and_the_page_keeps_working(key, value, message):
    at = run_app()
    at.text_input(key=key).set_value(value).run()
    assert not at.exception
    if message is None:
        assert not messages(at)["error"]
        return
    assert any(message in e for e in messages(at)["error"])
    assert not at.get("plotly_chart")
    at.text_input(key=key).set_value("the cat").run()  # fixing it brings the figures back
    assert not messages(at)["error"] and len(per_head_z(at)) == 4


@pytest.mark.parametrize("query,bad", [
    ({"heads": "3"}, "heads=3"), ({"seed": "abc"}, "seed=abc"),
    ({"seed": "-5"}, "seed=-5"), ({"mask": "everything"}, "mask=everything"),
    ({"heads": "1e9"}, "heads=1e9"),
])
def test_bad_url_values_fall_back_to_defaults_with_a_notice(query, bad):
    at = run_app(query)
    assert not at.exception
    warnings = messages(at)["warning"]
    assert len(warnings) == 1 and bad in warnings[0] and "Showing" in warnings[0]
    assert_figure_matches(at, Settings())


def test_html_like_tokens_are_escaped_in_labels_and_repeated_words_keep_their_own_column():
    at = run_app({"src": "<s> the <b>cat</b> & the </s>", "tgt": "<script>alert(1)</script>"})
    assert not at.exception
    fig = heads_chart(at)
    x = heatmaps(fig)[0]["x"]
    assert x == ["0: &lt;s&gt;", "1: the", "2: &lt;b&gt;", "3: cat", "4: &lt;/b&gt;",
                 "5: &amp;", "6: the", "7: &lt;/s&gt;"]
    assert len(set(x)) == len(x)
    ticks = fig["layout"]["xaxis"]["ticktext"]
    assert ticks[0] == "&lt;s&gt;" and ticks[1] == ticks[6] == "the"


def test_bad_url_values_of_a_tab_widget_also_get_a_notice():
    at = run_app({"view": "Step through", "step_head": "9"})
    assert not at.exception
    warnings = messages(at)["warning"]
    assert len(warnings) == 1 and "step_head=9" in warnings[0]


def test_views_that_do_not_need_the_sentences_stay_usable_when_they_are_invalid():
    at = run_app({"src": "", "view": "How to read this"})
    assert not at.exception
    assert any("The source sentence is empty" in e for e in messages(at)["error"])
    assert any("Rows and columns" in m.value for m in at.markdown)


def test_an_unknown_url_parameter_is_named_in_a_notice():
    at = run_app({"head": "8"})
    assert not at.exception
    warnings = messages(at)["warning"]
    assert len(warnings) == 1 and "`head`" in warnings[0] and "heads" in warnings[0]
    assert len(per_head_z(at)) == 4
