"""The class store in one SQLite file: the default, for N processes on one machine.

WAL mode lets readers (every student's poll) run beside the one writer; ``busy_timeout`` makes
a writer wait for the lock instead of failing; every write is one ``BEGIN IMMEDIATE``
transaction, so two processes never interleave inside an operation. ``synchronous=NORMAL``:
a killed process loses nothing committed; a power cut may lose the last moments of answers.
Connections are pooled: an operation takes an idle one (or opens one) and gives it back, so
the threads Streamlit starts for every script run reuse a few connections instead of opening
one each; a forked process starts a pool of its own. Expired rooms are deleted when the store
opens and before each new room, and so are the markers of ended classes whose time is up.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from xattn.classroom.errors import (
    LimitReached,
    RoomEnded,
    RoomNotFound,
    StoreUnavailable,
)
from xattn.classroom.records import Limits, Pulse, RawView
from xattn.classroom.rules import (
    already_answered,
    full_answers,
    other_step,
    parse_question,
    phase_at,
    refuse_closed,
    refuse_homework,
    stale_round,
)
from xattn.classroom.said import said
from xattn.classroom.sqlite_hosting import SQLiteHosting
from xattn.classroom.sqlite_reading import SQLiteReading
from xattn.classroom.sqlite_rows import ROOM_SQL, ROUND_SQL, delete_rooms, rollback, timer_of
from xattn.classroom.sqlite_schema import ADDED_COLUMNS, SCHEMA, SCHEMA_VERSION, TABLES
from xattn.classroom.store import ClassStore

__all__ = ["SQLiteStore"]

BUSY_MS = 10_000    # a writer waits this long for the lock (a busy 2-core machine is slow)
POOL = 8            # idle connections kept for reuse (more may be open while many threads work)


class SQLiteStore(SQLiteHosting, SQLiteReading, ClassStore):
    """`ClassStore` in the SQLite file at ``path`` (made, with its directory, if missing)."""

    def __init__(self, path, limits: Limits | None = None):
        super().__init__(limits)
        self.path = Path(path).expanduser()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as err:
            raise StoreUnavailable(f"the class store's folder cannot be made: {err}") from None
        self._idle: list[sqlite3.Connection] = []
        self._hits_cleared = 0.0
        self._lock, self._pid = threading.Lock(), os.getpid()
        self._setup()
        self.purge_expired()

    def __repr__(self) -> str:
        return f"SQLiteStore({str(self.path)!r}, {self.limits!r})"

    def _setup(self) -> None:
        c = self._take()
        deadline = time.monotonic() + BUSY_MS / 1000
        while True:        # switching to WAL needs a moment alone with a fresh file
            try:
                c.execute("PRAGMA journal_mode = WAL")
                c.execute("BEGIN IMMEDIATE")
                if c.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                    # A file from an older xattn: its rooms (hours long) are not kept.
                    for table in TABLES:
                        c.execute(f"DROP TABLE IF EXISTS {table}")
                    c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                for statement in SCHEMA.split(";"):
                    c.execute(statement)
                for (table, column), kind in ADDED_COLUMNS.items():
                    if column not in {r[1] for r in c.execute(f"PRAGMA table_info({table})")}:
                        c.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                c.execute("COMMIT")
                return self._give(c)
            except sqlite3.Error as err:
                rollback(c)
                busy = getattr(err, "sqlite_errorcode", None) in (5, 6)   # BUSY, LOCKED
                if not busy or time.monotonic() > deadline:
                    c.close()
                    raise StoreUnavailable(f"the class store cannot be opened: {err}") from None
                time.sleep(0.05)

    def _take(self) -> sqlite3.Connection:
        with self._lock:
            if self._pid != os.getpid():      # forked: the parent's connections stay its own
                self._idle, self._pid = [], os.getpid()
            if self._idle:
                return self._idle.pop()
        try:
            # One thread at a time uses a connection (taken from the pool, then given back).
            c = sqlite3.connect(self.path, timeout=BUSY_MS / 1000, isolation_level=None,
                                check_same_thread=False)
            c.execute(f"PRAGMA busy_timeout = {BUSY_MS}")
            c.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as err:
            raise StoreUnavailable(f"the class store cannot be opened: {err}") from None
        return c

    def _give(self, c: sqlite3.Connection) -> None:
        with self._lock:
            if len(self._idle) < POOL and self._pid == os.getpid():
                self._idle.append(c)
                return
        c.close()

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for c in idle:
            c.close()

    @contextmanager
    def _tx(self, write: bool):
        c = self._take()
        try:
            c.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            yield c
            c.execute("COMMIT")
        except sqlite3.Error as err:
            rollback(c)
            c.close()                          # never reuse a connection that failed
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        except BaseException:
            rollback(c)
            self._give(c)
            raise
        self._give(c)

    def purge_expired(self) -> int:
        now = time.time()
        with self._tx(write=True) as c:
            c.execute("DELETE FROM ended WHERE expires <= ?", (now,))
            return delete_rooms(c, "expires <= ?", (now,))


    # --- the students --------------------------------------------------------------------
    def _answer(self, code, step, student, value, level, round_):
        now = time.time()
        with self._tx(write=True) as c:
            room = c.execute(ROOM_SQL, (code, now)).fetchone()
            if room is None:
                raise RoomNotFound.for_code(code)
            _, current, n_steps, n_answers, _, closes = room
            if closes is not None:               # a homework: any step, until it closes
                refuse_homework(step, n_steps, closes, now)
            elif step != current:
                raise other_step(current, step)
            rnd, phase, question, seconds, ends, rev = c.execute(ROUND_SQL, (code, step)).fetchone()
            if round_ is not None and round_ != rnd:
                raise stale_round(step, round_, rnd)
            refuse_closed(step, phase_at(phase, timer_of(seconds, ends, rev), now))
            encoded, level = parse_question(question).encode(value), level or ""
            key = (code, step, rnd, student)
            old = c.execute("SELECT value, confidence FROM answers WHERE code = ? AND step = ? "
                            "AND round = ? AND student = ?", key).fetchone()
            if old is not None and closes is not None and tuple(old) != (encoded, level):
                raise already_answered(step, old[0], question)
            if old is None:
                if n_answers >= self.limits.max_answers:
                    raise full_answers(n_answers, self.limits.max_answers)
                c.execute("INSERT INTO answers (code, step, round, student, value, confidence) "
                          "VALUES (?, ?, ?, ?, ?, ?)", (*key, encoded, level))
                c.execute("UPDATE rooms SET n_answers = n_answers + 1, tally = tally + 1 "
                          "WHERE code = ?", (code,))
            elif tuple(old) != (encoded, level):
                c.execute("UPDATE answers SET value = ?, confidence = ? WHERE code = ? AND "
                          "step = ? AND round = ? AND student = ?", (encoded, level, *key))
                c.execute("UPDATE rooms SET tally = tally + 1 WHERE code = ?", (code,))
        return question

    def _view(self, code, student):
        now = time.time()
        with self._tx(write=False) as c:
            room = c.execute("SELECT step, n_steps, expires, version, locked, confidence, "
                             "histogram_before, closes FROM rooms WHERE code = ? AND "
                             "expires > ?", (code, now)).fetchone()
            if room is None:
                ended = c.execute("SELECT 1 FROM ended WHERE code = ? AND expires > ?",
                                  (code, now)).fetchone()
                raise (RoomEnded if ended else RoomNotFound).for_code(code)
            step, n_steps, expires, version, locked, confidence, histogram, closes = room
            rnd, phase, question, seconds, ends, rev = c.execute(ROUND_SQL, (code, step)).fetchone()
            raw = dict(c.execute("SELECT value, COUNT(*) FROM answers WHERE code = ? AND "
                                 "step = ? AND round = ? GROUP BY value", (code, step, rnd)))
            present = c.execute("SELECT COUNT(*) FROM seen WHERE code = ? AND at > ?",
                                (code, now - self.limits.present_seconds)).fetchone()[0]
            late = c.execute(
                "SELECT COUNT(*) FROM answers a JOIN joined j ON j.code = a.code AND "
                "j.student = a.student WHERE a.code = ? AND a.step = ? AND a.round = ? AND "
                "j.at > COALESCE((SELECT at FROM opened WHERE code = ? AND step = ? AND "
                "round = ?), 0)", (code, step, rnd, code, step, rnd)).fetchone()[0]
            mine = None
            if student is not None:
                mine = c.execute("SELECT value FROM answers WHERE code = ? AND step = ? AND "
                                 "round = ? AND student = ?", (code, step, rnd, student)).fetchone()
        return RawView(step, n_steps, phase, rnd, question, raw, present, mine and mine[0],
                       expires, version, timer_of(seconds, ends, rev), now, bool(locked),
                       bool(confidence), bool(histogram), closes, late)

    def _mark_hosts(self, hosts):
        with self._tx(write=True) as c:
            c.executemany("UPDATE rooms SET host_at = ? WHERE code = ? AND secret = ?",
                          [(time.time(), code, digest) for code, digest in hosts])

    def _take_join(self, code, who, burst, every):
        now = time.time()
        with self._tx(write=True) as c:
            room = c.execute("SELECT 1 FROM rooms WHERE code = ? AND expires > ?",
                             (code, now)).fetchone()
            if room is None:
                raise RoomNotFound.for_code(code)
            row = c.execute("SELECT tokens, at FROM buckets WHERE code = ? AND who = ?",
                            (code, who)).fetchone()
            tokens = float(burst) if row is None else min(float(burst),
                                                          row[0] + (now - row[1]) / every)
            if tokens < 1.0:
                return (1.0 - tokens) * every
            c.execute("INSERT OR REPLACE INTO buckets VALUES (?, ?, ?, ?)",
                      (code, who, tokens - 1.0, now))
        return 0.0

    def _touch(self, code, students):
        now = time.time()
        with self._tx(write=True) as c:
            if c.execute("SELECT 1 FROM rooms WHERE code = ? AND expires > ?",
                         (code, now)).fetchone() is None:
                raise RoomNotFound.for_code(code)
            known = {s for (s,) in c.execute(
                f"SELECT student FROM seen WHERE code = ? AND student IN "
                f"({','.join('?' * len(students))})", (code, *students))}
            new = [s for s in students if s not in known]
            n = c.execute("SELECT COUNT(*) FROM seen WHERE code = ?", (code,)).fetchone()[0]
            if new and n + len(new) > self.limits.max_students:
                n -= c.execute("DELETE FROM seen WHERE code = ? AND at <= ?",
                               (code, now - self.limits.present_seconds)).rowcount
            room = max(0, self.limits.max_students - n)
            c.executemany("INSERT OR IGNORE INTO joined VALUES (?, ?, ?)",
                          [(code, s, now) for s in new[:room]])
            c.executemany("INSERT INTO seen VALUES (?, ?, ?) ON CONFLICT (code, student) "
                          "DO UPDATE SET at = excluded.at",
                          [(code, s, now) for s in [*known, *new[:room]]])
            if new[:room]:                   # the host's count of students moves
                c.execute("UPDATE rooms SET tally = tally + 1 WHERE code = ?", (code,))
        if len(new) > room:
            raise LimitReached(f"this class already has {n + room} students, the most a class "
                               f"takes (Limits.max_students = {self.limits.max_students})."
                               ).saying(said("why.full.students", n=n + room))


    def _pulse(self, codes):
        with self._tx(write=False) as c:
            rows = c.execute(
                "SELECT r.code, r.version, r.tally, COALESCE(r.closes, (SELECT ends_at FROM "
                "rounds WHERE code = r.code AND step = r.step ORDER BY round DESC LIMIT 1)) "
                "FROM rooms r "
                f"WHERE r.code IN ({','.join('?' * len(codes))}) AND r.expires > ?",
                (*codes, time.time())).fetchall()
        return {code: Pulse(version, tally, ends) for code, version, tally, ends in rows}


    def _allow(self, kind, digest, limit, window, peek):
        now = time.time()
        if peek:         # every page's full run peeks: a read, never the write lock
            with self._tx(write=False) as c:
                row = c.execute("SELECT since, n FROM hits WHERE kind = ? AND who = ?",
                                (kind, digest)).fetchone()
                return row is None or now - row[0] >= window or row[1] < limit
        with self._tx(write=True) as c:
            if self._hits_cleared < now - 600:            # keep the table small
                c.execute("DELETE FROM hits WHERE since < ?", (now - 7 * 24 * 3600,))
                self._hits_cleared = now
            row = c.execute("SELECT since, n FROM hits WHERE kind = ? AND who = ?",
                            (kind, digest)).fetchone()
            if row is None or now - row[0] >= window:
                c.execute("INSERT OR REPLACE INTO hits VALUES (?, ?, ?, 1)", (kind, digest, now))
                return True
            if row[1] >= limit:
                return False
            c.execute("UPDATE hits SET n = n + 1 WHERE kind = ? AND who = ?", (kind, digest))
            return True


    def _signing_keys(self, known):
        with self._tx(write=True) as c:
            c.execute("INSERT OR IGNORE INTO meta VALUES ('signing_key', ?)",
                      (known[0] if known else secrets.token_bytes(32),))
            c.executemany("INSERT OR IGNORE INTO meta VALUES (?, ?)",
                          [("signing_key." + k.hex()[:16], k) for k in known])
            first = bytes(c.execute("SELECT value FROM meta WHERE name = 'signing_key'")
                          .fetchone()[0])
            others = [bytes(v) for (v,) in c.execute(
                "SELECT value FROM meta WHERE name LIKE 'signing_key.%' ORDER BY name")]
        return [first, *(k for k in others if k != first)]


