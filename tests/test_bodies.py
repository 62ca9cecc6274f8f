"""xattn/server/bodies.py: every route's body bounded before anything reads it, and JSON
read with its depth and numbers checked. The JSON checks as a table; the caps and every JSON
route on uvicorn with the app's own middleware and routes (as Streamlit serves them); the
issue's attacks on a real ``streamlit run app.py`` (a 1 GB body declared and streamed to
``/join`` and ``/host``, deep JSON, an upload past the largest the page takes), with the
server's memory read from /proc before and after."""

from __future__ import annotations

import asyncio
import http.client
import json
import socket
import threading
from contextlib import asynccontextmanager

import pytest
import uvicorn
from classroom_helpers import wait_for
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from devtools import bodies as hostile
from xattn.classroom import Limits, Question, SQLiteStore
from xattn.classroom.codes import solve_work
from xattn.classroom.hub import Hub, Message
from xattn.server import ROUTES, live, middleware
from xattn.server.bodies import (
    MAX_DEPTH,
    MAX_DIGITS,
    OTHER_BYTES,
    ROUTE_BYTES,
    BadBody,
    parse_json,
)
from xattn.ui.serving import upload_bytes

QUESTIONS = (Question("choice", ("up", "down")), Question("number", low=0, high=1))
GB = 1 << 30


@pytest.mark.parametrize(("body", "said"), [
    (b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1), "nested at most 8 deep"),
    (b'{"a": ' * 5000 + b"1" + b"}" * 5000, "nested at most 8 deep"),   # RecursionError before
    (b"[" * 100_000, "nested at most 8 deep"),
    (b'{"value": 1e999}', "numbers a float holds, found 1e999"),
    (b'{"value": -1e999}', "numbers a float holds, found -1e999"),
    (b'{"value": NaN}', "expected JSON numbers, found NaN"),
    (b'{"value": Infinity}', "expected JSON numbers, found Infinity"),
    (b'{"value": -Infinity}', "expected JSON numbers, found -Infinity"),
    (b'{"step": ' + b"9" * 5000 + b"}", f"integers of at most {MAX_DIGITS} digits, found one "
                                        "of 5,000"),
    (b'{"step": -' + b"9" * (MAX_DIGITS + 1) + b"}", "integers of at most"),
    (b'{"a": "\xff"}', "expected UTF-8 JSON, found byte 7 that is not"),
    (b"not json", "expected JSON, found Expecting value"),
    (b"", "expected JSON, found Expecting value"),
])
def test_json_past_its_bounds_is_refused_in_one_line(body, said):
    with pytest.raises(BadBody, match="^expected") as caught:
        parse_json(body)
    assert said in str(caught.value) and caught.value.status == 400
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("body", "value"), [
    (b'{"step": 1, "round": 2, "value": [[0, 1], [2, 3]]}',
     {"step": 1, "round": 2, "value": [[0, 1], [2, 3]]}),
    (b"[" * MAX_DEPTH + b"]" * MAX_DEPTH, [[[[[[[[]]]]]]]]),
    (b'{"value": "[[[[[[[[[[[[{{{{{{ \\" [[["}', {"value": '[[[[[[[[[[[[{{{{{{ " [[['}),
    (b'{"value": 1.7976931348623157e308, "n": -' + b"9" * MAX_DIGITS + b"}",
     {"value": 1.7976931348623157e308, "n": -int("9" * MAX_DIGITS)}),
])
def test_json_within_its_bounds_is_read_as_json_loads_reads_it(body, value):
    assert parse_json(body) == value == json.loads(body)


# -- on uvicorn: the app's middleware and routes ------------------------------------------


def build(view) -> Message:
    body = json.dumps({"code": view.code, "step": view.step}).encode()
    return Message((view.code, view.version, view.phase, view.step, view.round), body,
                   view.step, view.round, view.question, lambda text: {"mine": text})


async def _echo(request):
    """A stand-in for a route of Streamlit's that reads what it is sent."""
    return PlainTextResponse(f"read {len(await request.body())} bytes")


