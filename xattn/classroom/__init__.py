"""A class's shared state: rooms, predict-then-reveal steps and the class's answers.

Plain Python (no streamlit): one interface, `ClassStore`, with two backends chosen by
configuration (`open_store`): `SQLiteStore` (one file, WAL; the default, for the processes of
one machine) and `RedisStore` (``$XATTN_REDIS_URL``, for several machines). `answers_csv` and
`qr_svg` make the host's download and the room's QR code.

Examples
--------
A host starts a class of two steps; a student answers; the host reads the count and reveals.

>>> import pathlib, tempfile
>>> from xattn.classroom import SQLiteStore   # open_store() picks it from the environment
>>> store = SQLiteStore(pathlib.Path(tempfile.mkdtemp()) / "classes.sqlite3")
>>> code, secret = store.create_room([Question("token", ("the", "cat", "the")),
...                                   Question("choice", ("up", "down"))])
>>> me = new_student_id()                    # once per browser session
>>> store.room_view(code, me).phase          # a student's page: joins the room
'asking'
>>> store.answer(code, 1, me, 2)             # tapped the second "the": stored as 2
2
>>> view = store.room_view(code)             # the host's poll
>>> f"{view.n_answered} of {view.n_present} answered", view.counts
('1 of 1 answered', {0: 0, 1: 0, 2: 1})
>>> store.reveal(code, secret, 1)
>>> store.room_view(code, me).mine           # shown beside the truth
2
>>> secret = store.rotate_host(code, secret) # the old host link stops working
>>> store.set_step(code, secret, 2)
>>> answers_csv(store.results(code, secret)).splitlines()[2:4]    # counts, no ids
['1,1,token,1,cat,0,,,1,,,,', '1,1,token,2,the,1,,,1,,,,']
"""

from xattn.classroom.codes import ALPHABET, CODE_LENGTH, new_student_id, normalize_code
from xattn.classroom.config import default_path, open_store
from xattn.classroom.errors import (
    AnswerRefused,
    ClassroomError,
    DeviceCodeRefused,
    HostRefused,
    LimitReached,
    RoomEnded,
    RoomNotFound,
    StoreUnavailable,
)
from xattn.classroom.question import NO_QUESTION, Question
from xattn.classroom.records import Limits, Pulse, RoomView, Tally, Timer
from xattn.classroom.report import answers_csv, qr_svg
from xattn.classroom.store import ClassStore

__all__ = ["ClassStore", "Limits", "RoomView", "Tally", "Timer", "Pulse", "Question",
           "NO_QUESTION",
           "open_store",
           "default_path", "new_student_id", "normalize_code", "answers_csv", "qr_svg",
           "ALPHABET", "CODE_LENGTH", "ClassroomError", "RoomNotFound", "RoomEnded",
           "HostRefused",
           "DeviceCodeRefused", "AnswerRefused", "LimitReached", "StoreUnavailable",
           "SQLiteStore", "RedisStore"]


def __getattr__(name):
    # The backends load on first use: a SQLite-only server never imports redis.
    if name == "SQLiteStore":
        from xattn.classroom.sqlite_store import SQLiteStore
        return SQLiteStore
    if name == "RedisStore":
        from xattn.classroom.redis_store import RedisStore
        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
