"""What the server sends from ``assets/``: the phones' page and the token page (files a linter
and a reader can open, not strings in Python). The Streamlit page's own scripts are
``xattn/ui/assets/`` (``xattn.ui.page_assets``).

- `asset`: one file as it is written (``phone.html``, ``work.js``, ``token.js``...);
- `lean`: a file as a phone is sent it (`phone.py` joins its modules with it);
- `joined_modules`: the page's modules as one script; `late_script`: a module the page
  fetches when it first needs it (`LATE_MODULES`: the charts), as one script of its own.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib import resources

__all__ = ["asset", "lean", "joined_modules", "late_script", "late_name", "PHONE_MODULES",
           "PAGE_MODULES", "LATE_MODULES", "LATE_SHARED"]

# The phone page's ES modules (``assets/phone/``) in the page, in the order they are joined:
# each one after the modules it imports. A browser gets them as one script (one request, no
# bundler), inside the page.
PAGE_MODULES = ("strings.js", "dom.js", "controls.js", "late.js", "state.js", "view.js",
                "main.js")
# The modules a page fetches when it first needs one of their functions (``late.js``): the
# answer's charts, about 3 kB gzipped a first load need not carry (a phone sees them at the
# reveal, and fetches them once it has answered). Each is one script of its own
# (`late_script`), cached by the browser under a name that changes with its text.
LATE_MODULES = ("charts.js",)
PHONE_MODULES = PAGE_MODULES + LATE_MODULES            # every module of the phone's
# The page's names a late module may import: ``late.js`` hands it exactly these.
LATE_SHARED = ("say", "el")
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


def joined_modules(folder: str = "phone", names: tuple[str, ...] = PAGE_MODULES) -> str:
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


_IMPORTED = re.compile(r'^import\s*\{([^}]*)\}\s*from\s+"[^"]+";', re.MULTILINE)
_EXPORTED = re.compile(r"^export (?:async )?(?:function|const|let)\s+([\w$]+)", re.MULTILINE)


@cache
def late_script(name: str) -> str:
    """Late module ``assets/phone/NAME`` (`LATE_MODULES`) as one classic script that hands
    the page its exports: ``XATTN_LATE("charts", function (page) {const {say, el} = page;
    ...; return {chart, fit};});`` (``late.js`` calls the function with the page's names of
    `LATE_SHARED`). Its ``import`` lines become that ``const``, its ``export``s the returned
    object; not minified here (`phone_page.late` does). `ValueError` for a module not in
    `LATE_MODULES`, or one that imports a name the page does not hand over."""
    if name not in LATE_MODULES:
        raise ValueError(f"a late module is one of {LATE_MODULES}, received {name!r}")
    text = asset(f"phone/{name}")
    imported = [n.strip() for names in _IMPORTED.findall(text) for n in names.split(",")
                if n.strip()]
    unknown = sorted(set(imported) - set(LATE_SHARED))
    if unknown:
        raise ValueError(f"phone/{name} imports {unknown}: a late module imports only the "
                         f"page's {list(LATE_SHARED)} (late.js hands it those)")
    exported = _EXPORTED.findall(text)
    body = joined_modules(names=(name,))
    body = body[body.index("\n") + 1:body.rindex("\n")]   # "use strict"; and the module
    strict, _, body = body.partition("\n")
    stem = name.removesuffix(".js")
    return (f'XATTN_LATE("{stem}", function (page) {{\n{strict}\n'
            f'const {{ {", ".join(imported)} }} = page;\n{body}\n'
            f'return {{ {", ".join(f"{n}: {n}" for n in exported)} }};\n}});')


@cache
def late_name(name: str) -> str:
    """Late module NAME's file name as served: its stem and a digest of its text
    (``charts-0123abcd.js``), so a browser may keep it for a year: a new text is a new name."""
    digest = hashlib.sha256(late_script(name).encode()).hexdigest()[:10]
    return f"{name.removesuffix('.js')}-{digest}.js"
