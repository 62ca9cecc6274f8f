"""Reading an untrusted ``.npz`` safely: sizes checked before anything is unpacked, no pickle.

- The file's size is checked before it is read (a path's from ``os.stat``, a seekable file's
  by seeking, anything else by reading at most one byte more than the limit).
- The sizes the zip directory declares are added up before any member is unpacked (no zip
  bomb; ``zipfile`` never unpacks a member past its declared size), and each array's ``.npy``
  header is read first: object arrays are refused, a shape claiming more data than the member
  holds is refused before NumPy allocates it, and the caller's own limits on the declared shape
  and dtype (``check_header``) are applied before anything is loaded.
- Arrays are loaded with ``allow_pickle=False``.

Sizes are written in decimal units, as browsers and Streamlit's uploader write them:
1 kB = 1,000 bytes, 1 MB = 1,000,000 bytes.
"""

from __future__ import annotations

import io
import math
import os
import zipfile
import zlib
from collections.abc import Callable

import numpy as np

from xattn._checks import quote

__all__ = ["HeaderCheck", "UnreadableNpz", "quote", "read_npz", "size_text"]

# (name, declared shape, declared dtype) -> problems; an array with any is not loaded
HeaderCheck = Callable[[str, tuple[int, ...], np.dtype], list[str]]

_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
                NotImplementedError, UnicodeDecodeError, SyntaxError)


class UnreadableNpz(Exception):
    """Nothing in the file can be checked: too big, or not a zip."""


def size_text(n: int) -> str:
    """A byte count in decimal units, e.g. ``20 MB``, ``7.6 MB``, ``2.5 kB``, ``999 bytes``.

    Examples
    --------
    >>> size_text(20_000_000), size_text(7_629_400), size_text(2_000), size_text(999)
    ('20 MB', '7.6 MB', '2 kB', '999 bytes')
    """
    if n < 1000:
        return f"{n} bytes"
    value, unit = (n / 1e3, "kB") if n < 10**6 else (n / 1e6, "MB")
    return f"{value:.1f}".removesuffix(".0") + f" {unit}"


def _exact(n: int) -> str:
    """``size_text`` and, where it rounds, the byte count: ``20 MB (20,000,001 bytes)``."""
    return size_text(n) if n < 1000 else f"{size_text(n)} ({n:,} bytes)"


def read_npz(file, names, max_bytes: int, check_header: HeaderCheck | None = None
             ) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """The arrays ``names`` of an .npz, each read only if its header says it is safe.

    ``check_header(name, shape, dtype)`` judges each named array from its ``.npy`` header alone
    (e.g. bounds on its shape): an array it finds problems with is never unpacked.

    Returns
    -------
    arrays : dict of str to ndarray
        The named arrays that were present and safe.
    problems : list of str
        Every problem of the named arrays' headers, one sentence each, and one more when all
        the arrays would take over ``max_bytes`` once unpacked (then none is loaded).
    members : list of str
        Every array name in the file.

    Raises
    ------
    UnreadableNpz
        The file is over ``max_bytes``, or is not a zip.
    TypeError
        ``file`` is not bytes, a path or a binary file object.
    """
    data = _read_bounded(file, max_bytes)
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _READ_ERRORS:
        raise UnreadableNpz(
            f"This is not an .npz file (a zip of NumPy arrays, as numpy.savez writes): the "
            f"{size_text(len(data))} received start with {quote(data[:40])}.") from None
    with archive:
        return _unpack(archive, names, max_bytes, check_header)


def _read_bounded(file, max_bytes: int) -> bytes:
    """The file's bytes; its size is checked before anything is read."""
    if isinstance(file, (bytes, bytearray, memoryview)):
        data = bytes(file)
        size = len(data)
    elif isinstance(file, (str, os.PathLike)):
        size, data = os.stat(file).st_size, None
    elif hasattr(file, "read"):
        if getattr(file, "seekable", lambda: False)():
            start = file.tell()
            size = file.seek(0, io.SEEK_END) - start
            file.seek(start)
            data = None
        else:
            data = file.read(max_bytes + 1)
            size = len(data)
    else:
        raise TypeError(f"file must be bytes, a path or a binary file object; received "
                        f"{type(file).__name__}.")
    if size > max_bytes:
        raise UnreadableNpz(f"The file is {_exact(size)}; the limit is {_exact(max_bytes)}.")
    if data is None:
        if isinstance(file, (str, os.PathLike)):
            with open(file, "rb") as fh:
                data = fh.read(max_bytes + 1)
        else:
            data = file.read(max_bytes + 1)
    if not isinstance(data, bytes):
        raise TypeError(f"file must be opened in binary mode; read() returned "
                        f"{type(data).__name__}.")
    return data


def _unpack(archive: zipfile.ZipFile, names, max_bytes: int, check_header):
    members = {info.filename[:-4]: info for info in archive.infolist()
               if info.filename.endswith(".npy")}
    headers = {}
    for name in (n for n in names if n in members):    # the headers alone: nothing unpacked
        try:
            headers[name] = _header_problems(archive, members[name], name, check_header)
        except _READ_ERRORS as err:
            headers[name] = [f"{name} could not be read from the archive ({quote(str(err))})."]
    problems = [p for found in headers.values() for p in found]
    unpacked = sum(info.file_size for info in members.values())
    if unpacked > max_bytes:          # what the zip directory declares: nothing is unpacked
        return {}, problems + [f"The arrays would take {size_text(unpacked)} once unpacked; "
                               f"the limit is {size_text(max_bytes)}."], list(members)
    arrays = {}
    for name in (n for n, found in headers.items() if not found):
        try:
            arrays[name] = np.load(io.BytesIO(archive.read(members[name])), allow_pickle=False)
        except _READ_ERRORS as err:
            problems.append(f"{name} could not be read from the archive ({quote(str(err))}).")
    return arrays, problems, list(members)


def _header_problems(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str,
                     check_header: HeaderCheck | None) -> list[str]:
    """Why the array cannot be loaded (safely, or at all), judged from its .npy header alone."""
    with archive.open(info) as fp:
        version = np.lib.format.read_magic(fp)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) \
            else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(fp)
    if dtype.hasobject:
        return [f"{name} holds Python objects (dtype object), which only pickle can load; "
                f"pickled data is never loaded. Save plain numbers and unicode strings."]
    claimed = math.prod(shape) * dtype.itemsize
    if claimed > info.file_size:
        return [f"{name}'s header claims shape {shape} of {dtype} ({size_text(claimed)}) but the "
                f"archive holds {size_text(info.file_size)}."]
    return check_header(name, shape, dtype) if check_header is not None else []
