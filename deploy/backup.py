"""A backup of the live SQLite class store, taken while classes write to it.

    python deploy/backup.py DEST [--store FILE] [--keep 14]

DEST is a file, or a folder (it then gets ``classes-YYYYMMDDTHHMMSSZ.sqlite3`` and only the
newest ``--keep`` backups of that name are kept). The store is ``--store``, else
``$XATTN_CLASS_STORE``, else ``$XATTN_DATA/classes.sqlite3`` (``/data`` by default).

Why not ``cp``: the store runs in WAL mode, so the answers of the last minutes live in
``classes.sqlite3-wal`` until SQLite folds them into the main file; a copy of the main file
alone has none of them (a ``cp`` during a class kept 0 of 30 answers), and a copy of both taken
while a process writes can be torn. This uses SQLite's online backup API
(``sqlite3.Connection.backup``): one read transaction, a consistent snapshot of every committed
answer, while the processes keep writing (a WAL reader blocks no writer). The copy is written to
a temporary name, checked (``PRAGMA integrity_check``), synced and then renamed, so DEST is
never a half-written file. One line says what was kept; exit 1 with one line when it fails.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import time
from pathlib import Path

PREFIX, SUFFIX = "classes-", ".sqlite3"


def default_store() -> Path:
    given = os.environ.get("XATTN_CLASS_STORE", "").strip()
    if given:
        return Path(given).expanduser()
    return Path(os.environ.get("XATTN_DATA", "").strip() or "/data") / "classes.sqlite3"


def count(db: sqlite3.Connection, table: str) -> int:
    try:
        return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    except sqlite3.Error:
        return 0


def backup(store: Path, dest: Path) -> tuple[int, int]:
    """Copy ``store`` to ``dest`` with the online backup API; (rooms, answers) kept."""
    if not store.is_file():
        raise FileNotFoundError(f"no class store at {store} (--store, XATTN_CLASS_STORE)")
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    source = sqlite3.connect(store, timeout=30)      # reads only
    try:
        target = sqlite3.connect(tmp)
        try:
            source.backup(target)             # every page in one step: one snapshot
            ok = target.execute("PRAGMA integrity_check").fetchone()[0]
            if ok != "ok":
                raise sqlite3.DatabaseError(f"the copy failed its integrity check: {ok}")
            kept = count(target, "rooms"), count(target, "answers")
        finally:
            target.close()
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, dest)
    finally:
        source.close()
        tmp.unlink(missing_ok=True)
    return kept


def prune(folder: Path, keep: int) -> list[Path]:
    """The backups of ``folder`` beyond the newest ``keep``, removed."""
    old = sorted(folder.glob(f"{PREFIX}*{SUFFIX}"))[:-keep]
    for path in old:
        path.unlink(missing_ok=True)
    return old


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python deploy/backup.py",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("dest", type=Path, help="a backup file, or a folder for dated backups")
    ap.add_argument("--store", type=Path, help="the class store (default: XATTN_CLASS_STORE, "
                    "else XATTN_DATA/classes.sqlite3)")
    ap.add_argument("--keep", type=int, default=14,
                    help="dated backups kept in a DEST folder (default 14)")
    a = ap.parse_args(argv)
    if a.keep < 1:
        ap.error(f"--keep is the backups kept, 1 or more; received {a.keep}")
    store = a.store or default_store()
    dest = a.dest
    if dest.is_dir():
        dest = dest / f"{PREFIX}{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}{SUFFIX}"
    try:
        rooms, answers = backup(store, dest)
    except (OSError, sqlite3.Error) as err:
        print(f"backup: {store} could not be copied to {dest}: {err}", file=sys.stderr)
        return 1
    pruned = prune(dest.parent, a.keep) if a.dest.is_dir() else []
    removed = f"; {len(pruned)} older removed" if pruned else ""
    print(f"backup: {store} -> {dest} ({rooms} rooms, {answers} answers, "
          f"{dest.stat().st_size / 1000:,.0f} kB{removed})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
