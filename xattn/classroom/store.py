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

import hashlib
import hmac
import math
import numbers
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

from xattn._checks import check_int, quote
from xattn.classroom.codes import (
    check_step,
    check_student,
    device_digest,
    new_code,
    new_device_code,
    new_secret,
    normalize_code,
    normalize_device_code,
    secret_digest,
    unwrap_secret,
    wrap_secret,
)
from xattn.classroom.confidence import check_level
from xattn.classroom.errors import (
    AnswerRefused,
    DeviceCodeRefused,
    HostRefused,
    LimitReached,
    RoomEnded,
    RoomNotFound,
)
from xattn.classroom.question import Question
from xattn.classroom.records import (
    Limits,
    Pulse,
    RawView,
    RoomView,
    Snapshot,
    Tally,
    Timer,
)

__all__ = ["ClassStore", "phase_at", "refuse_closed", "refuse_homework", "count_map",
           "answered", "stale_round", "utc", "TIMER_SECONDS", "DEVICE_SECONDS", "SECRET_ENV"]

_MAX_SECRET = 100        # token_urlsafe(24) is 32 characters; longer is hashed as ""
_DUMMY = hashlib.sha256(b"no room").hexdigest()   # compared against when a room is missing
SECRET_ENV = "XATTN_SECRET"     # a deployer's secret: students' ids signed with a key from it
TIMER_SECONDS = (5.0, 3600.0)   # the shortest and longest countdown a host may start
DEVICE_SECONDS = 300.0          # a device code's life: long enough to walk to the projector


def phase_at(phase: str, timer: Timer | None, now: float) -> str:
    """A round's phase at ``now``: a running round whose timer ran out is ``"closed"`` (or
    ``"revealed"`` when its timer reveals)."""
    if phase == "asking" and timer is not None and now >= timer.ends_at:
        return "revealed" if timer.reveal else "closed"
    return phase


def refuse_closed(step: int, phase: str) -> None:
    """`AnswerRefused` unless a round in ``phase`` takes answers."""
    if phase == "revealed":
        raise AnswerRefused(f"step {step} is revealed: answers are closed.")
    if phase == "closed":
        raise AnswerRefused(f"time is up for step {step}: answers are closed.")


def stale_round(step: int, sent: int, current: int) -> AnswerRefused:
    """The refusal of an answer to round ``sent`` of ``step`` once the class is on round
    ``current``: the answer is not saved (in the new round it would count as a vote the
    student never cast)."""
    return AnswerRefused(f"this answer was for round {sent} of step {step}, and the class is "
                         f"on round {current} now: it was not saved. Answer again.")


def utc(t: float) -> str:
    """A time (seconds since the epoch) as a person reads it in a message: ``2026-12-09
    17:00:00 UTC`` (the store's clock is UTC; a page shows its reader's own time)."""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(t))


def refuse_homework(step: int, n_steps: int, closes: float, now: float) -> None:
    """`AnswerRefused` unless a homework of ``n_steps`` steps closing at ``closes`` takes an
    answer to ``step`` at ``now``."""
    if step > n_steps:
        raise not_a_step(step, n_steps)
    if now >= closes:
        raise homework_closed(closes, now)


def not_a_step(step: int, n_steps: int) -> AnswerRefused:
    return AnswerRefused(f"this homework has steps 1 to {n_steps}; received step {step}.")


def homework_closed(closes: float, now: float) -> AnswerRefused:
    return AnswerRefused(f"this homework closed at {utc(closes)}: it took answers until "
                         f"then, and this one came at {utc(now)}.")


def already_answered(step: int, text: str, question: str) -> AnswerRefused:
    """What a homework says to a second, different answer to a step: the first one stays."""
    answer = parse_question(question).decode(text)
    return AnswerRefused(f"step {step} was answered already ({quote(answer)}) and its answer "
                         "shown: a homework's answer stays as it was first sent.")


@lru_cache(maxsize=256)        # at most 256 x MAX_QUESTION_BYTES = 4 MB
def parse_question(text: str) -> Question:
    return Question.from_json(text)


def count_map(question: Question, raw: dict) -> dict:
    """Counts by answer, from stored text -> count: every option listed, and texts that read
    as the same answer summed (an older store may hold ``-0.00`` beside ``0.00``). A parts or
    links question counts each element (``Question.elements``: a part's choice, a link): the
    sum over stored answers of the students whose answer holds it."""
    counts = dict.fromkeys(question.options(), 0)
    for text, n in raw.items():
        if int(n) > 0:
            for value in question.elements(question.decode(text)):
                counts[value] = counts.get(value, 0) + int(n)
    if question.of.choices is None:             # a range: the numbers given, in order
        counts = dict(sorted(counts.items()))
    return counts


