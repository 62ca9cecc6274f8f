"""Reading an untrusted ``.npz`` safely: sizes checked before anything is unpacked, no pickle.

- The file's size is checked before it is read (a path's from ``os.stat``, a seekable file's
  by seeking, anything else by reading at most one byte more than the limit).
- The sizes the zip directory declares are added up before any member is unpacked (no zip
  bomb; ``zipfile`` never unpacks a member past its declared size), and each array's ``.npy``
  header is read first: object arrays are refused and a shape claiming more data than the
  member holds is refused before NumPy allocates it.
- Arrays are loaded with ``allow_pickle=False``.
"""

from __future__ import annotations

import io
import math
import os
import zipfile
import zlib

import numpy as np

from xattn._checks import quote

__all__ = ["UnreadableNpz", "quote", "read_npz", "size_text"]

_READ_ERRORS = (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError, RuntimeError,
                NotImplementedError, UnicodeDecodeError, SyntaxError)


class UnreadableNpz(Exception):
    """Nothing in the file can be checked: too big, not a zip, or too big once unpacked."""


def size_text(n: int) -> str:
    if n < 2**10:
        return f"{n} bytes"
    return f"{n / 2**10:.1f} kB" if n < 2**20 else f"{n / 2**20:.1f} MB"


def read_npz(file, names, max_bytes: int) -> tuple[dict[str, np.ndarray], list[str], list[str]]:
    """The arrays ``names`` of an .npz, each read only if its header says it is safe.

    Returns
    -------
    arrays : dict of str to ndarray
        The named arrays that were present and safe.
    problems : list of str
        One sentence per named array that could not be loaded.
    members : list of str
        Every array name in the file.

    Raises
    ------
    UnreadableNpz
        The file is over ``max_bytes``, is not a zip, or its arrays would be over ``max_bytes``
        once unpacked.
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
        return _unpack(archive, names, max_bytes)


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
        raise UnreadableNpz(f"The file is {size_text(size)}; the limit is {size_text(max_bytes)}.")
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


def _unpack(archive: zipfile.ZipFile, names, max_bytes: int):
    members = {info.filename[:-4]: info for info in archive.infolist()
               if info.filename.endswith(".npy")}
    unpacked = sum(info.file_size for info in members.values())
    if unpacked > max_bytes:
        raise UnreadableNpz(f"The arrays would take {size_text(unpacked)} once unpacked; the "
                            f"limit is {size_text(max_bytes)}.")
    arrays, problems = {}, []
    for name in names:
        if name not in members:
            continue
        try:
            problem = _header_problem(archive, members[name], name)
            if problem is None:
                arrays[name] = np.load(io.BytesIO(archive.read(members[name])),
                                       allow_pickle=False)
        except _READ_ERRORS as err:
            problem = f"{name} could not be read from the archive ({quote(str(err))})."
        if problem:
            problems.append(problem)
    return arrays, problems, list(members)


def _header_problem(archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str) -> str | None:
    """Why the array cannot be loaded safely, judged from its .npy header alone."""
    with archive.open(info) as fp:
        version = np.lib.format.read_magic(fp)
        read = np.lib.format.read_array_header_1_0 if version == (1, 0) \
            else np.lib.format.read_array_header_2_0
        shape, _, dtype = read(fp)
    if dtype.hasobject:
        return (f"{name} holds Python objects (dtype object), which only pickle can load; "
                f"pickled data is never loaded. Save plain numbers and unicode strings.")
    claimed = math.prod(shape) * dtype.itemsize
    if claimed > info.file_size:
        return (f"{name}'s header claims shape {shape} of {dtype} ({size_text(claimed)}) but the "
                f"archive holds {size_text(info.file_size)}.")
    return None
