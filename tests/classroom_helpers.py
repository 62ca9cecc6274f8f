"""The class store's test backends: a real SQLite file, a real redis-server, and a look at
what each has stored.

Redis tests skip with the reason where redis-server or redis-py is missing, and fail instead
where XATTN_REQUIRE_REDIS=1 (CI), so they cannot silently skip. Never a mock.
"""

from __future__ import annotations

import os
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from devtools.redis_server import RedisServer, redis_binary  # noqa: F401 - the tests' door
from xattn.classroom import ClassStore, Limits

REQUIRE_ENV = "XATTN_REQUIRE_REDIS"
BACKENDS = ("sqlite", "redis")


def redis_missing() -> str | None:
    """Why the Redis tests cannot run here, or None."""
    try:
        import redis  # noqa: F401
    except ImportError:
        return "redis-py is not installed (pip install -r requirements.txt)"
    if not redis_binary():
        return "redis-server is not installed (Debian: apt-get install redis-server)"
    return None


def redis_or_skip() -> None:
    """Skip with the reason where Redis is missing; fail where it is required."""
    reason = redis_missing()
    if reason is None:
        return
    if os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0", "false", "no"):
        pytest.fail(f"{REQUIRE_ENV} is set but the Redis tests cannot run: {reason}",
                    pytrace=False)
    pytest.skip(f"Redis tests skipped: {reason}")


def hall_or_skip() -> None:
    """Skip where HAProxy (deploy/serve.sh's) or Redis is missing; fail where required."""
    from devtools.lecture_hall import haproxy_missing, haproxy_required

    redis_or_skip()
    reason = haproxy_missing()
    if reason:
        if haproxy_required():
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


def tampered(secret: str) -> str:
    """``secret`` with its last character changed (always changed: a secret may end in any
    character of its alphabet)."""
    return secret[:-1] + ("A" if secret[-1] != "A" else "B")


def wait_for(condition, timeout: float = 60.0, every: float = 0.05, what: str = "a condition"):
    """Poll ``condition()`` until it is truthy (returned) or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


@dataclass(frozen=True)
class Backend:
    """Where a test's store lives (picklable, so a spawned process can open the same one)."""

    kind: str                  # "sqlite" or "redis"
    where: str                 # the SQLite file, or the Redis URL
    prefix: str = "xattn:"     # Redis keys (a fresh one per test keeps tests apart)

    @classmethod
    def fresh(cls, kind: str, tmp_path: Path, redis_url: str | None = None) -> Backend:
        if kind == "sqlite":
            return cls("sqlite", str(tmp_path / "classes.sqlite3"))
        return cls("redis", redis_url, f"test-{uuid.uuid4().hex[:12]}:")

    def open(self, limits: Limits | None = None) -> ClassStore:
        if self.kind == "sqlite":
            from xattn.classroom.sqlite_store import SQLiteStore
            return SQLiteStore(self.where, limits)
        from xattn.classroom.redis_store import RedisStore
        return RedisStore(self.where, limits, prefix=self.prefix)

    # --- what is stored (read straight from the backend, not through the store) ----------
    def _sql(self, query: str, *args) -> int:
        with sqlite3.connect(self.where) as c:
            return c.execute(query, args).fetchone()[0]

    def _redis(self):
        import redis
        return redis.Redis.from_url(self.where, decode_responses=True)

    def answer_records(self, code: str) -> int:
        """Answer records kept for the room (all steps and rounds)."""
        if self.kind == "sqlite":
            return self._sql("SELECT COUNT(*) FROM answers WHERE code = ?", code)
        r = self._redis()
        return sum(r.hlen(k) for k in r.scan_iter(f"{self.prefix}ans:{{{code}}}:*"))

    def records(self, code: str) -> int:
        """Everything kept about the room: rows or keys (and its entry in the room list)."""
        if self.kind == "sqlite":
            return sum(self._sql(f"SELECT COUNT(*) FROM {t} WHERE code = ?", code)
                       for t in ("rooms", "rounds", "answers", "seen"))
        r = self._redis()
        keys = list(r.scan_iter(f"{self.prefix}*:{{{code}}}*"))
        return len(keys) + (r.zscore(f"{self.prefix}rooms", code) is not None)

    def ended_marker(self, code: str) -> float | None:
        """When the marker of a class its lecturer ended lapses (seconds since the epoch), or
        None where there is no marker; the marker holds nothing else."""
        if self.kind == "sqlite":
            with sqlite3.connect(self.where) as c:
                row = c.execute("SELECT * FROM ended WHERE code = ?", (code,)).fetchone()
            assert row is None or len(row) == 2, row            # the code and its expiry
            return None if row is None else row[1]
        r = self._redis()
        key = f"{self.prefix}ended:{{{code}}}"
        if not r.exists(key):
            return None
        assert r.get(key) == "1"
        return r.pexpiretime(key) / 1000

    def expiries(self, code: str) -> list[float]:
        """When each of the room's records expires (seconds since the epoch): its row
        (SQLite), or every key of it (Redis: each one expires by itself)."""
        if self.kind == "sqlite":
            with sqlite3.connect(self.where) as c:
                return [c.execute("SELECT expires FROM rooms WHERE code = ?",
                                  (code,)).fetchone()[0]]
        r = self._redis()
        keys = [k for k in r.scan_iter(f"{self.prefix}*:{{{code}}}*")
                if not k.startswith(f"{self.prefix}ended:")]
        return [r.pexpiretime(k) / 1000 for k in keys] + [
            r.zscore(f"{self.prefix}{z}", code) / 1000 for z in ("rooms", "homework")
            if r.zscore(f"{self.prefix}{z}", code) is not None]

    def wipe(self) -> None:
        """Everything the store holds gone, as after a Redis restarted without persistence
        (or a SQLite file made anew)."""
        if self.kind == "sqlite":
            from xattn.classroom.sqlite_schema import TABLES
            with sqlite3.connect(self.where) as c:
                for table in TABLES:
                    c.execute(f"DELETE FROM {table}")
            return
        r = self._redis()
        for key in list(r.scan_iter(f"{self.prefix}*")):
            r.delete(key)

    def dump(self) -> bytes:
        """Every byte the backend holds for this test (what a stolen dump would show)."""
        if self.kind == "sqlite":
            files = [Path(self.where + suffix) for suffix in ("", "-wal")]
            return b"".join(f.read_bytes() for f in files if f.exists())
        r = self._redis()
        out = []
        for key in r.scan_iter(f"{self.prefix}*"):
            kind = r.type(key)
            value = {"hash": r.hgetall, "zset": lambda k: r.zrange(k, 0, -1, withscores=True),
                     "string": r.get, "set": r.smembers}[kind](key)
            out.append(f"{key}={value!r}")
        return "\n".join(out).encode()


def cast_answers(backend: Backend, code: str, who: str, n: int, go) -> None:
    """One OS process: ``n`` students named ``who-i`` each answer step 1 (token ``i % 3``)."""
    store = backend.open()
    go.wait(120)
    for i in range(n):
        store.answer(code, 1, f"{who}-{i:06d}", i % 3)
    store.close()