class Site:
    """``xattn.server``'s ``ROUTES`` and ``middleware`` in front of stand-ins for
    Streamlit's page and routes, on uvicorn."""

    def __init__(self, store):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.hub = Hub(store, build)

        @asynccontextmanager
        async def lifespan(app):
            self.hub.start(asyncio.get_running_loop())
            yield
            self.hub.stop()

        app = Starlette(routes=[*ROUTES, Route("/", lambda r: PlainTextResponse("streamlit")),
                                Route("/other", _echo, methods=["POST"])],
                        middleware=middleware(upload_bytes), lifespan=lifespan)
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port,
                                                    log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        wait_for(lambda: self.server.started, 30, what="uvicorn to start")

    def stop(self):
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "c.sqlite3", Limits(join_work_bits=8, join_work_pieces=1))
    yield s
    s.close()


@pytest.fixture
def site(store, monkeypatch):
    server = Site(store)
    monkeypatch.setattr(live, "_made", [server.hub])
    yield server
    server.stop()


def joined(port: int, code: str) -> str:
    """The room's student cookie, got as the phone's page gets it (its work done)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.request("GET", f"/?room={code}")
    page = c.getresponse().read().decode()
    data = json.loads(page.split("const JOIN = ")[1].split(";\n")[0])
    nonce = solve_work(data["challenge"], data["bits"], data["pieces"])
    c.request("POST", f"/live/{code}/join", json.dumps(
        {"challenge": data["challenge"], "nonce": nonce}), {"Content-Type": "application/json"})
    r = c.getresponse()
    r.read()
    c.close()
    assert r.status == 200
    return r.getheader("set-cookie").split(";")[0]


def _hostile(fields: str, cap: int = 1024) -> dict[str, bytes]:
    """The bodies that gave HTTP 500, each inside a request of the route's own ``fields`` and
    within its cap (``cap`` bytes: the deep one as deep as fits)."""
    deep = (cap - len(fields) - 20) // 2
    return {"deep": f'{{{fields}, "x": '.encode() + b"[" * deep + b"]" * deep + b"}",
            "1e999": f'{{{fields}, "x": 1e999}}'.encode(),
            "NaN": f'{{{fields}, "x": NaN}}'.encode(),
            "-Infinity": f'{{{fields}, "x": -Infinity}}'.encode(),
            "huge int": f'{{{fields}, "x": '.encode() + b"7" * 1000 + b"}"}


ROUTE_FIELDS = {"join": '"challenge": "c", "nonce": "n"',
                "answer": '"step": 1, "round": 1, "value": "up"',
                "host": '"key": "k"'}
CASES = [(route, name) for route in ROUTE_FIELDS for name in _hostile("")]


@pytest.mark.parametrize(("route", "name"), CASES)
def test_every_json_route_refuses_hostile_json_with_400_and_why(site, store, route, name):
    code, _ = store.create_room(QUESTIONS)
    body = _hostile(ROUTE_FIELDS[route], ROUTE_BYTES[route])[name]
    assert len(body) <= ROUTE_BYTES[route]
    headers = {"Origin": f"http://127.0.0.1:{site.port}"}
    if route == "answer":
        headers["Cookie"] = joined(site.port, code)
    reply = hostile.post(site.port, f"/live/{code}/{route}", body, headers=headers)
    assert reply.status == 400, reply
    why = json.loads(reply.body)["why"]
    assert "expected" in why and "found" in why, why
    assert store.room_view(code).n_answered == 0


@pytest.mark.parametrize("route", list(ROUTE_BYTES))
def test_a_body_declared_past_a_routes_cap_is_refused_before_it_is_read(site, store, route):
    code, _ = store.create_room(QUESTIONS)
    reply = hostile.declared(site.port, f"/live/{code}/{route}", GB, send=65536)
    assert reply.status == 413, reply
    assert reply.body == (f"POST /live/CODE/{route} takes a body of at most "
                          f"{ROUTE_BYTES[route]:,} bytes; this one sent {GB:,} bytes.")


@pytest.mark.parametrize("route", ["join", "host"])
def test_a_chunked_body_is_cut_past_the_cap_as_it_arrives(site, store, route):
    code, _ = store.create_room(QUESTIONS)
    reply = hostile.chunked(site.port, f"/live/{code}/{route}", 256 << 20,
                            headers={"Origin": f"http://127.0.0.1:{site.port}"})
    assert reply.status == 413, reply
    assert reply.body == (f"POST /live/CODE/{route} takes a body of at most "
                          f"{ROUTE_BYTES[route]:,} bytes; this one sent more than "
                          f"{ROUTE_BYTES[route]:,} bytes.")
    assert reply.sent < 256 << 20          # the client was stopped, not the body's end


def test_a_route_this_table_does_not_name_takes_its_default_cap(site):
    ok = hostile.post(site.port, "/other", b"x" * OTHER_BYTES)
    assert (ok.status, ok.body) == (200, f"read {OTHER_BYTES} bytes")
    assert hostile.declared(site.port, "/other", OTHER_BYTES + 1).status == 413
    streamed = hostile.chunked(site.port, "/other", 8 << 20)
    assert streamed.status == 413 and "at most 65,536 bytes" in streamed.body


@pytest.mark.parametrize("path", ["/", "/?room=ABCDEF", "/live/ABCDEF/events"])
def test_a_get_that_declares_a_body_is_refused(site, path):
    reply = hostile.declared(site.port, path, 10, method="GET", send=10)
    assert (reply.status, reply.body) == (413, "A GET request carries no body; this one "
                                               "declared 10 bytes.")
    chunked = hostile.chunked(site.port, path, 1 << 20, method="GET")
    assert chunked.status == 413 and "carries no body" in chunked.body


def test_an_ordinary_answer_still_goes_through(site, store):
    code, _ = store.create_room(QUESTIONS)
    reply = hostile.post(site.port, f"/live/{code}/answer",
                         b'{"step": 1, "round": 1, "value": "up"}',
                         headers={"Cookie": joined(site.port, code)})
    assert reply.status == 200 and json.loads(reply.body)["state"] in ("saved", "sending")


# -- on a real server: `streamlit run app.py` --------------------------------------------

RSS_TARGET_MB = 50          # issue 42: no unauthenticated request moves RSS by more


@pytest.fixture(scope="module")
def streamlit_run(tmp_path_factory):
    from devtools.browser import ARTIFACTS, StreamlitServer

    store = tmp_path_factory.mktemp("bodies") / "classes.sqlite3"
    with StreamlitServer(log=ARTIFACTS / "bodies-server.log",
                         env={"XATTN_CLASS_STORE": str(store), "XATTN_REDIS_URL": ""}) as server:
        server.store = SQLiteStore(store)
        hostile.post(server.port, "/live/ABCDEF/join", b"{}")     # the routes' imports, warm
        yield server


def _attacks(port: int) -> dict[str, callable]:
    """The issue's requests from an unauthenticated client, each a call giving its reply."""
    own = {"Origin": f"http://127.0.0.1:{port}"}
    upload = "/_stcore/upload_file/00000000-0000-0000-0000-000000000000/f"
    return {
        "1 GB declared to /join": lambda: hostile.declared(port, "/live/ABCDEF/join", GB,
                                                           send=8 << 20),
        "1 GB declared to /host": lambda: hostile.declared(port, "/live/ABCDEF/host", GB,
                                                           send=8 << 20, headers=own),
        "1 GB chunked to /join": lambda: hostile.chunked(port, "/live/ABCDEF/join", GB),
        "1 GB chunked to /host": lambda: hostile.chunked(port, "/live/ABCDEF/host", GB,
                                                         headers=own),
        "1 GB declared upload": lambda: hostile.declared(port, upload, GB, method="PUT",
                                                         send=8 << 20),
        "1 GB chunked upload": lambda: hostile.chunked(port, upload, GB, method="PUT"),
    }


