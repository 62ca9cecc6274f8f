"""The lesson's Markdown as HTML for a page of our own: the small part of Markdown the lesson
writes, and nothing that text inside it could turn into markup.

The phone's page (``xattn/server``) shows the lesson's words without Streamlit's Markdown
renderer, so the server turns them into HTML here, once per step. The lesson writes a small,
known part of Markdown: paragraphs, ``**bold**``, ``*italic*``, code spans (every token a user
typed is one: ``xattn.literal.md_code``), backslash escapes, tables of ``|`` rows, ``- ``
lists, and two formulas between ``$`` signs. `to_html` renders exactly that:

- every character of the source is HTML-escaped before any tag is added, so a token such as
  ``<img onerror=...>`` or ``**x**`` inside a code span reaches the page as those characters;
- a code span follows CommonMark: a run of n backticks closes only with n backticks, and one
  space is stripped from each end when both ends have one;
- a formula's LaTeX becomes text: ``\\mathrm{x}`` and ``\\text{x}`` are x, ``\\cdot`` is ·,
  ``\\sqrt{x}`` is √(x), ``_x``/``^x`` are sub- and superscripts; a command it does not know
  stays as typed (escaped), never dropped.

Examples
--------
>>> to_html("The row of `chat` sums to **1**.")
'<p>The row of <code>chat</code> sums to <strong>1</strong>.</p>'
>>> to_html("`` a`b<i> ``")
'<p><code>a`b&lt;i&gt;</code></p>'
>>> to_html("$\\\\sqrt{d_\\\\text{head}}$")
'<p><span class="math">√(d<sub>head</sub>)</span></p>'
"""

from __future__ import annotations

import html
import re

__all__ = ["to_html", "to_text"]

_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_ESCAPABLE = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_SYMBOLS = {"cdot": "·", "times": "×", "infty": "∞", "to": "→", "rightarrow": "→",
            "leq": "≤", "geq": "≥", "approx": "≈", "sum": "Σ", "alpha": "α", "beta": "β",
            "top": "ᵀ", "ldots": "…", "quad": " ", ",": " "}
_TEXT_COMMANDS = ("mathrm", "text", "mathbf", "operatorname", "mathit")
_SPECIAL = re.compile(r"[\\`$*]")         # where a run of plain text ends: a mark may start


def to_html(markdown: str) -> str:
    """``markdown`` (the lesson's part of Markdown) as HTML: paragraphs, tables and lists of
    inline text; whatever else it holds shows as the characters it is."""
    if not isinstance(markdown, str):
        raise TypeError(f"to_html takes Markdown text (str); received {type(markdown).__name__}.")
    blocks = re.split(r"\n[ \t]*\n", markdown.strip())
    return "".join(_block(b) for b in blocks if b.strip())


def to_text(markdown: str) -> str:
    """``markdown`` as plain text (an alternative text, a title): the HTML's characters
    without its tags.

    Examples
    --------
    >>> to_text("**Right**: `the` (5).")
    'Right: the (5).'
    """
    return html.unescape(re.sub(r"<[^>]*>", "", to_html(markdown).replace("</p><p>", " ")))


def _block(block: str) -> str:
    lines = [ln.strip() for ln in block.split("\n")]
    if len(lines) >= 2 and all(ln.startswith("|") for ln in lines) and _TABLE_RULE.match(lines[1]):
        return _table(lines)
    if all(ln.startswith("- ") for ln in lines):
        return "<ul>" + "".join(f"<li>{_inline(ln[2:])}</li>" for ln in lines) + "</ul>"
    return f"<p>{_inline(' '.join(lines))}</p>"


def _cells(line: str) -> list[str]:
    """A table row's cells: split on ``|`` outside code spans and escapes."""
    body = line.strip()
    body = body[1:] if body.startswith("|") else body
    body = body[:-1] if body.endswith("|") and not body.endswith("\\|") else body
    cells, start, i = [], 0, 0
    while i < len(body):
        if body[i] == "\\":
            i += 2
            continue
        if body[i] == "`":
            run = _run(body, i)
            close = body.find("`" * run, i + run)
            while close != -1 and _run(body, close) != run:
                close = body.find("`" * run, close + _run(body, close))
            i = i + run if close == -1 else close + run
            continue
        if body[i] == "|":
            cells.append(body[start:i])
            start = i + 1
        i += 1
    cells.append(body[start:])
    return [c.strip() for c in cells]


