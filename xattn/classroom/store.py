"""The class store's one door: `ClassStore`, what every backend implements, and `open_store`.

A *room* is a class in progress: a 6-character code students type, a host secret only the
lecturer's page holds (the store keeps its SHA-256, never the secret), the host's current step
(1..N), and for each step a `Question`, a phase (``"asking"`` until the host reveals it, then
``"revealed"``) and a round (1, then 2 after *Ask again*, ...). A student is a random id
(`new_student_id`), never a name. Answers are one record per student per step per round:
answering again before the reveal replaces it (last answer wins); after the reveal, or for a
step the class is not on, it is refused. *Ask again* starts a new round of the step (the
earlier rounds' counts stay for the CSV, so a class can compare before and after discussing).

Public methods check their arguments, then call one private method per operation that each
backend (`SQLiteStore`, `RedisStore`) implements atomically; pages never know which is behind.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from xattn._checks import check_int, quote
from xattn.classroom.codes import (
    check_step,
    check_student,
    new_code,
    new_secret,
    normalize_code,
    secret_digest,
)
from xattn.classroom.errors import HostRefused, LimitReached, RoomNotFound
from xattn.classroom.question import Question

__all__ = ["ClassStore", "Limits", "RoomView", "Tally", "open_store", "default_path"]

_MAX_SECRET = 100        # token_urlsafe(24) is 32 characters; longer is hashed as ""
_DUMMY = hashlib.sha256(b"no room").hexdigest()   # compared against when a room is missing


@dataclass(frozen=True)
class Limits:
    """Bounds and lifetimes of a store (the defaults fit a lecture hall of 200 students)."""

    ttl_seconds: float = 12 * 3600  # a room is deleted this long after it starts
    max_rooms: int = 100            # live rooms per store: per server (SQLite) or per Redis
    max_steps: int = 16             # questions per room (the lesson asks 8)
    max_rounds: int = 10            # rounds per step (Ask again); each keeps its counts
    max_answers: int = 20_000       # answer records per room, all steps and rounds
    max_answer_bytes: int = 256     # an answer as sent (a choice's text, UTF-8)
    max_students: int = 2_000       # students present at once in a room
    present_seconds: float = 120.0  # a student who read the room this recently is present
    unused_seconds: float = 300.0   # a full store replaces the oldest room this old that no
                                    # student has joined and nobody answered in

    def __post_init__(self):
        for name in ("ttl_seconds", "present_seconds", "unused_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"Limits.{name} must be a positive number of seconds; "
                                 f"received {quote(value)}.")
        for name in ("max_rooms", "max_steps", "max_rounds", "max_answers", "max_answer_bytes",
                     "max_students"):
            check_int(getattr(self, name), f"Limits.{name}", minimum=1)


@dataclass(frozen=True)
class RoomView:
    """A room as one poll reads it: the host's current step and its answers so far.

    ``counts`` maps each answer (a choice's text, a token's index, a number) to the number of
    students who gave it in this round; choice and token questions list every option, zeros
    included, in order. ``mine`` is the polling student's own answer (None: none yet, or the
    host polled). ``n_present`` counts students who read the room in the last
    ``Limits.present_seconds``; a student who answered and left still counts in ``n_answered``.
    """

    code: str
    step: int
    n_steps: int
    phase: str                 # "asking" or "revealed"
    round: int
    question: Question
    counts: dict = field(default_factory=dict)
    n_answered: int = 0
    n_present: int = 0
    mine: object = None
    expires_at: float = 0.0    # seconds since the epoch


@dataclass(frozen=True)
class Tally:
    """The counts of one round of one step (a row group of the CSV)."""

    step: int
    round: int
    question: Question
    counts: dict = field(default_factory=dict)


@lru_cache(maxsize=256)        # at most 256 x MAX_QUESTION_BYTES = 4 MB
def parse_question(text: str) -> Question:
    return Question.from_json(text)


def _count_map(question: Question, raw: dict) -> dict:
    counts = dict.fromkeys(question.options(), 0)
    for text, n in raw.items():
        if int(n) > 0:
            counts[question.decode(text)] = int(n)
    if question.kind == "number":
        counts = dict(sorted(counts.items()))
    return counts


class ClassStore(ABC):
    """Rooms, their steps and the class's answers, shared by every process that opens the
    same store. Thread-safe; every method is one atomic operation on the backend."""

    def __init__(self, limits: Limits | None = None):
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a Limits; received {type(limits).__name__}.")
        self.limits = limits or Limits()

    # --- the host ------------------------------------------------------------------------
    def create_room(self, questions: Sequence[Question]) -> tuple[str, str]:
        """A new room at step 1, every step asking: ``(code, host_secret)``.

        When the store already holds ``Limits.max_rooms`` live rooms, the oldest room that no
        student ever joined and nobody answered in, started at least ``Limits.unused_seconds``
        ago, is deleted to make space (someone opening ``?class=new`` again and again cannot
        keep a lecturer from starting a class for the rooms' 12 hours); `LimitReached` when
        there is none."""
        specs = [q.to_json() for q in self._check_questions(questions)]
        secret = new_secret()
        for _ in range(20):    # a clash among <= max_rooms of 8.9e8 codes is rare; retry it
            code = new_code()
            if self._create(code, secret_digest(secret), specs):
                return code, secret
        raise LimitReached("no free room code was found in 20 draws; try again.")

    def _full(self, n: int) -> LimitReached:
        return LimitReached(f"this server already holds {n} live classes, the most it keeps "
                            f"(Limits.max_rooms = {self.limits.max_rooms}); one frees up when "
                            "a class expires, or when a class no student joined is "
                            f"{self.limits.unused_seconds / 60:g} minutes old.")

    def check_host(self, code: str, secret: str) -> str:
        """The room's code if ``secret`` drives it, else `HostRefused` (also for no room)."""
        return self._authorize(code, secret)[0]

    def rotate_host(self, code: str, secret: str) -> str:
        """A new host secret for the room, which keeps its step and answers; the old one stops
        working."""
        code, digest = self._authorize(code, secret)
        new = new_secret()
        self._guarded(self._rotate(code, digest, secret_digest(new)))
        return new

    def set_step(self, code: str, secret: str, step: int) -> None:
        """Move the class to ``step`` (1..N). Its phase and answers stay as they were."""
        code, digest = self._authorize(code, secret)
        self._guarded(self._set_step(code, digest, check_step(step)))

    def reveal(self, code: str, secret: str, step: int) -> None:
        """Close ``step``'s current round and let students see the answer."""
        code, digest = self._authorize(code, secret)
        self._guarded(self._reveal(code, digest, check_step(step)))

    def ask_again(self, code: str, secret: str, step: int,
                  question: Question | None = None) -> int:
        """Start a new round of ``step`` (asking, no answers yet), with a new question if given
        (e.g. the host changed the sentence). Returns the new round's number."""
        code, digest = self._authorize(code, secret)
        spec = None if question is None else self._check_questions([question])[0].to_json()
        return self._guarded(self._ask_again(code, digest, check_step(step), spec))

    def results(self, code: str, secret: str) -> list[Tally]:
        """Every round of every step with its counts, in order (no student ids)."""
        code, digest = self._authorize(code, secret)
        tallies = []
        for step, rnd, text, raw in self._guarded(self._results(code, digest)):
            q = parse_question(text)
            tallies.append(Tally(step, rnd, q, _count_map(q, raw)))
        return tallies

    # --- the students --------------------------------------------------------------------
    def answer(self, code: str, step: int, student_id: str, value: str | int | float) -> None:
        """Record ``student_id``'s answer to ``step`` (the class's current step, still asking);
        it replaces the student's earlier answer to this round. `AnswerRefused` otherwise."""
        code, step, student = normalize_code(code), check_step(step), check_student(student_id)
        if isinstance(value, str) and (len(value) > self.limits.max_answer_bytes
                                       or len(value.encode()) > self.limits.max_answer_bytes):
            raise LimitReached(f"an answer holds at most {self.limits.max_answer_bytes} bytes "
                               "(Limits.max_answer_bytes).")
        self._answer(code, step, student, value)

    def room_view(self, code: str, student_id: str | None = None) -> RoomView:
        """The room's current step, phase and counts; with ``student_id``, that student is
        marked present and ``mine`` holds their answer. Cheap: every student polls it."""
        code = normalize_code(code)
        student = None if student_id is None else check_student(student_id)
        step, n_steps, phase, rnd, text, raw, present, mine, expires = self._view(code, student)
        q = parse_question(text)
        counts = _count_map(q, raw)
        return RoomView(code, step, n_steps, phase, rnd, q, counts, sum(counts.values()),
                        present, None if mine is None else q.decode(mine), expires)

    def my_answer(self, code: str, step: int, student_id: str) -> str | int | float | None:
        """``student_id``'s answer to the current round of ``step``, or None."""
        code, step, student = normalize_code(code), check_step(step), check_student(student_id)
        text, mine = self._my_answer(code, step, student)
        return None if mine is None else parse_question(text).decode(mine)

    # --- upkeep --------------------------------------------------------------------------
    @abstractmethod
    def purge_expired(self) -> int:
        """Delete expired rooms now; returns how many (Redis deletes them by itself)."""

    @abstractmethod
    def close(self) -> None:
        """Release connections (the store may be used again; it reconnects)."""

    # --- shared checks -------------------------------------------------------------------
    def _check_questions(self, questions) -> list[Question]:
        questions = list(questions)
        bad = next((q for q in questions if not isinstance(q, Question)), None)
        if bad is not None:
            raise TypeError(f"questions must be Question objects; received "
                            f"{type(bad).__name__} {quote(bad)}.")
        if not 1 <= len(questions) <= self.limits.max_steps:
            raise LimitReached(f"a room holds 1 to {self.limits.max_steps} questions "
                               f"(Limits.max_steps); received {len(questions)}.")
        for q in questions:
            if q.kind == "choice" and max(len(c.encode()) for c in q.choices) \
                    > self.limits.max_answer_bytes:
                raise LimitReached("a choice can hold at most "
                                   f"{self.limits.max_answer_bytes} bytes "
                                   "(Limits.max_answer_bytes), since an answer names it.")
        return questions

    def _authorize(self, code, secret) -> tuple[str, str]:
        if not isinstance(secret, str):
            raise TypeError(f"a host secret must be a str; received {type(secret).__name__}.")
        try:
            code = normalize_code(code)
        except RoomNotFound:
            code = None
        # An overlong secret is hashed as "" (no room's secret), not refused early, and a
        # missing room is compared against a dummy: every failure takes the same path.
        digest = secret_digest(secret if len(secret) <= _MAX_SECRET else "")
        stored = self._secret(code) if code else None
        if not hmac.compare_digest(stored or _DUMMY, digest) or stored is None:
            raise HostRefused()
        return code, digest

    @staticmethod
    def _guarded(result):
        # Backends re-check the secret inside the write; None means it changed meanwhile.
        if result is None:
            raise HostRefused()
        return result

    # --- one method per operation, each atomic in the backend ---------------------------
    @abstractmethod
    def _create(self, code: str, digest: str, specs: list[str]) -> bool: ...
    @abstractmethod
    def _secret(self, code: str) -> str | None: ...
    @abstractmethod
    def _rotate(self, code: str, digest: str, new_digest: str) -> bool | None: ...
    @abstractmethod
    def _set_step(self, code: str, digest: str, step: int) -> bool | None: ...
    @abstractmethod
    def _reveal(self, code: str, digest: str, step: int) -> bool | None: ...
    @abstractmethod
    def _ask_again(self, code: str, digest: str, step: int, spec: str | None) -> int | None: ...
    @abstractmethod
    def _results(self, code: str, digest: str) -> list | None: ...
    @abstractmethod
    def _answer(self, code: str, step: int, student: str, value) -> None: ...
    @abstractmethod
    def _view(self, code: str, student: str | None) -> tuple: ...
    @abstractmethod
    def _my_answer(self, code: str, step: int, student: str) -> tuple[str, str | None]: ...


def default_path() -> Path:
    """``$XATTN_CLASS_STORE``, else ``$XDG_DATA_HOME/xattn/classes.sqlite3`` (by default
    ``~/.local/share/xattn/classes.sqlite3``)."""
    if os.environ.get("XATTN_CLASS_STORE"):
        return Path(os.environ["XATTN_CLASS_STORE"]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "xattn" / "classes.sqlite3"


def open_store(limits: Limits | None = None) -> ClassStore:
    """The store the configuration names: Redis at ``$XATTN_REDIS_URL`` if set, else SQLite
    at `default_path` (its directory is made if missing)."""
    url = os.environ.get("XATTN_REDIS_URL", "").strip()
    if url:
        from xattn.classroom.redis_store import RedisStore
        return RedisStore(url, limits)
    from xattn.classroom.sqlite_store import SQLiteStore
    return SQLiteStore(default_path(), limits)
