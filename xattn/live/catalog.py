"""Which lesson a page teaches: one of the server's lessons, or the lesson of the class it is in.

The server's lessons are the ones shipped with xattn (``xattn/lesson/lessons``) and the
deployer's own, the ``*.toml`` files of the folder ``XATTN_LESSONS`` names; a link picks one by
name (``course=short``). A class keeps the lesson it was started with in the class store (its
JSON), so every process of every machine teaches the same lesson in that room, whatever its
own folder holds, and a lecturer's upload reaches every phone. Every lesson is checked with
the page's own table of settings (``xattn.live.link.lesson_setting``) before a class can start.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from collections import OrderedDict
from pathlib import Path

from xattn.classroom import ClassStore
from xattn.lesson import DEFAULT, LESSONS, Lesson, LessonError, read_lesson
from xattn.lesson.lessonfile import MAX_LESSON_BYTES
from xattn.live.link import lesson_setting
from xattn.live.process import process_wide
from xattn.translator import allowed_models

__all__ = ["server_lessons", "broken_lessons", "default_lesson", "lesson_named",
           "room_lesson", "lesson_of_json", "forget", "FOLDER_ENV", "MAX_FOLDER_LESSONS"]

FOLDER_ENV = "XATTN_LESSONS"
MAX_FOLDER_LESSONS = 50        # lesson files read from the deployer's folder
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,59}")
_ROOMS = 512                   # rooms whose lesson a process keeps (a lesson is ~10 kB)


def _shipped() -> dict[str, Lesson]:
    return _shipped_for(allowed_models())[0]


@process_wide(max_entries=8)
def _shipped_for(models: tuple) -> tuple[dict[str, Lesson], dict[str, str]]:
    """The shipped lessons that run with this server's models (``models``: its list), and
    why each other cannot (the English→German lesson needs its model)."""
    found, broken = {}, {}
    for f in sorted(LESSONS.glob("*.toml")):
        try:
            found[f.stem] = read_lesson(f.read_bytes(), f.stem, page=lesson_setting)
        except LessonError as err:
            broken[f.stem] = "; ".join(err.problems)
    return {DEFAULT: found.pop(DEFAULT), **found}, broken


@process_wide()
def _memory() -> dict:
    """Lessons by JSON digest and rooms' lessons by code (bounded), shared by sessions."""
    return {"json": OrderedDict(), "rooms": OrderedDict(), "folder": (None, {}, {}),
            "lock": threading.Lock()}


def _folder_files() -> list[Path]:
    folder = os.environ.get(FOLDER_ENV, "")
    if not folder or not Path(folder).is_dir():
        return []
    return sorted(Path(folder).glob("*.toml"))[:MAX_FOLDER_LESSONS]


def _folder() -> tuple[dict[str, Lesson], dict[str, str]]:
    """The deployer's lessons by name, and what is wrong with each file that cannot run;
    read again when a file in the folder changes."""
    files = _folder_files()
    stamp = tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files)
    memory = _memory()
    with memory["lock"]:
        if memory["folder"][0] == stamp:
            return memory["folder"][1], memory["folder"][2]
    found, broken = {}, {}
    for f in files:
        name = f.stem
        if not _NAME.fullmatch(name):
            broken[f.name] = ("a lesson's file name is letters, digits, '-', '_' or '.', at "
                              "most 60")
        elif f.stat().st_size > MAX_LESSON_BYTES:
            broken[name] = f"more than {MAX_LESSON_BYTES:,} bytes"
        else:
            try:
                found[name] = read_lesson(f.read_bytes(), name, page=lesson_setting)
            except (LessonError, OSError) as err:
                broken[name] = "; ".join(getattr(err, "problems", [str(err)]))
    with memory["lock"]:
        memory["folder"] = (stamp, found, broken)
    return found, broken


def server_lessons() -> dict[str, Lesson]:
    """The lessons a link or a lecturer may pick by name: the shipped ones (the default
    first), then the deployer's folder's (a name of the folder's never hides a shipped one)."""
    shipped = _shipped()
    own, _ = _folder()
    return {**shipped, **{k: v for k, v in own.items() if k not in shipped}}


def broken_lessons() -> dict[str, str]:
    """The lessons that cannot run on this server, with why: the deployer's files that do not
    check, and shipped lessons whose model this server does not offer."""
    return {**_shipped_for(allowed_models())[1], **_folder()[1]}


def default_lesson() -> Lesson:
    return next(iter(_shipped().values()))


def lesson_named(name: str) -> Lesson | None:
    """The server's lesson ``name`` ("" : the default), or None."""
    return server_lessons().get(name) if name else default_lesson()


def lesson_of_json(text: str) -> Lesson:
    """The lesson a room keeps ("" : the default), checked and read once per process."""
    if not text:
        return default_lesson()
    digest = hashlib.sha256(text.encode()).hexdigest()
    memory = _memory()
    with memory["lock"]:
        known = memory["json"].get(digest)
    if known is None:
        known = Lesson.from_json(text, page=lesson_setting)     # LessonError: said by caller
        with memory["lock"]:
            memory["json"][digest] = known
            while len(memory["json"]) > _ROOMS:
                memory["json"].popitem(last=False)
    return known


def room_lesson(store: ClassStore, code: str) -> Lesson:
    """The lesson room ``code`` teaches, read from the store once per process (a room's lesson
    never changes). `ClassroomError` when the store cannot say; a stored lesson that no
    longer checks (a server of another version) is the default lesson's stand-in, never a
    traceback."""
    memory = _memory()
    with memory["lock"]:
        known = memory["rooms"].get(code)
        if known is not None:
            memory["rooms"].move_to_end(code)
            return known
    text = store.lesson(code)                  # ClassroomError: the caller says so
    try:
        lesson = lesson_of_json(text)
    except LessonError:
        lesson = default_lesson()
    with memory["lock"]:
        memory["rooms"][code] = lesson
        while len(memory["rooms"]) > _ROOMS:
            memory["rooms"].popitem(last=False)
    return lesson


def forget(code: str) -> None:
    """Drop what this process knows of room ``code``'s lesson (the room is gone)."""
    with _memory()["lock"]:
        _memory()["rooms"].pop(code, None)
