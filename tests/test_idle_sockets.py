"""One client cannot fill the hall (``deploy/serve.sh 2``, HAProxy's per-address bounds and
the app's, ``xattn/server/bounds.py``): 600 idle websockets from one client, while a
lecturer and 300 phones of a class behind the same address go on. At most 200 of the
websockets are let in, the rest refused; every phone stays connected and answers, the
lecturer's page reveals, a new page loads; a new session of that address waits only until
the flood has closed and its burst is 10 s old. Then the same on a plain ``streamlit run app.py``, without HAProxy."""

from __future__ import annotations

import asyncio

import pytest
from classroom_helpers import hall_or_skip
from websockets.exceptions import InvalidStatus

from benchmarks.idle_sockets import Sockets, http_get
from devtools.browser import ARTIFACTS, StreamlitServer
from devtools.lecture_hall import LectureHall
from devtools.lecturer import Host
from devtools.phones import Phone
from devtools.protocol import Client, run_async

pytestmark = pytest.mark.server
ENV = {"XATTN_CLASS_STORE": "", "XATTN_REDIS_URL": "", "XATTN_LIMITS": "join_work_bits=10"}


async def _flooded(url: str, phones: int, sockets: int) -> tuple[int, dict, list]:
    host = Host(url, timeout=120)
    await host.open()
    class_phones = [Phone(n, url, host.code, timeout=120) for n in range(phones)]
    flood = Sockets(url, "bare", sockets, concurrency=50, timeout=30)
    try:
        await asyncio.gather(*(p.join() for p in class_phones))
        await flood.open()
        opened = flood.open_now()
        status, _, _, _ = await http_get(url, {}, 30)    # a new page loads
        assert status == 200
        picks = await asyncio.gather(*(p.answer() for p in class_phones))
        await host.click("reveal", lambda h: True)        # the lecturer's page goes on
        for p in class_phones:
            deadline = asyncio.get_running_loop().time() + 30
            while (host.step, 1) not in p.revealed:
                assert asyncio.get_running_loop().time() < deadline, p
                await asyncio.sleep(0.1)
        await flood.close()
        deadline = asyncio.get_running_loop().time() + 30
        while True:              # a new session, once the flood closed and its burst is 10 s old
            try:
                async with Client(url) as tab:
                    run = await tab.run("")
                    assert run.ok, run.problems()
                break
            except InvalidStatus:
                assert asyncio.get_running_loop().time() < deadline, "no new session in 30 s"
                await asyncio.sleep(1.0)
        return opened, dict(flood.failures), picks
    finally:
        await flood.close()
        await asyncio.gather(*(p.leave() for p in class_phones), return_exceptions=True)
        await host.close()


def test_idle_websockets_from_one_client_leave_the_hall_answering(tmp_path):
    hall_or_skip()
    env = {**ENV, "XATTN_CLASS_STORE": str(tmp_path / "classes.sqlite3")}
    hall = LectureHall(processes=2, env=env, run_dir=ARTIFACTS / "idle-sockets-hall").start()
    try:
        opened, refused, picks = run_async(asyncio.wait_for(_flooded(hall.url, 300, 600), 300))
    finally:
        hall.stop()
    assert opened <= 200 and sum(refused.values()) >= 400, (opened, refused)
    assert all(p.is_saved for p in picks)                 # every phone of the class answers


def test_a_plain_streamlit_run_bounds_one_clients_websockets_too(tmp_path):
    env = {**ENV, "XATTN_CLASS_STORE": str(tmp_path / "classes.sqlite3"),
           "XATTN_WS_PER_ADDRESS": "50"}
    with StreamlitServer(env=env, log=ARTIFACTS / "idle-sockets-server.log") as server:
        opened, refused, picks = run_async(asyncio.wait_for(_flooded(server.url, 50, 120), 300))
    # the lecturer's page holds one of the address's 50 (the test's new page another)
    assert opened <= 49 and sum(refused.values()) >= 70, (opened, refused)
    assert all(p.is_saved for p in picks)
