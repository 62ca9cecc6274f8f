"""A safetensors file read as it is: its header checked, its arrays memory-mapped (from a
private snapshot of the file, ``xattn.encdec.snapshot``, never the deployer's file itself).

The format is an 8-byte little-endian header length, a JSON header (name -> dtype, shape,
data_offsets) and the raw little-endian arrays. Mapping the file instead of reading it means
loading allocates nothing for the weights (the peak while loading is the weights' pages, not
twice them), and every server process that maps the same file shares one copy of them in the
page cache. float16 and bfloat16 tensors stay as stored (bfloat16 as its 16-bit patterns,
``xattn._floats.BFLOAT16``); the model computes in float32.

The header is untrusted: its length, every dtype, shape and offset are checked against the
file's size before any array is made, and a tensor whose bytes lie outside the file, or whose
shape does not match its byte count, is refused with its name.
"""

from __future__ import annotations

import mmap
import os
import stat
from dataclasses import dataclass
from math import prod
from pathlib import Path

import numpy as np

from xattn._floats import BFLOAT16
from xattn.encdec.files import MAX_DEPTH, json_depth
from xattn.encdec.snapshot import snapshot

__all__ = ["DTYPES", "TensorInfo", "read_header", "map_tensors"]

MAX_HEADER = 100 << 20       # safetensors' own limit (100 MB)
DTYPES = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": BFLOAT16,
          "F64": np.dtype("<f8"), "I64": np.dtype("<i8"), "I32": np.dtype("<i4"),
          "I16": np.dtype("<i2"), "I8": np.dtype("i1"), "U8": np.dtype("u1"),
          "BOOL": np.dtype("?")}


@dataclass(frozen=True)
class TensorInfo:
    """One tensor of a safetensors file: ``dtype`` (a key of ``DTYPES``), ``shape`` and its
    bytes ``start:end`` from the start of the data (after the header)."""

    dtype: str
    shape: tuple[int, ...]
    start: int
    end: int


def _open(path: Path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as err:
        raise ValueError(f"{path.name} cannot be read: {err.strerror}.") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ValueError(f"{path.name} is not a regular file; give the weights file itself.")
    return fd, info.st_size


def _header(fd, size: int, name: str) -> tuple[dict, int]:
    """The header's JSON object and where the data starts (``fd``: a file descriptor, or
    the file's bytes)."""
    import json

    if size < 8:
        raise ValueError(f"{name} is not a safetensors file: {size} bytes, fewer than its "
                         f"8-byte header length.")
    def pread(n: int, offset: int) -> bytes:
        return bytes(fd[offset:offset + n]) if isinstance(fd, bytearray) else \
            os.pread(fd, n, offset)

    n = int.from_bytes(pread(8, 0), "little")
    if n > min(MAX_HEADER, size - 8):
        raise ValueError(f"{name} is not a safetensors file: its header says {n:,} bytes, the "
                         f"file holds {size - 8:,} after the length (and a header is at most "
                         f"{MAX_HEADER:,}).")
    raw = pread(n, 8)
    try:
        text = raw.decode("utf-8")
        if json_depth(text) > MAX_DEPTH:
            raise ValueError("nested too deep")
        header = json.loads(text)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise ValueError(f"{name} is not a safetensors file: its header is not JSON "
                         f"({str(err)[:80]}).") from None
    if not isinstance(header, dict):
        raise ValueError(f"{name} is not a safetensors file: its header is not a JSON object.")
    return header, 8 + n


def _info(name: str, entry, data_size: int, file: str) -> TensorInfo:
    if not isinstance(entry, dict):
        raise ValueError(f"{file}: tensor {name[:80]!r} is described by a "
                         f"{type(entry).__name__}, not an object.")
    dtype, shape, offsets = entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")
    if dtype not in DTYPES:
        raise ValueError(f"{file}: tensor {name[:80]!r} has dtype {str(dtype)[:20]!r}; "
                         f"expected one of {', '.join(DTYPES)}.")
    if not isinstance(shape, list) or not all(type(d) is int and d >= 0 for d in shape) or \
            len(shape) > 8:
        raise ValueError(f"{file}: tensor {name[:80]!r} has shape {str(shape)[:40]}; expected "
                         f"a list of at most 8 sizes >= 0.")
    if not (isinstance(offsets, list) and len(offsets) == 2
            and all(type(o) is int for o in offsets) and 0 <= offsets[0] <= offsets[1]
            <= data_size):
        raise ValueError(f"{file}: tensor {name[:80]!r} lies at {str(offsets)[:40]}, outside "
                         f"the file's {data_size:,} bytes of data.")
    if prod(shape) * DTYPES[dtype].itemsize != offsets[1] - offsets[0]:
        raise ValueError(f"{file}: tensor {name[:80]!r} of shape {tuple(shape)} and dtype "
                         f"{dtype} needs {prod(shape) * DTYPES[dtype].itemsize:,} bytes; the "
                         f"header gives it {offsets[1] - offsets[0]:,}.")
    return TensorInfo(dtype, tuple(shape), offsets[0], offsets[1])


def read_header(path) -> dict[str, TensorInfo]:
    """Every tensor a safetensors file declares, checked against the file's size; nothing is
    mapped or allocated.

    Raises
    ------
    ValueError
        Not a regular file, not safetensors, or a tensor declared outside the file.
    """
    path = Path(path)
    fd, size = _open(path)
    try:
        header, start = _header(fd, size, path.name)
    finally:
        os.close(fd)
    header.pop("__metadata__", None)
    return {name: _info(name, entry, size - start, path.name) for name, entry in header.items()}


def map_tensors(path, names=None) -> dict[str, np.ndarray]:
    """The tensors ``names`` (default: all) of a safetensors file as read-only arrays that map
    the file: nothing is copied, and processes mapping one file share its pages.

    Raises
    ------
    ValueError
        As ``read_header``, or a name the file does not hold.
    """
    path = Path(path)
    fd, size = _open(path)
    fd, data = snapshot(fd, path, size)        # never the deployer's file itself
    try:
        header, start = _header(fd if data is None else data, size, path.name)
        header.pop("__metadata__", None)
        infos = {n: _info(n, e, size - start, path.name) for n, e in header.items()}
        wanted = infos if names is None else {n: infos[n] for n in names}
        if data is None:
            mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ) if size else None
        else:
            mapped = data
    except KeyError as err:
        raise ValueError(f"{path.name} has no tensor {str(err)[:80]}.") from None
    finally:
        if fd >= 0:
            os.close(fd)              # the mapping keeps the file's pages, not the descriptor
    out = {}
    for name, t in wanted.items():
        dtype = DTYPES[t.dtype]
        out[name] = np.frombuffer(mapped, dtype, prod(t.shape),
                                  start + t.start).reshape(t.shape)
        out[name].flags.writeable = False
    return out
