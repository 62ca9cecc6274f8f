"""xattn.classroom.hub: one message per room per move, to every phone of the room, on a real
SQLite file and a real redis-server (never a mock)."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from classroom_helpers import Backend, RedisServer, redis_or_skip

from devtools.protocol import run_async
from xattn.classroom import Question, new_student_id
from xattn.classroom import hub as hub_module
from xattn.classroom.hub import Hub, Message

QUESTIONS = (Question("choice", ("up", "down", "same")), Question("number", low=0, high=1))


class Builder:
    """A room's message from its view, counting what it made (thread-safe)."""

    def __init__(self):
        self.builds, self.personal = 0, {}
        self.lock = threading.Lock()

    def __call__(self, view):
        with self.lock:
            self.builds += 1
        body = json.dumps({"step": view.step, "phase": view.phase, "round": view.round,
                           "version": view.version}).encode()
        revealed = view.phase == "revealed"

        def personal(text):
            with self.lock:
                key = (view.version, text)
                self.personal[key] = self.personal.get(key, 0) + 1
            out = {"mine": text}
            if revealed:
                out["verdict"] = f"verdict of {text}"
            return out
        return Message((view.code, view.version, view.phase, view.step, view.round), body,
                       view.step, view.round, view.question, personal, view.confidence)


def frames(raw: bytes) -> list[tuple[str, dict | str]]:
    """Server-sent events as (event, data) pairs; comments as ("comment", text)."""
    out = []
    for block in raw.decode().split("\n\n"):
        if not block.strip():
            continue
        if block.startswith(":"):
            out.append(("comment", block[1:].strip()))
            continue
        event, data = "message", None
        for line in block.split("\n"):
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                data = json.loads(line[6:])
        out.append((event, data))
    return out


