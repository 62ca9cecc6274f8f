"""The reads of a room on Redis: results, a round's answers and levels, a student's own
answers, a tally, and the snapshot a store that restarted empty is given back
(`RedisReading`, a part of `xattn.classroom.redis_store.RedisStore`)."""

from __future__ import annotations

import time

import redis

from xattn.classroom.errors import RoomNotFound, StoreUnavailable
from xattn.classroom.records import Round, Snapshot
from xattn.classroom.redis_rows import rounds_of, timer_of

__all__ = ["RedisReading"]


class RedisReading:
    """The reads and the snapshot of `RedisStore`."""

    def _student_answers(self, code, student):
        reply = self._run("student_answers", [self._key("room", code)],
                          [self._key("ans", code) + ":", self._key("cnf", code) + ":", student])
        if reply[0] == "NOROOM":
            raise RoomNotFound.for_code(code)
        flat = reply[1:]
        return {int(flat[i]): (flat[i + 1], flat[i + 2], flat[i + 3])
                for i in range(0, len(flat), 4)}

    def _room(self, code, digest) -> dict | None:
        try:
            room = self._r.hgetall(self._key("room", code))
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        return room if room.get("secret") == digest else None

    def _results(self, code, digest):
        room = self._room(code, digest)
        if room is None:
            return None
        rounds = rounds_of(room)
        return [(s, r, room[f"q{s}.{r}"], raw, timer_of(room.get(f"t{s}.{r}")))
                for (s, r), raw in zip(rounds, self._hashes("cnt", code, rounds), strict=True)]

    def _hashes(self, kind: str, code: str, rounds: list) -> list[dict]:
        """The ``kind`` hash (``cnt``, ``cfc``) of each (step, round), in one round trip."""
        try:
            pipe = self._r.pipeline(transaction=False)
            for s, r in rounds:
                pipe.hgetall(self._key(kind, code, s, r))
            return pipe.execute()
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None

    def _levels_of(self, code, step, round_):
        try:
            return self._r.hgetall(self._key("cnf", code, step, round_))
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None

    def _levels_counted(self, code, step=None, round_=None):
        try:
            room = self._r.hgetall(self._key("room", code))
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        if not room or "step" not in room:
            raise RoomNotFound.for_code(code)
        rounds = [(s, r) for s, r in ([(step, round_)] if step is not None else rounds_of(room))
                  if f"q{s}.{r}" in room]
        return {(s, r): (room[f"q{s}.{r}"], {tuple(key.rsplit("|", 1)): int(n)
                                              for key, n in counts.items() if int(n) > 0})
                for (s, r), counts in zip(rounds, self._hashes("cfc", code, rounds),
                                          strict=True) if counts}

    def _tally(self, code, step, round_):
        try:
            pipe = self._r.pipeline(transaction=True)
            pipe.hmget(self._key("room", code), "step", f"q{step}.{round_}", f"t{step}.{round_}")
            pipe.hgetall(self._key("cnt", code, step, round_))
            (there, question, timer), raw = pipe.execute()
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        if there is None:
            raise RoomNotFound.for_code(code)
        return None if question is None else (question, raw, timer_of(timer))

    def _answers_of(self, code, step, round_):
        try:
            return self._r.hgetall(self._key("ans", code, step, round_))
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None

    def _round_answers(self, code, digest, step, first, then):
        room = self._room(code, digest)
        if room is None:
            return None
        if step > int(room["n_steps"]):
            raise ValueError(f"step must be from 1 to {room['n_steps']}; received {step}.")
        out = []
        for rnd in (first, then):
            if rnd > int(room[f"r{step}"]):
                raise ValueError(f"step {step} has no round {rnd}.")
            try:
                answers = self._r.hgetall(self._key("ans", code, step, rnd))
            except redis.RedisError as err:
                raise StoreUnavailable(f"the class store is not available: {err}") from None
            out.append((room[f"q{step}.{rnd}"], answers))
        return tuple(out)

    def _my_answer(self, code, step, student):
        _, _, _, question, mine, level, _ = self._step_info(code, step, student)
        return question, mine or None, level or None

    def _snapshot_head(self, code):
        try:
            room = self._r.hgetall(self._key("room", code))
            if not room or "step" not in room:
                raise RoomNotFound.for_code(code)
            n_steps = int(room["n_steps"])
            rounds = []
            for s in range(1, n_steps + 1):
                last = int(room[f"r{s}"])
                rounds += [Round(s, r, room[f"p{s}"] if r == last else "revealed",
                                 room[f"q{s}.{r}"], timer_of(room.get(f"t{s}.{r}")))
                           for r in range(1, last + 1)]
            pipe = self._r.pipeline(transaction=False)
            for r in rounds:
                pipe.hlen(self._key("ans", code, r.step, r.round))
            counts = {(r.step, r.round): n for r, n in zip(rounds, pipe.execute(), strict=True)
                      if n}
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        return Snapshot(code, room["secret"], int(room["expires"]) / 1000, int(room["step"]),
                        n_steps, int(room.get("version", 0)), int(room.get("tally", 0)),
                        room.get("locked") == "1", tuple(rounds), {},
                        room.get("lesson", ""), room.get("confidence") == "1",
                        room.get("histogram_before") == "1", {},
                        int(room["closes"]) / 1000 if room.get("closes") else None,
                        room.get("language", "")), counts

    def _round_records(self, code, keys):
        try:
            pipe = self._r.pipeline(transaction=False)
            for step, rnd in keys:
                pipe.hgetall(self._key("ans", code, step, rnd))
                pipe.hgetall(self._key("cnf", code, step, rnd))
            got = pipe.execute() if keys else []
        except redis.RedisError as err:
            raise StoreUnavailable(f"the class store is not available: {err}") from None
        answers = {k: a for k, a in zip(keys, got[::2], strict=True) if a}
        levels = {k: v for k, v in zip(keys, got[1::2], strict=True) if v}
        return answers, levels

    def _restore(self, snap, answers):
        expires = str(int(snap.expires * 1000))
        fields = {"secret": snap.digest, "expires": expires, "step": snap.step,
                  "n_steps": snap.n_steps, "n_answers": 0, "version": snap.version + 1,
                  "tally": snap.tally + 1, "locked": "1" if snap.locked else "0",
                  "host_at": str(int(time.time() * 1000)), "lesson": snap.lesson,
                  "confidence": "1" if snap.confidence else "0",
                  "histogram_before": "1" if snap.histogram_before else "0",
                  "language": snap.language}
        if snap.closes is not None:
            fields["closes"] = str(int(snap.closes * 1000))
        for r in snap.rounds:
            fields[f"r{r.step}"], fields[f"p{r.step}"] = r.round, r.phase
            fields[f"q{r.step}.{r.round}"] = r.question
            if r.timer is not None:
                fields[f"t{r.step}.{r.round}"] = (f"{r.timer.seconds!r}|"
                                                  f"{int(r.timer.ends_at * 1000)}|"
                                                  f"{'1' if r.timer.reveal else '0'}")
        flat = [x for pair in fields.items() for x in pair]
        rest = [x for s, r, student, text, level in answers
                for x in (f"{s}:{r}", student, text, level or "")]
        made, _ = self._run("restore", [self._key("room", snap.code), f"{self.prefix}rooms",
                                        self._key("ended", snap.code), self._homework_rooms],
                            [snap.code, self._key("ans", snap.code) + ":",
                             self._key("cnt", snap.code) + ":", expires, len(fields),
                             self._key("cnf", snap.code) + ":",
                             self._key("cfc", snap.code) + ":", *flat, *rest])
        return None if made == -1 else bool(made)
