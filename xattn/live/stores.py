"""The server's class store: one per process for its configuration, shared by every page
session and the hub's threads (``xattn.classroom.config``: ``XATTN_REDIS_URL`` or
``XATTN_CLASS_STORE``)."""

from __future__ import annotations

from xattn.classroom import ClassStore
from xattn.classroom.config import configured, open_store
from xattn.live.process import process_wide

__all__ = ["class_store", "stores"]


@process_wide()
def stores(redis_url: str, path: str) -> ClassStore:
    """The store opened for this configuration (kept for the process; ``stores.clear()``
    forgets it: tests)."""
    return open_store(redis_url=redis_url, path=path)


def class_store() -> ClassStore:
    """The server's class store for its configuration, shared by every session;
    `StoreUnavailable` if it cannot be opened (tried again on the next call)."""
    return stores(*configured())
