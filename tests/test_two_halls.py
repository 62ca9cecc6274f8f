"""Two lecture halls (two ``deploy/serve.sh``, as two machines would run them) on one Redis:
the lecturer's page on one, phones on both. A move of the lecturer reaches the phones of the
other hall by Redis pub/sub, and their answers reach the lecturer's count."""

from __future__ import annotations

import asyncio
import time

import pytest
from classroom_helpers import RedisServer, hall_or_skip

from devtools.lecture_hall import LectureHall
from devtools.lecturer import Host
from devtools.phones import Phone
from devtools.protocol import run_async

pytestmark = pytest.mark.server
LIMITS = "new_students=500/600"


@pytest.fixture(scope="module")
def halls(tmp_path_factory):
    hall_or_skip()
    folder = tmp_path_factory.mktemp("redis")
    redis = RedisServer(folder, persist=True)
    env = {"XATTN_REDIS_URL": redis.url, "XATTN_LIMITS": LIMITS, "XATTN_CLASS_STORE": ""}
    a = LectureHall(processes=2, env=env).start()
    try:
        b = LectureHall(processes=1, env=env).start()
    except Exception:
        a.stop()
        raise
    yield a, b
    b.stop()
    a.stop()
    redis.stop()


def test_a_move_on_one_hall_reaches_the_phones_of_the_other(halls):
    a, b = halls

    async def main():
        host = Host(a.url, timeout=120)
        await host.open()
        try:
            phones = [Phone(n, (a if n % 2 else b).url, host.code, timeout=60)
                      for n in range(6)]
            await asyncio.gather(*(p.join() for p in phones))
            assert {p.room["step"] for p in phones} == {1}
            picks = await asyncio.gather(*(p.answer() for p in phones))
            assert all(p.is_saved for p in picks), [vars(p) for p in picks]
            deadline = time.monotonic() + 30
            while not (host.counts and host.counts[-1][3] == 6) and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            assert host.counts[-1][3] == 6          # every hall's answers in the count
            sent, _ = await host.click("class_next", lambda h: h.step == 2)
            for p in phones:                        # both halls follow, by pub/sub
                deadline = time.monotonic() + 10
                while p.first_step.get(2) is None and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert p.first_step.get(2) is not None, p
            await host.click("reveal", lambda h: True)
            for p in phones:
                deadline = time.monotonic() + 10
                while (2, 1) not in p.revealed and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert (2, 1) in p.revealed, p
            assert not [x for p in phones for x in p.problems]
            for p in phones:
                await p.leave()
        finally:
            await host.close()
    run_async(asyncio.wait_for(main(), 300))
