"""What a lesson file's TOML may ask of the parser, checked on its text before it is parsed.

A lesson file is at most 64 kB, but ``tomllib`` is not linear in every shape of text:

- a **dotted key** of n parts (``a.a.a.a = 1``) makes a tuple for each of its n prefixes and
  keeps them all (``tomllib._parser.key_value_rule``), O(n²) memory: 30,000 parts (a 60 kB
  line) took a process to 3.6 GB of Python objects and 16 s. A header (``[a.a.a]``) of as
  many parts took 2.7 s;
- **nested arrays and inline tables** are parsed by recursion: ~1,000 levels (a 10 kB line)
  raise ``RecursionError``, which no caller of a parser expects.

`check_budget` walks the text once (strings and comments skipped as TOML reads them) and
refuses, before ``tomllib`` sees it, a key or header of more than `MAX_KEY_PARTS` parts, a
value nested more than `MAX_NESTING` deep, and more ``[[step]]`` tables than a lesson holds.
A lesson needs far less: ``[step.question]`` is a key of 2 parts, ``options = [...]`` a
nesting of 1. The scan is approximate only where a file is not TOML anyway (``tomllib`` then
says what is wrong): it never refuses a valid lesson that stays inside these bounds.
"""

from __future__ import annotations

import re

__all__ = ["check_budget", "MAX_KEY_PARTS", "MAX_NESTING"]

MAX_KEY_PARTS = 8      # parts of one dotted key or table header ([step.question]: 2)
MAX_NESTING = 8        # arrays and inline tables inside each other (options = [...]: 1)
_STEP_HEADER = re.compile(r"\[\[\s*(?:step|\"step\"|'step')\s*\]\]")
_QUOTES = ('"""', "'''", '"', "'")


def check_budget(text: str, max_steps: int) -> str | None:
    """Why ``text`` asks more of the TOML parser than a lesson may, in one line (its line in
    the file, what was expected and what was found), or None.

    Examples
    --------
    >>> check_budget('title = "x"\\n[[step]]\\n[step.page]\\nsrc = "a.b"\\n', 16)
    >>> check_budget("a" + ".a" * 20 + " = 1\\n", 16)
    'line 1: expected a key or [table] of at most 8 dotted parts, found one of at least 9'
    >>> check_budget("x = " + "[" * 20 + "]" * 20, 16)
    'line 1: expected values nested at most 8 deep (arrays, inline tables), found 9'
    """
    scan = _Scan(text)
    problem = scan.run()
    if problem is not None:
        return problem
    if scan.steps > max_steps:
        return (f"expected at most {max_steps} steps (a room asks one question a step), "
                f"found {scan.steps} [[step]] tables")
    return None


class _Scan:
    """One pass over a TOML text outside its strings and comments: the deepest nesting, the
    longest key, the ``[[step]]`` headers."""

    def __init__(self, text: str):
        self.text, self.i, self.line = text, 0, 1
        self.stack: list[str] = []          # "[" and "{" of values, innermost last
        self.key = True                     # where a key may be written (a line's start, ...)
        self.header = False                 # inside a [table] or [[table]] header
        self.parts = 1                      # parts of the key or header so far
        self.steps = 0

    def run(self) -> str | None:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in "\"'":
                self._string()
                continue
            problem = self._char(c)
            if problem is not None:
                return f"line {self.line}: {problem}"
            self.i += 1
        return None

    def _char(self, c: str) -> str | None:
        if c == "#":
            end = self.text.find("\n", self.i)
            self.i = (len(self.text) if end < 0 else end) - 1
        elif c == "\n":
            self.line += 1
            if not self.stack:
                self.key, self.header, self.parts = True, False, 1
        elif c == "=" and self.key:
            self.key, self.parts = False, 1
        elif c == "." and (self.key or self.header):
            self.parts += 1
            if self.parts > MAX_KEY_PARTS:
                return (f"expected a key or [table] of at most {MAX_KEY_PARTS} dotted parts, "
                        f"found one of at least {self.parts}")
        elif c == "[" and self.key and not self.stack:
            if _STEP_HEADER.match(self.text, self.i):
                self.steps += 1
            self.key, self.header = False, True
        elif c in "[{" and not self.header:
            self.stack.append(c)
            self.key, self.parts = c == "{", 1
            if len(self.stack) > MAX_NESTING:
                return (f"expected values nested at most {MAX_NESTING} deep (arrays, inline "
                        f"tables), found {len(self.stack)}")
        elif c in "]}" and self.stack and not self.header:
            self.stack.pop()
            self.key = False
        elif c == "," and self.stack and self.stack[-1] == "{":
            self.key, self.parts = True, 1
        return None

    def _string(self) -> None:
        """Past the string that starts here (its lines counted); escapes in basic strings."""
        text = self.text
        quote = next(q for q in _QUOTES if text.startswith(q, self.i))
        j = self.i + len(quote)
        while j < len(text):
            if quote[0] == '"' and text[j] == "\\":
                j += 2
                continue
            if text.startswith(quote, j):
                j += len(quote)
                while len(quote) == 3 and j < len(text) and text[j] == quote[0]:
                    j += 1                  # """a"""" : up to two quotes end the content
                break
            if text[j] == "\n":
                if len(quote) == 1:
                    break                   # not TOML: tomllib says so
                self.line += 1
            j += 1
        self.i = j
