"""The class store in Redis (``$XATTN_REDIS_URL``): for classes served by several machines.

Every operation is one Lua script (``xattn.classroom.redis_scripts``), so it is atomic on the
server however many processes and machines call it. Keys, all under ``prefix`` and tagged with
the room code (``{CODE}``, so one room's keys share a Redis Cluster slot):

- ``room:{CODE}``, a hash: ``secret`` (SHA-256 of the host secret), ``expires`` (ms since the
  epoch, server clock), ``step``, ``n_steps``, ``n_answers``, ``version`` (moves with every host
  action), ``tally`` (with every answer), ``host_at`` (ms: when its host was last seen: made,
  a host action, a host page whose key drives it), ``locked`` ("1": no new students), the host's
  switches ``confidence`` and ``histogram_before`` ("1": on), its default ``language``
  (absent or "": none), a homework's ``closes`` (ms;
  absent: a live class), and per step
  ``s``: ``r<s>`` (its round), ``p<s>`` (its phase), ``q<s>.<r>`` (each round's question,
  JSON), ``t<s>.<r>`` (a round's timer: ``seconds|ends ms|reveal``);
- ``ans:{CODE}:<s>:<r>``, a hash student -> answer, and ``cnt:{CODE}:<s>:<r>``, a hash
  answer -> count kept with it (so a poll reads counts without scanning answers), and
  ``cnf:{CODE}:<s>:<r>``, a hash student -> confidence (those who gave one), and
  ``cfc:{CODE}:<s>:<r>``, a hash ``answer|confidence`` -> count (the host's table and the CSV
  read counts, not answers), written by the same script as the answer;
- ``seen:{CODE}``, a sorted set student -> last read (ms), and ``jnd:{CODE}``, a hash
  student -> first read (ms: when they joined), read against a round's ``o<s>.<r>`` (when the
  class arrived at it) for `RoomView.late`;
- ``bkt:{CODE}``, a hash client digest -> ``tokens|ms``: each client's join bucket in the room
  (`Limits.join_bucket`);
- ``owned:<client digest>`` (no room tag), a sorted set code -> expiry of the rooms a client made
  (the room's hash keeps it as ``owner``; a room no longer there is not counted:
  `Limits.rooms_per_address`);
- ``rooms``, a sorted set code -> expiry, to count live rooms, and ``homework``, the same of
  the homework rooms among them (`Limits.max_homework`);
- ``dev:{CODE}:<digest>``, a one-time device code's wrapped host secret, for minutes (``PX``);
- ``ended:{CODE}``, "1" from when its lecturer ended the class until the room would have
  expired (no process gives it back meanwhile, and no new class takes the code).

Each room key expires with the room (``PEXPIREAT``): Redis deletes expired rooms by itself.
Rooms survive a restart of the app's processes; to survive a restart of Redis, run it with
persistence (``appendonly yes``).
"""

from __future__ import annotations

import secrets
import threading

import redis

from xattn.classroom.errors import (
    AnswerRefused,
    LimitReached,
    RoomEnded,
    RoomNotFound,
    StoreUnavailable,
)
from xattn.classroom.records import Limits, Pulse, RawView
from xattn.classroom.redis_hosting import RedisHosting
from xattn.classroom.redis_reading import RedisReading
from xattn.classroom.redis_rows import timer_of
from xattn.classroom.redis_scripts import SCRIPTS
from xattn.classroom.rules import (
    already_answered,
    full_answers,
    homework_closed,
    not_a_step,
    other_step,
    parse_question,
    refuse_closed,
    stale_round,
)
from xattn.classroom.said import said
from xattn.classroom.store import ClassStore

__all__ = ["RedisStore"]

# The scripts after which a room's pulse may have moved: each is followed by a PUBLISH of the
# room's code (`RedisStore.notifications`), so watchers on every machine read it at once.
_MOVES = frozenset({"set_step", "set_options", "reveal", "ask_again", "start_timer", "answer",
                    "touch", "set_closing", "set_language",
                    "rotate", "lock", "restore", "end"})
RESUBSCRIBE = 1.0      # seconds before a lost pub/sub connection is tried again


