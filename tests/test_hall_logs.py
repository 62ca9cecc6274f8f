"""What a lecture-hall run writes to its logs: no host key, no session id, no traceback.

One lecture hall for the module (``deploy/serve.sh 2`` behind HAProxy, the class store in a
folder of its own), run through a class and stopped before any test reads it:

- a lecturer opens ``?class=new`` in Chromium, then the host link it got (``?room=…&host=KEY``,
  a reload through the proxy), and a student joins ``?room=CODE`` in another browser context
  (the phone's light page, which follows the room on ``/live/CODE/events``); the lecturer's
  tab is closed, the student's whole context too;
- sessions opened over Streamlit's websocket protocol (as the browser speaks it, with the
  proxy's affinity cookie and Streamlit's XSRF cookie), one of which reconnects by its session
  id while still connected (Streamlit then warns, naming the session) and starts an upload
  that it abandons half way (the upload's URL names the session; Starlette raises
  ``ClientDisconnect``); others leave during their page's first run (a reset connection) or
  after it (a clean close), a student's full page (``?room=CODE&explore=1``) among them;
- a phone's stream of its room on each process, one dropped without a word (a reset
  connection), one closed cleanly.

Then SIGTERM stops every process and every file of the run folder is read. Skipped, with the
reason, where HAProxy or Chromium is missing (failed instead where CI requires them).
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import shutil
import socket
import struct
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect

from devtools.browser import ARTIFACTS, RUN_COUNTER_JS, wait_for_app
from devtools.lecture_hall import REQUIRE_ENV, LectureHall, haproxy_missing, haproxy_required
from devtools.protocol import run_async
from xattn.server.logs import CLIENT_LEFT

pytestmark = pytest.mark.browser

RUN_DIR = ARTIFACTS / "hall-logs"


@dataclass
class HallRun:
    """A finished lecture-hall run: its secrets and what its files say."""

    host_key: str
    room: str
    session_ids: list[str]
    files: dict[str, str] = field(default_factory=dict)   # run folder's file name -> text
    output: str = ""                                       # what serve.sh printed

    def holding(self, secret: str) -> list[str]:
        return [name for name, text in self.files.items() if secret in text]


# --- a browser's session, spoken over the protocol ----------------------------------------------

def browser_cookies(url: str) -> dict[str, str]:
    """The cookies a browser holds once the page loaded: HAProxy's affinity cookie (from
    ``GET /``) and Streamlit's XSRF cookie (from the health check the page makes)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    for path in ("", "_stcore/health"):
        with opener.open(url + path, timeout=60) as r:
            r.read()
    return {c.name: c.value for c in jar}


def cookie_header(cookies: dict[str, str]) -> str:
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


async def open_session(port: int, cookies: dict[str, str], query: str, resume: str = "", *,
                       drawn: bool = False):
    """A websocket session of the page at ``?query`` (``resume``: reconnect to that session
    id, as a browser does after a dropped connection); returns it and its session id once
    the run began (``drawn``: once it finished)."""
    protocols = ["streamlit", cookies["_streamlit_xsrf"]] + ([resume] if resume else [])
    ws = await connect(f"ws://127.0.0.1:{port}/_stcore/stream", subprotocols=protocols,
                       additional_headers={"Cookie": cookie_header(cookies),
                                           "Origin": f"http://127.0.0.1:{port}"},
                       max_size=None, open_timeout=120)
    msg = BackMsg()
    msg.rerun_script.query_string = query
    await ws.send(msg.SerializeToString())
    session_id = ""
    async with asyncio.timeout(120):
        async for raw in ws:
            fwd = ForwardMsg()
            fwd.ParseFromString(raw)
            kind = fwd.WhichOneof("type")
            if kind == "new_session":
                session_id = fwd.new_session.initialize.session_id
            if session_id and (not drawn or kind == "script_finished"):
                return ws, session_id
    raise AssertionError(f"the session of ?{query} closed before it began")


def reset(ws) -> None:
    """Leave without a word: the TCP connection is reset (a phone out of the Wi-Fi's reach)."""
    sock = ws.transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    ws.transport.abort()


