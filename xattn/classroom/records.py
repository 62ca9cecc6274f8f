"""The class store's records: what a store is bounded by (`Limits`) and what its reads return.

A `RoomView` is a room as a page reads it (the current step, its phase and counts), a `Tally`
one round of one step as the host's results list it, a `Timer` a round's countdown, a `Pulse`
what a watcher reads many times a second, and a `RawView` a room as a backend reads it, before
``xattn.classroom.store.ClassStore`` turns it into a `RoomView`. Plain frozen records: no
store, no backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from xattn._checks import check_int, quote
from xattn.classroom.question import Question

__all__ = ["Limits", "Timer", "RoomView", "Tally", "Pulse", "RawView", "Snapshot", "Round"]


@dataclass(frozen=True)
class Limits:
    """Bounds and lifetimes of a store (the defaults fit a lecture hall of 200 students)."""

    ttl_seconds: float = 12 * 3600  # a room is deleted this long after it starts
    max_rooms: int = 100            # live rooms per store: per server (SQLite) or per Redis
    max_steps: int = 32             # questions per room: a lesson's 16 steps at most, and a
                                    # pre/post check of up to 5 of them (asked twice)
    max_rounds: int = 10            # rounds per step (Ask again); each keeps its counts
    max_answers: int = 20_000       # answer records per room, all steps and rounds
    max_answer_bytes: int = 256     # an answer as sent (a choice's text, UTF-8)
    max_lesson_bytes: int = 65_536  # a room's lesson (its JSON: xattn.lesson.Lesson.to_json)
    max_students: int = 2_000       # students present at once in a room
    present_seconds: float = 120.0  # a student whose page was open this recently is present
    untaught_seconds: float = 45.0  # a full store replaces the live room whose host was last
                                    # seen longest ago, once this long ago (a lecturer trying
                                    # again every few seconds is in within a minute): a host is
                                    # seen when the room is made, at each host action and while
                                    # a host page whose key drives the room follows it;
                                    # students, answers and keyless streams never count
    rooms_per_address: int = 5      # rooms made from one client address held at once (a live
                                    # one while taught, a homework until it closes): 10
                                    # addresses hold at most 50 of max_rooms
    homework_per_address: int = 2   # ... of which homework: 10 addresses hold 20 of max_homework
    # Per client address (a hash of it is kept, never the address), (how many, in seconds):
    # bounds a lecture hall behind one network address never meets, and a script does.
    # A hall of 1,000 phones behind one campus address joins within them (docs/classroom.md).
    new_students: tuple = (3000, 600.0)    # new students joining classes (each did the work)
    failed_joins: tuple = (300, 600.0)     # codes of no live class: a hall's honest mistakes
    new_rooms: tuple = (12, 3600.0)        # classes started
    # Per room and client address, a token bucket of joins (burst, seconds per join after
    # it): a hall of 1,000 phones behind one address joins at once, then a script mints one
    # voter a second
    join_bucket: tuple = (1000, 1.0)
    # Per browser (a random cookie of the phone's page): one browser's mistakes, a guesser's
    browser_failed_joins: tuple = (20, 600.0)
    # A join's proof of work: `join_work_pieces` SHA-256s with this many leading zero bits
    # each (4 x 2**15 = 2**17 hashes: about a second of a phone's JavaScript, a tenth of a core
    # in Python, for each student minted; four pieces so that an unlucky phone waits little)
    join_work_bits: int = 15
    join_work_pieces: int = 4
    join_seconds: float = 600.0     # a join's challenge is good this long after the page
    # Homework (a room open for self-paced work, days long): how long it may stay open from
    # now, how long its answers are kept after it closes (the lecturer reads them), and how
    # many of the store's rooms may be homework (a live class can always start)
    homework_seconds: float = 30 * 86400
    results_seconds: float = 14 * 86400
    max_homework: int = 50

    def __post_init__(self):
        for name in ("ttl_seconds", "present_seconds", "join_seconds",
                     "untaught_seconds", "homework_seconds", "results_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
                raise ValueError(f"Limits.{name} must be a positive number of seconds; "
                                 f"received {quote(value)}.")
        for name in ("max_rooms", "max_steps", "max_rounds", "max_answers", "max_answer_bytes",
                     "max_students", "max_lesson_bytes", "max_homework", "rooms_per_address",
                     "homework_per_address"):
            check_int(getattr(self, name), f"Limits.{name}", minimum=1)
        check_int(self.join_work_bits, "Limits.join_work_bits", minimum=0)
        check_int(self.join_work_pieces, "Limits.join_work_pieces", minimum=1)
        if self.join_work_pieces > 16:
            raise ValueError(f"Limits.join_work_pieces must be at most 16; received "
                             f"{self.join_work_pieces}.")
        if self.join_work_bits > 28:
            raise ValueError(f"Limits.join_work_bits must be at most 28 (2**28 hashes is "
                             f"minutes on a phone); received {self.join_work_bits}.")
        for name in ("new_students", "failed_joins", "new_rooms", "browser_failed_joins",
                     "join_bucket"):
            value = getattr(self, name)
            if not (isinstance(value, tuple) and len(value) == 2) or isinstance(
                    value[1], bool) or not isinstance(value[1], (int, float)) or value[1] <= 0:
                raise ValueError(f"Limits.{name} must be (a count, a positive number of "
                                 f"seconds); received {quote(value)}.")
            check_int(value[0], f"Limits.{name}[0]", minimum=1)


@dataclass(frozen=True)
class Timer:
    """A countdown on one round: ``seconds`` long, ending at ``ends_at`` (seconds since the
    epoch, the store's clock); at zero the round closes, and is revealed if ``reveal``."""

    seconds: float
    ends_at: float
    reveal: bool = False


@dataclass(frozen=True)
class RoomView:
    """A room as one read sees it: the class's current step and its answers so far.

    ``counts`` maps each answer (a choice's text, a token's index, a number) to the number of
    students who gave it in this round; choice and token questions list every option, zeros
    included, in order. A parts question counts each ``(part, choice)`` and a links question
    each ``(target, source)`` link (every one listed): the students whose answer holds it, so
    ``counts[link] / n_answered`` is the link's share of the class. ``mine`` is the reading
    student's own answer (None: none yet, or no student). ``n_present`` counts students whose
    page was open in the last ``Limits.present_seconds``; a student who answered and left still
    counts in ``n_answered``.
    ``version`` changes with every move of the host (a step, a reveal, a round, a timer, a
    switch). The host's switches: ``confidence``, the room asks each answer's confidence
    (``xattn.classroom.confidence``); ``histogram_before``, while a revote asks, phones show
    how the class answered the round before (else only with the reveal).

    ``late`` counts, among ``n_answered``, the students who first joined the room after the
    class arrived at this round (the room made, a step chosen, a round asked again): voters a
    script mints during a question show there; a class in the room before does not.

    A homework room (``closes_at`` set: when it closes, seconds since the epoch) has no class
    step: each student answers any step until then, and sees its answer after their own.
    Its ``step`` stays 1 and ``phase`` is ``"asking"`` until it closes, then ``"closed"``.
    """

    code: str
    step: int
    n_steps: int
    phase: str                 # "asking", "closed" or "revealed"
    round: int
    question: Question
    counts: dict = field(default_factory=dict)
    n_answered: int = 0
    n_present: int = 0
    mine: object = None
    expires_at: float = 0.0    # seconds since the epoch
    version: int = 0
    timer: Timer | None = None
    locked: bool = False       # the host locked the room: no new students join
    confidence: bool = False   # each answer may carry how sure the student is (a host switch)
    histogram_before: bool = False  # a revote's phones show the round before's answers
    closes_at: float | None = None  # homework: when it closes (None: a live class)
    late: int = 0              # of n_answered, the students who joined the room after the
                               # class arrived at this round (a script's fresh voters show here)

    @property
    def homework(self) -> bool:
        """Whether the room is homework: self-paced, open until ``closes_at``."""
        return self.closes_at is not None


@dataclass(frozen=True)
class Tally:
    """The counts of one round of one step (a row group of the CSV), its timer, and how many
    students answered (None: not known; then the counts' sum, for one-answer kinds)."""

    step: int
    round: int
    question: Question
    counts: dict = field(default_factory=dict)
    timer: Timer | None = None
    n_answered: int | None = None


class Pulse(NamedTuple):
    """What a watcher reads of a room many times a second: it changes when the host moves
    (``version``), or anyone answers or joins (``tally``); ``ends_at`` is the current round's
    timer, or when a homework closes."""

    version: int
    tally: int
    ends_at: float | None


class RawView(NamedTuple):
    """A room as a backend reads it (answers still as stored text)."""

    step: int
    n_steps: int
    phase: str
    round: int
    question: str              # the round's Question as JSON
    raw: dict                  # stored answer text -> count
    present: int
    mine: str | None
    expires: float
    version: int
    timer: Timer | None
    now: float                 # the store's clock at the read
    locked: bool = False
    confidence: bool = False
    histogram_before: bool = False
    closes: float | None = None  # homework: when it closes (None: a live class)
    late: int = 0              # answers whose student joined after the round opened


class Round(NamedTuple):
    """One round of one step as a `Snapshot` keeps it."""

    step: int
    round: int
    phase: str                 # as stored: "asking" or "revealed"
    question: str              # its Question as JSON
    timer: Timer | None


@dataclass(frozen=True)
class Snapshot:
    """Everything a store holds of a room but who is present: what a server process keeps
    of the rooms it serves, so that a store that restarted empty gets them back
    (``ClassStore.restore``). ``answers`` maps ``(step, round)`` to student -> stored text,
    ``levels`` the same to student -> confidence (students who gave one);
    ``digest`` is the host key's SHA-256 (never the key)."""

    code: str
    digest: str
    expires: float             # seconds since the epoch (the store's clock)
    step: int
    n_steps: int
    version: int
    tally: int
    locked: bool
    rounds: tuple              # every Round of every step, in order
    answers: dict = field(default_factory=dict)
    lesson: str = ""           # the room's lesson as JSON ("": the default lesson)
    confidence: bool = False   # the host's switches (RoomView)
    histogram_before: bool = False
    levels: dict = field(default_factory=dict)
    closes: float | None = None  # homework: when it closes (None: a live class)
    language: str = ""         # the room's default language ("": none)

    @property
    def n_answers(self) -> int:
        return sum(len(a) for a in self.answers.values())
