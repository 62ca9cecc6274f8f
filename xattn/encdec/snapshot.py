"""A weights file's private snapshot: what a server maps instead of the deployer's file.

A memory-mapped file that is overwritten in place under a running server (a deployer copying
new weights over old) kills the process with SIGBUS the next time it touches a page the
write shortened or replaced, and with it every class it serves. So the file is copied once
into a folder of this user's (``$XATTN_WEIGHTS_CACHE``, default ``<tmp>/xattn-weights-<uid>``,
mode 0700), read-only, under a name made from the file's path, device, inode, size and
modification time, and that copy is what gets mapped. Whatever later happens to the
deployer's file, the mapping stays valid; the next load of a changed file makes a new
snapshot and removes the name of the old one (a process still mapping it keeps its pages:
Linux frees them with the last mapping). Every process of a machine that loads the same
file maps the same snapshot, so they still share one copy of the weights in the page cache.

Where no snapshot can be written (a read-only or full disk), the file is read into this
process's own memory instead: never mapped in place.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import tempfile
from pathlib import Path

__all__ = ["CACHE_ENV", "cache_folder", "snapshot"]

CACHE_ENV = "XATTN_WEIGHTS_CACHE"
_CHUNK = 8 << 20


def cache_folder() -> Path:
    """Where this user's snapshots go (made with mode 0700 when first used)."""
    given = os.environ.get(CACHE_ENV, "").strip()
    return Path(given) if given else Path(tempfile.gettempdir()) / f"xattn-weights-{os.getuid()}"


def _identity(fd: int, path: Path) -> tuple[str, str]:
    info = os.fstat(fd)
    source = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    version = hashlib.sha256(f"{info.st_dev}|{info.st_ino}|{info.st_size}|"
                             f"{info.st_mtime_ns}".encode()).hexdigest()[:16]
    return source, version


def _copy(fd: int, out: int, size: int) -> None:
    done = 0
    while done < size:
        chunk = os.pread(fd, min(_CHUNK, size - done), done)
        if not chunk:
            raise ValueError("the file became shorter while it was read")
        os.write(out, chunk)
        done += len(chunk)


def snapshot(fd: int, path: Path, size: int) -> tuple[int, bytearray | None]:
    """A descriptor of ``path``'s snapshot (``fd``, the deployer's file, is closed), or
    ``(-1, data)``: the file's bytes read into memory where no snapshot can be written.

    Raises
    ------
    ValueError
        The file changed while it was copied (a deployer writing it now): try again later.
    """
    source, version = _identity(fd, path)
    try:
        # inside the try: with no temp folder at all (a read-only root without a tmpfs),
        # tempfile.gettempdir() raises FileNotFoundError, and the file is read into memory
        folder = cache_folder()
        target = folder / f"{source}-{version}.safetensors"
        try:
            snap = os.open(target, os.O_RDONLY)
            if os.fstat(snap).st_size == size:
                os.close(fd)
                return snap, None
            os.close(snap)                        # a partial one cannot be: replaced below
        except FileNotFoundError:
            pass
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = folder / f".{source}-{version}.{os.getpid()}.{secrets.token_hex(4)}"
        out = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
        try:
            _copy(fd, out, size)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        finally:
            os.close(out)
        if _identity(fd, path) != (source, version) or os.fstat(fd).st_size != size:
            tmp.unlink(missing_ok=True)
            raise ValueError(f"{path.name} changed while it was read (its files are being "
                             "written now?): try again in a moment.")
        os.replace(tmp, target)
        for old in folder.glob(f"{source}-*.safetensors"):
            if old != target:
                old.unlink(missing_ok=True)       # a process mapping it keeps its pages
        snap = os.open(target, os.O_RDONLY)
        os.close(fd)
        return snap, None
    except OSError:
        data = bytearray(size)
        view, done = memoryview(data), 0
        while done < size:
            n = os.preadv(fd, [view[done:done + _CHUNK]], done)
            if n <= 0:
                os.close(fd)
                raise ValueError(f"{path.name} became shorter while it was read: try again "
                                 "in a moment.") from None
            done += n
        os.close(fd)
        return -1, data