@pytest.mark.parametrize("name", list(_attacks(0)))
def test_a_huge_body_gets_413_and_leaves_the_servers_memory_as_it_was(streamlit_run, name):
    from devtools.protocol import rss_mb

    before = rss_mb(streamlit_run.pid)
    reply = _attacks(streamlit_run.port)[name]()
    after = rss_mb(streamlit_run.pid)
    if name == "1 GB chunked upload":        # nothing declared: Streamlit's check comes first
        assert (reply.status, reply.body) == (403, "XSRF token missing or invalid"), reply
    else:
        assert reply.status == 413, reply
        assert "takes a body of at most" in reply.body and "this one sent" in reply.body
    assert reply.sent < GB
    assert after - before < RSS_TARGET_MB, f"{name}: RSS {before:.0f} -> {after:.0f} MB"


@pytest.mark.parametrize("name", list(_hostile("")))
def test_hostile_json_to_a_real_join_is_400_never_500(streamlit_run, name):
    code, _ = streamlit_run.store.create_room(QUESTIONS)
    body = _hostile('"challenge": "c", "nonce": "n"', ROUTE_BYTES["join"])[name]
    reply = hostile.post(streamlit_run.port, f"/live/{code}/join", body)
    assert reply.status == 400, reply
    assert json.loads(reply.body)["why"].startswith('A join is sent as {"challenge": "...", '
                                                    '"nonce": "..."}: expected')


