"""A class's shared state: rooms, predict-then-reveal steps and the class's answers.

Plain Python (no streamlit): one interface, `ClassStore`, with two backends chosen by
configuration (`open_store`): `SQLiteStore` (one file, WAL; the default, for the processes of
one machine) and `RedisStore` (``$XATTN_REDIS_URL``, for several machines). `answers_csv` and
`qr_svg` make the host's download and the room's QR code.
"""

from xattn.classroom.codes import ALPHABET, CODE_LENGTH, new_student_id, normalize_code
from xattn.classroom.errors import (
    AnswerRefused,
    ClassroomError,
    HostRefused,
    LimitReached,
    RoomNotFound,
    StoreUnavailable,
)
from xattn.classroom.question import Question
from xattn.classroom.report import answers_csv, qr_svg
from xattn.classroom.store import ClassStore, Limits, RoomView, Tally, default_path, open_store

__all__ = ["ClassStore", "Limits", "RoomView", "Tally", "Question", "open_store",
           "default_path", "new_student_id", "normalize_code", "answers_csv", "qr_svg",
           "ALPHABET", "CODE_LENGTH", "ClassroomError", "RoomNotFound", "HostRefused",
           "AnswerRefused", "LimitReached", "StoreUnavailable", "SQLiteStore", "RedisStore"]


def __getattr__(name):
    # The backends load on first use: a SQLite-only server never imports redis.
    if name == "SQLiteStore":
        from xattn.classroom.sqlite_store import SQLiteStore
        return SQLiteStore
    if name == "RedisStore":
        from xattn.classroom.redis_store import RedisStore
        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
