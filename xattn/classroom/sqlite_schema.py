"""The tables of the SQLite class store (``xattn.classroom.sqlite_store``).

One row a room (``rooms``: its step, lock, host's switches, default language, the hash of
the client address it was made from (``owner``), when its host was last seen (``host_at``)
and, for a homework, when it closes), a round of a step (``rounds``:
its phase, question and timer), a student's answer to a round (``answers``: its stored text
and confidence, "" for none), a student's last read (``seen``), a client's count of one kind
of action (``hits``), the store's own values (``meta``: the signing key), a
room's one-time device codes (``devices``: each code's digest and the host secret it wraps,
for minutes) and the codes of classes their lecturer ended (``ended``: the code and when the
room would have expired, nothing else), and each (room, client)'s join bucket (``buckets``:
its tokens and when they were counted), when each student first joined a room (``joined``)
and when the class last arrived at each round (``opened``: the room made, a step chosen, a
round asked again); tables are added to version 3 files as they open. A file
whose ``PRAGMA user_version`` is not `SCHEMA_VERSION` is made anew (its rooms are not kept).
"""

from __future__ import annotations

__all__ = ["SCHEMA", "SCHEMA_VERSION", "TABLES", "ADDED_COLUMNS"]

SCHEMA_VERSION = 3  # PRAGMA user_version of the tables below; an older file is made anew
SCHEMA = """
CREATE TABLE IF NOT EXISTS rooms (code TEXT PRIMARY KEY, secret TEXT NOT NULL,
  expires REAL NOT NULL, step INTEGER NOT NULL, n_steps INTEGER NOT NULL,
  n_answers INTEGER NOT NULL, version INTEGER NOT NULL DEFAULT 0,
  tally INTEGER NOT NULL DEFAULT 0, locked INTEGER NOT NULL DEFAULT 0,
  host_at REAL NOT NULL DEFAULT 0, answer_at REAL NOT NULL DEFAULT 0,
  lesson TEXT NOT NULL DEFAULT '', confidence INTEGER NOT NULL DEFAULT 0,
  histogram_before INTEGER NOT NULL DEFAULT 0, closes REAL,
  language TEXT NOT NULL DEFAULT '') WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rooms_expires ON rooms (expires);
CREATE TABLE IF NOT EXISTS rounds (code TEXT, step INTEGER, round INTEGER, phase TEXT NOT NULL,
  question TEXT NOT NULL, seconds REAL, ends_at REAL, reveal INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (code, step, round)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS answers (code TEXT, step INTEGER, round INTEGER, student TEXT,
  value TEXT NOT NULL, confidence TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (code, step, round, student)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS answers_value ON answers (code, step, round, value);
CREATE TABLE IF NOT EXISTS seen (code TEXT, student TEXT, at REAL NOT NULL,
  PRIMARY KEY (code, student)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hits (kind TEXT, who TEXT, since REAL NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (kind, who)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS devices (digest TEXT PRIMARY KEY, code TEXT NOT NULL,
  wrapped TEXT NOT NULL, expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ended (code TEXT PRIMARY KEY, expires REAL NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS buckets (code TEXT, who TEXT, tokens REAL NOT NULL, at REAL NOT NULL,
  PRIMARY KEY (code, who)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS joined (code TEXT, student TEXT, at REAL NOT NULL,
  PRIMARY KEY (code, student)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS opened (code TEXT, step INTEGER, round INTEGER, at REAL NOT NULL,
  PRIMARY KEY (code, step, round)) WITHOUT ROWID
"""
TABLES = ("rooms", "rounds", "answers", "seen", "hits", "meta", "devices", "ended", "buckets",
          "joined", "opened")
# Columns added to version 3 files as they open (ALTER TABLE: their rooms are kept).
ADDED_COLUMNS = {("rooms", "locked"): "INTEGER NOT NULL DEFAULT 0",
                 ("rooms", "host_at"): "REAL NOT NULL DEFAULT 0",
                 ("rooms", "answer_at"): "REAL NOT NULL DEFAULT 0",
                 ("rooms", "lesson"): "TEXT NOT NULL DEFAULT ''",
                 ("rooms", "confidence"): "INTEGER NOT NULL DEFAULT 0",
                 ("rooms", "histogram_before"): "INTEGER NOT NULL DEFAULT 0",
                 ("rooms", "closes"): "REAL",
                 ("rooms", "owner"): "TEXT NOT NULL DEFAULT ''",
                 ("rooms", "language"): "TEXT NOT NULL DEFAULT ''",
                 ("answers", "confidence"): "TEXT NOT NULL DEFAULT ''"}
