"""Rooms nobody teaches hold no slot, and votes cost what a browser pays, on a real server
(``streamlit run app.py``) at the moment the attack happens: fake students who join (the
page's work done) and answer, and ``/pulse`` streams without the room's host key (none, a
made-up one, another room's) keep nothing; a host stream whose cookie holds the key does; a
new lecturer starts a class once ``Limits.untaught_seconds`` pass (small for the test: the
default is 60 s). And one address's joins into one room come from a bucket: a burst, then
one every so often, the refused told when to try again.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from urllib.parse import urlsplit

import pytest
from test_room_limits import answer, host_link, phone, texts, visit

from devtools.browser import ARTIFACTS, StreamlitServer, browser_missing, unavailable
from xattn.classroom import Limits, Question, RoomEnded, SQLiteStore
from xattn.server.host import cookie_name

pytestmark = pytest.mark.server

UNTAUGHT = 10.0
# new_rooms=2/3600: a lecturer pressing again and again while the store is full is counted
# only for the class that starts
LIMITS = (f"max_rooms=3,untaught_seconds={UNTAUGHT:g},join_bucket=5/1,join_work_bits=6,"
          "new_rooms=2/3600")
QUESTIONS = (Question("choice", ("up", "down")),)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    reason = browser_missing()      # no browser needed, but the same server harness
    if reason and "Chromium" not in reason:
        unavailable(reason)
    path = tmp_path_factory.mktemp("squat") / "classes.sqlite3"
    limits = dict(item.split("=") for item in LIMITS.split(","))
    with StreamlitServer(log=ARTIFACTS / "room-squatting-server.log",
                         env={"XATTN_CLASS_STORE": str(path), "XATTN_REDIS_URL": "",
                              "XATTN_LIMITS": LIMITS}) as s:
        s.store = SQLiteStore(path, Limits(max_rooms=int(limits["max_rooms"]),
                                           untaught_seconds=UNTAUGHT))
        visit(s, "view=Lesson", "192.0.2.1")      # the first run's imports, before any room
        yield s


class Stream:
    """A ``/live/CODE/pulse`` stream held open in a thread, with the cookie given: the events
    it heard."""

    def __init__(self, server, code: str, cookie: str = ""):
        url = urlsplit(server.url)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=120)
        self.conn.request("GET", f"/live/{code}/pulse", headers={"Cookie": cookie})
        self.response = self.conn.getresponse()
        self.events: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for line in self.response:
                if line.startswith(b"event: "):
                    self.events.append(line[7:].strip().decode())
        except (OSError, ValueError, AttributeError):     # closed by the test meanwhile
            pass

    def close(self) -> None:
        self.conn.close()


def test_fake_students_and_keyless_streams_keep_no_room_and_a_lecturer_gets_in(server):
    store = server.store
    (taught, key), (squat, _), (other, other_key) = (store.create_room(QUESTIONS)
                                                     for _ in range(3))
    streams = [Stream(server, taught, f"{cookie_name(taught)}={key}"),   # its lecturer's page
               Stream(server, squat), Stream(server, other),            # no key
               Stream(server, squat, f"{cookie_name(squat)}=made-up-key"),
               Stream(server, squat, f"{cookie_name(squat)}={other_key}")]   # another room's
    assert all(s.response.status == 200 for s in streams)
    refused = visit(server, "class=new", "192.0.2.50")                  # the store is full
    assert "No class could be started" in texts(refused), texts(refused)[:300]
    started, joined, presses = time.monotonic(), 0, 1
    made = None
    while made is None and time.monotonic() - started < UNTAUGHT + 30:
        for i, code in enumerate((squat, other)):                       # the attack goes on
            _, cookie = phone(server, code, f"198.51.100.{joined % 10 + 1}")
            if cookie:
                joined += 1
                answer(server, code, cookie, ("up", "down")[i])
        run = visit(server, "class=new", "192.0.2.50")                   # a lecturer tries
        presses += 1
        if "you drive this class" in texts(run):
            made = host_link(run)
    for s in streams:
        s.close()
    assert made is not None, "the lecturer was kept out"
    code = made
    assert presses > 2                                                  # refused ones: uncounted
    assert joined >= 4                                                  # the fakes did join
    gone = [c for c in (squat, other) if c not in store.pulse([c])]
    assert len(gone) == 1 and taught in store.pulse([taught]) and code in store.pulse([code])
    time.sleep(2)                              # the server's hub looked: no snapshot gave it back
    with pytest.raises(RoomEnded):
        store.room_view(gone[0])
    assert "gone" in next(s for s, c in zip(streams[1:3], (squat, other), strict=True)
                          if c == gone[0]).events


def test_one_address_joins_a_room_from_a_bucket_and_is_told_when_to_try_again(server):
    code, key = server.store.create_room(QUESTIONS)
    try:
        cookies = [phone(server, code, "203.0.113.40")[1] for _ in range(5)]
        assert all(cookies)                                              # the burst
        said, cookie = phone(server, code, "203.0.113.40")
        assert cookie is None
        refused = json.loads(said)
        assert refused["retry"] >= 1 and "joins by itself" in refused["why"], refused
        assert phone(server, code, "203.0.113.41")[1]                   # another address
        time.sleep(refused["retry"] + 0.2)
        assert phone(server, code, "203.0.113.40")[1]                   # refilled: one more
    finally:
        server.store.end_room(code, key)
