"""A least-recently-used cache bounded by bytes, not entries, safe to share between threads.

A classroom server runs every student's session in its own thread of one process, and its
memory is small (1 GB on Streamlit Community Cloud). Entry counts do not bound memory: one
result may hold a few kilobytes or a few megabytes. This cache is told each value's size and
drops the least recently used values until the total fits.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import fields, is_dataclass

import numpy as np

from xattn._checks import check_int

__all__ = ["ByteLRU", "nbytes"]


def nbytes(value) -> int:
    """Approximate memory held by ``value``: arrays by their buffers, containers recursively.

    Examples
    --------
    >>> nbytes(np.zeros((4, 8)))   # 256 bytes of data and the array object
    368
    """
    if isinstance(value, np.ndarray):
        return int(value.nbytes) + 112
    if isinstance(value, (str, bytes, int, float, bool, type(None))):
        return sys.getsizeof(value)
    if is_dataclass(value) and not isinstance(value, type):
        return 64 + sum(nbytes(getattr(value, f.name)) for f in fields(value))
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(nbytes(k) + nbytes(v) for k, v in value.items())
    if isinstance(value, (list, tuple, set, frozenset)):
        return sys.getsizeof(value) + sum(nbytes(v) for v in value)
    own = getattr(type(value), "nbytes", None)       # an object that reports its own size
    if isinstance(own, property):
        return int(value.nbytes)
    return sys.getsizeof(value)


_MISSING = object()


class _Making:
    """One key being made: the maker holds ``lock``; ``value`` is what it made."""

    __slots__ = ("lock", "callers", "value")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.callers = 0
        self.value = _MISSING


class ByteLRU:
    """A mapping of at most ``max_bytes`` (by `nbytes`), least recently used dropped first.

    ``get_or_make(key, make)`` is the usual entry point. Values are shared, not copied: store
    read-only data (frozen dataclasses, arrays with ``writeable = False``).

    Examples
    --------
    >>> cache = ByteLRU(1000)
    >>> a = cache.get_or_make("a", lambda: np.zeros(50))   # 512 bytes
    >>> b = cache.get_or_make("b", lambda: np.zeros(50))   # "a" is dropped to make room
    >>> "a" in cache, "b" in cache, cache.total_bytes
    (False, True, 512)
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = check_int(max_bytes, "max_bytes", minimum=1)
        self._lock = threading.Lock()
        self._data: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._making: dict[Hashable, _Making] = {}
        self.total_bytes = 0
        self.hits = self.misses = 0

    def __repr__(self) -> str:
        return (f"ByteLRU({len(self._data)} entries, {self.total_bytes / 2**20:.1f} of "
                f"{self.max_bytes / 2**20:.1f} MiB)")

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def get(self, key: Hashable, default=None):
        with self._lock:
            item = self._data.get(key)
            if item is None:
                self.misses += 1
                return default
            self.hits += 1
            self._data.move_to_end(key)
            return item[0]

    def put(self, key: Hashable, value, size: int | None = None) -> None:
        """Store ``value``; one larger than the whole budget is not stored at all."""
        size = nbytes(value) if size is None else size
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self.total_bytes -= old[1]
            if size > self.max_bytes:
                return
            self._data[key] = (value, size)
            self.total_bytes += size
            while self.total_bytes > self.max_bytes:
                _, (_, dropped) = self._data.popitem(last=False)
                self.total_bytes -= dropped

    def get_or_make(self, key: Hashable, make: Callable[[], object],
                    wait: Callable[[], contextlib.AbstractContextManager] | None = None):
        """The stored value of ``key``, or ``make()``'s, stored.

        One caller makes a missing key's value; the others asking for the same key meanwhile
        wait for it and share it (a class of 100 asking for the same step within one poll makes
        it once, not 100 times). A maker that raises passes the turn to the next caller waiting.
        ``wait()``, if given, is a context manager entered while this caller waits for another
        one's value (a page's "waiting for that run" notice).
        """
        value = self.get(key, _MISSING)
        if value is not _MISSING:
            return value
        with self._lock:
            making = self._making.setdefault(key, _Making())
            making.callers += 1
        try:
            if not making.lock.acquire(blocking=False):
                with wait() if wait is not None else contextlib.nullcontext():
                    making.lock.acquire()
            try:
                if making.value is not _MISSING:          # made while this caller waited
                    return making.value
                value = self.get(key, _MISSING)         # stored just before this caller came
                if value is _MISSING:
                    value = make()
                    self.put(key, value)
                making.value = value
                return value
            finally:
                making.lock.release()
        finally:
            with self._lock:
                making.callers -= 1
                if making.callers == 0:
                    del self._making[key]

    def callers(self, key: Hashable) -> int:
        """How many callers are making ``key``'s value or waiting for it right now."""
        with self._lock:
            making = self._making.get(key)
            return making.callers if making else 0

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self.total_bytes = 0