class RedisStore(RedisHosting, RedisReading, ClassStore):
    """`ClassStore` in the Redis at ``url`` (``redis://host:port/db``, ``unix:///path``)."""

    def __init__(self, url: str, limits: Limits | None = None, *, prefix: str = "xattn:"):
        super().__init__(limits)
        if not isinstance(url, str) or not isinstance(prefix, str):
            raise TypeError("RedisStore takes a str url and prefix; received "
                            f"{type(url).__name__} and {type(prefix).__name__}.")
        self.url, self.prefix = url, prefix
        self._r = redis.Redis.from_url(url, decode_responses=True, socket_timeout=10,
                                       socket_connect_timeout=10, health_check_interval=30)
        self._scripts = {name: self._r.register_script(src) for name, src in SCRIPTS.items()}

    def __repr__(self) -> str:
        return f"RedisStore(prefix={self.prefix!r}, {self.limits!r})"

    def _key(self, kind: str, code: str, *rest) -> str:
        return f"{self.prefix}{kind}:{{{code}}}" + "".join(f":{x}" for x in rest)

    def _run(self, name: str, keys: list, args: list):
        try:
            reply = self._scripts[name](keys=keys, args=args)
            if name in _MOVES:                     # watchers read this room now (pub/sub)
                self._r.publish(self.channel, keys[0].rsplit("{", 1)[1].rstrip("}"))
            return reply
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None

    @property
    def channel(self) -> str:
        """The pub/sub channel that names a room each time it may have moved."""
        return f"{self.prefix}moved"

    def notifications(self, on_move):
        stop = threading.Event()

        def listen() -> None:
            while not stop.is_set():
                sub = self._r.pubsub(ignore_subscribe_messages=True)
                try:
                    sub.subscribe(self.channel)
                    on_move(None)           # (re)subscribed: what moved meanwhile was unheard
                    while not stop.is_set():
                        message = sub.get_message(timeout=1.0)
                        if message is not None and message.get("type") == "message":
                            on_move(message["data"])
                except (redis.RedisError, OSError, ValueError):
                    stop.wait(RESUBSCRIBE)
                finally:
                    sub.close()

        threading.Thread(target=listen, daemon=True, name="xattn-redis-moved").start()
        return stop.set

    def close(self) -> None:
        self._r.close()

    def purge_expired(self) -> int:
        try:
            now_s, now_us = self._r.time()
            return self._r.zremrangebyscore(f"{self.prefix}rooms", "-inf",
                                            now_s * 1000 + now_us // 1000)
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None


    # --- the students --------------------------------------------------------------------
    def _step_info(self, code, step, student="", *, answering=False):
        reply = self._run("step_info", [self._key("room", code)],
                          [step, self._key("ans", code) + ":", student,
                           self._key("cnf", code) + ":"])
        if reply[0] == "NOROOM":
            raise RoomNotFound.for_code(code)
        if reply[0] == "STEP":
            if answering and len(reply) > 3 and reply[3]:         # a homework's steps
                raise not_a_step(step, int(reply[1]))
            if answering:        # beyond the last step is one more step the class is not on
                raise other_step(int(reply[2]), step)
            raise ValueError(f"step must be from 1 to {reply[1]}; received {step}.")
        return reply[1:]

    def _answer(self, code, step, student, value, level, round_):
        for _ in range(5):     # a new round between the two calls: read it and try again
            current, rnd, phase, question, _, _, closes = self._step_info(code, step,
                                                                         answering=True)
            if int(current) != step and not closes:
                raise other_step(int(current), step)
            if round_ is not None and int(rnd) != round_:
                raise stale_round(step, round_, int(rnd))
            if phase != "asking":
                refuse_closed(step, "revealed")
            encoded = parse_question(question).encode(value)
            reply = self._run("answer", [self._key("room", code),
                                         self._key("ans", code, step, rnd),
                                         self._key("cnt", code, step, rnd),
                                         self._key("cnf", code, step, rnd),
                                         self._key("cfc", code, step, rnd)],
                              [step, rnd, student, encoded, self.limits.max_answers,
                               level or ""])
            status, n = reply[0], reply[1]
            if status == "STALE" and round_ is not None:   # asked again since the read
                raise stale_round(step, round_, int(n))
            if status != "STALE":
                break
        if status == "HWCLOSED":              # (closes, now) in ms, the server's clock
            raise homework_closed(int(n) / 1000, int(reply[2]) / 1000)
        if status == "ANSWERED":
            raise already_answered(step, n, question)
        if status == "FULL":
            raise full_answers(int(n), self.limits.max_answers)
        if status == "NOTSTEP":
            raise other_step(int(n), step)
        if status in ("CLOSED", "TIMEUP"):
            refuse_closed(step, "revealed" if status == "CLOSED" else "closed")
        if status == "NOROOM":
            raise RoomNotFound.for_code(code)
        if status == "STALE":
            raise AnswerRefused(f"the host keeps restarting step {step}: answer again.").saying(
                said("why.restarting", step=step))
        return question

    def _view(self, code, student):
        reply = self._run("view", [self._key("room", code), self._key("seen", code),
                                   self._key("jnd", code)],
                          [self._key("ans", code) + ":", self._key("cnt", code) + ":",
                           student or "", int(self.limits.present_seconds * 1000)])
        if reply[0] == "NOROOM":
            try:
                ended = self._r.exists(self._key("ended", code))
            except redis.RedisError as err:
                raise StoreUnavailable(f"the class store is not available: {err}") from None
            raise (RoomEnded if ended else RoomNotFound).for_code(code)
        (_, step, n_steps, phase, rnd, question, flat, present, mine, expires, version, timer,
         now, locked, confidence, histogram, closes, late) = reply
        raw = dict(zip(flat[::2], flat[1::2], strict=True))
        return RawView(int(step), int(n_steps), phase, int(rnd), question, raw, int(present),
                       mine or None, int(expires) / 1000, int(version), timer_of(timer),
                       int(now) / 1000, locked == "1", confidence == "1", histogram == "1",
                       int(closes) / 1000 if closes else None, int(late))

    def _mark_hosts(self, hosts):
        try:                            # one room a call: its keys share a cluster slot
            pipe = self._r.pipeline(transaction=False)
            for code, digest in hosts:
                self._scripts["mark_hosts"](keys=[self._key("room", code)], args=[digest],
                                            client=pipe)
            pipe.execute()
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None

    def _take_join(self, code, who, burst, every):
        wait = self._run("take_join", [self._key("room", code), self._key("bkt", code)],
                         [who, burst, every * 1000])
        if int(wait) < 0:
            raise RoomNotFound.for_code(code)
        return int(wait) / 1000

    def _touch(self, code, students):
        status, left, n = self._run("touch", [self._key("room", code), self._key("seen", code),
                                              self._key("jnd", code)],
                                    [int(self.limits.present_seconds * 1000),
                                     self.limits.max_students, *students])
        if status == "NOROOM":
            raise RoomNotFound.for_code(code)
        if int(left):
            raise LimitReached(f"this class already has {n} students, the most a class "
                               f"takes (Limits.max_students = {self.limits.max_students})."
                               ).saying(said("why.full.students", n=int(n)))


    def _allow(self, kind, digest, limit, window, peek):
        key = f"{self.prefix}hits:{kind}:{digest}"
        try:
            if peek:
                return int(self._r.get(key) or 0) < limit
            pipe = self._r.pipeline(transaction=True)
            pipe.incr(key)
            pipe.pexpire(key, int(window * 1000), nx=True)
            n, _ = pipe.execute()
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        return int(n) <= limit


    def _signing_keys(self, known):
        try:
            first, others = self._scripts["signing_keys"](
                keys=[f"{self.prefix}signing_key", f"{self.prefix}signing_keys"],
                args=[(known[0] if known else secrets.token_bytes(32)).hex(),
                      *(k.hex() for k in known)])
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        return [bytes.fromhex(first), *(bytes.fromhex(k) for k in sorted(others)
                                        if k != first)]

    def _pulse(self, codes):
        try:
            pipe = self._r.pipeline(transaction=False)
            for code in codes:
                self._scripts["pulse"](keys=[self._key("room", code)], client=pipe)
            replies = pipe.execute()
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        pulses = {}
        for code, reply in zip(codes, replies, strict=True):
            if reply:                              # a room that is gone has no pulse
                timer = timer_of(reply[2] if len(reply) > 2 else None)
                closes = reply[3] if len(reply) > 3 else None      # a homework's closing
                pulses[code] = Pulse(int(reply[0]), int(reply[1]),
                                     int(closes) / 1000 if closes else
                                     None if timer is None else timer.ends_at)
        return pulses
