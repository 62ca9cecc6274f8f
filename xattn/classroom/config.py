"""Which class store a server uses: `open_store` reads the environment.

``XATTN_REDIS_URL`` (``redis://host:port/db``, ``rediss://…``, ``unix:///path``) selects Redis,
for classes served by several machines; otherwise a SQLite file at `default_path`
(``XATTN_CLASS_STORE``, else the user's data directory), for the processes of one machine.
A configuration that cannot work (a malformed URL, a folder that cannot be made, a file that is
not a database) raises `StoreUnavailable` naming the setting, never a backend's own error.
"""

from __future__ import annotations

import os
from pathlib import Path

from xattn.classroom.errors import StoreUnavailable
from xattn.classroom.records import Limits
from xattn.classroom.store import ClassStore

__all__ = ["open_store", "configured", "default_path", "limits_from_env", "REDIS_ENV",
           "PATH_ENV", "LIMITS_ENV"]

REDIS_ENV = "XATTN_REDIS_URL"
PATH_ENV = "XATTN_CLASS_STORE"
LIMITS_ENV = "XATTN_LIMITS"     # e.g. "new_students=400/600,max_rooms=50"
_SCHEMES = ("redis://", "rediss://", "unix://")


def default_path() -> Path:
    """``$XATTN_CLASS_STORE``, else ``$XDG_DATA_HOME/xattn/classes.sqlite3`` (by default
    ``~/.local/share/xattn/classes.sqlite3``)."""
    if os.environ.get(PATH_ENV):
        return Path(os.environ[PATH_ENV]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "xattn" / "classes.sqlite3"


def configured() -> tuple[str, str]:
    """The store this process's environment names: (Redis URL or "", SQLite path)."""
    return os.environ.get(REDIS_ENV, "").strip(), str(default_path())


def limits_from_env() -> Limits:
    """`Limits` with the fields ``$XATTN_LIMITS`` sets (``name=value`` pairs, comma-separated;
    a per-address limit as ``count/seconds``, e.g. ``new_students=400/600``)."""
    text = os.environ.get(LIMITS_ENV, "").strip()
    if not text:
        return Limits()
    fields, known = {}, set(Limits.__dataclass_fields__)
    try:
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, _, value = item.partition("=")
            name = name.strip()
            if name not in known:
                raise ValueError(f"{name!r} is not a limit (one of {', '.join(sorted(known))})")
            if "/" in value:
                count, seconds = value.split("/")
                fields[name] = (int(count), float(seconds))
            else:
                number = float(value)
                whole = Limits.__dataclass_fields__[name].type in ("int", int)
                fields[name] = int(number) if whole else number
        return Limits(**fields)
    except (ValueError, TypeError) as err:
        raise StoreUnavailable(f"{LIMITS_ENV} cannot be read: {err}") from None


def open_store(limits: Limits | None = None, *, redis_url: str | None = None,
               path: str | Path | None = None) -> ClassStore:
    """The store ``redis_url`` or ``path`` names (by default, the environment's: Redis at
    ``$XATTN_REDIS_URL`` if set, else SQLite at `default_path`, its directory made if
    missing), with ``limits`` (by default ``$XATTN_LIMITS``'s, `limits_from_env`)."""
    limits = limits_from_env() if limits is None else limits
    env_url, env_path = configured()
    url = env_url if redis_url is None else redis_url.strip()
    if url:
        if not url.startswith(_SCHEMES):
            raise StoreUnavailable(f"{REDIS_ENV} must start with redis://, rediss:// or "
                                   f"unix://; it starts with {url.split(':')[0][:20]!r}.")
        from xattn.classroom.redis_store import RedisStore
        try:
            return RedisStore(url, limits)
        except ValueError:              # redis-py's refusal (its words may quote a password)
            raise StoreUnavailable(f"{REDIS_ENV} is not a Redis URL a client can use: write "
                                   "redis://[:password@]host:port/db") from None
    from xattn.classroom.sqlite_store import SQLiteStore
    return SQLiteStore(env_path if path is None else path, limits)
