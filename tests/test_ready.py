"""The readiness check a lecturer runs before class (devtools/ready.py): a class of 20 phones
walked through three steps on plain ``streamlit run app.py`` behind TLS (as a hosting service
serves it), the class it opened ended and gone from the store; a one-line answer, never a
traceback, when it cannot run; its verdict. Its run on ``deploy/serve.sh 2`` (the image's
entrypoint) is in tests/test_container.py. Nothing here asserts on time."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import resource
import shutil
import socket
import sqlite3
import ssl
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from devtools import ready
from devtools.browser import ROOT, StreamlitServer, free_port
from devtools.protocol import run_async
from devtools.ready import check, main
from devtools.ready_report import Report, table, verdict
from devtools.redis_server import redis_binary
from xattn.classroom import SQLiteStore

LIMITS = "join_work_bits=10,new_rooms=100/3600,new_students=45/600"


class TLSProxy:
    """TLS in front of a plain HTTP server on this machine, bytes passed as they are (what a
    hosting service's proxy does for the app's https:// address)."""

    def __init__(self, backend: int, cert: str, key: str):
        self.backend, self.port = backend, free_port()
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert, key)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)

    async def _pipe(self, reader, writer) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (OSError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _client(self, reader, writer) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.backend)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    def start(self) -> TLSProxy:
        self.thread.start()
        self.server = asyncio.run_coroutine_threadsafe(asyncio.start_server(
            self._client, "127.0.0.1", self.port, ssl=self.context), self.loop).result(10)
        return self

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.server.close)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def streamlit_run(tmp_path_factory):
    """``streamlit run app.py`` (one process, SQLite), behind a TLS proxy whose certificate
    this process trusts (SSL_CERT_FILE); yields (https URL, the store's file)."""
    if shutil.which("openssl") is None:
        pytest.fail("openssl is needed to make the TLS proxy's certificate "
                    "(apt-get install -y openssl)", pytrace=False)
    folder = tmp_path_factory.mktemp("ready")
    cert, key, store = folder / "cert.pem", folder / "key.pem", folder / "classes.sqlite3"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    env = {"XATTN_CLASS_STORE": str(store), "XATTN_LIMITS": LIMITS, "XATTN_REDIS_URL": ""}
    with StreamlitServer(env=env, log=ROOT / "test-artifacts" / "ready-server.log") as server:
        proxy = TLSProxy(server.port, str(cert), str(key)).start()
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SSL_CERT_FILE", str(cert))
            yield f"https://127.0.0.1:{proxy.port}/", store
        proxy.stop()


def _gone(store_path, code: str) -> bool:
    store = SQLiteStore(store_path)
    try:
        live = store.pulse([code])
    finally:
        store.close()
    with sqlite3.connect(store_path) as c:
        marker = c.execute("SELECT COUNT(*) FROM ended WHERE code = ?", (code,)).fetchone()[0]
        left = sum(c.execute(f"SELECT COUNT(*) FROM {t} WHERE code = ?", (code,)).fetchone()[0]
                   for t in ("rooms", "rounds", "answers", "seen"))
    return live == {} and marker == 1 and left == 0


def test_a_class_walks_three_steps_on_plain_streamlit_run_and_is_ended(streamlit_run):
    url, store = streamlit_run
    r = run_async(check(url, 20, 3, ramp=2.0, say=lambda _: None))
    assert r.url == url and r.joined == 20 and not r.refused, r.refused
    assert r.processes == {"one process": 20}                  # no HAProxy in front
    assert len(r.next_s) == 20 * 2 and len(r.reveal_s) == 20 * 3   # every phone, every move
    assert r.sent == r.saved == r.counted == 20 * 3, table(r)  # steps 1-3 each ask a question
    assert all(0 < kb <= 150 for kb in r.first_load), r.first_load
    assert r.ended and not r.problems, table(r)
    assert _gone(store, r.code)
    holds, line = verdict(r)
    # the only reason it may not hold here is time, which a test does not judge
    assert holds == (line == "verdict: holds 20 students") and (holds or "p95 is over" in line)


