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

import hmac
import os
import secrets
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from xattn.classroom.errors import (
    AnswerRefused,
    LimitReached,
    RoomEnded,
    RoomNotFound,
    StoreUnavailable,
)
from xattn.classroom.records import Limits, Pulse, RawView, Round, Snapshot, Timer
from xattn.classroom.sqlite_schema import ADDED_COLUMNS, SCHEMA, SCHEMA_VERSION, TABLES
from xattn.classroom.store import (
    ClassStore,
    already_answered,
    parse_question,
    phase_at,
    refuse_closed,
    refuse_homework,
    stale_round,
)

__all__ = ["SQLiteStore"]

BUSY_MS = 10_000    # a writer waits this long for the lock (a busy 2-core machine is slow)
POOL = 8            # idle connections kept for reuse (more may be open while many threads work)
# The live room whose host was seen longest ago, if before a time (students never count).
_UNTAUGHT = ("code = (SELECT code FROM rooms WHERE closes IS NULL AND host_at <= ? "
             "ORDER BY host_at LIMIT 1)")
_ROOM = ("SELECT secret, step, n_steps, n_answers, expires, closes FROM rooms WHERE code = ? "
         "AND expires > ?")
_ROUND = ("SELECT round, phase, question, seconds, ends_at, reveal FROM rounds WHERE code = ? "
          "AND step = ? ORDER BY round DESC LIMIT 1")


