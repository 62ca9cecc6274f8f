"""Reading a model folder's small files as untrusted input: regular files of bounded size,
JSON of bounded depth.

A folder on the allow-list may still be wrong or hostile: a tokenizer that is a link to
``/dev/zero`` (endless), a config of a gigabyte, JSON nested a million deep (Python's parser
recurses). Each file is opened only if it is a regular file (links are followed: the Hugging
Face cache links into its blobs), read up to its limit and refused beyond it, and JSON is
parsed only after its nesting was measured. Every refusal is one ValueError naming the file.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import numpy as np

__all__ = ["MAX_DEPTH", "present", "read_bytes", "read_json", "read_text"]

MAX_DEPTH = 64          # JSON nesting: a config is 3 deep, tokenizer.json about 6
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN, _CLOSE = np.frombuffer(b"[{", np.uint8), np.frombuffer(b"]}", np.uint8)


def present(path) -> bool:
    """Whether something is at ``path`` (after links), without reading it: a file that is not
    regular is present, and refused by name when it is read."""
    try:
        os.stat(path)
    except (OSError, ValueError):
        return False
    return True


def read_bytes(path, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them.

    Raises
    ------
    ValueError
        Missing, not a regular file (a device, a folder, a pipe), or larger than ``limit``.
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as err:
        raise ValueError(f"{path.name} cannot be read: {err.strerror}.") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{path.name} is not a regular file (a link to a device, a folder or "
                         f"a pipe?); give the file itself.")
    if info.st_size > limit:
        raise ValueError(f"{path.name} holds {info.st_size:,} bytes; a file of this kind is at "
                         f"most {limit:,}.")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)          # the file may have grown since stat
    except OSError as err:
        raise ValueError(f"{path.name} cannot be read: {err.strerror}.") from None
    if len(data) > limit:
        raise ValueError(f"{path.name} holds more than {limit:,} bytes; a file of this kind is "
                         f"at most {limit:,}.")
    return data


def read_text(path, limit: int) -> str:
    """``read_bytes`` decoded as UTF-8."""
    try:
        return read_bytes(path, limit).decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{Path(path).name} is not UTF-8 text: {err.reason} at byte "
                         f"{err.start}.") from None


def json_depth(text: str) -> int:
    """How deep the arrays and objects of JSON ``text`` nest (brackets inside strings do not
    count).

    Examples
    --------
    >>> json_depth('{"a": [1, {"b": "[[["}]}')
    3
    """
    bare = np.frombuffer(_STRING.sub('""', text).encode("utf-8"), np.uint8)
    steps = np.isin(bare, _OPEN).astype(np.int64) - np.isin(bare, _CLOSE)
    return int(np.cumsum(steps).max(initial=0))


def read_json(path, limit: int, *, kind: type = dict):
    """The JSON value of ``path`` (a regular file of at most ``limit`` bytes), nested at most
    ``MAX_DEPTH`` deep, of type ``kind``.

    Raises
    ------
    ValueError
        Not readable, too large, not JSON, nested too deep, or not a ``kind``.
    """
    name = Path(path).name
    text = read_text(path, limit)
    if json_depth(text) > MAX_DEPTH:
        raise ValueError(f"{name} nests its JSON more than {MAX_DEPTH} deep: not a model file.")
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        raise ValueError(f"{name} is not valid JSON: {str(err)[:120]}.") from None
    if not isinstance(value, kind):
        raise ValueError(f"{name} must hold a JSON {'object' if kind is dict else kind.__name__}"
                         f"; received {type(value).__name__}.")
    return value
