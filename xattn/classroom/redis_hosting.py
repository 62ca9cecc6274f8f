"""The host's operations on Redis, each one script: a room made, its secret, devices, lock,
options, step, reveal, *Ask again*, timer, a homework's closing and the end
(`RedisHosting`, a part of `xattn.classroom.redis_store.RedisStore`)."""

from __future__ import annotations

import redis

from xattn.classroom.errors import LimitReached, RoomNotFound, StoreUnavailable
from xattn.classroom.records import Timer

__all__ = ["RedisHosting"]


class RedisHosting:
    """The host's side of `RedisStore` (``xattn.classroom.backend.Backend``'s operations)."""

    # --- the host ------------------------------------------------------------------------
    @property
    def _homework_rooms(self) -> str:
        return f"{self.prefix}homework"

    def _create(self, code, digest, specs, lesson, open_for, owner):
        status, n = self._run("create", [f"{self.prefix}rooms", self._key("room", code),
                                         self._key("ended", code), self._homework_rooms,
                                         f"{self.prefix}owned:{owner}"],
                              [code, int(self.limits.ttl_seconds * 1000), self.limits.max_rooms,
                               digest, owner, self.prefix,
                               int(self.limits.untaught_seconds * 1000), lesson,
                               "" if open_for is None else int(open_for * 1000),
                               int(self.limits.results_seconds * 1000),
                               self.limits.max_homework, self.limits.rooms_per_address,
                               self.limits.homework_per_address, *specs])
        if status == "FULL":
            raise self._full(n)
        if status == "HWFULL":
            raise self._homework_full(n)
        if status in ("HELD", "HWHELD"):
            raise self._held(n, status == "HWHELD")
        return status == "OK"

    def _closes(self, code):
        try:
            closes = self._r.hget(self._key("room", code), "closes")
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        return None if closes is None else int(closes) / 1000

    def _set_closing(self, code, digest, seconds):
        status, closes = self._run(
            "set_closing", [self._key("room", code), self._key("seen", code),
                            f"{self.prefix}rooms", self._homework_rooms],
            [digest, "", int(seconds * 1000), int(self.limits.results_seconds * 1000), code,
             *(self._key(kind, code) + ":" for kind in ("ans", "cnt", "cnf", "cfc"))])
        return None if status == "HOST" else False if status == "LIVE" else int(closes) / 1000

    def _lesson(self, code):
        try:
            found = self._r.hmget(self._key("room", code), "step", "lesson")
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        if found[0] is None:
            raise RoomNotFound.for_code(code)
        return found[1] or ""

    def _secret(self, code):
        try:
            return self._r.hget(self._key("room", code), "secret")
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None

    def _host(self, name, code, digest, *args):
        status, value = self._run(name, [self._key("room", code)], [digest, *args])
        if status == "STEP":
            raise ValueError(f"step must be from 1 to {value}; received {args[0]}.")
        if status == "ROUNDS":
            raise LimitReached(f"step {args[0]} was asked {value} times, the most a room keeps "
                               f"(Limits.max_rounds = {self.limits.max_rounds}).")
        return None if status == "HOST" else value

    def _rotate(self, code, digest, new_digest):
        # The guard's step slot is empty here: ARGV[2] is the new digest, not a step.
        status, _ = self._run("rotate", [self._key("room", code)], [digest, "", new_digest])
        return True if status == "OK" else None

    def _add_device(self, code, digest, device, wrapped, seconds):
        status, ends = self._run("add_device", [self._key("room", code),
                                                self._key("dev", code, device)],
                                 [digest, "", wrapped, int(seconds * 1000)])
        return int(ends) / 1000 if status == "OK" else None

    def _take_device(self, code, device):
        try:
            return self._r.getdel(self._key("dev", code, device))
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None

    def _end(self, code, digest):
        status, _ = self._run("end", [self._key("room", code), self._key("seen", code),
                                      self._key("ended", code), f"{self.prefix}rooms",
                                      self._homework_rooms, self._key("jnd", code)],
                              [digest, code, self._key("ans", code) + ":",
                               self._key("cnt", code) + ":", self._key("cnf", code) + ":",
                               self._key("cfc", code) + ":"])
        return True if status == "OK" else None

    def _set_lock(self, code, digest, locked):
        # The guard's step slot is empty here: ARGV[3] is the lock, not a step.
        status, _ = self._run("lock", [self._key("room", code)],
                              [digest, "", "1" if locked else "0"])
        return True if status == "OK" else None

    def _set_options(self, code, digest, confidence, histogram_before):
        # The guard's step slot is empty here: ARGV[3] and ARGV[4] are the switches.
        def flag(value) -> str:
            return "" if value is None else "1" if value else "0"
        status, _ = self._run("set_options", [self._key("room", code)],
                              [digest, "", flag(confidence), flag(histogram_before)])
        return True if status == "OK" else None

    def _set_language(self, code, digest, lang):
        status, _ = self._run("set_language", [self._key("room", code)], [digest, "", lang])
        return True if status == "OK" else None

    def _language(self, code):
        try:
            found = self._r.hmget(self._key("room", code), "step", "language")
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        if found[0] is None:
            raise RoomNotFound.for_code(code)
        return found[1] or ""

    def _set_step(self, code, digest, step):
        return self._host("set_step", code, digest, step)

    def _reveal(self, code, digest, step):
        return self._host("reveal", code, digest, step)

    def _ask_again(self, code, digest, step, spec):
        return self._host("ask_again", code, digest, step, self.limits.max_rounds, spec or "")

    def _start_timer(self, code, digest, step, seconds, reveal):
        ends = self._host("start_timer", code, digest, step, repr(seconds), "1" if reveal else "0")
        return None if ends is None else Timer(seconds, int(ends) / 1000, reveal)