def _table(lines: list[str]) -> str:
    head, rows = _cells(lines[0]), [_cells(ln) for ln in lines[2:]]
    out = ["<table><thead><tr>", *(f'<th scope="col">{_inline(c)}</th>' for c in head),
           "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in row) + "</tr>")
    return "".join(out) + "</tbody></table>"


def _run(text: str, i: int) -> int:
    """The length of the run of backticks starting at ``i``."""
    j = i
    while j < len(text) and text[j] == "`":
        j += 1
    return j - i


def _inline(text: str) -> str:
    """Inline Markdown: code spans first (nothing inside them is read), then escapes,
    formulas, bold and italic; every character escaped. The text between marks is one
    piece (a verdict is made for each phone's answer: a piece per character cost 0.05 ms)."""
    out, i, plain = [], 0, []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPABLE:
            plain.append(("lit", text[i + 1]))
            i += 2
            continue
        if ch == "`":
            run = _run(text, i)
            close = text.find("`" * run, i + run)
            while close != -1 and _run(text, close) != run:
                close = text.find("`" * run, close + _run(text, close))
            if close == -1:                     # no closing fence: the backticks are text
                plain.append(("lit", "`" * run))
                i += run
                continue
            code = text[i + run:close]
            if len(code) >= 2 and code[0] == " " and code[-1] == " " and code.strip(" "):
                code = code[1:-1]
            plain.append(("code", code))
            i = close + run
            continue
        if ch == "$":
            close = text.find("$", i + 1)
            if close > i + 1:
                plain.append(("math", text[i + 1:close]))
                i = close + 1
                continue
        if ch == "*":                           # each star a piece of its own
            plain.append(("md", ch))
            i += 1
            continue
        found = _SPECIAL.search(text, i + 1)     # a run of text to the next mark, at once
        end = found.start() if found else len(text)
        plain.append(("md", text[i:end]))
        i = end
    return _emphasis(plain, out)


def _emphasis(pieces: list[tuple[str, str]], out: list[str]) -> str:
    """Pieces of ("md", a star or a run of text without one), ("lit", text), ("code", text),
    ("math", text) as HTML: ``**`` and ``*`` pairs among the "md" stars become strong and
    em."""
    marks = [k for k, (kind, ch) in enumerate(pieces) if kind == "md" and ch == "*"]
    tags: dict[int, str] = {}
    used: set[int] = set()
    for width, tag in ((2, "strong"), (1, "em")):
        opens = []
        k = 0
        while k < len(marks):
            at = marks[k]
            if at in used:
                k += 1
                continue
            run = [at]
            while width == 2 and len(run) < 2 and k + len(run) < len(marks) \
                    and marks[k + len(run)] == at + len(run) and at + len(run) not in used:
                run.append(at + len(run))
            if len(run) < width:
                k += 1
                continue
            if opens and _closes(pieces, at):
                start = opens.pop()
                for n, p in enumerate(start):
                    tags[p] = f"<{tag}>" if n == 0 else ""
                for n, p in enumerate(run):
                    tags[p] = f"</{tag}>" if n == 0 else ""
                used.update(start + run)
            elif _opens(pieces, run[-1]):
                opens.append(run)
            k += len(run)
    for k, (kind, text) in enumerate(pieces):
        if k in tags:
            out.append(tags[k])
        elif kind == "code":
            out.append(f"<code>{html.escape(text, quote=False)}</code>")
        elif kind == "math":
            out.append(f'<span class="math">{_formula(text)}</span>')
        else:
            out.append(html.escape(text, quote=False))
    return "".join(out)


def _opens(pieces, k: int) -> bool:
    """A ``*`` that can open emphasis: followed by a character that is not a space."""
    nxt = pieces[k + 1] if k + 1 < len(pieces) else None
    return nxt is not None and not (nxt[0] == "md" and nxt[1][0].isspace())


def _closes(pieces, k: int) -> bool:
    """A ``*`` that can close emphasis: after a character that is not a space."""
    prev = pieces[k - 1] if k > 0 else None
    return prev is not None and not (prev[0] == "md" and prev[1][-1].isspace())


def _group(tex: str, i: int) -> tuple[str, int]:
    """The argument at ``i``: a ``{...}`` group (nested braces) or one character."""
    if i < len(tex) and tex[i] == "{":
        depth, j = 0, i
        while j < len(tex):
            depth += {"{": 1, "}": -1}.get(tex[j], 0)
            if depth == 0:
                return tex[i + 1:j], j + 1
            j += 1
        return tex[i + 1:], len(tex)
    if i < len(tex) and tex[i] == "\\":
        m = re.match(r"\\([A-Za-z]+|.?)", tex[i:], re.S)   # a lone "\\" at the end too
        end = i + len(m.group(0))
        if m.group(1) in (*_TEXT_COMMANDS, "sqrt"):     # a command with its argument
            _, end = _group(tex, end)
        return tex[i:end], end
    return tex[i:i + 1], i + 1


def _formula(tex: str) -> str:
    """A formula's LaTeX as HTML text (see the module's docstring)."""
    out, i = [], 0
    while i < len(tex):
        ch = tex[i]
        if ch == "\\":
            m = re.match(r"\\([A-Za-z]+|.?)", tex[i:], re.S)   # a lone "\\" at the end too
            name = m.group(1)
            i += len(m.group(0))
            if name in _TEXT_COMMANDS:
                arg, i = _group(tex, i)
                out.append(html.escape(arg, quote=False))
            elif name == "sqrt":
                arg, i = _group(tex, i)
                inner = _formula(arg)
                out.append(f"√{inner}" if len(arg) == 1 else f"√({inner})")
            elif name in _SYMBOLS:
                out.append(_SYMBOLS[name])
            elif name and name in "{}$%&_#":
                out.append(html.escape(name, quote=False))
            else:
                out.append(html.escape(m.group(0), quote=False))
        elif ch in "_^":
            arg, i = _group(tex, i + 1)
            tag = "sub" if ch == "_" else "sup"
            out.append(f"<{tag}>{_formula(arg)}</{tag}>")
        elif ch in "{}":
            i += 1
        else:
            out.append(html.escape(ch, quote=False))
            i += 1
    return "".join(out)