def test_a_websocket_message_past_the_configured_size_closes_the_socket(streamlit_run):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    from devtools.protocol import rss_mb

    before = rss_mb(streamlit_run.pid)
    url = f"ws://127.0.0.1:{streamlit_run.port}/_stcore/stream"
    with connect(url, subprotocols=["streamlit"], max_size=None, open_timeout=30) as ws, \
            pytest.raises(ConnectionClosed) as closed:
        ws.send(b"\0" * (16_000_001))      # server.maxMessageSize = 16 (MB of 10**6 bytes)
        while True:
            ws.recv(timeout=30)
    # the server's close (1009, too big) arrives, or the connection is reset first: the
    # server stops reading at the frame's header while this client still writes its payload
    assert closed.value.rcvd is None or closed.value.rcvd.code == 1009, closed.value
    assert rss_mb(streamlit_run.pid) - before < RSS_TARGET_MB
    assert hostile.post(streamlit_run.port, "/live/ABCDEF/join", b"{}").status == 400


def test_the_largest_file_the_page_takes_still_uploads(streamlit_run):
    """An attention file of ``attnfile.MAX_BYTES`` (20,000,000 bytes), PUT as the page's
    uploader does (multipart, the XSRF token), passes the upload's cap; a byte more than the
    cap is refused before Streamlit reads it."""
    import uuid

    from devtools.protocol import Client, run_async
    from xattn.attnfile import MAX_BYTES

    async def upload():
        async with Client(streamlit_run.url) as tab:       # its session open throughout
            await tab.run("weights=file", timeout=120)
            urls = await tab.upload_urls("big.npz")
            xsrf = tab.cookies.get("_streamlit_xsrf", "")
            return await _put_both(urls.upload_url, xsrf)

    async def _put_both(path: str, xsrf: str):
        boundary = uuid.uuid4().hex
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
                "filename=\"big.npz\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                ).encode() + b"\0" * MAX_BYTES + f"\r\n--{boundary}--\r\n".encode()
        headers = {"Content-Type": f"multipart/form-data; boundary={boundary}",
                   "X-Xsrftoken": xsrf, "Cookie": f"_streamlit_xsrf={xsrf}"}

        def put(data: bytes) -> int:
            c = http.client.HTTPConnection("127.0.0.1", streamlit_run.port, timeout=120)
            try:
                c.request("PUT", path, data, headers)
                return c.getresponse().status
            finally:
                c.close()
        cap = (20 << 20) + (1 << 20)         # maxUploadSize = 20 (MiB) + the framing allowed
        over = await asyncio.to_thread(hostile.declared, streamlit_run.port, path, cap + 1,
                                       method="PUT", headers=headers)
        return await asyncio.to_thread(put, body), over

    status, over = run_async(upload())
    assert status == 204
    assert (over.status, over.body) == (413, "An upload takes a body of at most 22,020,096 "
                                             "bytes; this one sent 22,020,097 bytes.")
