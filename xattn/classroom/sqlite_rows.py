"""The SQLite class store's shared reads and helpers: a room's row, its current round's row,
the untaught room a new one may replace, a timer from its columns, a rollback that keeps the
first error, and the deletion of rooms with all their rows."""

from __future__ import annotations

import sqlite3

from xattn.classroom.records import Timer

__all__ = ["ROOM_SQL", "ROUND_SQL", "UNTAUGHT_SQL", "timer_of", "rollback", "delete_rooms"]


# The live room whose host was seen longest ago, if before a time (students never count).
UNTAUGHT_SQL = ("code = (SELECT code FROM rooms WHERE closes IS NULL AND host_at <= ? "
             "ORDER BY host_at LIMIT 1)")


ROOM_SQL = ("SELECT secret, step, n_steps, n_answers, expires, closes FROM rooms WHERE code = ? "
         "AND expires > ?")


ROUND_SQL = ("SELECT round, phase, question, seconds, ends_at, reveal FROM rounds WHERE code = ? "
          "AND step = ? ORDER BY round DESC LIMIT 1")


def timer_of(seconds, ends_at, reveal) -> Timer | None:
    return None if ends_at is None else Timer(seconds, ends_at, bool(reveal))


def rollback(c: sqlite3.Connection) -> None:
    try:
        if c.in_transaction:
            c.execute("ROLLBACK")
    except sqlite3.Error:      # the connection is broken: the transaction is gone with it
        pass


def delete_rooms(c: sqlite3.Connection, where: str, args: tuple) -> int:
    """Delete the rooms ``where`` selects (a condition on ``rooms``), with all they hold."""
    codes = f"SELECT code FROM rooms WHERE {where}"
    for table in ("answers", "rounds", "seen", "devices", "buckets", "joined", "opened"):
        c.execute(f"DELETE FROM {table} WHERE code IN ({codes})", args)
    return c.execute(f"DELETE FROM rooms WHERE {where}", args).rowcount
