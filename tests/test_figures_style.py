"""The shared look of figures: token axes are unique, literal, and cut to a readable length."""

from xattn.figures._style import TICK_CHARS, axis_labels, tick_font

SRC = ["<s>", "the", "cat", "&", "the", "</s>"]


def test_axis_labels_are_unique_and_escaped():
    cats, ticks = axis_labels(SRC)
    assert cats == ["0: &lt;s&gt;", "1: the", "2: cat", "3: &amp;", "4: the", "5: &lt;/s&gt;"]
    assert ticks[1] == ticks[4] == "the" and ticks[0] == "&lt;s&gt;"


def test_long_tokens_are_cut_on_the_axis_and_whole_in_the_category():
    token = "supercalifragilisticexpialidocious" * 4
    categories, ticks = axis_labels([token, "$x$", "%{z}"])
    assert categories[0] == f"0: {token}"
    assert ticks[0] == token[: TICK_CHARS - 1] + "…" and len(ticks[0]) == TICK_CHARS
    assert ticks[1:] == ["&#36;x&#36;", "&#37;{z}"]      # no LaTeX, no %{...} template


def test_tick_font_shrinks_with_the_number_of_tokens():
    assert tick_font(8) > tick_font(30) > tick_font(64) and tick_font(8, scale=1.5) == 18


def test_every_axis_and_legend_says_its_text_size_and_presenter_mode_enlarges_it():
    """Streamlit's chart theme draws tick labels and legends at 12 px unless the figure says a
    size: presenter mode's line charts (Training's loss and time-lapse curves) said none and
    stayed at 12 px on a projector."""
    import numpy as np

    from xattn.figures import loss_figure
    from xattn.figures._style import base_layout

    losses = np.geomspace(1.0, 0.01, 50)
    for scale, px in ((1.0, 12), (1.35, 16)):
        layout = loss_figure(losses, 50, font_scale=scale).layout
        assert layout.xaxis.tickfont.size == layout.yaxis.tickfont.size == px
        made = base_layout("t", 100, font_scale=scale, yaxis2=dict(tickfont=dict(size=9)),
                           legend=dict(title="solid: meaning"))
        assert made["xaxis"]["tickfont"]["size"] == made["legend"]["font"]["size"] == px
        assert made["legend"]["title"] == {"text": "solid: meaning", "font": {"size": px}}
        assert made["yaxis2"]["tickfont"]["size"] == 9               # its own size kept
