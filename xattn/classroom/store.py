"""The class store's one door: `ClassStore`, what every backend implements.

A *room* is a class in progress: a 6-character code students type, a host secret only the
lecturer's pages hold (the store keeps its SHA-256, never the secret), the class's current step
(1..N), and for each step a `Question`, a phase and a round (1, then 2 after *Ask again*, ...).
The phase is ``"asking"`` until the host reveals the step (``"revealed"``); a round with a
timer is ``"closed"`` once its time is up, or ``"revealed"`` at zero if the host asked for
that. A student is a random id, never a name. Answers are one record per student per step per
round: answering again replaces it (the last answer wins); an answer to a step the class is not
on, to a closed round or after the reveal is refused. An answer may carry how sure its student
is (``xattn.classroom.confidence``), saved and replaced with it in the same write; the host
reads it back as counts (`ClassStore.confidence`). *Ask again* starts a new round of the
step (the earlier rounds stay, so a class compares before and after discussing: `changes`).

A room is a live class (the lecturer moves it step by step) or a **homework** (``create_room``
with ``homework``: seconds it stays open, at most ``Limits.homework_seconds``): it has no class
step, no reveal, no rounds after the first and no timer; each student answers any step once,
until it closes (``set_closing`` closes it now or moves its closing time), and sees that
step's answer after their own, so an answer given cannot change (the same answer sent again is
taken, as a phone resends it). A homework room lives until ``Limits.results_seconds`` after it
closes, for the lecturer to read its answers.

Every host action and every answer moves the room's `Pulse`, which one watcher per server
process reads for all its rooms at once (`pulse`) to tell the pages in a room when to redraw.

Public methods check their arguments, then call one private method per operation that each
backend (`SQLiteStore`, `RedisStore`) implements atomically; pages never know which is behind.
`xattn.classroom.open_store` picks the backend from the environment.
"""

from __future__ import annotations

import dataclasses
import hmac
import math
import numbers
import time
from abc import abstractmethod
from collections.abc import Callable, Iterable, Sequence

from xattn._checks import check_int, quote
from xattn.classroom.backend import Backend
from xattn.classroom.codes import (
    check_step,
    check_student,
    new_code,
    new_secret,
    normalize_code,
    secret_digest,
)
from xattn.classroom.confidence import check_level
from xattn.classroom.errors import HostRefused, LimitReached, RoomEnded, RoomNotFound
from xattn.classroom.guards import Guards
from xattn.classroom.hosting import Hosting
from xattn.classroom.question import Question
from xattn.classroom.reading import Reading
from xattn.classroom.records import Limits, Pulse, RoomView, Snapshot
from xattn.classroom.rules import (
    MAX_SECRET,
    NO_ROOM_DIGEST,
    answered,
    client_digest,
    count_map,
    parse_question,
    phase_at,
)
from xattn.classroom.said import said
from xattn.classroom.snapshots import rounds_to_read

__all__ = ["ClassStore"]


