"""Built figures are cached per server (``xattn.live.compute.figure``): a cached chart must be
exactly the chart a fresh server draws, whatever was asked before, and Streamlit must send a
frozen figure exactly as it sends the figure it was made from."""

from __future__ import annotations

import pytest
from apptest_helpers import run_app
from streamlit.testing.v1 import AppTest

from xattn.live.compute import caches, clear_caches

QUERIES = [
    {}, {"heads": "8"}, {"seed": "3"}, {"mask": "padding", "pad": "6: mat"},
    {"mask": "wait-k", "k": "2"}, {"scale": "max"}, {"present": "1"}, {"tok": "chars"},
    {"src": "a b c", "tgt": "x y"}, {"src": "a b c", "tgt": "x y", "scale": "max"},
    {"weights": "trained"}, {"weights": "trained", "scale": "max"}, {"d_model": "64"},
]


def specs(at: AppTest) -> dict[str, str]:
    return {el.key: el.proto.spec for el in at.get("plotly_chart")}


def test_a_cached_chart_is_the_chart_a_fresh_server_draws():
    clear_caches()
    warm = {}
    for q in QUERIES:                       # one server: every figure after the others
        warm[str(q)] = specs(run_app(q))
    assert len(caches()["figures"]) > 0
    for q in QUERIES:
        clear_caches()                      # a fresh server for each
        assert specs(run_app(q)) == warm[str(q)], q


def test_streamlit_sends_a_frozen_figure_as_the_figure_itself():
    def script():
        import streamlit as st

        from xattn.figures import head_figure
        from xattn.figures.frozen import freeze
        from xattn.pipeline import Settings, run
        r = run(Settings())
        fig = head_figure(r.weights[1], r.src_tokens, r.tgt_tokens, head=1, mask=r.mask)
        st.plotly_chart(fig, key="plain")
        st.plotly_chart(freeze(fig), key="frozen")

    at = AppTest.from_function(script).run()
    assert not at.exception
    assert at.get_by_key("plain").proto.spec == at.get_by_key("frozen").proto.spec


def test_a_frozen_figure_refuses_what_is_not_a_figure_dict():
    from xattn.figures.frozen import FrozenFigure
    with pytest.raises(TypeError, match="list 'data'"):
        FrozenFigure({"layout": {}})


@pytest.mark.parametrize("settings", [
    {}, {"mask_mode": "padding", "padded": (1, 3)}, {"mask_mode": "wait-k", "wait_k": 1},
    {"src": " ".join(f"w{i}" for i in range(50)), "tgt": "<b>x</b> $y$ &amp;"},
])
@pytest.mark.parametrize("options", [{}, {"zmax": 0.42, "font_scale": 1.35, "max_x_labels": 16,
                                          "colorbar": True, "title": "Layer 2, head 1"}])
def test_a_figure_made_without_plotly_objects_is_the_same_figure(settings, options):
    import json

    import plotly.io as pio

    from xattn.figures import head_figure
    from xattn.figures.frozen import freeze, frozen
    from xattn.figures.heads import head_parts
    from xattn.pipeline import Settings, run

    r = run(Settings(**settings))
    args = (r.weights[1], r.src_tokens, r.tgt_tokens)
    fast = frozen(*head_parts(*args, head=1, mask=r.mask, **options))
    slow = freeze(head_figure(*args, head=1, mask=r.mask, **options))
    assert json.loads(pio.to_json(fast.to_dict(), validate=False)) == \
        json.loads(pio.to_json(slow.to_dict(), validate=False))
