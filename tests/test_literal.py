"""Literal text in every medium: code spans nothing can break out of, Plotly text, CSV cells."""

import html

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from markdown_helpers import split_code_spans, user_text_is_inert

from xattn.literal import csv_cell, cut, md_code, plotly_text, show_value, visible

HOSTILE = ["x` **BOLD** [click here](https://example.com) :red[RED] `", "``", "`", "a``b`",
           "$x^2$", ":material/home:", "<a href='https://example.com'>Click</a>", "%{x}",
           "{{ x }}", "\\`", " `lead", "trail` ", "line\nbreak", "\u200b", ""]


@given(st.text())
@example(" ")             # nothing but spaces: CommonMark strips no padding from it
@example("  ")
def test_a_code_span_holds_any_text_whole(text):
    outside, spans = split_code_spans(f"before {md_code(text)} after")
    assert outside == "before  CODE  after"
    expected = visible(text).replace(":material/", ":\u200bmaterial/")
    assert spans == [expected if text else " "]


def test_streamlit_s_icon_rewrite_cannot_reach_a_code_span():
    assert ":material/" not in md_code(":material/home:")
    assert md_code(":material/home:").replace("\u200b", "") == "`:material/home:`"


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_values_stay_inside_their_code_span(text):
    notice = f"The link asked for {show_value(text)}, which is not valid."
    assert user_text_is_inert(notice), notice
    assert "\n" not in md_code(text)


@given(st.text())
def test_plotly_text_has_no_markup_and_decodes_back(text):
    out = plotly_text(text)
    assert "<" not in out and ">" not in out and "$" not in out and "%{" not in out
    assert html.unescape(out) == text


def test_visible_shows_invisible_characters_and_cut_says_how_long():
    assert visible("a\tb\u200bc\U000e0001") == "a\\tb\\u200bc\\U000e0001"
    assert visible("né 🐱") == "né 🐱"
    assert cut("x" * 2000, 60).endswith("… (2,000 characters)") and len(cut("x" * 2000)) < 90
    assert show_value("") == "(empty)"


@pytest.mark.parametrize("cell,expected", [
    ("=1+1", "'=1+1"), ("+1", "'+1"), ("-1", "'-1"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\tx", "'\tx"), ("\rx", "'\rx"), ("a=b", "a=b"), ("", ""), ("chat", "chat"),
])
def test_csv_cells_that_a_spreadsheet_would_run_get_a_quote(cell, expected):
    assert csv_cell(cell) == expected


@pytest.mark.parametrize("markdown", ["**bold** here", "a [link](https://example.com)", "$x^2$",
                                      ":red[RED]", ":material/home:", "<b>B</b>", "`open"])
def test_the_inertness_check_itself_catches_live_markup(markdown):
    assert not user_text_is_inert(f"The link asked for {markdown}.")