class SQLiteStore(ClassStore):
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
                _rollback(c)
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
            _rollback(c)
            c.close()                          # never reuse a connection that failed
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        except BaseException:
            _rollback(c)
            self._give(c)
            raise
        self._give(c)

    def purge_expired(self) -> int:
        now = time.time()
        with self._tx(write=True) as c:
            c.execute("DELETE FROM ended WHERE expires <= ?", (now,))
            return _delete_rooms(c, "expires <= ?", (now,))

    # --- the host ------------------------------------------------------------------------
    def _create(self, code, digest, specs, lesson, open_for, owner):
        self.purge_expired()
        now = time.time()
        closes = None if open_for is None else now + open_for
        expires = now + self.limits.ttl_seconds if closes is None else \
            closes + self.limits.results_seconds
        with self._tx(write=True) as c:
            if c.execute("SELECT 1 FROM rooms WHERE code = ? UNION ALL SELECT 1 FROM ended "
                         "WHERE code = ?", (code, code)).fetchone():
                return False
            if owner:
                # a live room counts while it is taught (its host seen within
                # untaught_seconds); a homework always does
                held, homework = c.execute(
                    "SELECT COUNT(*), COUNT(closes) FROM rooms WHERE owner = ? AND "
                    "(closes IS NOT NULL OR host_at > ?)",
                    (owner, now - self.limits.untaught_seconds)).fetchone()
                if held >= self.limits.rooms_per_address:
                    raise self._held(held, False)
                if closes is not None and homework >= self.limits.homework_per_address:
                    raise self._held(homework, True)
            if closes is not None:
                held = c.execute("SELECT COUNT(*) FROM rooms WHERE closes IS NOT NULL") \
                    .fetchone()[0]
                if held >= self.limits.max_homework:
                    raise self._homework_full(held)
            n = c.execute("SELECT COUNT(*) FROM rooms").fetchone()[0]
            if n >= self.limits.max_rooms:
                idle = (now - self.limits.untaught_seconds,)
                # replaced as if ended: no server process gives it back from its snapshot
                c.execute(f"INSERT OR REPLACE INTO ended SELECT code, expires FROM rooms "
                          f"WHERE {_UNTAUGHT}", idle)
                if not _delete_rooms(c, _UNTAUGHT, idle):
                    raise self._full(n)
            c.execute("INSERT INTO rooms (code, secret, expires, step, n_steps, n_answers, "
                      "host_at, lesson, closes, owner) VALUES (?, ?, ?, 1, ?, 0, ?, ?, ?, ?)",
                      (code, digest, expires, len(specs), now, lesson, closes, owner))
            c.executemany("INSERT INTO rounds VALUES (?, ?, 1, 'asking', ?, NULL, NULL, 0)",
                          [(code, i, spec) for i, spec in enumerate(specs, 1)])
            c.execute("INSERT OR REPLACE INTO opened VALUES (?, 1, 1, ?)", (code, now))
        return True

    def _lesson(self, code):
        with self._tx(write=False) as c:
            row = c.execute("SELECT lesson FROM rooms WHERE code = ? AND expires > ?",
                            (code, time.time())).fetchone()
        if row is None:
            raise RoomNotFound.for_code(code)
        return row[0]

    def _closes(self, code):
        with self._tx(write=False) as c:
            row = c.execute(_ROOM, (code, time.time())).fetchone()
        return row[5] if row else None

    def _set_closing(self, code, digest, seconds):
        with self._host(code, digest) as (c, room):
            if not room:
                return None
            if room[5] is None:
                return False
            closes = time.time() + seconds
            c.execute("UPDATE rooms SET closes = ?, expires = ? WHERE code = ?",
                      (closes, closes + self.limits.results_seconds, code))
            return closes

    def _secret(self, code):
        with self._tx(write=False) as c:
            row = c.execute(_ROOM, (code, time.time())).fetchone()
        return row[0] if row else None

    @contextmanager
    def _host(self, code, digest, step=None):
        """A write transaction on the room if ``digest`` still drives it (else None); a
        ``step`` is checked against the room's steps. The room's version moves with it."""
        with self._tx(write=True) as c:
            row = c.execute(_ROOM, (code, time.time())).fetchone()
            if row is None or not hmac.compare_digest(row[0], digest):
                yield c, None
                return
            if step is not None and step > row[2]:
                raise ValueError(f"step must be from 1 to {row[2]}; received {step}.")
            c.execute("UPDATE rooms SET version = version + 1, host_at = ? WHERE code = ?",
                      (time.time(), code))
            yield c, row

    def _rotate(self, code, digest, new_digest):
        with self._host(code, digest) as (c, room):
            if room:
                c.execute("UPDATE rooms SET secret = ? WHERE code = ?", (new_digest, code))
            return True if room else None

    def _add_device(self, code, digest, device, wrapped, seconds):
        now = time.time()
        with self._tx(write=True) as c:
            row = c.execute(_ROOM, (code, now)).fetchone()
            if row is None or not hmac.compare_digest(row[0], digest):
                return None
            c.execute("DELETE FROM devices WHERE expires <= ?", (now,))
            c.execute("INSERT OR REPLACE INTO devices VALUES (?, ?, ?, ?)",
                      (device, code, wrapped, now + seconds))
        return now + seconds

    def _take_device(self, code, device):
        with self._tx(write=True) as c:
            row = c.execute("DELETE FROM devices WHERE digest = ? AND code = ? AND expires > ? "
                            "RETURNING wrapped", (device, code, time.time())).fetchone()
        return row[0] if row else None

    def _end(self, code, digest):
        with self._tx(write=True) as c:
            row = c.execute(_ROOM, (code, time.time())).fetchone()
            if row is None or not hmac.compare_digest(row[0], digest):
                return None
            _delete_rooms(c, "code = ?", (code,))
            c.execute("INSERT OR REPLACE INTO ended VALUES (?, ?)", (code, row[4]))
        return True

    def _set_lock(self, code, digest, locked):
        with self._host(code, digest) as (c, room):
            if room:
                c.execute("UPDATE rooms SET locked = ? WHERE code = ?", (int(locked), code))
            return True if room else None

    def _set_options(self, code, digest, confidence, histogram_before):
        with self._host(code, digest) as (c, room):
            if room:
                c.execute("UPDATE rooms SET confidence = COALESCE(?, confidence), "
                          "histogram_before = COALESCE(?, histogram_before) WHERE code = ?",
                          (confidence, histogram_before, code))
            return True if room else None

    def _set_step(self, code, digest, step):
        with self._host(code, digest, step) as (c, room):
            if room:
                c.execute("UPDATE rooms SET step = ? WHERE code = ?", (step, code))
                if room[1] != step:              # the class arrives at the step's round now
                    rnd = c.execute(_ROUND, (code, step)).fetchone()[0]
                    c.execute("INSERT OR REPLACE INTO opened VALUES (?, ?, ?, ?)",
                              (code, step, rnd, time.time()))
            return True if room else None

    def _reveal(self, code, digest, step):
        with self._host(code, digest, step) as (c, room):
            if room:
                rnd = c.execute(_ROUND, (code, step)).fetchone()[0]
                c.execute("UPDATE rounds SET phase = 'revealed' WHERE code = ? AND step = ? "
                          "AND round = ?", (code, step, rnd))
            return True if room else None

    def _ask_again(self, code, digest, step, spec):
        with self._host(code, digest, step) as (c, room):
            if not room:
                return None
            rnd, _, question, *_ = c.execute(_ROUND, (code, step)).fetchone()
            if rnd >= self.limits.max_rounds:
                raise LimitReached(f"step {step} was asked {rnd} times, the most a room keeps "
                                   f"(Limits.max_rounds = {self.limits.max_rounds}).")
            c.execute("INSERT INTO rounds VALUES (?, ?, ?, 'asking', ?, NULL, NULL, 0)",
                      (code, step, rnd + 1, spec or question))
            c.execute("INSERT OR REPLACE INTO opened VALUES (?, ?, ?, ?)",
                      (code, step, rnd + 1, time.time()))
            return rnd + 1

    def _start_timer(self, code, digest, step, seconds, reveal):
        with self._host(code, digest, step) as (c, room):
            if not room:
                return None
            rnd = c.execute(_ROUND, (code, step)).fetchone()[0]
            timer = Timer(seconds, time.time() + seconds, reveal)
            c.execute("UPDATE rounds SET seconds = ?, ends_at = ?, reveal = ? WHERE code = ? "
                      "AND step = ? AND round = ?",
                      (timer.seconds, timer.ends_at, int(reveal), code, step, rnd))
            return timer

    def _results(self, code, digest):
        with self._tx(write=False) as c:
            row = c.execute(_ROOM, (code, time.time())).fetchone()
            if row is None or not hmac.compare_digest(row[0], digest):
                return None
            raw = {}
            for step, rnd, value, n in c.execute(
                    "SELECT step, round, value, COUNT(*) FROM answers WHERE code = ? "
                    "GROUP BY step, round, value", (code,)):
                raw.setdefault((step, rnd), {})[value] = n
            return [(step, rnd, question, raw.get((step, rnd), {}), _timer(seconds, ends, rev))
                    for step, rnd, question, seconds, ends, rev in c.execute(
                        "SELECT step, round, question, seconds, ends_at, reveal FROM rounds "
                        "WHERE code = ? ORDER BY step, round", (code,))]

    def _round_answers(self, code, digest, step, first, then):
        with self._tx(write=False) as c:
            row = c.execute(_ROOM, (code, time.time())).fetchone()
            if row is None or not hmac.compare_digest(row[0], digest):
                return None
            out = []
            for rnd in (first, then):
                q = c.execute("SELECT question FROM rounds WHERE code = ? AND step = ? AND "
                              "round = ?", (code, step, rnd)).fetchone()
                if q is None:
                    raise ValueError(f"step {step} has no round {rnd}.")
                out.append((q[0], dict(c.execute(
                    "SELECT student, value FROM answers WHERE code = ? AND step = ? AND "
                    "round = ?", (code, step, rnd)))))
            return tuple(out)

    # --- the students --------------------------------------------------------------------
    def _answer(self, code, step, student, value, level, round_):
        now = time.time()
        with self._tx(write=True) as c:
            room = c.execute(_ROOM, (code, now)).fetchone()
            if room is None:
                raise RoomNotFound.for_code(code)
            _, current, n_steps, n_answers, _, closes = room
            if closes is not None:               # a homework: any step, until it closes
                refuse_homework(step, n_steps, closes, now)
            elif step != current:
                raise AnswerRefused(f"the class is on step {current}, not step {step}.")
            rnd, phase, question, seconds, ends, rev = c.execute(_ROUND, (code, step)).fetchone()
            if round_ is not None and round_ != rnd:
                raise stale_round(step, round_, rnd)
            refuse_closed(step, phase_at(phase, _timer(seconds, ends, rev), now))
            encoded, level = parse_question(question).encode(value), level or ""
            key = (code, step, rnd, student)
            old = c.execute("SELECT value, confidence FROM answers WHERE code = ? AND step = ? "
                            "AND round = ? AND student = ?", key).fetchone()
            if old is not None and closes is not None and tuple(old) != (encoded, level):
                raise already_answered(step, old[0], question)
            if old is None:
                if n_answers >= self.limits.max_answers:
                    raise LimitReached(f"this class already holds {n_answers} answers, the most "
                                       f"a class keeps (Limits.max_answers = "
                                       f"{self.limits.max_answers}).")
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
            rnd, phase, question, seconds, ends, rev = c.execute(_ROUND, (code, step)).fetchone()
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
                       expires, version, _timer(seconds, ends, rev), now, bool(locked),
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
                               f"takes (Limits.max_students = {self.limits.max_students}).")

    def _my_answer(self, code, step, student):
        with self._tx(write=False) as c:
            room = c.execute(_ROOM, (code, time.time())).fetchone()
            if room is None:
                raise RoomNotFound.for_code(code)
            if step > room[2]:
                raise ValueError(f"step must be from 1 to {room[2]}; received {step}.")
            rnd, _, question, *_ = c.execute(_ROUND, (code, step)).fetchone()
            mine = c.execute("SELECT value, confidence FROM answers WHERE code = ? AND "
                             "step = ? AND round = ? AND student = ?",
                             (code, step, rnd, student)).fetchone()
        return question, mine and mine[0], mine and mine[1] or None

    def _student_answers(self, code, student):
        with self._tx(write=False) as c:
            if c.execute("SELECT 1 FROM rooms WHERE code = ? AND expires > ?",
                         (code, time.time())).fetchone() is None:
                raise RoomNotFound.for_code(code)
            rows = c.execute(
                "SELECT a.step, q.question, a.value, a.confidence FROM answers a JOIN rounds q "
                "ON q.code = a.code AND q.step = a.step AND q.round = a.round WHERE a.code = ? "
                "AND a.student = ? AND a.round = (SELECT MAX(round) FROM rounds WHERE "
                "code = a.code AND step = a.step)", (code, student)).fetchall()
        return {step: (question, value, level) for step, question, value, level in rows}

    def _answers_of(self, code, step, round_):
        with self._tx(write=False) as c:
            return dict(c.execute("SELECT student, value FROM answers WHERE code = ? AND "
                                  "step = ? AND round = ?", (code, step, round_)))

    def _levels_of(self, code, step, round_):
        with self._tx(write=False) as c:
            return dict(c.execute("SELECT student, confidence FROM answers WHERE code = ? AND "
                                  "step = ? AND round = ? AND confidence != ''",
                                  (code, step, round_)))

    def _levels_counted(self, code, step=None, round_=None):
        where = "" if step is None else " AND a.step = ? AND a.round = ?"
        out: dict = {}
        with self._tx(write=False) as c:
            for s, r, question, value, level, n in c.execute(
                    "SELECT a.step, a.round, q.question, a.value, a.confidence, COUNT(*) FROM "
                    "answers a JOIN rounds q ON q.code = a.code AND q.step = a.step AND "
                    f"q.round = a.round WHERE a.code = ?{where} GROUP BY a.step, a.round, "
                    "a.value, a.confidence", (code, *(() if step is None else (step, round_)))):
                out.setdefault((s, r), (question, {}))[1][(value, level)] = n
        return out

    def _tally(self, code, step, round_):
        with self._tx(write=False) as c:
            if c.execute("SELECT 1 FROM rooms WHERE code = ? AND expires > ?",
                         (code, time.time())).fetchone() is None:
                raise RoomNotFound.for_code(code)
            row = c.execute("SELECT question, seconds, ends_at, reveal FROM rounds WHERE "
                            "code = ? AND step = ? AND round = ?",
                            (code, step, round_)).fetchone()
            if row is None:
                return None
            raw = dict(c.execute("SELECT value, COUNT(*) FROM answers WHERE code = ? AND "
                                 "step = ? AND round = ? GROUP BY value", (code, step, round_)))
        return row[0], raw, _timer(*row[1:])

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

    def _snapshot(self, code):
        with self._tx(write=False) as c:
            row = c.execute("SELECT secret, expires, step, n_steps, version, tally, locked, "
                            "lesson, confidence, histogram_before, closes FROM rooms WHERE "
                            "code = ? AND expires > ?", (code, time.time())).fetchone()
            if row is None:
                raise RoomNotFound.for_code(code)
            rounds = tuple(Round(s, r, phase, q, _timer(sec, ends, rev)) for s, r, phase, q, sec,
                           ends, rev in c.execute(
                               "SELECT step, round, phase, question, seconds, ends_at, reveal "
                               "FROM rounds WHERE code = ? ORDER BY step, round", (code,)))
            answers: dict = {}
            levels: dict = {}
            for s, r, student, value, level in c.execute(
                    "SELECT step, round, student, value, confidence FROM answers WHERE "
                    "code = ?", (code,)):
                answers.setdefault((s, r), {})[student] = value
                if level:
                    levels.setdefault((s, r), {})[student] = level
        digest, expires, step, n_steps, version, tally, locked, lesson, sure, before, closes = row
        return Snapshot(code, digest, expires, step, n_steps, version, tally, bool(locked),
                        rounds, answers, lesson, bool(sure), bool(before), levels, closes)

    def _restore(self, snap, answers):
        code, now = snap.code, time.time()
        with self._tx(write=True) as c:
            if c.execute("SELECT 1 FROM ended WHERE code = ? AND expires > ?",
                         (code, now)).fetchone():
                return None                                     # its lecturer ended it
            made = c.execute("SELECT 1 FROM rooms WHERE code = ? AND expires > ?",
                             (code, now)).fetchone() is None
            if made:
                _delete_rooms(c, "code = ?", (code,))          # an expired one's remains
                c.execute("INSERT INTO rooms (code, secret, expires, step, n_steps, n_answers, "
                          "version, tally, locked, host_at, answer_at, lesson, confidence, "
                          "histogram_before, closes) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, "
                          "?, ?, ?)",
                          (code, snap.digest, snap.expires, snap.step, snap.n_steps,
                           snap.version + 1, snap.tally + 1, int(snap.locked), now, now,
                           snap.lesson, int(snap.confidence), int(snap.histogram_before),
                           snap.closes))
                c.executemany("INSERT INTO rounds VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
                    (code, r.step, r.round, r.phase, r.question,
                     r.timer and r.timer.seconds, r.timer and r.timer.ends_at,
                     int(bool(r.timer and r.timer.reveal))) for r in snap.rounds])
            before = c.execute("SELECT COUNT(*) FROM answers WHERE code = ?", (code,)).fetchone()[0]
            c.executemany("INSERT OR IGNORE INTO answers (code, step, round, student, value, "
                          "confidence) SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM "
                          "rounds WHERE code = ? AND step = ? AND round = ?)",
                          [(code, s, r, student, text, level or "", code, s, r)
                           for s, r, student, text, level in answers])
            added = c.execute("SELECT COUNT(*) FROM answers WHERE code = ?",
                              (code,)).fetchone()[0] - before
            if added:
                c.execute("UPDATE rooms SET n_answers = n_answers + ?, tally = tally + 1 "
                          "WHERE code = ?", (added, code))
        return made

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


def _timer(seconds, ends_at, reveal) -> Timer | None:
    return None if ends_at is None else Timer(seconds, ends_at, bool(reveal))


def _rollback(c: sqlite3.Connection) -> None:
    try:
        if c.in_transaction:
            c.execute("ROLLBACK")
    except sqlite3.Error:      # the connection is broken: the transaction is gone with it
        pass


def _delete_rooms(c: sqlite3.Connection, where: str, args: tuple) -> int:
    """Delete the rooms ``where`` selects (a condition on ``rooms``), with all they hold."""
    codes = f"SELECT code FROM rooms WHERE {where}"
    for table in ("answers", "rounds", "seen", "devices", "buckets", "joined", "opened"):
        c.execute(f"DELETE FROM {table} WHERE code IN ({codes})", args)
    return c.execute(f"DELETE FROM rooms WHERE {where}", args).rowcount
