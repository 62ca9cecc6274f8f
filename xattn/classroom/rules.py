"""The class store's rules as plain functions: a round's phase at a time, the refusals of
answers (a closed round, a stale round, a homework's closing, an answer given), the counts of
a question's answers, and the bounds of timers and device codes. Every backend applies them
the same way (``xattn.classroom.store``, ``sqlite_store``, ``redis_store``)."""

from __future__ import annotations

import hashlib
import math
import numbers
import time
from functools import lru_cache

from xattn._checks import quote
from xattn.classroom.errors import AnswerRefused, LimitReached
from xattn.classroom.question import Question
from xattn.classroom.records import Timer
from xattn.classroom.said import said

__all__ = ["phase_at", "refuse_closed", "refuse_homework", "count_map", "answered", "stale_round",
           "utc", "not_a_step", "homework_closed", "already_answered", "parse_question",
           "client_digest", "check_timer", "decoded", "TIMER_SECONDS", "DEVICE_SECONDS",
           "SECRET_ENV", "MAX_SECRET", "NO_ROOM_DIGEST"]


MAX_SECRET = 100        # token_urlsafe(24) is 32 characters; longer is hashed as ""


NO_ROOM_DIGEST = hashlib.sha256(b"no room").hexdigest()   # compared against when a room is missing


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
        raise AnswerRefused(f"step {step} is revealed: answers are closed.").saying(
            said("why.revealed", step=step))
    if phase == "closed":
        raise AnswerRefused(f"time is up for step {step}: answers are closed.").saying(
            said("why.time.up", step=step))


def stale_round(step: int, sent: int, current: int) -> AnswerRefused:
    """The refusal of an answer to round ``sent`` of ``step`` once the class is on round
    ``current``: the answer is not saved (in the new round it would count as a vote the
    student never cast)."""
    return AnswerRefused(f"this answer was for round {sent} of step {step}, and the class is "
                         f"on round {current} now: it was not saved. Answer again.").saying(
        said("why.stale.round", sent=sent, step=step, current=current))


def other_step(current: int, step: int) -> AnswerRefused:
    """The refusal of an answer to ``step`` while the class is on step ``current``."""
    return AnswerRefused(f"the class is on step {current}, not step {step}.").saying(
        said("why.step.other", current=int(current), step=step))


def full_answers(n: int, limit: int) -> LimitReached:
    """The refusal of an answer once a class holds its most answers (``n``, of ``limit``)."""
    return LimitReached(f"this class already holds {n} answers, the most a class keeps "
                        f"(Limits.max_answers = {limit}).").saying(
        said("why.full.answers", n=int(n)))


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
    return AnswerRefused(f"this homework has steps 1 to {n_steps}; received step {step}.").saying(
        said("why.hw.steps", n=n_steps, step=step))


def homework_closed(closes: float, now: float) -> AnswerRefused:
    return AnswerRefused(f"this homework closed at {utc(closes)}: it took answers until "
                         f"then, and this one came at {utc(now)}.").saying(
        said("why.hw.closed", when=utc(closes)))


def already_answered(step: int, text: str, question: str) -> AnswerRefused:
    """What a homework says to a second, different answer to a step: the first one stays."""
    answer = parse_question(question).decode(text)
    return AnswerRefused(f"step {step} was answered already ({quote(answer)}) and its answer "
                         "shown: a homework's answer stays as it was first sent.").saying(
        said("why.hw.answered", step=step))


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


def client_digest(who: str) -> str:
    """What a store keeps of a client's address: a hash, never the address."""
    return hashlib.sha256(b"xattn client|" + who.encode()).hexdigest()[:32]


def check_timer(seconds) -> float:
    low, high = TIMER_SECONDS
    if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) \
            or not math.isfinite(seconds) or not low <= seconds <= high:
        raise ValueError(f"a timer runs {low:g} to {high:g} seconds; received {quote(seconds)}.")
    return float(seconds)


def decoded(question: str, raw: dict) -> dict:
    """``{(stored text, level or ""): n}`` as ``{(answer, level or None): n}``, texts that
    read as the same answer summed."""
    q, out = parse_question(question), {}
    for (text, level), n in raw.items():
        if int(n) > 0:
            key = (q.decode(text), level or None)
            out[key] = out.get(key, 0) + int(n)
    return out
