"""How the hub sends a room's moves to its streams: the room's frame, each phone's own part
(its answer, its verdict, its receipt), the host pages' pulse and the status of the store
(`Publishing`, a part of `xattn.classroom.hub.Hub`; on the server's event loop)."""

from __future__ import annotations

import json
import logging

from xattn.classroom.errors import ClassroomError
from xattn.classroom.frames import (
    Follower,
    HubRoom,
    Message,
    frame,
    frame_id,
    personal_json,
    receipt_json,
)
from xattn.classroom.outbox import Receipt
from xattn.classroom.records import Pulse
from xattn.classroom.rules import parse_question
from xattn.classroom.said import said_of

__all__ = ["Publishing"]

_LOGGER = logging.getLogger("xattn.classroom.hub")   # the hub's log


def _quietly(ahead, text) -> None:
    try:
        ahead(text)
    except Exception:  # noqa: BLE001 - the reveal makes it again and says what is wrong
        _LOGGER.exception("xattn hub: a verdict could not be made ahead")


class Publishing:
    """The frames `Hub` publishes to its followers, and the receipts of answers."""

    # --- frames ------------------------------------------------------------------------------
    @staticmethod
    def _message_for(room: HubRoom, f: Follower) -> Message:
        """The room's message in ``f``'s language (the first language's until it is built)."""
        return room.messages.get(f.lang, room.message)

    def _personal(self, room: HubRoom, student: str | None,
                  message: Message | None = None) -> bytes:
        message = message or room.message
        text = room.answers.get(student) if student is not None else None
        key = (message.key, message.language, text)
        made = room.memo.get(key)
        if made is None:                 # an answer the build did not see: made here, once
            made = personal_json(message, text)
            if len(room.memo) > 4096:
                room.memo.clear()
            room.memo[key] = made
        if room.message.confidence and student is not None:     # how sure, as stored
            made = made[:-1] + b',"level":' + json.dumps(room.levels.get(student)).encode() \
                + b"}"
        receipt = self.outbox.receipt(room.code, student) if student else None
        if receipt is not None and (room.message.homework or (
                room.message.step, room.message.round) == (receipt.step, receipt.round)):
            made = made[:-1] + b',"receipt":' + receipt_json(receipt) + b"}"
        return made

    def _push_room(self, room: HubRoom, f: Follower) -> None:
        """The room's frame to ``f`` (with its id), or only the phone's own part where the
        phone has that frame already (``f.had``: its stream before it joined, or a
        reconnect's ``Last-Event-ID``)."""
        f.drawn = room.message.key
        message = self._message_for(room, f)
        made = room.ids.get(id(message.room))
        if made is None:
            made = room.ids[id(message.room)] = frame_id(message.room)
        if f.had == made:
            f.push("me", self._me_frame(room, f))
            return
        f.had = made
        f.push("room", frame(b'{"now":' + f"{self._clock():.3f}".encode() + b',"room":'
                             + message.room + b',"me":'
                             + self._personal(room, f.student, message) + b"}", id_=made))

    def _me_frame(self, room: HubRoom, f: Follower) -> bytes:
        return frame(b'{"now":' + f"{self._clock():.3f}".encode() + b',"me":'
                      + self._personal(room, f.student, self._message_for(room, f)) + b"}",
                      "me")

    @staticmethod
    def _pulse_frame(p: Pulse) -> bytes:
        return frame(json.dumps({"version": p.version, "tally": p.tally,
                                  "ends_at": p.ends_at}).encode(), "pulse")

    def _status_frame(self) -> bytes:
        return frame(json.dumps({"problem": self.problem}).encode(), "status")

    @staticmethod
    def _gone_frame(err: Exception) -> bytes:
        data = {"gone": str(err)}
        if said_of(err) is not None:    # the phone says it in its language (said.py)
            data["say"] = said_of(err).json()
        return frame(json.dumps(data, ensure_ascii=False).encode(), "gone")

    # --- from the threads to the loop ----------------------------------------------------------
    def _call(self, fn, *args) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(fn, *args)
            except RuntimeError:          # the loop closed meanwhile (the server stops)
                pass

    def _publish(self, code: str, messages: dict, answers: dict, personal: dict,
                 levels: dict) -> None:
        """Hand a move's messages (language -> `Message`, the first the room's own) and each
        distinct answer's own part (``(language, text)`` -> JSON) to the room's phones."""
        message = next(iter(messages.values()))
        room = self._rooms.get(code)
        if room is None:
            return
        # answers saved here since the snapshot the build read first: newer than its read
        key = (message.step, message.round)
        saved = room.saved.get(key, {})
        answers.update(saved)
        for student in saved:                      # with the confidence saved, or none
            levels.pop(student, None)
        levels.update(room.saved_levels.get(key, {}))
        room.message, room.messages, room.ids, room.ahead = message, messages, {}, set()
        room.answers, room.levels = answers, levels
        room.memo = {(message.key, lang, text): made for (lang, text), made in personal.items()}
        late = False                 # a phone in a language that came during the build
        for f in list(room.followers):
            if f.host:
                continue
            if f.lang in messages:
                self._push_room(room, f)
            else:                    # its own language's frame comes with the next build
                late = True
        if late:
            room.built = None
            self._poke.set()

    def _publish_pulse(self, code: str, pulse: Pulse) -> None:
        room = self._rooms.get(code)
        if room is None:
            return
        frame = self._pulse_frame(pulse)
        for f in list(room.followers):
            if f.host:
                f.push("pulse", frame)

    def _publish_gone(self, code: str, err: Exception) -> None:
        room = self._rooms.get(code)
        if room is None:
            return
        room.gone = err
        frame = self._gone_frame(err)
        for f in list(room.followers):
            f.push("gone", frame)
            f.close()

    def _publish_status(self) -> None:
        frame = self._status_frame()
        with self._lock:
            followers = [f for room in self._rooms.values() for f in room.followers]
        for f in followers:
            f.push("status", frame)

    def _mine(self, code: str, f: Follower, key: tuple, text: str | None,
              level: str | None) -> None:
        room = self._rooms.get(code)
        if room is None or room.message is None or room.message.key != key:
            return
        if f.student in room.saved.get((room.message.step, room.message.round), {}):
            return       # saved here since the snapshot: its phone was told; the read is older
        if text is None:
            room.answers.pop(f.student, None)
        else:
            room.answers[f.student] = text
        if level is None:
            room.levels.pop(f.student, None)
        else:
            room.levels[f.student] = level
        if not f.closed:
            f.push("me", self._me_frame(room, f))

    def _receipt_changed(self, code: str, student: str, receipt: Receipt) -> None:
        self._call(self._on_receipt, code, student, receipt)

    def _on_receipt(self, code: str, student: str, receipt: Receipt) -> None:
        # A call can come late (the outbox calls after its lock, and a worker may be slow to):
        # what is true now is the outbox's own receipt, never an older one passed here.
        receipt = self.outbox.receipt(code, student) or receipt
        if receipt.state != "sending":
            for waiter in self._waiting.get((code, student), []):
                if not waiter.done():
                    waiter.set_result(receipt)
        room = self._rooms.get(code)
        if room is None:
            return
        if receipt.state == "saved" and room.snapshot is not None:
            question = next((q.question for q in room.snapshot.rounds
                             if (q.step, q.round) == (receipt.step, receipt.round)), None)
            try:
                text = parse_question(question).encode(receipt.value) if question else None
            except Exception:  # noqa: BLE001 - a stored value always encodes; be safe
                text = None
            if text is not None:
                with self._lock:
                    key = (receipt.step, receipt.round)
                    room.saved.setdefault(key, {})[student] = text
                    levels = room.saved_levels.setdefault(key, {})
                    if receipt.confidence is None:
                        levels.pop(student, None)
                    else:
                        levels[student] = receipt.confidence
        if room.message is None:
            return
        message = room.message
        if receipt.state == "saved" and message.question is not None and (
                message.step, message.round) == (receipt.step, receipt.round):
            try:
                room.answers[student] = message.question.encode(receipt.value)
            except Exception:  # noqa: BLE001 - a stored value always encodes; be safe
                room.answers.pop(student, None)
            if receipt.confidence is None:
                room.levels.pop(student, None)
            else:
                room.levels[student] = receipt.confidence
            self._ahead(room, student)
        for f in list(room.followers):
            if f.student == student and not f.host:
                f.push("me", self._me_frame(room, f))

    def _ahead(self, room: HubRoom, student: str) -> None:
        """Have the verdict the reveal will give ``student``'s answer made now, in each
        language its open phones read (`Message.ahead`, in the builders' threads): a Reveal
        of a step with as many answers as phones (a number, several parts, links) then finds
        them made, and costs its phones a message and a write each."""
        text = room.answers.get(student)
        if text is None:
            return
        for lang in {f.lang for f in room.followers if f.student == student and not f.host}:
            message = room.messages.get(lang)       # (a language still to build: none)
            ahead = message.ahead if message is not None else None
            if ahead is not None and (lang, text) not in room.ahead:
                room.ahead.add((lang, text))        # (a receipt may be told twice)
                self._builders.submit(_quietly, ahead, text)

    def _read_mine(self, code: str, f: Follower) -> None:
        room = self._rooms.get(code)
        message = room.message if room is not None else None
        if message is None or message.question is None or f.closed:
            return
        try:
            mine, level = self.store.mine(code, message.step, f.student)
            text = None if mine is None else message.question.encode(mine)
        except (ClassroomError, ValueError):
            return
        self._call(self._mine, code, f, message.key, text, level)
