"""Process-wide values as plain module caches with a lock (what ``st.cache_resource`` was).

Every session and every hub thread of one server process shares them: the class store, the
byte-bounded caches of ``xattn.live.compute``, the loaded models and the trainings' queue.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict

__all__ = ["process_wide", "clear_all"]

_MADE: list = []      # every process-wide cache (`clear_all`)


def process_wide(max_entries: int | None = None):
    """Decorate ``make(*args)``: made once per process for each ``args`` (hashable) and kept;
    at most ``max_entries`` (least recently used out first; None: no bound). A ``make`` that
    raises keeps nothing (the next call tries again). ``.clear()`` forgets every value.

    Examples
    --------
    >>> made = []
    >>> @process_wide(max_entries=2)
    ... def square(n):
    ...     made.append(n)
    ...     return n * n
    >>> square(3), square(3), square(4), square(5), square(3), made
    (9, 9, 16, 25, 9, [3, 4, 5, 3])
    >>> square.clear(); square(4), made[-1]
    (16, 4)
    """
    if max_entries is not None and (isinstance(max_entries, bool)
                                    or not isinstance(max_entries, int) or max_entries < 1):
        raise ValueError(f"max_entries must be a whole number >= 1 or None; received "
                         f"{max_entries!r}.")

    def decorate(make):
        values: OrderedDict = OrderedDict()
        lock = threading.RLock()

        @functools.wraps(make)
        def get(*args):
            with lock:
                if args in values:
                    values.move_to_end(args)
                    return values[args]
                value = make(*args)
                values[args] = value
                if max_entries is not None and len(values) > max_entries:
                    values.popitem(last=False)
                return value

        def clear() -> None:
            with lock:
                values.clear()

        get.clear = clear
        _MADE.append(get)
        return get
    return decorate


def clear_all() -> None:
    """Forget every process-wide value (the class store, caches, loaded models, trainings):
    a cold start, as ``st.cache_resource.clear()`` is for the page's own (tests, benchmarks).

    Examples
    --------
    >>> @process_wide()
    ... def made():
    ...     return object()
    >>> first = made(); clear_all(); made() is first
    False
    """
    for cached in _MADE:
        cached.clear()
