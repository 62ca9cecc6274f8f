"""The host's operations on SQLite, each one transaction: a room made, its secret, devices,
lock, options, step, reveal, *Ask again*, timer, a homework's closing and the end
(`SQLiteHosting`, a part of `xattn.classroom.sqlite_store.SQLiteStore`)."""

from __future__ import annotations

import hmac
import time
from contextlib import contextmanager

from xattn.classroom.errors import LimitReached, RoomNotFound
from xattn.classroom.records import Timer
from xattn.classroom.sqlite_rows import ROOM_SQL, ROUND_SQL, UNTAUGHT_SQL, delete_rooms

__all__ = ["SQLiteHosting"]


class SQLiteHosting:
    """The host's side of `SQLiteStore` (``xattn.classroom.backend.Backend``'s operations)."""

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
                          f"WHERE {UNTAUGHT_SQL}", idle)
                if not delete_rooms(c, UNTAUGHT_SQL, idle):
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
            row = c.execute(ROOM_SQL, (code, time.time())).fetchone()
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
            row = c.execute(ROOM_SQL, (code, time.time())).fetchone()
        return row[0] if row else None

    @contextmanager
    def _host(self, code, digest, step=None):
        """A write transaction on the room if ``digest`` still drives it (else None); a
        ``step`` is checked against the room's steps. The room's version moves with it."""
        with self._tx(write=True) as c:
            row = c.execute(ROOM_SQL, (code, time.time())).fetchone()
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
            row = c.execute(ROOM_SQL, (code, now)).fetchone()
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
            row = c.execute(ROOM_SQL, (code, time.time())).fetchone()
            if row is None or not hmac.compare_digest(row[0], digest):
                return None
            delete_rooms(c, "code = ?", (code,))
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

    def _set_language(self, code, digest, lang):
        with self._host(code, digest) as (c, room):
            if room:
                c.execute("UPDATE rooms SET language = ? WHERE code = ?", (lang, code))
            return True if room else None

    def _language(self, code):
        with self._tx(write=False) as c:
            row = c.execute("SELECT language FROM rooms WHERE code = ? AND expires > ?",
                            (code, time.time())).fetchone()
        if row is None:
            raise RoomNotFound.for_code(code)
        return row[0]

    def _set_step(self, code, digest, step):
        with self._host(code, digest, step) as (c, room):
            if room:
                c.execute("UPDATE rooms SET step = ? WHERE code = ?", (step, code))
                if room[1] != step:              # the class arrives at the step's round now
                    rnd = c.execute(ROUND_SQL, (code, step)).fetchone()[0]
                    c.execute("INSERT OR REPLACE INTO opened VALUES (?, ?, ?, ?)",
                              (code, step, rnd, time.time()))
            return True if room else None

    def _reveal(self, code, digest, step):
        with self._host(code, digest, step) as (c, room):
            if room:
                rnd = c.execute(ROUND_SQL, (code, step)).fetchone()[0]
                c.execute("UPDATE rounds SET phase = 'revealed' WHERE code = ? AND step = ? "
                          "AND round = ?", (code, step, rnd))
            return True if room else None

    def _ask_again(self, code, digest, step, spec):
        with self._host(code, digest, step) as (c, room):
            if not room:
                return None
            rnd, _, question, *_ = c.execute(ROUND_SQL, (code, step)).fetchone()
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
            rnd = c.execute(ROUND_SQL, (code, step)).fetchone()[0]
            timer = Timer(seconds, time.time() + seconds, reveal)
            c.execute("UPDATE rounds SET seconds = ?, ends_at = ?, reveal = ? WHERE code = ? "
                      "AND step = ? AND round = ?",
                      (timer.seconds, timer.ends_at, int(reveal), code, step, rnd))
            return timer
