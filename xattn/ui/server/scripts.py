"""The page's and the phones' JavaScript, read from ``assets/`` (files a linter and a
reader can open, not strings in Python).

- `asset`: one file as it is written (the Streamlit page's components: ``follow.js``,
  ``claim.js``...);
- `lean`: a file as a phone is sent it (`phone.py` joins its modules with it).
"""

from __future__ import annotations

from functools import cache
from importlib import resources

__all__ = ["asset", "lean"]


@cache
def asset(name: str) -> str:
    """The text of ``assets/NAME`` (e.g. ``"follow.js"``); `FileNotFoundError` if none."""
    if not isinstance(name, str):
        raise TypeError(f"an asset's name is a str, received {type(name).__name__}")
    return (resources.files("xattn.ui.server") / "assets" / name).read_text(encoding="utf-8")


def lean(text: str) -> str:
    """A script as a phone is sent it: each line without its indentation and without the
    lines that are only a ``//`` comment (the files keep both for their readers; about 1.4 kB
    less on the wire, gzipped). Sound because no string of theirs spans lines."""
    return "\n".join(line.strip() for line in text.splitlines()
                     if not line.lstrip().startswith("//"))