def abandon_upload(port: int, cookies: dict[str, str], session_id: str) -> bytes:
    """Start uploading a file to ``session_id`` as the page's uploader does, and reset the
    connection once the server reads the body (its ``100 Continue``) with most of it unsent.
    Returns the server's interim answer."""
    boundary = "xattn-upload"
    part = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            "filename=\"weights.npz\"\r\nContent-Type: application/octet-stream\r\n\r\n").encode()
    head = (f"PUT /_stcore/upload_file/{session_id}/abandoned HTTP/1.1\r\n"
            f"Host: 127.0.0.1:{port}\r\nContent-Length: {len(part) + 2_000_000}\r\n"
            f"Content-Type: multipart/form-data; boundary={boundary}\r\n"
            f"Expect: 100-continue\r\nX-Xsrftoken: {cookies['_streamlit_xsrf']}\r\n"
            f"Cookie: {cookie_header(cookies)}\r\n\r\n").encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        sock.sendall(head)
        interim = sock.recv(64)          # sent when the upload handler starts reading
        sock.sendall(part + b"\0" * 100_000)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    return interim


async def protocol_clients(hall: LectureHall, room: str) -> list[str]:
    """Sessions that leave in the ways clients leave; the ids of those that did more."""
    port = hall.port
    cookies = browser_cookies(hall.url)
    first, sid = await open_session(port, cookies, "seed=3", drawn=True)
    # the same browser again with its session id while the first connection still stands;
    # its page drawn, as the uploader must be before a file can go
    second, resumed = await open_session(port, cookies, "seed=3", resume=sid, drawn=True)
    assert resumed == sid, "Streamlit did not hand the session over to its reconnect"
    interim = abandon_upload(port, cookies, sid)
    assert interim.startswith(b"HTTP/1.1 100"), interim
    reset(second)
    await first.close()
    for query in (f"room={room}&explore=1", "view=Lesson&lesson=9", "seed=5"):
        ws, _ = await open_session(port, browser_cookies(hall.url), query)
        reset(ws)                        # in the middle of its first run
        ws, _ = await open_session(port, browser_cookies(hall.url), query)
        await ws.close()                 # a clean close, as a closed tab's browser sends
    return [sid]


