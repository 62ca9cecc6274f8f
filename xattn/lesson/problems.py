"""How a lesson file's problems are found and said: the line of each key (`Where`), the
list of problems each naming its line, step and key (`Problems`), a TOML error in the same
words, and the checks of a lesson's texts (their length and the Markdown they may use: no
links, images or HTML; `checked_text`) and of unknown keys (`unknown_keys`)."""

from __future__ import annotations

import re

from xattn._checks import quote

__all__ = ["Where", "Problems", "toml_problem", "shown", "checked_text", "unwrap", "unknown_keys",
           "MAX_TEXT"]


MAX_TEXT = 4_000             # characters of one text (a step's paragraph, an answer's words)


# Markdown a lesson may not write outside code spans: links, images, HTML, bare addresses,
# Streamlit's directives (:red[...], :material/...:).
REFUSED = re.compile(r"\]\(|<[A-Za-z/!?]|https?://|www\.|:[a-z]+\[|:material/")


CODE = re.compile(r"(`+).*?\1", re.S)


def toml_problem(message: str) -> str:
    """tomllib's "Invalid value (at line 3, column 9)" as "line 3: ..."."""
    found = re.search(r"\(at line (\d+), column (\d+)\)", message)
    if not found:
        return f"not TOML: {message}"
    what = message[:found.start()].strip()
    return f"line {found.group(1)}: not TOML ({what[0].lower() + what[1:]}, column " \
           f"{found.group(2)})"


class Where:
    """The line of each key of each step: ``(step, table, key)`` to a line number."""

    def __init__(self, lines: dict):
        self.lines = lines

    @classmethod
    def of(cls, text: str) -> Where:
        lines, step, table, inside = {}, -1, "", None
        for n, line in enumerate(text.splitlines(), 1):
            if inside:                                    # a multi-line string goes on
                if inside in line:
                    inside = None
                continue
            head = re.match(r"\s*\[\[\s*([\w.\"-]+)\s*\]\]", line) or re.match(
                r"\s*\[\s*([\w.\"-]+)\s*\]", line)
            if head:
                name = head.group(1).replace('"', "")
                if line.lstrip().startswith("[[") and name == "step":
                    step, table = step + 1, ""
                else:
                    table = name.removeprefix("step.") if step >= 0 else name
                lines.setdefault((step, table, None), n)
                continue
            key = re.match(r"\s*([\w-]+|\"[^\"]*\")\s*=", line)
            if key:
                lines.setdefault((step, table, key.group(1).strip('"')), n)
                rest = line[key.end():]
                for quotes in ('"""', "'''"):
                    if rest.count(quotes) == 1:
                        inside = quotes
        return cls(lines)

    def line(self, step: int, table: str = "", key: str | None = None) -> int:
        for place in ((step, table, key), (step, table, None), (step, "", table or key),
                      (step, "", None)):
            if place in self.lines:
                return self.lines[place]
        return 0


class Problems:
    """Problems found so far, each placed at its line."""

    def __init__(self, where: Where):
        self.where, self.found = where, []

    def add(self, step: int, table: str, key: str | None, text: str) -> None:
        line = self.where.line(step, table, key)
        place = ([f"step {step + 1}"] if step >= 0 else []) + (
            [f"`{table}.{key}`" if table else f"`{key}`"] if key else
            [f"[{'step.' if step >= 0 else ''}{table}]"] if table else [])
        self.found.append((f"line {line}: " if line else "") + ", ".join(place)
                          + (": " if place else "") + text)


def shown(value) -> str:
    """A found value in a problem's words: a missing key is "nothing", never "None"."""
    return "nothing (the key is missing)" if value is None else quote(value, 60)


def checked_text(problems, step, table, key, value, *, most=MAX_TEXT, words=True,
          required=False) -> str:
    """``value`` if it is a text a lesson may show, else ""."""
    if value is None:
        if required:
            problems.add(step, table, key, "expected text, found nothing (it is required)")
        return ""
    if not isinstance(value, str):
        problems.add(step, table, key, f"expected text, found {shown(value)}")
        return ""
    if len(value) > most:
        problems.add(step, table, key, f"expected at most {most:,} characters, found "
                                       f"{len(value):,}")
        return ""
    if words:
        value = unwrap(value)
        bare = CODE.sub("", value)
        bad = REFUSED.search(bare)
        if bad:
            problems.add(step, table, key, "expected the lesson's Markdown (bold, italics, "
                         "code, $formulas$, lists, tables), found a link, image, address or "
                         f"HTML ({shown(bare[bad.start():bad.start() + 20])}): write an "
                         "address as code, between backticks")
            return ""
    return value


BLOCK_LINE = re.compile(r"\s*([-*+] |\d+[.)] |\|)")


def unwrap(text: str) -> str:
    """A text as Markdown reads it, with the author's line wrapping undone: lines of one
    paragraph joined by a space; blank lines, list items and table rows kept as they are."""
    out: list[str] = []
    for line in text.strip().splitlines():
        line = line.rstrip()
        if out and out[-1] and line and not BLOCK_LINE.match(line) \
                and not BLOCK_LINE.match(out[-1]):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


def unknown_keys(problems, step, table, data: dict, known) -> None:
    for key in data:
        if key not in known:
            problems.add(step, table, key, f"unknown key {shown(key)}: expected one of "
                         + ", ".join(known))
