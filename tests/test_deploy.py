"""deploy/serve.sh: N Streamlit processes behind HAProxy with cookie affinity.

The end-to-end test starts 2 processes behind HAProxy on free ports, opens two sessions in
headless Chromium (separate browser contexts, so separate cookie jars), checks that each got
the per-head heatmaps and its CSV download through the proxy, that the two were held by
different processes, that a download URL is served only with its own session's cookie, that
the page's longest link passes the proxy, that a crashed process is restarted, and that
SIGTERM stops every process serve.sh started. Other tests send SIGINT and SIGTERM to the whole
process group (Ctrl-C in a terminal), SIGHUP after a start whose first ports were taken, stop
a hall whose processes crash too often, and check that every exit removes the run directory.

Skipped, with the reason printed, where HAProxy is missing; failed instead when
XATTN_REQUIRE_HAPROXY=1 (CI installs haproxy and sets it). The browser part follows the
browser tests' rule (XATTN_REQUIRE_BROWSER) and shares their Chromium (conftest). Nothing here
asserts on time.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from devtools import lecture_hall
from devtools.browser import ARTIFACTS, HEADS_DRAWN_JS, NOTICES, RUN_COUNTER_JS, wait_for_app
from devtools.lecture_hall import (
    PORT_IN_USE,
    REQUIRE_ENV,
    ROOT,
    SERVE,
    LectureHall,
    alive,
    haproxy_missing,
    haproxy_path,
    haproxy_required,
)

CSV_HEADER = "head,tgt_pos,tgt_token,src_pos,src_token,weight"
FOUR_HEADS_DRAWN = ("traces && traces.filter((t) => t.type === 'heatmap').length === 4 && "
                    f"{HEADS_DRAWN_JS} === 4")


def no_haproxy(reason: str):
    if haproxy_required():
        pytest.fail(f"{REQUIRE_ENV} is set but the deployment tests cannot run: {reason}",
                    pytrace=False)
    pytest.skip(f"deployment tests skipped: {reason}")


def config(n: int, port: int, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("XATTN_")}
    return subprocess.run(["bash", str(SERVE), "--config", str(n), str(port)], env={**clean, **env},
                          capture_output=True, text=True, check=True).stdout


# --- the configuration -------------------------------------------------------------------------

def test_haproxy_is_available():
    """Fails in CI (XATTN_REQUIRE_HAPROXY=1) and skips elsewhere when HAProxy is missing."""
    reason = haproxy_missing()
    if reason:
        no_haproxy(reason)


def test_config_has_cookie_affinity_websockets_health_checks_and_bounds():
    """A hall of 1,000 phones (one stream each, plus requests) fits HAProxy's bounds."""
    cfg = config(3, 9000)
    for line in ("mode http", "timeout tunnel 2h", "balance leastconn",
                 'cookie XATTN_SERVER insert indirect nocache httponly attr "SameSite=Lax"',
                 "http-check send meth GET uri /_stcore/health", "http-check expect string ok",
                 "bind 127.0.0.1:9000", "maxconn 6000", "maxconn 3000", "option redispatch",
                 "tcp-request connection reject if { sc0_conn_cur gt 5000 }",
                 "!class_cookie { sc2_conn_cur gt 2500 }",
                 "{ sc1_conn_cur gt 200 }", "{ sc1_http_req_rate gt 200 }",
                 "backend per_address_ws",
                 "server s1 127.0.0.1:9001 cookie s1", "server s3 127.0.0.1:9003 cookie s3"):
        assert line in cfg, line
    assert "balance source" not in cfg and "s4" not in cfg


def test_config_logs_the_path_of_each_request_not_its_query():
    """A lecturer's link carries the host key in its query and an upload's URL the browser's
    session id: HAProxy logs httplog's fields with the path alone, the session id masked
    (tests/test_hall_logs.py reads a real run's logs)."""
    cfg = config(2, 9000)
    assert "\n    option httplog\n" not in cfg
    assert "%{+Q}r" not in cfg and "%HU" not in cfg and "%HQ" not in cfg   # URI, query
    log_format = [line for line in cfg.splitlines() if line.strip().startswith("log-format")]
    assert len(log_format) == 1, log_format
    assert log_format[0].endswith('\\"%HM %[var(txn.logged_path)] %HV\\""'), log_format
    assert ("http-request set-var(txn.logged_path) path,regsub(/_stcore/upload_file/[^/]*,"
            "/_stcore/upload_file/-)") in cfg


