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
