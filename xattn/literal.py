"""Whatever a user typed, shown literally: one helper per medium a token can reach.

Tokens come from free text and from links, so they may look like markup: ``<a href=...>``,
``**bold**``, ``$x^2$``, ``:red[RED]``, ``:material/home:``, ``%{x}``, ``=HYPERLINK(...)``.
Every place that shows a token goes through one of these, so that none of it is ever
interpreted:

- `plotly_text`: Plotly tick labels, titles, hover text and annotations (Plotly reads a few
  HTML tags, ``%{...}`` templates in titles, and ``$...$`` as LaTeX where MathJax is loaded);
- `md_code`: Markdown (Streamlit's ``st.markdown``, alerts, captions, labels): the text as an
  inline code span, inside which Markdown, HTML, LaTeX, directives and emoji shortcodes are
  all inert. One exception needs help: Streamlit rewrites ``:material/`` to ``:material_``
  in the whole source before parsing, code spans included, so a zero-width space goes after
  the colon (the reader sees ``:material/home:`` exactly; a copy holds one invisible extra
  character);
- `show_value`: a value quoted in a notice, with invisible characters made visible and cut to
  a readable length;
- `csv_cell`: a CSV cell that a spreadsheet will not run as a formula (OWASP's advice).
"""

from __future__ import annotations

import html
import re

__all__ = ["plotly_text", "md_code", "show_value", "csv_cell", "cut"]

_BACKTICKS = re.compile(r"`+")
_ICON = ":material/"     # Streamlit's frontend rewrites this everywhere in a Markdown source
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def plotly_text(text: str) -> str:
    """``text`` for Plotly: HTML-escaped, with ``$`` and ``%`` as character references.

    Plotly decodes the references when it draws, so the reader sees exactly ``text``.

    Examples
    --------
    >>> plotly_text("<b>$x$ %{y}</b>")
    '&lt;b&gt;&#36;x&#36; &#37;{y}&lt;/b&gt;'
    """
    return html.escape(str(text), quote=False).replace("$", "&#36;").replace("%", "&#37;")


def md_code(text: str) -> str:
    """``text`` as a Markdown inline code span that nothing inside can close or escape.

    The fence is one backtick longer than the longest run inside; a space pads text that
    starts or ends with a backtick or a space (CommonMark strips one such space, unless the
    text is nothing but spaces). Invisible characters are
    made visible (`show_value`), since a code span must stay on one line.

    Examples
    --------
    >>> md_code("cat")
    '`cat`'
    >>> md_code("x` **BOLD** `")
    '`` x` **BOLD** ` ``'
    """
    text = visible(str(text))
    if not text:
        return "` `"
    fence = "`" * (1 + max((len(run) for run in _BACKTICKS.findall(text)), default=0))
    # CommonMark strips one space from each end, except from a span of nothing but spaces
    pad = " " if (text[0] in "` " or text[-1] in "` ") and text.strip(" ") else ""
    return f"{fence}{pad}{text.replace(_ICON, ':' + chr(0x200B) + _ICON[1:])}{pad}{fence}"


def visible(text: str) -> str:
    """Line breaks, tabs and other control or format characters as ``\\n``-style escapes.

    Examples
    --------
    >>> visible("a\\nb\\u200bc")
    'a\\\\nb\\\\u200bc'
    """
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return "".join(out)


def cut(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis and the full length.

    Examples
    --------
    >>> cut("x" * 100, 10)
    'xxxxxxxxx… (100 characters)'
    """
    text = str(text)
    if len(text) <= limit:
        return text
    return f"{text[: limit - 1]}… ({len(text):,} characters)"


def show_value(text: str, limit: int = 60) -> str:
    """A value quoted in a Markdown notice: cut, invisible characters shown, as code.

    Examples
    --------
    >>> show_value("")
    '(empty)'
    >>> show_value("a`b")
    '``a`b``'
    """
    text = str(text)
    if text == "":
        return "(empty)"
    return md_code(cut(visible(text), limit))


def csv_cell(text: str) -> str:
    """A CSV text cell that spreadsheets show as text: a leading ``=``, ``+``, ``-``, ``@``, tab
    or carriage return gets a ``'`` in front (OWASP, "CSV Injection").

    Examples
    --------
    >>> csv_cell("=SUM(1)"), csv_cell("chat")
    ("'=SUM(1)", 'chat')
    """
    text = str(text)
    return "'" + text if text.startswith(_FORMULA_START) else text