def test_haproxy_listens_on_this_machine_only_unless_told_otherwise():
    assert "\n    bind 127.0.0.1:9000\n" in config(2, 9000)
    assert "\n    bind 0.0.0.0:9000\n" in config(2, 9000, XATTN_BIND="0.0.0.0")
    assert "\n    bind 127.0.0.1:8501\n" in (ROOT / "deploy" / "haproxy.cfg").read_text()


def longest_link() -> str:
    """The query of the page's longest link: two sentences of 2,000 characters of 4 bytes in
    UTF-8 (12 percent-encoded), 64 words each, and 63 of the 64 source tokens masked."""
    word = "\U0001d41a" * 30                                     # MATHEMATICAL BOLD SMALL A
    sentence = " ".join([word] * 63 + ["\U0001d41a" * (2000 - 63 - 30 * 63)])
    assert len(sentence) == 2000 and len(sentence.split()) == 64
    return urllib.parse.urlencode({"src": sentence, "tgt": sentence, "mask": "padding",
                                   "pad": [f"{i}: {word}" for i in range(63)]}, doseq=True)


def test_haproxy_buffer_holds_the_longest_link():
    """HAProxy answers 400 when a request's line and headers do not fit in one buffer."""
    cfg = config(2, 9000)
    assert "    tune.bufsize 98304\n" in cfg
    request = len(f"GET /?{longest_link()} HTTP/1.1\r\n") + 2048   # headers, cookies
    assert 65_000 < request < 98304 - 1024          # tune.maxrewrite keeps 1024 bytes back


def test_affinity_switch_removes_the_cookie_only():
    cfg = config(2, 9000, XATTN_AFFINITY="0")
    assert not [line for line in cfg.splitlines() if line.strip().startswith("cookie")]
    assert "cookie s1" not in cfg and "balance roundrobin" in cfg
    assert "server s2 127.0.0.1:9002\n" in cfg
    assert "timeout tunnel 2h" in cfg and "http-check expect string ok" in cfg


def test_shipped_config_is_what_the_script_generates():
    """deploy/haproxy.cfg, for people who run HAProxy themselves, stays in step with serve.sh."""
    assert (ROOT / "deploy" / "haproxy.cfg").read_text() == config(4, 8501)


