"""What the server sends from ``assets/``: the phones' page and the token page (files a linter
and a reader can open, not strings in Python). The Streamlit page's own scripts are
``xattn/ui/assets/`` (``xattn.ui.page_assets``).

- `asset`: one file as it is written (``phone.html``, ``work.js``, ``token.js``...);
- `lean`: a file as a phone is sent it (`phone.py` joins its modules with it).
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

__all__ = ["asset", "lean", "joined_modules", "PHONE_MODULES"]

# The phone page's ES modules (``assets/phone/``), in the order they are joined: each one
# after the modules it imports. A browser gets them as one script (one request, no bundler).
PHONE_MODULES = ("strings.js", "dom.js", "controls.js", "charts.js", "state.js", "view.js",
                 "main.js")
_IMPORT = re.compile(r'^import\s[^;]*?\sfrom\s+"[^"]+";[ \t]*\n', re.MULTILINE)
_EXPORT = re.compile(r"^export (?=(?:async )?function |const |let )", re.MULTILINE)


@cache
def asset(name: str) -> str:
    """The text of ``assets/NAME`` (e.g. ``"work.js"``); `FileNotFoundError` if none."""
    if not isinstance(name, str):
        raise TypeError(f"an asset's name is a str, received {type(name).__name__}")
    return (resources.files("xattn.server") / "assets" / name).read_text(encoding="utf-8")


def lean(text: str) -> str:
    """A script as a phone is sent it: each line without its indentation, without the lines
    that are only a ``//`` comment, and without a ``//`` comment after a line's code (the
    files keep all three for their readers; about 2 kB less on the wire, gzipped). Sound
    because no string of theirs spans lines, and a comment is cut only where every quote of
    the line's code before it is closed and no regex literal is in that code."""
    return "\n".join(_uncommented(line.strip()) for line in text.splitlines()
                     if not line.lstrip().startswith("//"))


_TRAILING = re.compile(r"(?<=\S)[ \t]+//[ \t].*$")
_STRING = re.compile(r'"[^"]*"')


def _uncommented(line: str) -> str:
    cut = _TRAILING.search(line)
    if cut is None:
        return line
    code = line[:cut.start()]
    if any(code.count(q) % 2 for q in "\"'`") or "/" in _STRING.sub("", code):
        return line                    # a quote open, or a regex literal: kept as it is
    return code


def joined_modules(folder: str = "phone", names: tuple[str, ...] = PHONE_MODULES) -> str:
    """The modules ``assets/FOLDER/NAME`` as one classic script: their ``import`` lines out,
    ``export`` dropped from their declarations, in one function's scope (strict mode). Sound
    while no two modules declare the same top-level name (a test checks)."""
    bodies = []
    for name in names:
        text = _EXPORT.sub("", _IMPORT.sub("", asset(f"{folder}/{name}")))
        if re.search(r"^(import|export)\b", text, re.MULTILINE):
            raise ValueError(f"{folder}/{name}: an import or export this join cannot take "
                             "out (one `import {...} from \"./x.js\";`, `export` on a "
                             "declaration)")
        bodies.append(text)
    return '(function () {\n"use strict";\n' + "\n".join(bodies) + "\n})();"
