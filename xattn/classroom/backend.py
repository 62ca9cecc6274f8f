"""What a backend of the class store implements: one method per operation, each atomic
(`Backend`; ``sqlite_store.py`` and ``redis_store.py`` implement it; `ClassStore`'s public
methods check their arguments, then call these)."""

from __future__ import annotations

from abc import ABC, abstractmethod

from xattn.classroom.records import Pulse, RawView, Snapshot, Timer

__all__ = ["Backend"]


class Backend(ABC):
    """The atomic operations a class store's backend implements (the public side is
    `xattn.classroom.store.ClassStore`)."""

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
    def _set_language(self, code: str, digest: str, lang: str) -> bool | None:
        """Set the room's default language ("": none), the room's version moved."""

    @abstractmethod
    def _language(self, code: str) -> str:
        """The room's default language ("": none; `RoomNotFound` without the room)."""

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
    def _snapshot_head(self, code: str) -> tuple[Snapshot, dict]:
        """The room's snapshot without answers or levels, and how many answers each round
        holds (``(step, round) -> count``, answered rounds only), in one read."""

    @abstractmethod
    def _round_records(self, code: str, keys: list[tuple]) -> tuple[dict, dict]:
        """The answers and levels of the rounds ``keys`` (``(step, round)`` -> student ->
        stored text, and -> confidence for those who gave one), in one read."""

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