@pytest.mark.parametrize("affinity", ["1", "0"])
def test_haproxy_accepts_the_config(affinity, tmp_path):
    if haproxy_missing():
        no_haproxy(haproxy_missing())
    path = tmp_path / "haproxy.cfg"
    path.write_text(config(2, 9000, XATTN_AFFINITY=affinity))
    check = subprocess.run([haproxy_path(), "-c", "-f", str(path)], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_bad_arguments_are_refused():
    for args in ([], ["0"], ["two"], ["2", "x"], ["2", "8501", "extra"]):
        run = subprocess.run(["bash", str(SERVE), *args], capture_output=True, text=True)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "serve.sh N [PORT]" in run.stderr


def run_dirs(tmp: Path) -> list[Path]:
    return sorted(tmp.glob("xattn-serve.*"))


@pytest.mark.parametrize("taken", ["proxy", "backend"])
def test_a_port_in_use_stops_the_start_with_status_3_and_no_run_directory(taken, tmp_path):
    """Nothing starts on a port another program holds: serve.sh names it, exits 3 (the
    harness then tries other ports) and removes its temporary directory."""
    if haproxy_missing():
        no_haproxy(haproxy_missing())
    clean = {k: v for k, v in os.environ.items() if not k.startswith("XATTN_")}
    with socket.socket() as holder, socket.socket() as other:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        held = holder.getsockname()[1]
        other.bind(("127.0.0.1", 0))
        port = held if taken == "proxy" else other.getsockname()[1]
        other.close()   # free for the proxy; the Streamlit port is the held one
        env = {**clean, "TMPDIR": str(tmp_path)}
        if taken == "backend":
            env["XATTN_BACKEND_PORT"] = str(held)
        run = subprocess.run(["bash", str(SERVE), "1", str(port)], capture_output=True,
                             text=True, env=env, timeout=120)
    assert run.returncode == PORT_IN_USE, run.stdout + run.stderr
    assert f"port {held} on 127.0.0.1 is in use" in run.stderr, run.stderr
    assert "xattn: backend" not in run.stdout, run.stdout   # nothing was started
    assert run_dirs(tmp_path) == []


def test_a_shell_that_cannot_trap_sigint_says_so(tmp_path):
    """Started with SIGINT ignored (a background job of a script), bash cannot trap it:
    serve.sh says that Ctrl-C will not stop it (and then, here, finds its port in use)."""
    if haproxy_missing():
        no_haproxy(haproxy_missing())
    clean = {k: v for k, v in os.environ.items() if not k.startswith("XATTN_")}
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        for ignored, said in ((True, True), (False, False)):
            start = (["bash", "-c", f'trap "" INT; exec bash "{SERVE}" 1 {port}'] if ignored
                     else ["env", "--default-signal=INT", "bash", str(SERVE), "1", str(port)])
            run = subprocess.run(start, capture_output=True, text=True,
                                 env={**clean, "TMPDIR": str(tmp_path)}, timeout=120)
            assert run.returncode == PORT_IN_USE, run.stdout + run.stderr
            assert ("Ctrl-C will not stop it, SIGTERM will" in run.stdout) is said, run.stdout


# --- end to end --------------------------------------------------------------------------------

@pytest.fixture
def haproxy():
    """Skip (or fail, where required) before anything starts when HAProxy is missing."""
    if haproxy_missing():
        no_haproxy(haproxy_missing())


def open_session(browser, url: str):
    """A new browser context (its own cookies), the app loaded and four heatmaps drawn."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.add_init_script(RUN_COUNTER_JS)
    page.goto(url)
    wait_for_app(page, FOUR_HEADS_DRAWN, timeout=90_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    return context, page, cookies["XATTN_SERVER"]


def download_csv(page) -> tuple[str, str]:
    """Click "Download the weights as CSV": the URL the browser fetched and the file's text."""
    with page.expect_download() as info:
        page.locator(".st-key-dl_csv").get_by_role("button",
                                                    name="Download the weights as CSV").click()
    download = info.value
    assert download.failure() is None, download.failure()
    return download.url, open(download.path(), encoding="utf-8").read()


def fetch(url: str, cookie: str) -> tuple[int, str | None]:
    """GET through the proxy with one affinity cookie: status and the serving process."""
    request = urllib.request.Request(url, headers={"Cookie": f"XATTN_SERVER={cookie}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.headers.get("X-Xattn-Server")
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("X-Xattn-Server")


def wait_until(condition, what: str, hall: LectureHall, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}, not within {timeout} s:\n{hall.output()}"
        time.sleep(0.2)   # poll interval of a bounded loop


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.read() == b"ok"
    except OSError:
        return False


def test_two_sessions_on_two_processes_through_the_proxy_then_sigterm_stops_all(
        haproxy, chromium):
    with LectureHall(processes=2, run_dir=ARTIFACTS / "lecture-hall") as hall:
        assert sorted(hall.backends) == ["s1", "s2"], hall.output()
        started = list(hall.pids)

        ctx_a, page_a, server_a = open_session(chromium, hall.url + "?seed=7")   # A's own numbers
        url_a, csv_a = download_csv(page_a)
        ctx_b, page_b, server_b = open_session(chromium, hall.url)

        # cookie affinity: the second student was given the other process
        assert {server_a, server_b} == {"s1", "s2"}, (server_a, server_b)
        assert url_a.startswith(hall.url + "media/") and url_a.endswith(".csv"), url_a
        assert csv_a.splitlines()[0] == CSV_HEADER
        assert len(csv_a.splitlines()) == 1 + 4 * 8 * 7   # heads x target x source tokens
        # the file lives in the process that holds session A, and only there (so far)
        assert fetch(url_a, server_a) == (200, server_a)
        assert fetch(url_a, server_b) == (404, server_b)

        url_b, csv_b = download_csv(page_b)
        assert csv_b.splitlines()[0] == CSV_HEADER and csv_b != csv_a   # B's numbers: seed 0
        assert fetch(url_b, server_b) == (200, server_b)
        ctx_a.close()
        ctx_b.close()

        # the page's longest link passes the proxy (HAProxy's default buffer answers 400)
        long_url = f"{hall.url}?{longest_link()}"
        assert fetch(long_url, server_a) == (200, server_a)
        ctx_c = chromium.new_context(viewport={"width": 1400, "height": 1100})
        page_c = ctx_c.new_page()
        page_c.add_init_script(RUN_COUNTER_JS)
        page_c.goto(long_url)
        wait_for_app(page_c, HEADS_DRAWN_JS + " >= 1", timeout=90_000)   # heads in pages
        source = page_c.locator(".st-key-src input").input_value()
        assert len(source) == 2000 and source.split()[0] == "\U0001d41a" * 30
        assert page_c.locator(NOTICES).count() == 0     # nothing refused, nothing cut
        kept = urllib.parse.parse_qs(urllib.parse.urlsplit(page_c.url).query)
        assert len(kept["pad"]) == 63 and kept["src"] == [source]   # the page kept the link
        ctx_c.close()

        # a crashed process is restarted on its port; HAProxy sends students there again
        os.kill(hall.backends["s1"][0], signal.SIGKILL)
        wait_until(lambda: hall.backends["s1"][0] not in started, "s1 restarted", hall)
        assert "xattn: backend s1 exited with status 137: restarting it (restart 1)" in hall.lines
        wait_until(lambda: healthy(hall.backends["s1"][1]), "restarted s1 healthy", hall)

        status = hall.stop(signal.SIGTERM)
        assert status == 128 + signal.SIGTERM, hall.output()
        assert hall.leftovers() == [], f"left running after SIGTERM:\n{hall.output()}"
        assert not any(alive(pid) for pid in started)
        assert hall.lines[-1] == "xattn: stopped", hall.output()


@pytest.fixture
def sigint_ignored():
    """This process ignores SIGINT, so its children start with it ignored, as under a CI
    runner that starts the tests as a background job (the harness restores it for serve.sh,
    as a terminal does for its foreground job)."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize(("sig", "inherited"), [(signal.SIGINT, "default"),
                                                (signal.SIGINT, "ignored"),
                                                (signal.SIGTERM, "default")],
                         ids=["SIGINT", "SIGINT-ignored-by-the-runner", "SIGTERM"])
def test_ctrl_c_stops_everything(haproxy, sig, inherited, tmp_path, request):
    """Ctrl-C in a terminal signals the whole foreground process group, serve.sh and its
    children at once: everything must still stop, serve.sh say so and exit 128 + the signal
    (whichever process it sees end first), and its temporary run directory go."""
    if inherited == "ignored":
        request.getfixturevalue("sigint_ignored")
    with LectureHall(processes=1, env={"TMPDIR": str(tmp_path)}) as hall:
        started = list(hall.pids)
        assert run_dirs(tmp_path) == [hall.run_dir_used], hall.output()
        status = hall.stop(sig, group=True)
        assert status == 128 + sig, hall.output()
        assert hall.leftovers() == [], f"left running after {sig.name}:\n{hall.output()}"
        assert not any(alive(pid) for pid in started)
        assert hall.lines[-1] == "xattn: stopped", hall.output()
        assert run_dirs(tmp_path) == [], hall.output()


def test_a_taken_port_is_retried_on_others_and_sighup_stops_everything(haproxy, tmp_path,
                                                                          monkeypatch):
    """The harness's first ports are held by another program (as when another test took
    them after they were found free): serve.sh refuses them, the harness starts again on
    others; SIGHUP (the terminal closed) then stops everything."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        held = holder.getsockname()[1]
        chosen = iter([held])
        found = lecture_hall.free_ports
        monkeypatch.setattr(lecture_hall, "free_ports",
                            lambda count: next(chosen, None) or found(count))
        with LectureHall(processes=1, env={"TMPDIR": str(tmp_path)}) as hall:
            assert hall.port != held
            assert f"serve.sh: port {held} on 127.0.0.1 is in use" in hall.output()
            started = list(hall.pids)
            status = hall.stop(signal.SIGHUP)
            assert status == 128 + signal.SIGHUP, hall.output()
            assert hall.leftovers() == [], f"left running after SIGHUP:\n{hall.output()}"
            assert not any(alive(pid) for pid in started)
            assert run_dirs(tmp_path) == [], hall.output()


def ps_of(hall: LectureHall) -> str:
    """serve.sh's process tree, for a failure message."""
    return subprocess.run(["ps", "-o", "pid,ppid,pgid,stat,wchan:20,args", "--ppid",
                           str(hall.proc.pid), "-p", str(hall.proc.pid)],
                          capture_output=True, text=True).stdout


def test_a_process_that_keeps_crashing_stops_the_hall_with_its_log(haproxy, tmp_path):
    """Past XATTN_MAX_RESTARTS serve.sh stops everything, exits 1, prints the last lines of
    each log (its run directory is removed) and leaves nothing behind."""
    with LectureHall(processes=1, env={"TMPDIR": str(tmp_path),
                                       "XATTN_MAX_RESTARTS": "0"}) as hall:
        started = list(hall.pids)
        os.kill(hall.backends["s1"][0], signal.SIGKILL)
        try:
            hall.proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            pytest.fail(f"serve.sh still runs 180 s after its process crashed:\n"
                        f"{hall.output()}\n{ps_of(hall)}")
        assert hall.stop() == 1, hall.output()
        assert "xattn: backend s1 exited with status 137 after 0 restarts: stopping" in hall.lines
        assert "serve.sh: the last lines of s1.log:" in hall.lines, hall.output()
        assert hall.leftovers() == [], f"left running:\n{hall.output()}"
        assert not any(alive(pid) for pid in started)
        assert run_dirs(tmp_path) == [], hall.output()


def test_a_hall_that_starts_its_own_redis_keeps_its_classes_across_a_redis_restart(
        haproxy, tmp_path):
    """XATTN_START_REDIS: serve.sh starts a redis-server with an append-only file, gives it to
    every process, and stops it last. A Redis killed and started again on that file still
    holds the class."""
    import redis as redis_py

    from devtools.redis_server import redis_binary
    from xattn.classroom import Question, RedisStore
    if redis_binary() is None:
        pytest.skip("redis-server is not installed")
    folder = tmp_path / "redis"
    with LectureHall(processes=1, env={"XATTN_START_REDIS": str(folder),
                                       "XATTN_CLASS_STORE": ""}) as hall:
        pid = int(next(line.split()[3] for line in hall.lines
                       if line.startswith("xattn: redis pid")))
        url = f"unix://{folder / 'redis.sock'}"
        store = RedisStore(url)
        code, secret = store.create_room([Question("choice", ("up", "down"))])
        store.answer(code, 1, "student-0001", "down")
        assert fetch(f"{hall.url}?room={code}", "s1")[0] == 200   # the processes use it
        config = redis_py.Redis(unix_socket_path=str(folder / "redis.sock"))
        assert config.config_get("appendonly") == {"appendonly": "yes"}
        time.sleep(1.5)                                   # everysec: the file has it
        os.kill(pid, signal.SIGKILL)                      # a crash ...
        wait_until(lambda: "xattn: redis exited with status 137: restarting it on its file "
                           "(restart 1)" in hall.lines, "redis-server restarted", hall)
        wait_until(lambda: _pings(folder / "redis.sock"), "redis-server back", hall)
        assert store.check_host(code, secret) == code      # ... that lost nothing
        assert store.room_view(code).counts == {"up": 0, "down": 1}
        again = int(next(line.split()[3] for line in reversed(hall.lines)
                         if line.startswith("xattn: redis pid")))
    assert not alive(pid) and not alive(again)            # stopped with the hall


def _pings(socket_path) -> bool:
    import redis as redis_py
    try:
        return bool(redis_py.Redis(unix_socket_path=str(socket_path)).ping())
    except (redis_py.ConnectionError, redis_py.ResponseError):
        return False