def test_phones_the_server_refuses_are_named_and_the_class_still_ends(streamlit_run):
    """The server's per-address limit on new students (45 in 10 minutes here) refuses some of
    a second class of 30 from the same address: said, with the setting to change; the class
    the check opened is ended all the same."""
    url, store = streamlit_run
    r = run_async(check(url, 30, 1, ramp=1.0, say=lambda _: None))
    if r.joined == 30:                  # this test alone: the first 30 fit, the next do not
        assert r.ended and _gone(store, r.code)
        r = run_async(check(url, 30, 1, ramp=1.0, say=lambda _: None))
    assert r.joined < 30 and "429" in r.refused[0], r.refused
    holds, line = verdict(r)
    assert not holds and "XATTN_LIMITS new_students" in line
    assert r.ended and _gone(store, r.code)


class NotXattn(http.server.BaseHTTPRequestHandler):
    """A server that says it is healthy as Streamlit does, and answers every page with a
    page that is not the phone's."""

    def do_GET(self):  # noqa: N802 - the http.server name
        body = b"ok" if self.path == "/_stcore/health" else b"<html>some other app</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Missing(NotXattn):
    def do_GET(self):  # noqa: N802
        self.send_error(404)


class Prefixed(NotXattn):
    """Streamlit's health at the root, and 404 under any path: a proxy that does not pass
    /xattn/ on to the app."""

    def do_GET(self):  # noqa: N802
        if self.path == "/_stcore/health":
            return super().do_GET()
        self.send_error(404)


class Endless(http.server.BaseHTTPRequestHandler):
    """An HTTP answer that never ends (a server that streams without end)."""

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.end_headers()
        chunk = b"x" * 65536
        try:
            while True:
                self.wfile.write(chunk)
        except OSError:
            pass

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def others():
    servers = {name: http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
               for name, handler in (("other", NotXattn), ("missing", Missing),
                                     ("prefixed", Prefixed), ("endless", Endless))}
    for s in servers.values():
        s.daemon_threads = True
        threading.Thread(target=s.serve_forever, daemon=True).start()
    silent = socket.create_server(("127.0.0.1", 0))       # takes connections, never speaks
    yield {**{name: f"http://127.0.0.1:{s.server_address[1]}/" for name, s in servers.items()},
           "silent": f"http://127.0.0.1:{silent.getsockname()[1]}/"}
    silent.close()
    for s in servers.values():
        s.shutdown()


@pytest.fixture(scope="module")
def redis_port(tmp_path_factory):
    """A real redis-server on a TCP port: the wrong service for a readiness check."""
    binary = redis_binary()
    if binary is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--dir", str(tmp_path_factory.mktemp("redis-port"))],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}/"
    proc.terminate()
    proc.wait(30)


def run_main(*args: str) -> int:
    # in a thread of its own: asyncio.run refuses a thread where a browser test's loop runs
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(main, list(args)).result()


def the_cause(err: str) -> str:
    """The one line that says why; the lines before it may only be progress lines."""
    lines = err.splitlines()
    assert lines and all(line.startswith("  ") for line in lines[:-1]), err
    assert lines[-1].startswith("xattn ready: ") and "Traceback" not in err, err
    return lines[-1]


@pytest.mark.parametrize("case, says", [
    ("word", "'foo' is not an address"),
    ("closed", "xattn ready: down: nothing listens on 127.0.0.1:"),
    ("nohost", "no-such-host.invalid: no such host"),
    ("missing", "wrong service: http://127.0.0.1:"),
    ("other", "wrong service: http://127.0.0.1:"),
    ("tls", "no TLS conversation on that port"),
    ("redis", "wrong service: 127.0.0.1:"),
    ("silent", "wrong service: 127.0.0.1:"),
    ("endless", "wrong service: http://127.0.0.1:"),
    ("prefixed", "xattn ready: prefix: http://127.0.0.1:"),
])
def test_a_check_that_cannot_run_says_why_in_one_line(others, redis_port, capsys, monkeypatch,
                                                      case, says):
    """Each cause in one line, in seconds, never a traceback: a port nobody listens on, a
    Redis, a port that takes the connection and says nothing, an answer without end (read
    no further than ready.MOST bytes), a proxy that does not pass the path prefix on."""
    monkeypatch.setattr(ready, "REQUEST_S", 2.0)       # the silent server's wait
    monkeypatch.setattr(ready, "REFUSED_S", 1.0)
    url = {"word": "foo", "closed": f"http://127.0.0.1:{free_port()}/",
           "nohost": "http://no-such-host.invalid/", "redis": redis_port,
           "prefixed": others["prefixed"] + "xattn/",
           "tls": others["other"].replace("http:", "https:")}.get(case) or others[case]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert run_main(url, "--wake", "5") == 2
    out, err = capsys.readouterr()
    assert out == "" and says in the_cause(err), err
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 50, f"{case}: the check grew by {grown_mb:.0f} MB"
    if case == "redis":
        assert "not HTTP (a Redis does that)" in err   # Redis closes on seeing "Host:"
    if case == "endless":
        assert f"more than {ready.MOST:,} bytes" in err
    if case == "silent":
        assert "said nothing for 2 s" in err
    if case == "missing":
        assert "not as a Streamlit app (/_stcore/health: HTTP 404)" in err
    if case == "other":
        assert "is a Streamlit app but not xattn" in err