async def until(f, what, timeout: float = 15.0):
    """Frames of follower ``f`` until one satisfies ``what(event, data)``; that one."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise AssertionError("no such frame came")
        await asyncio.wait_for(f.wake.wait(), left)
        for event, data in frames(f.take()):
            if what(event, data):
                return event, data


def run(coro):
    return run_async(asyncio.wait_for(coro, 90))


def room_state(step=None, phase=None):
    return lambda e, d: e == "message" and (step is None or d["room"]["step"] == step) and (
        phase is None or d["room"]["phase"] == phase)


def test_a_move_is_built_once_and_reaches_every_phone(store):
    code, secret = store.create_room(QUESTIONS)
    build = Builder()

    async def main():
        hub = Hub(store, build)
        hub.start()
        try:
            phones = [hub.subscribe(code, new_student_id()) for _ in range(30)]
            for f in phones:
                await until(f, room_state(1, "asking"))
            first = build.builds
            store.set_step(code, secret, 2)
            got = [await until(f, room_state(2, "asking")) for f in phones]
            assert len({json.dumps(d["room"]) for _, d in got}) == 1     # the same bytes
            assert build.builds == first + 1                             # built once
            assert all(isinstance(d["now"], float) for _, d in got)
        finally:
            hub.stop()
    run(main())


def test_verdicts_are_made_once_per_answer_not_per_phone(store):
    code, secret = store.create_room(QUESTIONS)
    build = Builder()
    students = [new_student_id() for _ in range(12)]

    async def main():
        hub = Hub(store, build)
        hub.start()
        try:
            phones = [hub.subscribe(code, s) for s in students]
            for f in phones:
                await until(f, room_state(1))
            picks = ["up", "down", "up", "same"] * 3
            receipts = await asyncio.gather(*(hub.answer(code, s, 1, 1, v)
                                              for s, v in zip(students, picks, strict=True)))
            assert {r.state for r in receipts} == {"saved"}
            store.reveal(code, secret, 1)
            got = [await until(f, room_state(1, "revealed")) for f in phones]
            for (_, d), pick in zip(got, picks, strict=True):
                stored = str(QUESTIONS[0].choices.index(pick))
                assert d["me"]["mine"] == stored and d["me"]["verdict"] == f"verdict of {stored}"
            version = got[0][1]["room"]["version"]
            made = {text: n for (v, text), n in build.personal.items() if v == version}
            assert set(made) == {"0", "1", "2"} and all(n == 1 for n in made.values())
        finally:
            hub.stop()
    run(main())


class Languages(Builder):
    """A build that takes the languages its room's phones read: one message per language,
    each phone's verdict in its words (``[ar] ...``), counting own parts per (language,
    answer)."""

    def __init__(self):
        super().__init__()
        self.by_language, self.ahead = {}, []

    def __call__(self, view, languages):
        made = {}
        for lang in languages:
            message = super().__call__(view)
            plain = message.personal

            def personal(text, plain=plain, lang=lang):
                out = plain(text)
                with self.lock:
                    key = (view.version, lang, text)
                    self.by_language[key] = self.by_language.get(key, 0) + 1
                if "verdict" in out:
                    out["verdict"] = f"[{lang}] {out['verdict']}"
                return out
            def ahead(text, lang=lang):
                with self.lock:
                    self.ahead.append((lang, text))
            made[lang] = Message(message.key, message.room, message.step, message.round,
                                 message.question, personal, message.confidence,
                                 language=lang,
                                 ahead=ahead if view.phase != "revealed" else None)
        return made


def test_a_reveal_makes_own_parts_for_the_phones_here_once_per_answer_and_language(store):
    """Own parts (answer, verdict) are made in the build's thread only for the phones open
    in this process, once per (language, answer) among them: never for every answer of the
    room (the phones of other processes) in every language. Two phones with the same answer
    and language get the same bytes; a phone in Arabic gets its own words."""
    code, secret = store.create_room(QUESTIONS)
    build = Languages()
    here = [new_student_id() for _ in range(4)]
    langs, picks = ["en", "en", "ar", "fr"], [0.25, 0.25, 0.25, 0.5]
    elsewhere = [new_student_id() for _ in range(40)]

    async def main():
        hub = Hub(store, build)
        hub.start()
        try:
            phones = [hub.subscribe(code, s, lang=lang) for s, lang in zip(here, langs,
                                                                           strict=True)]
            for f in phones:
                await until(f, room_state(1))
            store.set_step(code, secret, 2)
            for f in phones:
                await until(f, room_state(2, "asking"))
            for s, pick in zip(here, picks, strict=True):
                store.answer(code, 2, s, pick)
            for k, s in enumerate(elsewhere):      # answers of phones this process never sees
                store.answer(code, 2, s, round(0.51 + k / 100, 2))
            store.reveal(code, secret, 2)
            got = [await until(f, room_state(2, "revealed")) for f in phones]
            me = [json.dumps(d["me"]) for _, d in got]
            assert me[0] == me[1] and me[2] != me[0] and me[3] != me[0]
            assert [json.loads(m)["verdict"] for m in me[1:]] == [
                "[en] verdict of 0.25", "[ar] verdict of 0.25", "[fr] verdict of 0.50"]
            version = got[0][1]["room"]["version"]
            made = {(lang, text): n for (v, lang, text), n in build.by_language.items()
                    if v == version}
            assert made == {("en", "0.25"): 1, ("ar", "0.25"): 1, ("fr", "0.50"): 1}
        finally:
            hub.stop()
    run(main())


def test_a_receipt_reaches_every_stream_of_its_student(store):
    code, _ = store.create_room(QUESTIONS)
    me = new_student_id()

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            tabs = [hub.subscribe(code, me) for _ in range(2)]
            other = hub.subscribe(code, new_student_id())
            for f in (*tabs, other):
                await until(f, room_state(1))
            receipt = await hub.answer(code, me, 1, 1, "down")
            assert (receipt.state, receipt.value) == ("saved", "down")
            for f in tabs:
                _, d = await until(f, lambda e, d: e == "me" and d["me"]["mine"] == "1")
                assert d["me"]["receipt"]["state"] == "saved"
            other.take()
            await asyncio.sleep(0.3)
            assert not [x for x in frames(other.take()) if x[0] == "me"]   # nobody else's
            refused = await hub.answer(code, me, 2, 1, "up")               # not this step
            assert refused.state == "refused" and "step 1" in refused.why
        finally:
            hub.stop()
    run(main())


def test_a_phone_that_connects_gets_the_room_and_its_own_answer(store):
    code, _ = store.create_room(QUESTIONS)
    me = new_student_id()
    store.answer(code, 1, me, "same")

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            early = hub.subscribe(code, new_student_id())
            await until(early, room_state(1))
            late = hub.subscribe(code, me)                 # the room is built: at once
            _, d = await until(late, lambda e, d: d["me"]["mine"] == "2")
            assert d["me"]["mine"] == "2"
        finally:
            hub.stop()
    run(main())


class HeldRead:
    """The store's ``name`` read, made at once and returned only once `release` is called:
    a read that began before something and ends after it."""

    def __init__(self, store, name: str):
        self.started, self.released = threading.Event(), threading.Event()
        real = getattr(store, name)

        def held(*args):
            got = real(*args)
            self.started.set()
            self.released.wait(30)
            return got
        setattr(store, name, held)

    async def begun(self) -> None:
        await asyncio.get_running_loop().run_in_executor(None, self.started.wait, 30)

    def release(self) -> None:
        self.released.set()


def test_a_read_of_a_phones_answer_begun_before_its_new_answer_does_not_undo_it(store):
    """A phone reconnects (its process was killed) and answers anew while this process still
    reads the answer it had: the read, older than the new answer, must not tell the phone
    its old answer is the one saved (Chromium saw "Saved: mat." after "Saved: on.")."""
    code, _ = store.create_room(QUESTIONS)
    me = new_student_id()
    store.answer(code, 1, me, "same")
    held = HeldRead(store, "mine")                 # the phone's own answer, returned late

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            await until(hub.subscribe(code, None), room_state(1))   # the room, built
            phone = hub.subscribe(code, me)
            await held.begun()
            receipt = await hub.answer(code, me, 1, 1, "down")
            assert (receipt.state, receipt.value) == ("saved", "down")
            await until(phone, lambda e, d: e == "me" and d["me"]["mine"] == "1")
            held.release()
            await asyncio.sleep(0.5)
            told = [d["me"]["mine"] for e, d in frames(phone.take()) if e in ("me", "message")]
            assert "2" not in told, told
        finally:
            held.release()
            hub.stop()
    run(main())


def test_a_room_built_from_a_read_older_than_a_phones_answer_carries_the_answer(store):
    """A phone's stream comes to a process that has not built its room yet (its own process
    was killed) and the phone answers at once: the room, built from a read of the store that
    began before the answer was saved, must still carry it (Chromium saw "Tap your answer"
    after "Saved: sat.")."""
    code, _ = store.create_room(QUESTIONS)
    me = new_student_id()
    held = HeldRead(store, "round_answers")        # the room's answers, returned late

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            phone = hub.subscribe(code, me)
            await held.begun()
            receipt = await hub.answer(code, me, 1, 1, "down")
            assert (receipt.state, receipt.value) == ("saved", "down")
            held.release()
            _, d = await until(phone, room_state(1))
            assert d["me"]["mine"] == "1"
        finally:
            held.release()
            hub.stop()
    run(main())


def test_where_the_room_asks_how_sure_each_phone_hears_its_own_level(store):
    """The receipt says the confidence saved with the answer; each phone's own part says its
    stored level (a change of level alone too); a phone that connects reads its own."""
    code, secret = store.create_room(QUESTIONS)
    store.set_options(code, secret, confidence=True)
    me, other = new_student_id(), new_student_id()
    store.answer(code, 1, other, "up", "guess")

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            f = hub.subscribe(code, me)
            _, d = await until(f, room_state(1))
            assert d["me"] == {"mine": None, "level": None}
            receipt = await hub.answer(code, me, 1, 1, "down", "think_so")
            assert (receipt.state, receipt.value, receipt.confidence) == ("saved", "down",
                                                                          "think_so")
            _, d = await until(f, lambda e, d: e == "me" and d["me"].get("level") == "think_so")
            assert d["me"]["receipt"]["confidence"] == "think_so" and d["me"]["mine"] == "1"
            receipt = await hub.answer(code, me, 1, 1, "down", "sure")      # surer, same answer
            assert receipt.confidence == "sure"
            await until(f, lambda e, d: e == "me" and d["me"].get("level") == "sure")
            late = hub.subscribe(code, other)                  # connects after its answer
            await until(late, lambda e, d: d["me"].get("level") == "guess"
                        and d["me"]["mine"] == "0")
        finally:
            hub.stop()
    run(main())
    assert store.mine(code, 1, me) == ("down", "sure")


def test_a_room_that_is_gone_says_so_and_closes(store):
    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            f = hub.subscribe("HJK23M", new_student_id())
            event, data = await until(f, lambda e, d: e == "gone")
            assert "HJK23M" in data["gone"] and f.closed
        finally:
            hub.stop()
    run(main())


def test_open_phones_are_present_and_streams_hear_a_comment(store, monkeypatch):
    code, _ = store.create_room(QUESTIONS)

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            f = hub.subscribe(code, new_student_id())
            await until(f, room_state(1))
            for _ in range(100):
                if store.room_view(code).n_present == 1:
                    break
                await asyncio.sleep(0.05)
            assert store.room_view(code).n_present == 1
            hub.keepalive()
            assert ("comment", "still here") in frames(f.take())
        finally:
            hub.stop()
    run(main())


def test_a_process_holds_a_bounded_number_of_streams(store, monkeypatch):
    monkeypatch.setattr(hub_module, "MAX_FOLLOWERS", 2)

    async def main():
        hub = Hub(store, Builder())
        a, b = hub.subscribe("HJK23M", None), hub.subscribe("HJK23M", None)
        with pytest.raises(OverflowError, match="2 open streams"):
            hub.subscribe("HJK23M", None)
        hub.unsubscribe(a)
        hub.subscribe("HJK23M", None)
        hub.unsubscribe(b)
    run(main())


def test_a_process_that_stops_ends_every_stream_and_takes_no_new_one(store):
    async def main():
        hub = Hub(store, Builder())
        streams = [hub.subscribe("HJK23M", None), hub.subscribe("HJK23M", None, host=True),
                   hub.subscribe("ABC234", new_student_id())]
        assert not any(f.closed for f in streams)
        hub.close_streams()
        assert all(f.closed and f.wake.is_set() for f in streams)   # each loop wakes, ends
        with pytest.raises(OverflowError, match="stopping"):
            hub.subscribe("HJK23M", None)
    run(main())


def test_with_redis_a_move_reaches_phones_by_notification_not_by_polling(redis_server, tmp_path):
    """The watcher reads a room when Redis names it: with its own look put off for a minute,
    a move still reaches the phones at once."""
    store = Backend.fresh("redis", tmp_path, redis_server.url).open()
    code, secret = store.create_room(QUESTIONS)

    async def main():
        hub = Hub(store, Builder(), tick=60.0)
        hub.start()
        try:
            f = hub.subscribe(code, None)
            await until(f, room_state(1))
            store.set_step(code, secret, 2)
            await until(f, room_state(2), timeout=5.0)
            store.reveal(code, secret, 2)
            await until(f, room_state(2, "revealed"), timeout=5.0)
        finally:
            hub.stop()
            store.close()
    run(main())


def test_with_redis_the_hosts_count_of_the_last_answer_of_a_burst_is_sent(redis_server,
                                                                           tmp_path,
                                                                           monkeypatch):
    """Pulses go to a host page at most every ``HOST_EVERY`` seconds; a pulse held back by
    that is sent once it is due, not on the next notification or the watcher's safety look
    (a class of 30 on Redis waited up to ``SAFETY`` s for its last answers' count)."""
    monkeypatch.setattr(hub_module, "SAFETY", 3600.0)
    store = Backend.fresh("redis", tmp_path, redis_server.url).open()
    code, _ = store.create_room(QUESTIONS)

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            host = hub.subscribe(code, None, host=True)
            await until(host, lambda e, d: e == "pulse")
            for _ in range(3):                   # a burst: within HOST_EVERY of each other
                store.answer(code, 1, new_student_id(), "up")
            tally = store.pulse([code])[code].tally
            await until(host, lambda e, d: e == "pulse" and d["tally"] == tally, timeout=30)
        finally:
            hub.stop()
            store.close()
    run(main())


def test_a_store_that_stops_answering_is_said_and_its_return_too(tmp_path):
    redis_or_skip()
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis", persist=True)
    store = Backend.fresh("redis", tmp_path, server.url).open()
    code, secret = store.create_room(QUESTIONS)

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            f = hub.subscribe(code, None)
            await until(f, room_state(1))
            server.kill()
            _, d = await until(f, lambda e, d: e == "status" and d["problem"])
            assert "not available" in d["problem"]
            await asyncio.to_thread(server.start)
            await until(f, lambda e, d: e == "status" and d["problem"] is None, timeout=30)
            store.set_step(code, secret, 2)
            await until(f, room_state(2), timeout=30)
        finally:
            hub.stop()
            store.close()
            server.stop()
    run(main())


def test_a_store_that_restarts_empty_gets_its_room_back_with_every_answer(backend, store):
    """Two processes (two hubs), each with its own phones. The store loses everything mid-
    question (Redis restarted without persistence): no phone is told the class is gone, the
    room comes back at its step with every answer either process saw saved, a tap made while
    it was away is saved once it is back, and the host's key still drives it."""
    code, secret = store.create_room(QUESTIONS)
    store.set_step(code, secret, 1)
    other = backend.open()
    students = [new_student_id() for _ in range(8)]

    async def main():
        a, b = Hub(store, Builder()), Hub(other, Builder())
        a.start()
        b.start()
        try:
            hubs = [a if i % 2 else b for i in range(8)]
            phones = [h.subscribe(code, s) for h, s in zip(hubs, students, strict=True)]
            for f in phones:
                await until(f, room_state(1))
            picks = ["up", "down", "same", "up", "down", "same"]
            done = await asyncio.gather(*(h.answer(code, s, 1, 1, v) for h, s, v in
                                          zip(hubs, students, picks, strict=False)))
            assert {r.state for r in done} == {"saved"}
            backend.wipe()                                  # every key, every row: gone
            late = await asyncio.gather(*(hubs[i].answer(code, students[i], 1, 1, "up")
                                          for i in (6, 7)))  # taps while it is away
            assert {r.state for r in late} <= {"saved", "retrying", "sending"}
            for _ in range(200):
                view = store.room_view(code) if code in store.pulse([code]) else None
                if view is not None and view.n_answered == 8:
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError(f"the room came back with {view and view.n_answered} "
                                     "answers of 8")
            assert view.counts == {"up": 4, "down": 2, "same": 2} and view.step == 1
            for f in phones:
                assert not [x for x in frames(f.take()) if x[0] == "gone"] and not f.closed
            store.reveal(code, secret, 1)                   # the host's key drives it still
            for f in phones:
                await until(f, room_state(1, "revealed"))
            for i in (6, 7):
                receipt = a.outbox.receipt(code, students[i]) or b.outbox.receipt(
                    code, students[i])
                assert receipt.state == "saved"
        finally:
            a.stop()
            b.stop()
            other.close()
    run(main())


def test_a_store_that_restarts_empty_gets_back_each_answers_confidence(backend, store):
    """The confidences a process saw saved (in its snapshot, or saved since) come back with
    their answers, and so do the room's switches."""
    code, secret = store.create_room(QUESTIONS)
    store.set_options(code, secret, confidence=True, histogram_before=True)
    students = [new_student_id() for _ in range(4)]
    taps = [("up", "sure"), ("down", "guess"), ("up", None), ("same", "think_so")]

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            phones = [hub.subscribe(code, s) for s in students]
            for f in phones:
                await until(f, room_state(1))
            for s, (value, level) in zip(students[:2], taps[:2], strict=True):
                assert (await hub.answer(code, s, 1, 1, value, level)).state == "saved"
            store.set_step(code, secret, 1)                 # a move: a snapshot with them
            for f in phones:
                await until(f, room_state(1))
            await asyncio.sleep(0.3)
            for s, (value, level) in zip(students[2:], taps[2:], strict=True):
                assert (await hub.answer(code, s, 1, 1, value, level)).state == "saved"
            backend.wipe()
            for _ in range(200):
                if code in store.pulse([code]) and store.room_view(code).n_answered == 4:
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the room did not come back with its 4 answers")
        finally:
            hub.stop()
    run(main())
    assert store.confidence(code, secret, 1, 1) == {("up", "sure"): 1, ("down", "guess"): 1,
                                                    ("up", None): 1, ("same", "think_so"): 1}
    view = store.room_view(code)
    assert view.confidence and view.histogram_before


def test_only_a_host_stream_with_the_rooms_key_keeps_it_taught(backend, monkeypatch):
    """The hub marks a room taught while a host stream whose cookie's key drives it is open
    (its digest: ``subscribe(taught=...)``); phones, a host stream without a key and one with
    another room's never do: with the store full, a new lecturer's class replaces the room
    they alone kept, once Limits.untaught_seconds pass, and never the taught one."""
    from xattn.classroom import Limits, RoomEnded
    from xattn.classroom.codes import secret_digest

    monkeypatch.setattr(hub_module, "HOST_MARK", 0.1)
    store = backend.open(Limits(max_rooms=2, untaught_seconds=0.6))
    (taught, key), (kept, _) = store.create_room(QUESTIONS), store.create_room(QUESTIONS)

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            hub.subscribe(taught, None, host=True, taught=secret_digest(key))
            hub.subscribe(kept, new_student_id())                       # a phone
            hub.subscribe(kept, None, host=True)                        # no key in its cookie
            hub.subscribe(kept, None, host=True, taught=secret_digest(key))  # another room's
            await asyncio.sleep(1.0)                                    # the window passes
            made = await asyncio.to_thread(store.create_room, QUESTIONS)
            await asyncio.sleep(0.5)          # the hub sees the room gone: it stays gone
            return made
        finally:
            hub.stop()
    lecturer, _ = run(main())
    with pytest.raises(RoomEnded):          # as if ended: the hub's snapshot is not given back
        store.room_view(kept)
    assert store.room_view(taught).step == 1 and store.room_view(lecturer).step == 1


def test_a_phone_that_has_the_rooms_frame_gets_its_own_part_not_the_room_again(store):
    """A stream that says which room frame its phone has (``had``: the frame's id,
    `frames.frame_id` of the room's bytes; an ``EventSource``'s ``Last-Event-ID``) gets the
    phone's own part (``me``) instead of that frame, whether the room was built before it
    came or after; the room's next move comes whole, with its new id."""
    from xattn.classroom.frames import frame_id

    code, secret = store.create_room(QUESTIONS)
    first = frame_id(json.dumps({"step": 1, "phase": "asking", "round": 1,
                                 "version": 0}).encode())

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            cold = hub.subscribe(code, new_student_id(), had=first)   # before the build
            other = hub.subscribe(code, None, had="0badf00d")
            await until(other, room_state(1, "asking"))
            warm = hub.subscribe(code, None, had=first)               # after it
            for f in (cold, warm):
                event, data = await until(f, lambda e, d: e in ("me", "message"))
                assert event == "me" and "room" not in data and isinstance(data["now"], float)
                assert not [x for x in frames(f.take()) if x[0] == "message"]
            store.set_step(code, secret, 2)
            for f in (cold, warm):
                await until(f, room_state(2, "asking"))
            assert cold.had == warm.had != first
        finally:
            hub.stop()
    run(main())


def test_an_answer_saved_here_has_its_verdict_made_ahead_in_its_phones_languages(store):
    """While a step asks, each answer a phone of this process sends has its verdict made
    ahead (``Message.ahead``, in the builders' threads), in each language its open streams
    read, so that the reveal finds it made; an answer stored by another process is not."""
    code, secret = store.create_room(QUESTIONS)
    build = Languages()
    me, other = new_student_id(), new_student_id()

    async def main():
        hub = Hub(store, build)
        hub.start()
        try:
            phones = [hub.subscribe(code, me, lang="fr"), hub.subscribe(code, me, lang="ar")]
            for f in phones:
                await until(f, room_state(1))
            store.answer(code, 1, other, "same")                 # another process's phone
            receipt = await hub.answer(code, me, 1, 1, "down")
            assert receipt.state == "saved"
            for _ in range(100):
                if len(build.ahead) >= 2:
                    break
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.1)
            assert sorted(build.ahead) == [("ar", "1"), ("fr", "1")]
        finally:
            hub.stop()
    run(main())
