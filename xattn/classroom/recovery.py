"""How the hub gives a room back to a store that restarted empty: the snapshot at each move
and every answer saved here since, restored once the store is back; and the message rebuilt
after a move (`Recovery`, a part of `xattn.classroom.hub.Hub`)."""

from __future__ import annotations

import logging
import time

from xattn.classroom.errors import RoomEnded, RoomNotFound, StoreUnavailable
from xattn.classroom.frames import HubRoom, personal_json

_LOGGER = logging.getLogger("xattn.classroom.hub")   # the hub's log

__all__ = ["Recovery"]


class Recovery:
    """A room's snapshot, restore and rebuild for `Hub`."""

    def _set_problem(self, problem: str | None) -> None:
        if problem != self.problem:
            self.problem = problem
            self._call(self._publish_status)

    def _restorable(self, code: str) -> bool:
        """Whether this process can give room ``code`` back to the store (it keeps a
        snapshot of it, of a class not over yet)."""
        room = self._rooms.get(code)
        snap = room.snapshot if room is not None else None
        return snap is not None and self._clock() < snap.expires

    def _answers_known(self, room: HubRoom, keys=None) -> tuple[dict, dict]:
        """Every answer this process knows of the room (of the rounds ``keys`` only, if
        given): its last snapshot's and those saved here since, (step, round) -> student ->
        text; and their confidences, the same way."""
        with self._lock:
            snap = room.snapshot
            answers, levels_then = (snap.answers, snap.levels) if snap else ({}, {})
            if keys is None:
                keys = answers.keys() | room.saved.keys()
            known = {k: dict(answers.get(k, {})) for k in keys}
            levels = {k: dict(levels_then.get(k, {})) for k in keys}
            for k in room.saved.keys() & set(keys):
                given = room.saved[k]
                known[k].update(given)
                mine = levels[k]
                for student in given:          # an answer saved here: its level, or none
                    mine.pop(student, None)
                mine.update(room.saved_levels.get(k, {}))
        return ({k: v for k, v in known.items() if v}, {k: v for k, v in levels.items() if v})

    def _restore(self, code: str, room: HubRoom) -> None:
        """Give the store back the room it lost, with every answer this process knows."""
        try:
            if self.store.restore(room.snapshot, *self._answers_known(room)):
                _LOGGER.warning("xattn hub: room %s was gone from the class store (it restarted "
                                "empty?) and was given back", code)
            self.store.refresh_signing_keys()     # ... and the keys students' ids carry
        except RoomEnded as err:                  # its lecturer ended it: nothing to give
            with self._lock:
                room.snapshot, room.saved, room.saved_levels = None, {}, {}
            self._call(self._publish_gone, code, err)
        except StoreUnavailable as err:
            self._set_problem(str(err))
        except Exception:  # noqa: BLE001 - tried again on the next look
            _LOGGER.exception("xattn hub: room %s could not be given back", code)
        finally:
            room.restoring = False
            self._poke.set()

    def _build_languages(self, view, room: HubRoom) -> dict:
        """The room's messages, one per language its phones read (``Follower.lang``; English
        when none is open): a build that takes ``languages`` is asked once for all of them
        (it builds once per language it tells apart); any other build once, its message
        then given to every language."""
        with self._lock:
            langs = sorted({f.lang for f in room.followers if not f.host}) or ["en"]
        if self.build_languages:
            made = self.build(view, languages=tuple(langs))
            return {lang: made[lang] for lang in langs}
        message = self.build(view)
        return dict.fromkeys(langs, message)

    def _take_snapshot(self, code: str, room: HubRoom) -> None:
        """The room's snapshot now, read from the last one (only the rounds that may have
        changed since, and those with answers saved here since: `ClassStore.snapshot`'s
        ``since``); answers this process knows that the store lacks (lost in a restart,
        given back by a process that did not know them) go back to it."""
        with self._lock:
            since, fresh = room.snapshot, set(room.saved)
        snap = self.store.snapshot(code, since, fresh)
        if since is not None:
            # the rounds read again: every other round is the last snapshot's, as known here
            read = {k for k in since.answers.keys() | fresh
                    if snap.answers.get(k) is not since.answers.get(k)}
            known, levels = self._answers_known(room, read)
            missing = {k: {s: t for s, t in given.items() if s not in snap.answers.get(k, {})}
                       for k, given in known.items()}
            missing = {k: v for k, v in missing.items() if v}
            if missing and self.store.restore(snap, missing, levels) is False:
                snap = self.store.snapshot(code, snap, missing)
        with self._lock:
            room.snapshot, room.saved, room.saved_levels = snap, {}, {}

    def _own_parts(self, room: HubRoom, messages: dict, answers: dict) -> dict:
        """Each own part (a phone's answer and verdict, as JSON) the phones open here need,
        made here once per distinct (language, stored answer) among them, so that the loop
        only joins bytes: never one per answer of the whole room (the other processes'
        phones) times the languages in use, which at 1,000 phones in six languages made
        6,000 verdicts a Reveal where 500 were read. A part a phone needs later (it came,
        or answered, after this read) is made on the loop, once (`Publishing._personal`)."""
        with self._lock:
            here = [(f.lang, f.student) for f in room.followers if not f.host]
        wanted = {}
        for lang, student in here:
            message = messages.get(lang)
            if message is not None:           # else: a language new since the build
                text = answers.get(student) if student is not None else None
                wanted[(message.language, text)] = message
        return {(lang, text): personal_json(message, text)
                for (lang, text), message in wanted.items()}

    def _rebuild(self, code: str, room: HubRoom, built: tuple) -> None:
        try:
            self._take_snapshot(code, room)
            view = self.store.room_view(code)
            answers = self.store.round_answers(code, view.step, view.round)
            messages = self._build_languages(view, room)
            message = next(iter(messages.values()))
            levels = (self.store.round_levels(code, view.step, view.round)
                      if message.confidence else {})
            personal = self._own_parts(room, messages, answers)
            room.built = built
            self._call(self._publish, code, messages, answers, personal, levels)
        except RoomNotFound as err:
            self._call(self._publish_gone, code, err)
        except StoreUnavailable as err:
            self._set_problem(str(err))
        except Exception:  # noqa: BLE001 - a message that cannot be built: tried again
            _LOGGER.exception("xattn hub: room %s's message could not be built", code)
            time.sleep(1.0)
        finally:
            room.building = False
            self._poke.set()