class ClassStore(Hosting, Reading, Guards, Backend):
    """Rooms, their steps and the class's answers, shared by every process that opens the
    same store. Thread-safe; every method is one atomic operation on the backend."""

    def __init__(self, limits: Limits | None = None):
        if limits is not None and not isinstance(limits, Limits):
            raise TypeError(f"limits must be a Limits; received {type(limits).__name__}.")
        self.limits = limits or Limits()
        self._signing: list[bytes] | None = None   # the signing keys, once read
        self._fixed = False                       # ... from $XATTN_SECRET: never re-read
        self._refreshed = 0.0

    # --- the host ------------------------------------------------------------------------
    def create_room(self, questions: Sequence[Question], lesson: str = "", *,
                    homework: float | None = None, by: str | None = None) -> tuple[str, str]:
        """A new room at step 1, every step asking: ``(code, host_secret)``. ``lesson`` is
        the room's lesson as text (its JSON, ``xattn.lesson.Lesson.to_json``: every process
        of every machine reads it back with `lesson`; "" for the default lesson).
        ``homework``: the room is a homework open this many seconds from now (up to
        ``Limits.homework_seconds``), kept ``Limits.results_seconds`` after it closes; at most
        ``Limits.max_homework`` of the store's rooms are homework. None: a live class, kept
        ``Limits.ttl_seconds``.

        ``by`` is the client address the room is made from (kept as a hash, never the
        address; None: no address, no bound): an address holds at most
        ``Limits.rooms_per_address`` rooms at once, ``Limits.homework_per_address`` of them
        homework, so that a few addresses never fill the store (`LimitReached` says so).

        When the store already holds ``Limits.max_rooms`` rooms, the live room whose host was
        last seen longest ago is deleted to make space, if that was ``Limits.untaught_seconds``
        ago or more. A host is seen when the room is made, at each host action and while a
        host page whose key drives the room follows it (`mark_hosts`); students who join,
        answers and streams without the key never count, so rooms made and joined to fill the
        store never keep a real class out for longer than that. A homework is never replaced.
        `LimitReached` when there is none.
        """
        specs = [q.to_json() for q in self._check_questions(questions)]
        if not isinstance(lesson, str):
            raise TypeError(f"lesson must be text (the lesson's JSON); received "
                            f"{type(lesson).__name__}.")
        if len(lesson.encode()) > self.limits.max_lesson_bytes:
            raise LimitReached(f"a room's lesson holds at most {self.limits.max_lesson_bytes:,} "
                               f"bytes (Limits.max_lesson_bytes); received "
                               f"{len(lesson.encode()):,}.")
        open_for = None if homework is None else self._check_open(homework, "homework")
        if by is not None and not isinstance(by, str):
            raise TypeError(f"by must be a client address (str) or None; received "
                            f"{type(by).__name__}.")
        owner = "" if by is None else client_digest(by)
        secret = new_secret()
        for _ in range(20):    # a clash among <= max_rooms of 8.9e8 codes is rare; retry it
            code = new_code()
            if self._create(code, secret_digest(secret), specs, lesson, open_for, owner):
                return code, secret
        raise LimitReached("no free room code was found in 20 draws; try again.")

    def lesson(self, code: str) -> str:
        """The lesson room ``code`` was made with (its JSON; "": the default lesson), the
        same for the room's whole life; `RoomNotFound` if there is no such room."""
        return self._lesson(normalize_code(code))

    def _check_open(self, seconds, name: str) -> float:
        """``seconds`` a homework stays open from now, checked: ``name`` is the argument."""
        most = self.limits.homework_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) \
                or not math.isfinite(seconds) or not 0 <= seconds <= most:
            raise ValueError(f"{name} is the seconds a homework stays open from now, 0 to "
                             f"{most:,.0f} ({most / 86400:g} days, Limits.homework_seconds); "
                             f"received {quote(seconds)}.")
        if name == "homework" and seconds == 0:
            raise ValueError("homework is the seconds a homework stays open from now, more "
                             "than 0; received 0.")
        return float(seconds)

    def _homework_full(self, n: int) -> LimitReached:
        days = self.limits.results_seconds / 86400
        return LimitReached(f"this server already holds {n} homework rooms, the most it keeps "
                            f"(Limits.max_homework = {self.limits.max_homework}); one frees up "
                            f"{days:g} days after a homework closes, or when its lecturer "
                            "ends it. A live class can still start.")

    def _full(self, n: int) -> LimitReached:
        return LimitReached(f"this server already holds {n} classes, the most it keeps "
                            f"(Limits.max_rooms = {self.limits.max_rooms}); one frees up when "
                            "a class expires or ends, or when nobody taught in one for "
                            f"{self.limits.untaught_seconds:g} seconds (no host page open, "
                            "no host action): try again in a moment.")

    def _held(self, n: int, homework: bool) -> LimitReached:
        most = self.limits.homework_per_address if homework else self.limits.rooms_per_address
        kind, name = (("homework rooms", "homework_per_address") if homework
                      else ("classes", "rooms_per_address"))
        if homework:
            wait = "or wait until one closes"
        else:
            wait = (f"or wait: a class whose lecturer's page has been closed for "
                    f"{self.limits.untaught_seconds:g} s no longer counts")
        return LimitReached(f"your network already holds {n} {kind} on this server, the most "
                            f"one address keeps at once (Limits.{name} = {most}): end one you "
                            f"started (*End the class*), {wait}.")


    # --- the students --------------------------------------------------------------------
    def answer(self, code: str, step: int, student_id: str, value: str | int | float,
               confidence: str | None = None, *, round_: int | None = None):
        """Record ``student_id``'s answer to ``step`` (the class's current step, still
        asking) with how sure they are (``confidence``: one of
        ``xattn.classroom.confidence.LEVELS``, or None), in one write; both replace the
        student's earlier answer to this round. In a homework, ``step`` is any of its steps
        until it closes, answered once (the same answer again is taken; another is refused).
        ``round_``: the round the student answered (the one their screen showed); an answer
        to a round the host has since asked again is refused (`stale_round`), never saved
        into the new round. None: whichever round is open.
        Returns the answer as stored (a number rounded to the question's decimals).
        `AnswerRefused` otherwise."""
        code, step, student = normalize_code(code), check_step(step), check_student(student_id)
        if round_ is not None:
            check_int(round_, "round_", minimum=1)
        level = check_level(confidence)
        if isinstance(value, str) and (len(value) > self.limits.max_answer_bytes
                                       or len(value.encode()) > self.limits.max_answer_bytes):
            raise LimitReached(f"an answer holds at most {self.limits.max_answer_bytes} bytes "
                               "(Limits.max_answer_bytes).").saying(said("why.too.big"))
        question = self._answer(code, step, student, value, level, round_)
        return parse_question(question).decode(parse_question(question).encode(value))

    def room_view(self, code: str, student_id: str | None = None, *,
                  present: bool = True) -> RoomView:
        """The room's current step, phase and counts; with ``student_id``, ``mine`` holds that
        student's answer and (unless ``present=False``) the student is marked present. Cheap:
        read on every page run."""
        code = normalize_code(code)
        student = None if student_id is None else check_student(student_id)
        if student is not None and present:
            self._touch(code, [student])
        v = self._view(code, student)
        q = parse_question(v.question)
        counts = count_map(q, v.raw)
        phase = phase_at(v.phase, v.timer, v.now)
        if v.closes is not None:                 # a homework: open, or closed
            phase = "closed" if v.now >= v.closes else "asking"
        return RoomView(code, v.step, v.n_steps, phase, v.round, q,
                        counts, answered(v.raw), v.present,
                        None if v.mine is None else q.decode(v.mine), v.expires, v.version,
                        v.timer, bool(v.locked), bool(v.confidence),
                        bool(v.histogram_before), v.closes, int(v.late))

    def mark_hosts(self, hosts: Iterable[tuple[str, str]]) -> None:
        """A host page of each room is open now: ``hosts`` holds ``(code, digest)`` pairs,
        ``digest`` the SHA-256 of the key the page's cookie holds (``codes.secret_digest``;
        a server process sends its open host pages' rooms every few seconds). A room is
        marked taught only where the digest is its host key's: a stream without the key,
        or with a key a new one replaced, never keeps a room."""
        pairs = sorted({(normalize_code(c), d) for c, d in hosts})
        bad = next((d for _, d in pairs if not (isinstance(d, str) and len(d) == 64)), None)
        if bad is not None:
            raise ValueError(f"a host's digest is the 64 hex digits of its key's SHA-256; "
                             f"received {quote(bad)}.")
        if pairs:
            self._mark_hosts(pairs)


    def touch(self, code: str, students: Iterable[str]) -> None:
        """Mark ``students`` present in the room now, in one write (a server process sends
        its open pages' students every few seconds). `LimitReached` when a new student would
        pass ``Limits.max_students`` (students gone make room first)."""
        code = normalize_code(code)
        students = sorted({check_student(s) for s in students})
        if students:
            self._touch(code, students)

    def my_answer(self, code: str, step: int, student_id: str) -> str | int | float | None:
        """``student_id``'s answer to the current round of ``step``, or None."""
        return self.mine(code, step, student_id)[0]

    def student_answers(self, code: str, student_id: str) -> dict[int, tuple]:
        """``student_id``'s own answers to the current round of every step, in one read:
        ``{step: (answer, level or None)}`` for the steps answered (a homework's student
        coming back another day sees what they answered)."""
        code, student = normalize_code(code), check_student(student_id)
        return {step: (parse_question(question).decode(text), level or None)
                for step, (question, text, level) in self._student_answers(code,
                                                                          student).items()}

    def mine(self, code: str, step: int, student_id: str) -> tuple:
        """``student_id``'s answer to the current round of ``step`` and its confidence, in
        one read: ``(answer, level)``, None for either not given."""
        code, step, student = normalize_code(code), check_step(step), check_student(student_id)
        text, mine, level = self._my_answer(code, step, student)
        return None if mine is None else parse_question(text).decode(mine), level or None


    def pulse(self, codes: Iterable[str]) -> dict[str, Pulse]:
        """The `Pulse` of each live room among ``codes``, in one read (missing: gone)."""
        codes = sorted({normalize_code(c) for c in codes})
        return self._pulse(codes) if codes else {}


    def snapshot(self, code: str, since: Snapshot | None = None,
                 fresh: Iterable[tuple] = ()) -> Snapshot:
        """Everything the store holds of room ``code`` but who is present (the server's
        own: what a process keeps to give a store that restarted empty; `RoomNotFound` if
        it is gone). With ``since``, an earlier snapshot of the room, only the answers of
        the rounds that may have changed since are read, with those of ``fresh`` (``(step,
        round)`` pairs), and the rest are ``since``'s (`xattn.classroom.snapshots`): a
        snapshot at every move costs the move's round, not every answer so far."""
        if since is not None and not isinstance(since, Snapshot):
            raise TypeError(f"since must be a Snapshot or None; received "
                            f"{type(since).__name__}.")
        head, counts = self._snapshot_head(normalize_code(code))
        keys = rounds_to_read(head, counts, since, fresh)
        answers, levels = self._round_records(head.code, sorted(keys))
        for key in counts.keys() - keys:         # unchanged since: the earlier read's
            answers[key] = since.answers[key]
            if key in since.levels:
                levels[key] = since.levels[key]
        return dataclasses.replace(head, answers=answers, levels=levels)

    def restore(self, snapshot: Snapshot, answers: dict | None = None,
                levels: dict | None = None) -> bool:
        """Give the store back a room it lost (it restarted empty): the room as ``snapshot``
        holds it, its version moved on (every page redraws) and its host key's digest kept
        (the lecturer's devices still drive it), if the store has no such room; then the
        answers of ``answers`` (by default the snapshot's: ``(step, round)`` -> student ->
        stored text) that it does not hold, each where its student has none, with its
        confidence from ``levels`` (the same shape; by default the snapshot's). Returns whether
        the room was made again. Nothing is replaced: a restore after another process's is
        a merge of what each process knew. `RoomEnded` for a room its lecturer ended
        (`end_room`): nothing is made."""
        if not isinstance(snapshot, Snapshot):
            raise TypeError(f"snapshot must be a Snapshot; received {type(snapshot).__name__}.")
        answers = snapshot.answers if answers is None else answers
        levels = snapshot.levels if levels is None else levels
        known = {(r.step, r.round) for r in snapshot.rounds}
        flat = [(s, r, student, text, check_level(levels.get((s, r), {}).get(student)))
                for (s, r), given in sorted(answers.items())
                if (s, r) in known for student, text in sorted(given.items())]
        if time.time() >= snapshot.expires:
            return False                       # its class is over: nothing to give back
        made = self._restore(snapshot, flat)
        if made is None:
            raise RoomEnded.for_code(snapshot.code)
        return made

    def notifications(self, on_move: Callable[[str | None], None]) -> Callable[[], None] | None:
        """Call ``on_move(code)`` from a thread of the store's own whenever a room may have
        moved (a host action, an answer, a student who joined), and ``on_move(None)`` when
        any room may have moved unseen (the connection came back): a watcher then reads only
        the rooms named. Returns a function that stops it, or None where the backend cannot
        notify (SQLite: the watcher reads every room's pulse a few times a second, one read)."""
        return None

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
            if q.of.distinct and max(len(c.encode()) for c in q.choices) \
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
        digest = secret_digest(secret if len(secret) <= MAX_SECRET else "")
        stored = self._secret(code) if code else None
        if not hmac.compare_digest(stored or NO_ROOM_DIGEST, digest) or stored is None:
            raise HostRefused()
        return code, digest

    @staticmethod
    def _guarded(result):
        # Backends re-check the secret inside the write; None means it changed meanwhile.
        if result is None:
            raise HostRefused()
        return result