def answered(raw: dict) -> int:
    """How many students answered, from stored text -> count (each answer is one student's)."""
    return sum(int(n) for n in raw.values() if int(n) > 0)


def _client_digest(who: str) -> str:
    """What a store keeps of a client's address: a hash, never the address."""
    return hashlib.sha256(b"xattn client|" + who.encode()).hexdigest()[:32]


def check_timer(seconds) -> float:
    low, high = TIMER_SECONDS
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) \
            or not math.isfinite(seconds) or not low <= seconds <= high:
        raise ValueError(f"a timer runs {low:g} to {high:g} seconds; received {quote(seconds)}.")
    return float(seconds)


def _decoded(question: str, raw: dict) -> dict:
    """``{(stored text, level or ""): n}`` as ``{(answer, level or None): n}``, texts that
    read as the same answer summed."""
    q, out = parse_question(question), {}
    for (text, level), n in raw.items():
        if int(n) > 0:
            key = (q.decode(text), level or None)
            out[key] = out.get(key, 0) + int(n)
    return out


class ClassStore(ABC):
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
        owner = "" if by is None else _client_digest(by)
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

    def add_device(self, code: str, secret: str) -> tuple[str, float]:
        """A one-time device code that lets another device drive the room
        (`redeem_device`): ``(device_code, expires)``, expiring `DEVICE_SECONDS` from now (on
        the store's clock). The store keeps its digest and the host secret wrapped by it, so
        the code itself is nowhere but on the page that asked for it."""
        code, digest = self._authorize(code, secret)
        device = new_device_code()
        expires = self._guarded(self._add_device(code, digest, device_digest(code, device),
                                                 wrap_secret(secret, code, device),
                                                 DEVICE_SECONDS))
        return device, expires

    def redeem_device(self, code: str, device_code: str) -> str:
        """The host secret a device code was made for; the code is used up at once (a second
        use, an expired code, a made-up one, or one made before `rotate_host` is
        `DeviceCodeRefused`)."""
        try:
            code = normalize_code(code)
        except (RoomNotFound, TypeError):
            raise DeviceCodeRefused() from None
        device = normalize_device_code(device_code)
        wrapped = None if device is None else self._take_device(code,
                                                                 device_digest(code, device))
        secret = None if wrapped is None else unwrap_secret(wrapped, code, device)
        if secret is None:
            raise DeviceCodeRefused()
        try:
            self._authorize(code, secret)
        except HostRefused:                  # made before a new host key
            raise DeviceCodeRefused() from None
        return secret

    def lock(self, code: str, secret: str, locked: bool) -> None:
        """Lock the room (no new student joins it; those in it stay) or open it again."""
        code, digest = self._authorize(code, secret)
        if not isinstance(locked, bool):
            raise TypeError(f"locked must be a bool; received {type(locked).__name__}.")
        self._guarded(self._set_lock(code, digest, locked))

    def set_options(self, code: str, secret: str, *, confidence: bool | None = None,
                    histogram_before: bool | None = None) -> None:
        """The host's switches (None: as it is): ``confidence``, whether each answer carries
        how sure its student is (``xattn.classroom.confidence``; off by default);
        ``histogram_before``, whether a revote's phones show how the class answered the round
        before while they vote (Brooks and Koretsky 2011: it sways them towards the
        consensus; off by default: only with the reveal). The room's version moves: every
        page and phone redraws."""
        code, digest = self._authorize(code, secret)
        for name, value in (("confidence", confidence), ("histogram_before", histogram_before)):
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"{name} must be a bool or None; received "
                                f"{type(value).__name__} {quote(value)}.")
        if confidence is None and histogram_before is None:
            raise ValueError("set_options needs confidence or histogram_before; received "
                             "neither.")
        self._guarded(self._set_options(code, digest, confidence, histogram_before))

    def set_step(self, code: str, secret: str, step: int) -> None:
        """Move the class to ``step`` (1..N). Its phase and answers stay as they were (a
        live class only: a homework has no class step)."""
        code, digest = self._live(code, secret, "moves the class to a step")
        self._guarded(self._set_step(code, digest, check_step(step)))

    def reveal(self, code: str, secret: str, step: int) -> None:
        """Close ``step``'s current round and let students see the answer (a live class
        only: in a homework each student sees a step's answer after their own)."""
        code, digest = self._live(code, secret, "reveals a step")
        self._guarded(self._reveal(code, digest, check_step(step)))

    def ask_again(self, code: str, secret: str, step: int,
                  question: Question | None = None) -> int:
        """Start a new round of ``step`` (asking, no answers, no timer), with a new question
        if given. Returns the new round's number. A live class only (a homework asks each
        step once: a revote or a follow-up needs the class's discussion)."""
        code, digest = self._live(code, secret, "asks a step again")
        spec = None if question is None else self._check_questions([question])[0].to_json()
        return self._guarded(self._ask_again(code, digest, check_step(step), spec))

    def start_timer(self, code: str, secret: str, step: int, seconds: float,
                    reveal: bool = False) -> Timer:
        """A countdown of ``seconds`` on ``step``'s current round (it replaces a running
        one): at zero the round closes to answers, and is revealed if ``reveal``. The end is
        on the store's clock, the same for every process. A live class only."""
        code, digest = self._live(code, secret, "starts a timer")
        if not isinstance(reveal, bool):
            raise TypeError(f"reveal must be a bool; received {type(reveal).__name__}.")
        return self._guarded(self._start_timer(code, digest, check_step(step),
                                               check_timer(seconds), reveal))

    def set_closing(self, code: str, secret: str, seconds: float) -> float:
        """A homework closes ``seconds`` from now (0: now; at most ``Limits.homework_seconds``):
        *Close now*, *Extend*, or open again after it closed. Its answers are then kept until
        ``Limits.results_seconds`` after the new closing time; the room's version moves, so
        every page and phone redraws. Returns the closing time (the store's clock).
        `ValueError` for a live class."""
        code, digest = self._authorize(code, secret)
        seconds = self._check_open(seconds, "seconds")
        closes = self._guarded(self._set_closing(code, digest, seconds))
        if closes is False:
            raise ValueError(f"class {code} is a live class: it has no closing time (a "
                             "homework has; start one from *Start a class*).")
        return closes

    def _live(self, code: str, secret: str, what: str) -> tuple[str, str]:
        """`_authorize`, and `ValueError` for a homework (its mode never changes)."""
        code, digest = self._authorize(code, secret)
        if self._closes(code) is not None:
            raise ValueError(f"class {code} is a homework: nobody {what} in a homework; each "
                             "student walks the steps at their own pace and sees each step's "
                             "answer after their own.")
        return code, digest

    def end_room(self, code: str, secret: str) -> None:
        """End the class now: the room, its questions, answers and students are deleted at
        once, and every page of the room is told the class is over. A marker holding the code
        and nothing else stays until the room would have expired, so that no server process
        gives it back from its snapshot (`restore`) and no new class takes its code
        meanwhile."""
        code, digest = self._authorize(code, secret)
        self._guarded(self._end(code, digest))

    def results(self, code: str, secret: str) -> list[Tally]:
        """Every round of every step with its counts and timer, in order (no student ids)."""
        code, digest = self._authorize(code, secret)
        tallies = []
        for step, rnd, text, raw, timer in self._guarded(self._results(code, digest)):
            q = parse_question(text)
            tallies.append(Tally(step, rnd, q, count_map(q, raw), timer, answered(raw)))
        return tallies

    def changes(self, code: str, secret: str, step: int, first: int, then: int) -> dict:
        """How the class's answers to ``step`` moved from round ``first`` to round ``then``:
        ``{(answer in first, answer in then): students}``, None for a round a student did not
        answer (counts only, no ids): what peer instruction looks at after a revote."""
        code, digest = self._authorize(code, secret)
        for name, r in (("first", first), ("then", then)):
            check_int(r, name, minimum=1)
        pair = self._guarded(self._round_answers(code, digest, check_step(step), first, then))
        (qa, a), (qb, b) = pair
        qa, qb = parse_question(qa), parse_question(qb)
        moved: dict = {}
        for student in a.keys() | b.keys():
            key = (None if student not in a else qa.decode(a[student]),
                   None if student not in b else qb.decode(b[student]))
            moved[key] = moved.get(key, 0) + 1
        return moved

    def trajectories(self, code: str, secret: str, step: int) -> tuple[list[Question], dict]:
        """Every round's question of ``step``, in order, and how the class's answers went
        through them: ``{(answer in round 1, answer in round 2, ...): students}`` (None for
        a round a student did not answer; counts only, no ids): what the class learned
        (``xattn.classroom.learning``)."""
        code, digest = self._authorize(code, secret)
        step = check_step(step)
        rounds = [t for t in self.results(code, secret) if t.step == step]
        answers = [self._answers_of(code, step, t.round) for t in rounds]
        seqs: dict = {}
        for student in set().union(*answers) if answers else ():
            seq = tuple(None if student not in got else t.question.decode(got[student])
                        for t, got in zip(rounds, answers, strict=True))
            seqs[seq] = seqs.get(seq, 0) + 1
        return [t.question for t in rounds], seqs

    def answer_counts(self, code: str, secret: str) -> dict:
        """How many students gave each whole answer in each round answered, in one read:
        ``{(step, round): {answer: students}}`` (counts only, no ids). A parts or links
        answer is counted whole, as the student sent it (`results` counts each element):
        what judges how many were right."""
        code, _ = self._authorize(code, secret)
        out: dict = {}
        for key, (question, raw) in self._levels_counted(code).items():
            counts: dict = {}
            for (answer, _), n in _decoded(question, raw).items():
                counts[answer] = counts.get(answer, 0) + n
            out[key] = counts
        return out

    def confidence(self, code: str, secret: str, step: int, round_: int) -> dict:
        """How sure the class was of each answer to round ``round_`` of ``step``:
        ``{(answer, level): students}`` (level None: the student gave none; counts only, no
        ids), read in one step with the answers (``xattn.classroom.confidence.split``
        tells right and sure from wrong and sure)."""
        code, _ = self._authorize(code, secret)
        step = check_step(step)
        check_int(round_, "round_", minimum=1)
        got = self._levels_counted(code, step, round_).get((step, round_))
        if got is None:
            if (step, round_) not in {(t.step, t.round) for t in self.results(code, secret)}:
                raise ValueError(f"step {step} has no round {round_}.")
            return {}
        return _decoded(*got)

    def confidences(self, code: str, secret: str) -> dict:
        """`confidence` of every round in which at least one student gave a confidence, in
        one read: ``{(step, round): {(answer, level): students}}``."""
        code, _ = self._authorize(code, secret)
        return {key: _decoded(*got) for key, got in self._levels_counted(code).items()
                if any(level for _, level in got[1])}

    def across(self, code: str, secret: str, first: tuple[int, int],
               then: tuple[int, int]) -> dict:
        """How each student answered round ``first`` = (step, round) and round ``then`` (of
        another step: a pre/post check asks one question twice): ``{(answer, answer):
        students}``, None for a round a student did not answer (counts only, no ids)."""
        code, digest = self._authorize(code, secret)
        rounds = {(t.step, t.round): t.question for t in self.results(code, secret)}
        for name, (step, round_) in (("first", first), ("then", then)):
            if (check_step(step), round_) not in rounds:
                raise ValueError(f"{name} must be a (step, round) the room has asked; "
                                 f"received {(step, round_)!r}.")
        got = [self._answers_of(code, s, r) for s, r in (first, then)]
        pairs: dict = {}
        for student in got[0].keys() | got[1].keys():
            key = tuple(None if student not in g else rounds[sr].decode(g[student])
                        for g, sr in zip(got, (first, then), strict=True))
            pairs[key] = pairs.get(key, 0) + 1
        return pairs

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
                               "(Limits.max_answer_bytes).")
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

    def take_join(self, code: str, who: str) -> float:
        """Take one join of room ``code`` from client ``who`` (an address, kept as a hash)
        out of their token bucket (``Limits.join_bucket``: a burst, then one join every so
        many seconds): 0.0 if taken, else the seconds until one is (nothing taken). A hall
        behind one address joins within the burst; a script then mints one voter per
        refill, in that room, from that address."""
        code = normalize_code(code)
        if not isinstance(who, str):
            raise TypeError(f"who must be a str; received {type(who).__name__}.")
        burst, every = self.limits.join_bucket
        return self._take_join(code, _client_digest(who), int(burst), float(every))

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

    def allow(self, kind: str, who: str, *, peek: bool = False) -> bool:
        """Count one ``kind`` of action (``"new_students"``, ``"failed_joins"``,
        ``"new_rooms"``) by the client ``who`` (an address, kept as a hash); False once it
        passed its `Limits` bound in the current window. ``peek``: only say whether one more
        would be allowed (a join is refused unheard once the client's failures ran out)."""
        kinds = ("new_students", "failed_joins", "new_rooms", "browser_failed_joins")
        if kind not in kinds:
            raise ValueError(f"kind must be one of {', '.join(kinds)}; received {quote(kind)}.")
        if not isinstance(who, str):
            raise TypeError(f"who must be a str; received {type(who).__name__}.")
        limit, window = getattr(self.limits, kind)
        return self._allow(kind, _client_digest(who), limit, float(window), peek)

    def signing_key(self) -> bytes:
        """The key students' ids are signed with now (`signing_keys`' first)."""
        return self.signing_keys()[0]

    def signing_keys(self) -> list[bytes]:
        """Every key a student's id may be signed with, the one to sign with first.

        One source for every process: ``$XATTN_SECRET`` (a deployer's secret: the key is
        derived from it, stored nowhere), else the store's own key, made once and shared by
        every process that opens the store, and kept with every key this process signed
        with before (`refresh_signing_keys`): a store that restarted empty takes them back,
        so no restart ever splits the students of two processes."""
        if self._signing is None:
            secret = os.environ.get(SECRET_ENV, "").strip()
            if secret:
                self._signing = [hmac.new(secret.encode(), b"xattn signing key",
                                          hashlib.sha256).digest()]
                self._fixed = True
            else:
                self._signing = self._signing_keys([])
        return self._signing

    def refresh_signing_keys(self) -> list[bytes]:
        """Read the store's keys again, handing it those this process knows (call when a
        signature fails: another process may sign with a key made after a store restart);
        at most once a second."""
        if self._fixed or self._signing is None:
            return self.signing_keys()
        now = time.monotonic()
        if now - self._refreshed >= 1.0:
            self._refreshed = now
            self._signing = self._signing_keys(list(self._signing))
        return self._signing

    def pulse(self, codes: Iterable[str]) -> dict[str, Pulse]:
        """The `Pulse` of each live room among ``codes``, in one read (missing: gone)."""
        codes = sorted({normalize_code(c) for c in codes})
        return self._pulse(codes) if codes else {}

    def round_answers(self, code: str, step: int, round_: int) -> dict[str, str]:
        """Every answer to round ``round_`` of ``step``, as stored text by student id, in one
        read. The server's own read (a process tells each phone it serves what the class has
        of its answer); no page ever shows ids."""
        code, step = normalize_code(code), check_step(step)
        check_int(round_, "round_", minimum=1)
        return self._answers_of(code, step, round_)

    def round_levels(self, code: str, step: int, round_: int) -> dict[str, str]:
        """Every confidence given in round ``round_`` of ``step``, by student id (the
        server's own read, as `round_answers`: a process tells each phone its own)."""
        code, step = normalize_code(code), check_step(step)
        check_int(round_, "round_", minimum=1)
        return self._levels_of(code, step, round_)

    def tally(self, code: str, step: int, round_: int) -> Tally:
        """One round's question and counts (no ids), without the host key: what the class
        may be shown of a round it answered (a revote's phones see the round before,
        `set_options`); `ValueError` for a round the step has not had."""
        code, step = normalize_code(code), check_step(step)
        check_int(round_, "round_", minimum=1)
        got = self._tally(code, step, round_)
        if got is None:
            raise ValueError(f"step {step} has no round {round_}.")
        text, raw, timer = got
        q = parse_question(text)
        return Tally(step, round_, q, count_map(q, raw), timer, answered(raw))

    def snapshot(self, code: str) -> Snapshot:
        """Everything the store holds of room ``code`` but who is present, in one read (the
        server's own: what a process keeps to give a store that restarted empty;
        `RoomNotFound` if it is gone)."""
        return self._snapshot(normalize_code(code))

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
    def _create(self, code: str, digest: str, specs: list[str], lesson: str,
                open_for: float | None, owner: str) -> bool:
        """Make the room (a homework open ``open_for`` seconds; None: a live class), made
        from the client whose digest is ``owner`` ("": none, no bound); False if the code
        is taken."""
    @abstractmethod
    def _closes(self, code: str) -> float | None:
        """When the homework ``code`` closes (None: a live class, or no such room)."""
    @abstractmethod
    def _set_closing(self, code: str, digest: str, seconds: float) -> float | bool | None:
        """The homework closes ``seconds`` from now, its expiry after it: the closing time
        (False: a live class; None: the secret changed)."""
    @abstractmethod
    def _student_answers(self, code: str, student: str) -> dict[int, tuple]:
        """``{step: (question JSON, stored text, level or "")}`` of the student's answers to
        every step's current round (`RoomNotFound` without the room)."""

    @abstractmethod
    def _lesson(self, code: str) -> str: ...
    @abstractmethod
    def _secret(self, code: str) -> str | None: ...
    @abstractmethod
    def _rotate(self, code: str, digest: str, new_digest: str) -> bool | None: ...
    @abstractmethod
    def _add_device(self, code: str, digest: str, device: str, wrapped: str,
                    seconds: float) -> float | None:
        """Keep a device code's digest and wrapped secret for ``seconds``; its expiry."""
    @abstractmethod
    def _take_device(self, code: str, device: str) -> str | None:
        """The wrapped secret of a live device code, deleted in the same step (else None)."""
    @abstractmethod
    def _set_lock(self, code: str, digest: str, locked: bool) -> bool | None: ...
    @abstractmethod
    def _set_options(self, code: str, digest: str, confidence: bool | None,
                     histogram_before: bool | None) -> bool | None:
        """Set the switches not None, the room's version moved."""
    @abstractmethod
    def _set_step(self, code: str, digest: str, step: int) -> bool | None: ...
    @abstractmethod
    def _reveal(self, code: str, digest: str, step: int) -> bool | None: ...
    @abstractmethod
    def _ask_again(self, code: str, digest: str, step: int, spec: str | None) -> int | None: ...
    @abstractmethod
    def _start_timer(self, code: str, digest: str, step: int, seconds: float,
                     reveal: bool) -> Timer | None: ...
    @abstractmethod
    def _end(self, code: str, digest: str) -> bool | None:
        """Delete the room and all it holds; keep the ended marker until its expiry."""
    @abstractmethod
    def _results(self, code: str, digest: str) -> list | None: ...
    @abstractmethod
    def _round_answers(self, code: str, digest: str, step: int, first: int,
                       then: int) -> tuple | None: ...
    @abstractmethod
    def _answer(self, code: str, step: int, student: str, value, level: str | None,
                round_: int | None) -> str:
        """Store the answer and its confidence (None: none) in one write; return the round's
        question (JSON)."""
    @abstractmethod
    def _view(self, code: str, student: str | None) -> RawView: ...
    @abstractmethod
    def _touch(self, code: str, students: list[str]) -> None: ...
    @abstractmethod
    def _mark_hosts(self, hosts: list[tuple[str, str]]) -> None:
        """Each room's host seen now, where its key's digest is the one given."""
    @abstractmethod
    def _take_join(self, code: str, who: str, burst: int, every: float) -> float:
        """One token out of the (room, client) bucket, atomically: 0.0, or the wait."""
    @abstractmethod
    def _my_answer(self, code: str, step: int,
                   student: str) -> tuple[str, str | None, str | None]:
        """The current round's question (JSON), the student's stored answer and level."""
    @abstractmethod
    def _answers_of(self, code: str, step: int, round_: int) -> dict[str, str]: ...
    @abstractmethod
    def _levels_of(self, code: str, step: int, round_: int) -> dict[str, str]:
        """Student -> confidence of the round's answers that carry one."""
    @abstractmethod
    def _levels_counted(self, code: str, step: int | None = None,
                        round_: int | None = None) -> dict:
        """``{(step, round): (question JSON, {(stored text, level or ""): students})}`` of
        every answered round (or of the one named), in one read."""
    @abstractmethod
    def _tally(self, code: str, step: int, round_: int) -> tuple | None:
        """(question JSON, stored text -> count, timer) of one round, None if it has not
        been asked (`RoomNotFound` without the room)."""
    @abstractmethod
    def _pulse(self, codes: list[str]) -> dict[str, Pulse]: ...
    @abstractmethod
    def _allow(self, kind: str, digest: str, limit: int, window: float,
               peek: bool) -> bool: ...
    @abstractmethod
    def _snapshot(self, code: str) -> Snapshot: ...
    @abstractmethod
    def _restore(self, snapshot: Snapshot, answers: list[tuple]) -> bool | None:
        """Make the room if missing, then add ``answers`` ((step, round, student, text,
        level or None))
        where the student has none: one atomic step; whether it was made (None, and nothing
        done, for a room its lecturer ended)."""
    @abstractmethod
    def _signing_keys(self, known: list[bytes]) -> list[bytes]:
        """The store's signing keys (its first one made, from ``known[0]`` if given, when it
        has none), ``known`` added to them, in one atomic step."""
