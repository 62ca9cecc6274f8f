"""xattn.markup: the lesson's Markdown as HTML for the phone's page, and nothing a user typed
turned into markup."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xattn.lesson import STEPS
from xattn.literal import md_code, visible
from xattn.markup import to_html, to_text

ALLOWED = {"p", "/p", "strong", "/strong", "em", "/em", "code", "/code", "sub", "/sub", "sup",
           "/sup", "table", "/table", "thead", "/thead", "tbody", "/tbody", "tr", "/tr",
           "td", "/td", "ul", "/ul", "li", "/li"}
_TAG = re.compile(r"<(/?[a-z]+)(?: [^>]*)?>")


def tags(text: str) -> set[str]:
    return {m.group(1) for m in _TAG.finditer(text)} - {"th", "/th", "span", "/span"}


@pytest.mark.parametrize(("source", "expected"), [
    ("plain", "<p>plain</p>"),
    ("**bold** and *it*", "<p><strong>bold</strong> and <em>it</em></p>"),
    ("`a` `` b`c `` ```x```", "<p><code>a</code> <code>b`c</code> <code>x</code></p>"),
    ("` `", "<p><code> </code></p>"),
    ("\\*not it\\*", "<p>*not it*</p>"),
    ("2 * 3 * 4", "<p>2 * 3 * 4</p>"),
    ("a `unclosed", "<p>a `unclosed</p>"),
    ("one\ntwo\n\nthree", "<p>one two</p><p>three</p>"),
    ("- a\n- **b**", "<ul><li>a</li><li><strong>b</strong></li></ul>"),
    ("$W^O$", '<p><span class="math">W<sup>O</sup></span></p>'),
    ("$x \\unknown y$", '<p><span class="math">x \\unknown y</span></p>'),
    ("<b>x</b> & y", "<p>&lt;b&gt;x&lt;/b&gt; &amp; y</p>"),
    # a star's neighbours inside a run of text (read as one piece) or beside another mark
    ("a *b c* d", "<p>a <em>b c</em> d</p>"),
    ("a* b *c", "<p>a* b *c</p>"),
    ("**x***y*", "<p><strong>x</strong><em>y</em></p>"),
    ("`c`*d* e", "<p><code>c</code><em>d</em> e</p>"),
    ("\\**e*", "<p>*<em>e</em></p>"),
    ("$x$ *y*z", '<p><span class="math">x</span> <em>y</em>z</p>'),
    ("*a\tb *c*", "<p>*a\tb <em>c</em></p>"),
])
def test_the_lessons_markdown_becomes_html(source, expected):
    assert to_html(source) == expected


def test_a_table_keeps_its_cells_and_a_pipe_inside_code():
    out = to_html("| | AER |\n|---|---|\n| **the class** | `a|b` |\n| head 2 | 0.10 |")
    assert out == ('<table><thead><tr><th scope="col"></th><th scope="col">AER</th></tr>'
                   "</thead><tbody><tr><td><strong>the class</strong></td>"
                   "<td><code>a|b</code></td></tr><tr><td>head 2</td><td>0.10</td></tr>"
                   "</tbody></table>")


def test_the_first_steps_formula_reads_as_text():
    out = to_html(STEPS[0].text)
    assert '<span class="math">softmax(q<sub>i</sub> · k<sub>j</sub> / √(d<sub>head</sub>))' \
           "</span>" in out
    assert "\\" not in out and "$" not in out


@pytest.mark.parametrize("step", STEPS, ids=lambda s: s.title)
def test_every_steps_words_use_only_the_tags_the_phone_shows(step):
    for text in step.render(None):
        out = to_html(text)
        assert tags(out) <= ALLOWED, (text, out)
        assert "**" not in out and "`" not in out.replace("<code>`", "")


_TOKENS = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(_TOKENS)
def test_a_token_a_user_typed_reaches_the_page_as_its_characters(token):
    """What the lesson writes around a token (a code span) shows exactly the token: no tag,
    no entity and no emphasis made from it."""
    out = to_html(f"Which word does {md_code(token)} look at?")
    assert tags(out) <= ALLOWED
    codes = re.findall(r"<code>(.*?)</code>", out, re.S)
    assert len(codes) == 1
    shown = html.unescape(codes[0])
    expected = visible(token) or " "
    assert shown.replace("\u200b", "") == expected.replace("\u200b", "")


@settings(max_examples=300, deadline=None)
@given(_TOKENS, _TOKENS)
def test_tokens_a_user_typed_stay_literal_in_a_table_s_cells(one, two):
    """A table row of two typed tokens (code spans, a ``|`` inside one included) keeps two
    cells, each showing exactly its token."""
    out = to_html(f"| word | other |\n|---|---|\n| {md_code(one)} | {md_code(two)} |")
    assert tags(out) <= ALLOWED
    cells = re.findall(r"<td>(.*?)</td>", out, re.S)
    assert len(cells) == 2, out
    for cell, token in zip(cells, (one, two), strict=True):
        codes = re.findall(r"^<code>(.*)</code>$", cell, re.S)
        assert len(codes) == 1, cell
        expected = visible(token) or " "
        assert html.unescape(codes[0]).replace("\u200b", "") == expected.replace("\u200b", "")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_any_text_gives_only_the_phones_tags(text):
    """Whatever the text, the HTML holds only the phone's tags: any other "<" is escaped."""
    out = to_html(text)
    assert tags(out) <= ALLOWED | {"th", "/th", "span", "/span"}
    bare = _TAG.sub("", out)
    assert "<" not in bare and ">" not in bare


def test_to_text_drops_the_tags():
    assert to_text("**Right**: `the` (5) and `<b>`.") == "Right: the (5) and <b>."


def test_not_a_str_is_a_type_error():
    with pytest.raises(TypeError, match="Markdown text .str.; received int"):
        to_html(3)


@pytest.mark.parametrize("text, inside", [
    ("$x_\\$", "x<sub>\\</sub>"),          # a lone backslash ends the formula: kept, not a crash
    ("$a\\$ b", "a\\"),
    ("$\\\n$", "\\ "),                      # a backslash before a line break
])
def test_a_formula_with_a_lone_backslash_keeps_it(text, inside):
    assert f'<span class="math">{inside}</span>' in to_html(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="$\\_^{}x \n", max_size=40))
def test_any_formula_text_is_made_without_an_exception(text):
    """Formulas made of LaTeX's special characters alone (found: ``$x_\\$`` raised)."""
    out = to_html(text)
    assert "<" not in _TAG.sub("", out)
