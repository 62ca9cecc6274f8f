"""Whitespace and comments out of the phone page's own CSS and JavaScript, as a phone is sent
them (``phone_page.py``): about 1 kB less on the wire, gzipped (docs/phone-page.md).

Not a rewrite: no name is changed, no statement moved. The text is read as its tokens
(strings, template literals, regular expressions, comments, the rest) and only the space
between two tokens and the comments go:

- `js`: a run of spaces becomes one space where two words would otherwise touch (``return
  x``), or two signs would make another (``a - -b``), else nothing; a line break stays
  unless the line ends in ``{``, ``;`` or ``,`` or the next starts with ``}`` (where the
  break changes nothing), so a statement that relies on a line break keeps it;
- `css`: comments out, no space around ``{ } ; , >`` nor after ``:``, no ``;`` before
  ``}``; spaces inside strings and between words (``.pill code``, ``1px solid``) kept.
"""

from __future__ import annotations

import re

__all__ = ["js", "css"]

_WORD = re.compile(r"[\w$\u0080-\uffff]")
_QUOTES = "\"'"
# words after which a ``/`` opens a regular expression, not a division
_BEFORE_REGEX = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete",
                 "void", "throw", "instanceof", "yield", "await"}


def _check(text) -> str:
    if not isinstance(text, str):
        raise TypeError(f"a script or style is a str, received {type(text).__name__}")
    return text


def js(text: str) -> str:
    """``text`` (JavaScript) without its comments and the spaces no token needs.

    >>> js("const a = b  +  1;  // one more\\nif (a) {\\n  f( a - -1 );\\n}")
    'const a=b+1;if(a){f(a- -1);}'
    """
    return "".join(_JS(_check(text)).run())


class _JS:
    """One pass over a script: `run` yields the output's pieces."""

    def __init__(self, text: str):
        self.text, self.i, self.out_last, self.word = text, 0, "", ""
        self.braces: list[int] = []      # open ``{`` counts of each ``${`` of a template

    def run(self):
        t, n = self.text, len(self.text)
        gap = ""                         # the whitespace (and comments) since the last token
        while self.i < n:
            c = t[self.i]
            if c in " \t\r\n":
                gap += c
                self.i += 1
            elif t.startswith("//", self.i):
                end = t.find("\n", self.i)
                self.i = n if end < 0 else end
                gap += " "
            elif t.startswith("/*", self.i):
                end = t.find("*/", self.i + 2)
                if end < 0:
                    raise ValueError("a script's /* comment is not closed")
                gap += "\n" if "\n" in t[self.i:end] else " "
                self.i = end + 2
            else:
                token = self._token(c)
                yield self._space(gap, token[0]) + token
                self.out_last, gap = token[-1], ""

    def _space(self, gap: str, nxt: str) -> str:
        if not gap or not self.out_last:
            return ""
        a = self.out_last
        if "\n" in gap and a not in "{;," and nxt != "}":
            return "\n"
        touching = (_WORD.match(a) and _WORD.match(nxt)) or (a in "+-" and nxt in "+-") \
            or (a == "/" and nxt in "/*") or (a.isdigit() and nxt == ".")
        return " " if touching else ""

    def _token(self, c: str) -> str:
        t, start = self.text, self.i
        if c in _QUOTES:
            self.i = _string_end(t, start, c)
        elif c == "`" or (c == "}" and self.braces and self.braces[-1] == 0):
            if c == "}":
                self.braces.pop()
            self._template()
        elif c == "/" and self._regex_here():
            self.i = _regex_end(t, start)
        elif _WORD.match(c):
            m = re.compile(r"[\w$\u0080-\uffff]+").match(t, start)
            self.i = m.end()
            self.word = m.group()
            return self.word
        else:
            self.i += 1
            if self.braces and c in "{}":
                self.braces[-1] += 1 if c == "{" else -1
        self.word = ""
        return t[start:self.i]

    def _template(self) -> None:
        """From a backquote (or the ``}`` closing a ``${``) to the next backquote or ``${``."""
        t, i = self.text, self.i + 1
        while i < len(t):
            if t[i] == "\\":
                i += 2
            elif t[i] == "`":
                self.i = i + 1
                return
            elif t.startswith("${", i):
                self.braces.append(0)
                self.i = i + 2
                return
            else:
                i += 1
        raise ValueError("a script's template literal is not closed")

    def _regex_here(self) -> bool:
        a = self.out_last
        if not a:
            return True
        if _WORD.match(a):
            return self.word in _BEFORE_REGEX
        return a not in ")]}"


def _string_end(t: str, i: int, quote: str) -> int:
    i += 1
    while i < len(t) and t[i] != quote:
        if t[i] == "\n":
            raise ValueError(f"a script's string spans lines: {t[max(0, i - 40):i]!r}")
        i += 2 if t[i] == "\\" else 1
    if i >= len(t):
        raise ValueError("a script's string is not closed")
    return i + 1


def _regex_end(t: str, i: int) -> int:
    i += 1
    in_class = False
    while i < len(t) and (in_class or t[i] != "/"):
        if t[i] == "\n":
            raise ValueError(f"a script's regular expression spans lines: "
                             f"{t[max(0, i - 40):i]!r}")
        if t[i] == "\\":
            i += 1
        elif t[i] == "[":
            in_class = True
        elif t[i] == "]":
            in_class = False
        i += 1
    i += 1
    while i < len(t) and t[i].isalpha():        # its flags
        i += 1
    return i


_CSS_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|/\*.*?\*/|\s+|[^"\'/\s]+|/',
                        re.S)


def css(text: str) -> str:
    """``text`` (CSS) without its comments and the spaces no rule needs.

    >>> css('a , b > c { color: red ;  font: 1px "Segoe  UI" ; } /* x */')
    'a,b>c{color:red;font:1px "Segoe  UI"}'
    """
    pieces = []
    for m in _CSS_TOKEN.finditer(_check(text)):
        tok = m.group()
        if tok.startswith("/*"):
            tok = " "
        elif tok[0] not in _QUOTES:
            tok = re.sub(r"\s+", " ", tok)
        pieces.append(tok)
    out = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|\s*;\s*(?=})|\s*([{};,>])\s*'
                 r'|:\s+|\s+', _css_gap, "".join(pieces))
    return out.strip()


def _css_gap(m: re.Match) -> str:
    tok = m.group()
    if tok[0] in _QUOTES:
        return tok
    if m.group(1):
        return m.group(1)
    if ";" in tok:
        return ""                        # the last declaration's: before a }
    return ":" if tok[0] == ":" else " "

