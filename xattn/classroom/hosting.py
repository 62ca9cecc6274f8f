"""What a room's host does, checked: its secret, its devices and keys, the lock, the
options, the class's step, the reveal, *Ask again*, the timer, a homework's closing and the
end of the room (`Hosting`, a part of `xattn.classroom.store.ClassStore`)."""

from __future__ import annotations

from xattn._checks import quote
from xattn.classroom.codes import (
    check_step,
    device_digest,
    new_device_code,
    new_secret,
    normalize_code,
    normalize_device_code,
    secret_digest,
    unwrap_secret,
    wrap_secret,
)
from xattn.classroom.errors import DeviceCodeRefused, HostRefused, RoomNotFound
from xattn.classroom.question import Question
from xattn.classroom.records import Timer
from xattn.classroom.rules import DEVICE_SECONDS, check_timer
from xattn.locales import LANGS, check_lang

__all__ = ["Hosting"]


class Hosting:
    """The host's operations of `ClassStore`: each checks its arguments and the host's
    secret, then calls the backend's one atomic operation (``xattn.classroom.backend``)."""

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

    def set_language(self, code: str, secret: str, lang: str) -> None:
        """The room's default language (one of ``xattn.locales.LANGS``; "": none, each
        phone's browser says): a phone without a language of its own (its picker's cookie)
        opens in it, before its browser's ``Accept-Language`` (docs/languages.md). The
        room's version moves; a page already open keeps its language until it reloads."""
        code, digest = self._authorize(code, secret)
        if lang != "":
            check_lang(lang, f"a room's language ({', '.join(LANGS)} or '' for none)")
        self._guarded(self._set_language(code, digest, lang))

    def language(self, code: str) -> str:
        """The room's default language ("": none set); `RoomNotFound` without the room."""
        return self._language(normalize_code(code))

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
