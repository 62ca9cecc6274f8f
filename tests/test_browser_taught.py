"""A lecturer's page in Chromium keeps its room taught: the page made the room (``?class=new``),
its pulse stream opened before the page's claim put the host key in its cookie, and opened
again once it did (``xattn/ui/room/follow.py``), so that the server marks the room taught
while the page is open and a full store never replaces it; closed, the marks stop.
"""

from __future__ import annotations

import sqlite3
import time

import pytest
from classroom_helpers import wait_for

from devtools.browser import ARTIFACTS, Host, StreamlitServer
from xattn.classroom import SQLiteStore

UNTAUGHT = 8.0                    # the hub marks a room taught every UNTAUGHT / 4 s


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    path = tmp_path_factory.mktemp("taught") / "classes.sqlite3"
    with StreamlitServer(log=ARTIFACTS / "browser-taught-server.log",
                         env={"XATTN_CLASS_STORE": str(path), "XATTN_REDIS_URL": "",
                              "XATTN_LIMITS": f"untaught_seconds={UNTAUGHT:g}"}) as s:
        s.path = path
        yield s


def host_seen(server, code: str) -> float:
    with sqlite3.connect(server.path) as c:
        return c.execute("SELECT host_at FROM rooms WHERE code = ?", (code,)).fetchone()[0]


def test_a_lecturers_open_page_keeps_its_room_taught_and_a_closed_one_does_not(server,
                                                                               chromium):
    host = Host(chromium, server.url, store=SQLiteStore(server.path))
    code, key = host.start()
    assert key                                              # the claim set the cookie
    made = host_seen(server, code)
    # no host action meanwhile: only the page's stream, with the key, moves it
    wait_for(lambda: host_seen(server, code) > made + UNTAUGHT / 2, timeout=60,
             what="the open page's stream to mark its room taught")
    host.context.close()
    time.sleep(UNTAUGHT / 2)                                # its stream's end reached the hub
    closed = host_seen(server, code)
    time.sleep(UNTAUGHT / 2)
    assert host_seen(server, code) == closed                # nobody marks it now
