"""A Redis that restarts empty mid-question keeps the class (``deploy/serve.sh 2``, a real
redis-server without persistence, protocol phones and the lecturer's page over Streamlit's
protocol): no phone is told the class is gone, every answer is counted, the room stays at its
step and the lecturer's page drives it on; a process started after the restart takes the
students of the processes started before it."""

from __future__ import annotations

import asyncio
import time

import pytest
from classroom_helpers import RedisServer, hall_or_skip

from devtools.lecture_hall import LectureHall
from devtools.lecturer import Host
from devtools.phones import Phone
from devtools.protocol import run_async
from xattn.classroom import RedisStore

pytestmark = pytest.mark.server
# phones share this machine's two cores with the servers: a join's work at 4 x 2**10
LIMITS = "join_work_bits=10"
PHONES = 100


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    hall_or_skip()
    redis = RedisServer(tmp_path_factory.mktemp("redis"), persist=False)
    env = {"XATTN_REDIS_URL": redis.url, "XATTN_LIMITS": LIMITS, "XATTN_CLASS_STORE": ""}
    hall = LectureHall(processes=2, env=env).start()
    yield hall, redis, env
    hall.stop()
    redis.stop()


async def _wait(condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.1)


def test_redis_restarted_empty_mid_question_loses_no_answer_and_keeps_the_step(hall):
    hall, redis, env = hall
    store = RedisStore(redis.url)

    async def main():
        host = Host(hall.url, timeout=120)
        await host.open()
        late = None
        phones = [Phone(n, hall.url, host.code, timeout=120) for n in range(PHONES)]
        try:
            await host.click("class_next", lambda h: h.step == 2)    # a question of a number
            await asyncio.gather(*(p.join() for p in phones))
            assert {p.room["step"] for p in phones} == {2}
            first = await asyncio.gather(*(p.answer() for p in phones[:PHONES // 2]))
            assert all(p.is_saved for p in first)
            before = redis.pid
            redis.stop()
            redis.start()                                  # empty: no persistence
            # a new redis-server, empty: the room may already be given back by a hub that
            # saw the restart first (asserting its absence here raced the hub under load)
            assert redis.pid != before
            rest = await asyncio.gather(*(p.answer() for p in phones[PHONES // 2:]))
            assert all(p.is_saved for p in rest), [vars(p) for p in rest if not p.is_saved]
            await _wait(lambda: store.room_view(host.code).n_answered == PHONES,
                        f"{PHONES} answers in the store")
            view = store.room_view(host.code)
            assert view.step == 2 and view.phase == "asking"
            assert not [p for p in phones if p.gone], [p.gone for p in phones if p.gone]
            await _wait(lambda: host.counts and host.counts[-1][3] == PHONES,
                        "the lecturer's count")
            await host.click("reveal", lambda h: True)     # the lecturer drives it on
            for p in phones:
                await _wait(lambda p=p: (2, 1) in p.revealed, f"{p} to see the reveal", 30)
            # A process started after the restart takes a student of the hall's processes
            late = LectureHall(processes=1, env=env).start()
            phone = phones[0]
            other = Phone(PHONES, late.url, host.code, timeout=60)
            other.cookies.update(phone.cookies)            # the same browser, another process
            other.cookies.pop("XATTN_SERVER", None)
            await host.click("ask_again", lambda h: True)
            await other.join()
            assert other.student_id == phone.student_id
            pick = await other.answer()
            assert pick.is_saved and "refused" not in pick.states
            assert store.my_answer(host.code, 2, phone.student_id) == pick.value
            await other.leave()
        finally:
            await asyncio.gather(*(p.leave() for p in phones), return_exceptions=True)
            await host.close()
            if late is not None:
                late.stop()
    run_async(asyncio.wait_for(main(), 400))