def test_a_limit_reached_is_said_as_such(tmp_path, capsys):
    """A server that takes one new class per address an hour: the second check is refused,
    in one line that says the limit was reached."""
    env = {"XATTN_CLASS_STORE": str(tmp_path / "classes.sqlite3"), "XATTN_REDIS_URL": "",
           "XATTN_LIMITS": "join_work_bits=10,new_rooms=1/3600"}
    with StreamlitServer(env=env, log=ROOT / "test-artifacts" / "ready-limit-server.log") as srv:
        assert run_main(srv.url, "--students", "1", "--steps", "1") in (0, 1)
        capsys.readouterr()
        assert run_main(srv.url, "--students", "1", "--steps", "1") == 2
    out, err = capsys.readouterr()
    assert out == "" and the_cause(err).startswith(
        "xattn ready: limit reached: the lecturer's page could not open a class"), err


def test_the_command_runs_as_a_module():
    done = subprocess.run([sys.executable, "-m", "devtools.ready", "ftp://x"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == ["xattn ready: 'ftp://x' is not an address: write "
                                        "http://HOST:PORT/ or https://HOST/ (the app's own "
                                        "address)"]


def _report(**given) -> Report:
    r = Report("http://x/", 200, 3, code="HJK23M", joined=200, first_load=[16.6] * 200,
               next_s=[0.1] * 400, reveal_s=[0.2] * 600, sent=600, saved=600, counted=600,
               processes={"s1": 100, "s2": 100}, ended=True)
    for name, value in given.items():
        setattr(r, name, value)
    return r


@pytest.mark.parametrize("given, says", [
    ({}, None),
    ({"next_s": [0.1] * 370 + [0.9] * 30}, "Next → phone p95 is over 0.5 s: give it more "
                                           "processes"),
    ({"reveal_s": [1.2] * 600}, "Reveal → phone p95 is over 0.5 s"),
    ({"joined": 150, "refused": ["phone 3: the join answered HTTP 429: ..."] * 50},
     "50 of 200 phones could not join (the per-address limit on new students: XATTN_LIMITS"),
    ({"counted": 580}, "the lecturer's count showed 580 of 600 saved answers"),
    ({"saved": 590, "counted": 590}, "showed 590 of 590 saved answers (600 sent)"),
    ({"first_load": [300.0] * 200}, "dropping gzip"),
    ({"ended": False}, "the class HJK23M was not seen to end"),
    ({"problems": ["3 phones never showed step 2 within 60 s"]}, "1 problem(s), the first: 3 "
                                                                 "phones never showed step 2"),
])
def test_the_verdict_says_what_to_change(given, says):
    holds, line = verdict(_report(**given))
    assert holds == (says is None)
    assert line == "verdict: holds 200 students" if says is None else says in line, line


def test_a_class_beyond_200_has_the_target_of_1_000():
    """README's targets: p95 within 0.5 s for 200 phones, within 1 s for a hall of 1,000."""
    r = _report(students=1000, joined=1000, next_s=[0.8] * 2000, reveal_s=[0.8] * 3000)
    assert verdict(r) == (True, "verdict: holds 1000 students")
    assert "p95 ≤ 1 s" in table(r) and "p95 ≤ 0.5 s" in table(_report())