def phone_streams(hall: LectureHall, room: str) -> list[bytes]:
    """A phone's stream of its room (``GET /live/CODE/events``, its page's ``EventSource``)
    on each process, straight to its port (HAProxy notices a client gone from a stream only at
    the next keep-alive): one left without a word once its first frame arrived (a phone out of
    the Wi-Fi's reach), then one closed cleanly (a closed tab). Returns what each got first."""
    firsts = []
    for _, port in hall.backends.values():
        for drop in (True, False):
            with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
                sock.sendall(f"GET /live/{room}/events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                             "Accept: text/event-stream\r\n\r\n".encode())
                got = b""                # (chunked: a frame's end is not the body's end)
                while b"\n\n" not in got.partition(b"data: ")[2]:
                    chunk = sock.recv(65536)
                    assert chunk, f"the stream ended before its first frame: {got[:300]!r}"
                    got += chunk
                if drop:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            firsts.append(got)
    return firsts


# --- the run -------------------------------------------------------------------------------------

def unavailable(reason: str):
    if haproxy_required():
        pytest.fail(f"{REQUIRE_ENV} is set but the lecture hall cannot run: {reason}",
                    pytrace=False)
    pytest.skip(f"lecture-hall logs not tested: {reason}")


def class_in_browser(chromium, url: str) -> tuple[str, str]:
    """A lecturer starts a class and reloads the host link, a student joins, both leave."""
    host = chromium.new_context()
    tab = host.new_page()
    tab.set_default_timeout(120_000)
    tab.add_init_script(RUN_COUNTER_JS)
    tab.goto(url + "?class=new")
    tab.wait_for_function("new URLSearchParams(location.search).has('room')")
    link = urllib.parse.parse_qs(urllib.parse.urlsplit(tab.url).query)
    room = link["room"][0]
    key = ""
    for _ in range(1200):                # the page hands its key to an HttpOnly cookie
        key = next((c["value"] for c in host.cookies() if c["name"] == f"xattn_host_{room}"),
                   "")
        if key:
            break
        tab.wait_for_timeout(100)        # poll interval of a bounded loop (2 minutes)
    assert key, "the lecturer's page never got its host cookie"
    tab.goto(f"{url}?room={room}&host={key}")   # the host link itself, through the proxy
    wait_for_app(tab, timeout=120_000)
    student = chromium.new_context()
    phone = student.new_page()
    phone.set_default_timeout(120_000)
    phone.goto(f"{url}?room={room}")              # the phone's own page, not Streamlit's
    phone.wait_for_function("(code) => document.getElementById('where').textContent"
                            ".includes('class ' + code)", arg=room)   # the room's first frame
    tab.close()                          # the lecturer closes the tab
    student.close()                      # the student closes the browser
    host.close()
    return room, key


@pytest.fixture(scope="module")
def hall_run(chromium, tmp_path_factory) -> HallRun:
    if haproxy_missing():
        unavailable(haproxy_missing())
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    store = tmp_path_factory.mktemp("hall-logs-store") / "class.db"
    hall = LectureHall(processes=2, run_dir=RUN_DIR, env={"XATTN_CLASS_STORE": str(store)})
    with hall:
        room, key = class_in_browser(chromium, hall.url)
        session_ids = run_async(protocol_clients(hall, room))
        for first in phone_streams(hall, room):
            assert first.startswith(b"HTTP/1.1 200") and b"event-stream" in first, first[:300]
        hall.stop()
    files = {p.name: p.read_text(errors="replace") for p in sorted(Path(RUN_DIR).iterdir())}
    return HallRun(key, room, session_ids, files, hall.output())


def test_the_host_key_is_in_no_file_of_the_run(hall_run):
    assert {"haproxy.log", "s1.log", "s2.log"} <= set(hall_run.files), hall_run.output
    assert hall_run.holding(hall_run.host_key) == []


def test_no_session_id_is_in_a_file_of_the_run(hall_run):
    """Neither the upload's URL in HAProxy's log nor Streamlit's warning about the reconnect
    names the session whole."""
    for sid in hall_run.session_ids:
        assert hall_run.holding(sid) == [], sid
        assert sid[:8] + "…" in hall_run.files["s1.log"] + hall_run.files["s2.log"]


def test_haproxy_logs_each_request_by_its_path(hall_run):
    """The log still says who asked for what and how it went: the page (twice for the host
    link, once for the phone, its query left out), the websockets, the abandoned upload (CD:
    the client left)."""
    lines = [line for line in hall_run.files["haproxy.log"].splitlines() if line.endswith('"')]
    pages = [line for line in lines if line.endswith(' "GET / HTTP/1.1"')]
    assert len(pages) >= 3, lines             # ?class=new, the host link, the phone's page
    # 303: the host link traded for its cookie; 304: a page the browser has cached
    assert all((" 200 " in line or " 303 " in line or " 304 " in line)
               and " streamlit/s" in line for line in pages), pages
    assert sum(" 303 " in line for line in pages) == 1, pages
    assert sum(" 200 " in line for line in pages) >= 3, pages
    assert any(line.endswith(' "GET /_stcore/stream HTTP/1.1"') and " 101 " in line
               for line in lines)
    uploads = [line for line in lines if '"PUT /_stcore/upload_file/' in line]
    assert [u.rsplit('"', 2)[1] for u in uploads] == \
        ["PUT /_stcore/upload_file/-/abandoned HTTP/1.1"], uploads
    assert " CD" in uploads[0], uploads
    assert not [line for line in lines if "?" in line.rsplit('"', 2)[1]]   # no query at all


def test_no_traceback_in_any_log_after_clients_left(hall_run):
    """Tabs closed, connections reset or closed mid-run, an upload abandoned, a phone's
    stream dropped: the servers' logs hold no traceback; the abandoned upload is one line in the
    log of its process."""
    for name, text in hall_run.files.items():
        assert "Traceback" not in text, f"{name}:\n{text}"
        assert "Exception in ASGI application" not in text, f"{name}:\n{text}"
    logs = hall_run.files["s1.log"] + hall_run.files["s2.log"]
    assert logs.count(CLIENT_LEFT) == 1, logs
