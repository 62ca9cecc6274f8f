"""The reads of a room on SQLite: results, a round's answers and levels, a student's own
answers, a tally, and the snapshot a store that restarted empty is given back
(`SQLiteReading`, a part of `xattn.classroom.sqlite_store.SQLiteStore`)."""

from __future__ import annotations

import hmac
import time

from xattn.classroom.errors import RoomNotFound
from xattn.classroom.records import Round, Snapshot
from xattn.classroom.sqlite_rows import ROOM_SQL, ROUND_SQL, delete_rooms, timer_of

__all__ = ["SQLiteReading"]


class SQLiteReading:
    """The reads and the snapshot of `SQLiteStore`."""

    def _results(self, code, digest):
        with self._tx(write=False) as c:
            row = c.execute(ROOM_SQL, (code, time.time())).fetchone()
            if row is None or not hmac.compare_digest(row[0], digest):
                return None
            raw = {}
            for step, rnd, value, n in c.execute(
                    "SELECT step, round, value, COUNT(*) FROM answers WHERE code = ? "
                    "GROUP BY step, round, value", (code,)):
                raw.setdefault((step, rnd), {})[value] = n
            return [(step, rnd, question, raw.get((step, rnd), {}), timer_of(seconds, ends, rev))
                    for step, rnd, question, seconds, ends, rev in c.execute(
                        "SELECT step, round, question, seconds, ends_at, reveal FROM rounds "
                        "WHERE code = ? ORDER BY step, round", (code,))]

    def _round_answers(self, code, digest, step, first, then):
        with self._tx(write=False) as c:
            row = c.execute(ROOM_SQL, (code, time.time())).fetchone()
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

    def _my_answer(self, code, step, student):
        with self._tx(write=False) as c:
            room = c.execute(ROOM_SQL, (code, time.time())).fetchone()
            if room is None:
                raise RoomNotFound.for_code(code)
            if step > room[2]:
                raise ValueError(f"step must be from 1 to {room[2]}; received {step}.")
            rnd, _, question, *_ = c.execute(ROUND_SQL, (code, step)).fetchone()
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
        return row[0], raw, timer_of(*row[1:])

    def _snapshot_head(self, code):
        with self._tx(write=False) as c:
            row = c.execute("SELECT secret, expires, step, n_steps, version, tally, locked, "
                            "lesson, confidence, histogram_before, closes, language FROM rooms "
                            "WHERE code = ? AND expires > ?", (code, time.time())).fetchone()
            if row is None:
                raise RoomNotFound.for_code(code)
            rounds = tuple(Round(s, r, phase, q, timer_of(sec, ends, rev)) for s, r, phase, q, sec,
                           ends, rev in c.execute(
                               "SELECT step, round, phase, question, seconds, ends_at, reveal "
                               "FROM rounds WHERE code = ? ORDER BY step, round", (code,)))
            counts = {(s, r): n for s, r, n in c.execute(
                "SELECT step, round, COUNT(*) FROM answers WHERE code = ? GROUP BY step, round",
                (code,))}
        (digest, expires, step, n_steps, version, tally, locked, lesson, sure, before, closes,
         language) = row
        return Snapshot(code, digest, expires, step, n_steps, version, tally, bool(locked),
                        rounds, {}, lesson, bool(sure), bool(before), {}, closes,
                        language), counts

    def _round_records(self, code, keys):
        answers: dict = {}
        levels: dict = {}
        with self._tx(write=False) as c:
            for s, r in keys:
                for student, value, level in c.execute(
                        "SELECT student, value, confidence FROM answers WHERE code = ? AND "
                        "step = ? AND round = ?", (code, s, r)):
                    answers.setdefault((s, r), {})[student] = value
                    if level:
                        levels.setdefault((s, r), {})[student] = level
        return answers, levels

    def _restore(self, snap, answers):
        code, now = snap.code, time.time()
        with self._tx(write=True) as c:
            if c.execute("SELECT 1 FROM ended WHERE code = ? AND expires > ?",
                         (code, now)).fetchone():
                return None                                     # its lecturer ended it
            made = c.execute("SELECT 1 FROM rooms WHERE code = ? AND expires > ?",
                             (code, now)).fetchone() is None
            if made:
                delete_rooms(c, "code = ?", (code,))          # an expired one's remains
                c.execute("INSERT INTO rooms (code, secret, expires, step, n_steps, n_answers, "
                          "version, tally, locked, host_at, answer_at, lesson, confidence, "
                          "histogram_before, closes, language) VALUES (?, ?, ?, ?, ?, 0, ?, ?, "
                          "?, ?, ?, ?, ?, ?, ?, ?)",
                          (code, snap.digest, snap.expires, snap.step, snap.n_steps,
                           snap.version + 1, snap.tally + 1, int(snap.locked), now, now,
                           snap.lesson, int(snap.confidence), int(snap.histogram_before),
                           snap.closes, snap.language))
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
