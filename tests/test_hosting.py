"""Hosting as written (issue 42, item 8): deploy/serve.sh and the entrypoint run the Python they
were started with, and the hall runs on a read-only root with only its data folder and a temp
folder writable, keeping its logs (bounded) after every exit.

The Python: a venv's python called by its path has no python3 of its own on PATH; serve.sh takes
``PYTHON``, else ``$VIRTUAL_ENV/bin/python``, else python3, and says in one line when the one it
took lacks the requirements. Shown with an empty venv (no streamlit): serve.sh must name it.

Skipped, with the reason printed, where HAProxy is missing (failed under XATTN_REQUIRE_HAPROXY).
Nothing here asserts on time.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from classroom_helpers import RedisServer, redis_or_skip

from devtools import ready as ready_module
from devtools.browser import ARTIFACTS, QUESTION_SHOWN_JS, StreamlitServer, free_port
from devtools.lecture_hall import (
    ROOT,
    SERVE,
    LectureHall,
    haproxy_missing,
    haproxy_path,
    haproxy_required,
)
from devtools.lecturer import Host
from devtools.protocol import run_async
from devtools.ready import check
from xattn.classroom import Question, SQLiteStore, new_student_id

_spec = importlib.util.spec_from_file_location("deploy_backup", ROOT / "deploy" / "backup.py")
backup_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(backup_module)
backup_main = backup_module.main


def need_haproxy() -> None:
    reason = haproxy_missing()
    if reason:
        (pytest.fail if haproxy_required() else pytest.skip)(reason)


@pytest.fixture(scope="module")
def empty_venv(tmp_path_factory) -> Path:
    """A venv with nothing installed (no pip either): its python lacks streamlit."""
    where = tmp_path_factory.mktemp("empty-venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    return where


def serve(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith("XATTN_") and k not in ("PYTHON", "VIRTUAL_ENV")}
    return subprocess.run(["bash", str(SERVE), *(args or ("1", "18199"))], capture_output=True,
                          text=True, env={**clean, **env}, timeout=120)


def test_serve_takes_the_active_venvs_python_over_python3_on_path(empty_venv):
    need_haproxy()
    run = serve({"VIRTUAL_ENV": str(empty_venv)})
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stderr == (f"serve.sh: {empty_venv}/bin/python has no streamlit: set PYTHON to "
                          "the Python that has the requirements (e.g. .venv/bin/python), or "
                          "activate its venv\n")
    assert "xattn: backend" not in run.stdout


def test_serve_takes_python_over_the_venv_and_says_when_it_cannot_run(empty_venv, tmp_path):
    need_haproxy()
    run = serve({"VIRTUAL_ENV": "/nowhere", "PYTHON": str(empty_venv / "bin" / "python")})
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith(f"serve.sh: {empty_venv}/bin/python has no streamlit")
    missing = tmp_path / "no-python"
    run = serve({"PYTHON": str(missing)})
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert run.stderr.startswith(f"serve.sh: {missing} cannot be run (status 127)")


def test_the_entrypoint_passes_its_python_on(empty_venv, tmp_path):
    """The entrypoint takes the same Python as serve.sh and says which in its first line."""
    need_haproxy()
    entry = SERVE.parent / "entrypoint.sh"
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("XATTN_", "PORT")) and k not in ("PYTHON", "VIRTUAL_ENV")}
    run = subprocess.run([str(entry)], capture_output=True, text=True, timeout=120,
                         env={**clean, "VIRTUAL_ENV": str(empty_venv), "PORT": "18198",
                              "XATTN_DATA": str(tmp_path), "XATTN_PROCESSES": "1"})
    assert run.returncode == 1, run.stdout + run.stderr
    assert run.stdout.splitlines()[0].endswith(f", python {empty_venv}/bin/python, logs "
                                               f"{tmp_path}/logs")
    assert f"serve.sh: {empty_venv}/bin/python has no streamlit" in run.stderr


# --- a read-only root ---------------------------------------------------------------------------
# The container's `docker run --read-only --tmpfs /tmp -v xattn-data:/data`, as far as a test can
# make it without Docker: a mount namespace of its own (unshare -m, as root) where the whole root
# is bound read-only but for a data folder (the volume) and a tmpfs given as TMPDIR (the /tmp
# tmpfs: the real /tmp is read-only here with the rest). HOME and the checkout are read-only.
READ_ONLY = """
set -e
mount --make-rprivate /
mount -t tmpfs -o size=256m,mode=1777 tmpfs "$XATTN_TEST_TMPFS"
mount --bind "$XATTN_DATA" "$XATTN_DATA"
mount -o remount,bind,ro /
exec "$@"
"""


def _read_only_missing() -> str:
    if os.geteuid() != 0:
        return f"a read-only root needs root (unshare -m), the tests run as uid {os.geteuid()}"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            "mount -t tmpfs tmpfs /mnt"], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -m cannot mount here: {probe.stderr.strip()[:200]}"
    return ""


@pytest.fixture(scope="module", params=["tmpfs", "no-temp-folder"])
def read_only_hall(request, tmp_path_factory):
    """The entrypoint in a read-only root: yields (hall, data folder). ``tmpfs``: TMPDIR is a
    tmpfs (the documented command). ``no-temp-folder``: no tmpfs, no writable temp folder at
    all (TMPDIR unset, /tmp read-only): the run directory is in the data folder
    (XATTN_RUN_DIR) and the toy model's weights are read into memory instead of a snapshot."""
    need_haproxy()
    reason = _read_only_missing()
    if reason:
        pytest.skip(reason)
    top = tmp_path_factory.mktemp("read-only")
    data, tmpfs, home = top / "data", top / "tmp", top / "home"
    for folder in (data, tmpfs, home):
        folder.mkdir()
    env = {"XATTN_DATA": str(data), "XATTN_TEST_TMPFS": str(tmpfs), "TMPDIR": str(tmpfs),
           "HOME": str(home), "XATTN_REDIS_URL": "", "XATTN_CLASS_STORE": "",
           "XATTN_LOG_DIR": "", "XATTN_WEIGHTS_CACHE": "", "XATTN_RUN_DIR": "",
           "XATTN_LIMITS": "join_work_bits=10,new_rooms=100/3600"}
    if request.param == "no-temp-folder":
        env.update(TMPDIR="", XATTN_RUN_DIR=str(data / "run"))
    hall = LectureHall(processes=1, env=env, command=[
        "unshare", "-m", "--propagation", "private", "bash", "-c", READ_ONLY, "read-only",
        str(ROOT / "deploy" / "entrypoint.sh")])
    with hall:
        yield hall, data


def test_a_class_runs_on_a_read_only_root(read_only_hall, request, monkeypatch):
    """A class begins (the toy model loads), phones answer, and it ends; the logs and the class
    store are in the data folder; nothing could be written elsewhere but the tmpfs. Without
    any temp folder the class runs too (the weights read into memory), though the server says
    it is not ready (its readiness wants the temp folder: the next test): the readiness check's
    question to /live/ready is left out there."""
    hall, data = read_only_hall
    if "no-temp-folder" in request.node.callspec.id:
        monkeypatch.setattr(ready_module, "store_ready", lambda base: asyncio.sleep(0))
    assert f"logs {data}/logs" in hall.lines[0], hall.output()
    r = run_async(check(hall.url, 5, 2, ramp=1.0, say=lambda _: None))
    assert r.joined == 5 and r.sent == r.counted == 10, (r, hall.output())
    assert r.ended and not r.problems, r.problems
    assert (data / "classes.sqlite3").exists()
    logs = {p.name: p.read_text(errors="replace") for p in (data / "logs").iterdir()}
    assert {"s1.log", "haproxy.log"} <= set(logs), logs
    assert "Read-only file system" not in logs["s1.log"], logs["s1.log"][-3000:]
    assert "/live/" in logs["haproxy.log"]


def test_the_health_check_says_ready_only_with_a_temp_folder(read_only_hall, request):
    """deploy/health.py (the image's HEALTHCHECK) is readiness: without any temp folder it
    says unhealthy, naming the temp folder, while liveness (--live) holds."""
    hall, _ = read_only_hall
    no_temp = "no-temp-folder" in request.node.callspec.id
    ready = health(hall.port)
    assert ready.returncode == (1 if no_temp else 0), ready.stderr
    if no_temp:
        assert ready.stderr.startswith("unhealthy: not ready: temp folder: none can be written")
        assert ready.stderr.count("\n") == 1, ready.stderr
    assert health(hall.port, "--live").returncode == 0


def test_a_read_only_hall_stops_and_keeps_its_logs(read_only_hall):
    hall, data = read_only_hall
    before = (data / "logs" / "haproxy.log").stat().st_size
    assert hall.stop(signal.SIGTERM) == 143, hall.output()
    assert hall.leftovers() == []
    assert (data / "logs" / "haproxy.log").stat().st_size >= before > 0


# --- logs kept and bounded ------------------------------------------------------------------------
def test_logs_are_kept_after_the_exit_appended_to_and_rotated_within_their_bound(tmp_path):
    """XATTN_LOG_DIR: the logs go there, a previous run's are appended to, a log past
    XATTN_LOG_MAX_KB is copied to .1 (older copies shifted, XATTN_LOG_KEEP kept) and emptied,
    and every log stays after the exit while the run directory goes."""
    need_haproxy()
    logs, tmp = tmp_path / "logs", tmp_path / "tmp"
    logs.mkdir()
    tmp.mkdir()
    (logs / "haproxy.log").write_text("a previous run's line\n")
    env = {"XATTN_LOG_DIR": str(logs), "XATTN_LOG_MAX_KB": "8", "XATTN_LOG_KEEP": "2",
           "TMPDIR": str(tmp)}
    with LectureHall(processes=1, env=env) as hall:
        assert hall.run_dir_used == logs, hall.output()
        assert (logs / "haproxy.log").read_text().startswith("a previous run's line\n")
        url = hall.url + "_stcore/health"

        def fill_until(name: str) -> None:
            for _ in range(20_000):          # a request logs about 150 bytes
                with urllib.request.urlopen(url, timeout=30) as answer:
                    answer.read()
                if (logs / name).exists():
                    return
            pytest.fail(f"{name} never appeared: {sorted(os.listdir(logs))}\n{hall.output()}")
        def read(name: str) -> str:         # "" while rotate_logs moves it
            try:
                return (logs / name).read_text()
            except FileNotFoundError:
                return ""
        fill_until("haproxy.log.1")
        assert "a previous run's line\n" in read("haproxy.log.1") + read("haproxy.log.2")
        fill_until("haproxy.log.2")
        for _ in range(3):                  # past the bound: the oldest copy is dropped
            before = read("haproxy.log.2")
            while read("haproxy.log.2") in (before, ""):
                with urllib.request.urlopen(url, timeout=30) as answer:
                    answer.read()
        # never a third copy (while rotate_logs moves .1 to .2, .1 may be missing)
        assert {p.name for p in logs.glob("haproxy.log*")} <= {
            "haproxy.log", "haproxy.log.1", "haproxy.log.2"}
        assert "\0" not in read("haproxy.log")   # appended, not at an old offset
        assert "a previous run's line" not in "".join(
            read(n) for n in ("haproxy.log", "haproxy.log.1", "haproxy.log.2"))
        assert hall.stop() == 143, hall.output()
    # a rotated copy kept (a stop while rotate_logs moves .1 to .2 leaves only .2: none lost)
    assert (logs / "s1.log").stat().st_size > 0 and any(
        (logs / f"haproxy.log.{k}").exists() for k in (1, 2))
    assert list(tmp.iterdir()) == []             # the run directory went; the logs stayed


def test_a_log_folder_that_cannot_be_written_is_refused_in_one_line(tmp_path):
    need_haproxy()
    run = serve({"XATTN_LOG_DIR": "/proc/no/logs", "PYTHON": sys.executable,
                 "TMPDIR": str(tmp_path)})
    assert run.returncode == 1 and run.stderr.count("\n") == 1, run.stderr
    assert "the log folder /proc/no/logs (XATTN_LOG_DIR) cannot be written" in run.stderr
    assert list(tmp_path.iterdir()) == []


# --- health = ready -------------------------------------------------------------------------------
def health(port: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "deploy" / "health.py"), *args],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PORT": str(port)})


def ready_now(url: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(url + "live/ready", timeout=30) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def until_ready_is(url: str, wanted: bool) -> dict:
    """/live/ready's answer once it says ``wanted`` (it reuses a result for a few seconds)."""
    for _ in range(600):
        status, said = ready_now(url)
        assert status == (200 if said["ready"] else 503), (status, said)
        if said["ready"] is wanted:
            return said
        time.sleep(0.1)
    pytest.fail(f"/live/ready never said ready={wanted}: {said}")


def test_ready_follows_the_store_and_liveness_does_not(tmp_path):
    """A process on Redis: ready; Redis killed: not ready, "store down" (the health check says
    so in one line) while liveness holds; Redis back: ready again."""
    redis_or_skip()
    (tmp_path / "redis").mkdir()
    with RedisServer(tmp_path / "redis") as redis_server, StreamlitServer(
            log=ARTIFACTS / "ready-route-server.log",
            env={"XATTN_REDIS_URL": redis_server.url, "XATTN_SECRET": "s" * 64,
                 "XATTN_READY_EVERY": "0.5"}) as server:
        assert until_ready_is(server.url, True) == {"ready": True, "causes": []}
        assert health(server.port).returncode == 0
        redis_server.kill()
        said = until_ready_is(server.url, False)
        assert len(said["causes"]) == 1 and said["causes"][0].startswith("store down: ")
        done = health(server.port)
        assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith("unhealthy: not ready: store down: ")
        assert health(server.port, "--live").returncode == 0
        done = subprocess.run([sys.executable, "-m", "devtools.ready", server.url, "--students",
                               "1", "--steps", "1"], cwd=ROOT, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
        assert done.stderr.splitlines()[-1].startswith("xattn ready: store down: "), done.stderr
        redis_server.start()
        until_ready_is(server.url, True)


# --- a path prefix --------------------------------------------------------------------------------
PREFIX_PROXY = """
global
    maxconn 200
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h
frontend site
    bind 127.0.0.1:{port}
    # the app lives at /xattn/; the site's root is something else (here: nothing)
    http-request deny deny_status 404 unless {{ path_beg /xattn/ }} || {{ path /xattn }}
    http-request replace-path ^/xattn/?(.*) /\\1
    default_backend app
backend app
    server app 127.0.0.1:{app}
"""


class PrefixProxy:
    """HAProxy serving the app under /xattn/ (the prefix taken off before the app sees the
    path; / and everything else 404), as a site's reverse proxy does."""

    def __init__(self, app_port: int, folder: Path):
        self.port = free_port()
        self.config = folder / "prefix-haproxy.cfg"
        self.config.write_text(PREFIX_PROXY.format(port=self.port, app=app_port))
        self.url = f"http://127.0.0.1:{self.port}/xattn/"

    def __enter__(self) -> PrefixProxy:
        self.proc = subprocess.Popen([haproxy_path(), "-db", "-f", str(self.config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(600):
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), 1):
                return self
            time.sleep(0.05)
        raise RuntimeError("the prefix proxy did not start")

    def __exit__(self, *exc) -> None:
        self.proc.terminate()
        self.proc.wait(30)


@pytest.fixture(scope="module")
def prefixed(tmp_path_factory):
    """One app behind the /xattn/ proxy, XATTN_PUBLIC_URL unset: the link is the page's own."""
    need_haproxy()
    folder = tmp_path_factory.mktemp("prefix")
    env = {"XATTN_CLASS_STORE": str(folder / "classes.sqlite3"), "XATTN_REDIS_URL": "",
           "XATTN_PUBLIC_URL": "", "XATTN_LIMITS": "join_work_bits=10,new_rooms=100/3600"}
    with StreamlitServer(env=env, log=ARTIFACTS / "prefix-server.log") as server, \
            PrefixProxy(server.port, folder) as proxy:
        yield proxy


def test_a_class_runs_behind_a_path_prefix_with_the_prefix_in_its_student_link(prefixed):
    """The lecturer's page at /xattn/ shows the student link (its QR code's) with the prefix
    and its slash; the readiness check opens that link and its relative requests, and 5 phones
    answer 2 steps through the proxy."""
    r = run_async(check(prefixed.url, 5, 2, ramp=1.0, say=lambda _: None))
    assert r.link == f"{prefixed.url}?room={r.code}", r.link
    assert r.joined == 5 and r.sent == r.counted == 10 and r.ended and not r.problems, r


def test_the_phone_page_opened_without_the_prefixs_slash_reaches_the_app(prefixed, window):
    """A phone that opens /xattn?room=CODE (the link as it was, or typed): the page moves to
    /xattn/?room=CODE before its first request, so its relative requests reach the app: it
    joins and shows the question, and no request of its got a 404."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def run(coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, loop).result(120)
    host = Host(prefixed.url, 60)
    try:
        run(host.open())
        tab = window(390, 800, phone=True)
        missing = []
        tab.page.on("response", lambda res: res.status == 404 and missing.append(res.url))
        tab.page.goto(prefixed.url.rstrip("/") + f"?room={host.code}")
        tab.page.wait_for_function(QUESTION_SHOWN_JS)
        assert tab.page.evaluate("location.pathname") == "/xattn/"
        assert not missing, missing
        assert run(host.end()) == 204
    finally:
        with contextlib.suppress(Exception):
            run(host.close())
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


def test_the_readiness_check_finds_a_student_link_without_the_prefix(tmp_path):
    """XATTN_PUBLIC_URL set to the site's root, not the app's /xattn/: phones would get 404.
    The readiness check says so in one line (prefix) and ends the class it opened."""
    need_haproxy()
    env = {"XATTN_CLASS_STORE": str(tmp_path / "classes.sqlite3"), "XATTN_REDIS_URL": "",
           "XATTN_LIMITS": "join_work_bits=10,new_rooms=100/3600"}
    proxy_port = free_port()
    with StreamlitServer(env={**env, "XATTN_PUBLIC_URL": f"http://127.0.0.1:{proxy_port}/"},
                         log=ARTIFACTS / "prefix-wrong-server.log") as server:
        proxy = PrefixProxy(server.port, tmp_path)
        proxy.port, proxy.url = proxy_port, f"http://127.0.0.1:{proxy_port}/xattn/"
        proxy.config.write_text(PREFIX_PROXY.format(port=proxy_port, app=server.port))
        with proxy:
            done = subprocess.run([sys.executable, "-m", "devtools.ready", proxy.url,
                                   "--students", "1", "--steps", "1"], cwd=ROOT,
                                  capture_output=True, text=True, timeout=180)
        store = SQLiteStore(tmp_path / "classes.sqlite3")
        try:
            codes = store.pulse([])
        finally:
            store.close()
    assert done.returncode == 2 and done.stdout == "", done.stdout + done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"xattn ready: prefix: the student link http://127.0.0.1:"
                           f"{proxy_port}/?room="), done.stderr
    assert codes == {}


# --- the VM recipe: systemd unit, Caddy, backups ---------------------------------------------------
BACKUP = ROOT / "deploy" / "backup.py"


def answered_store(path: Path, n: int):
    """A store (kept open: its WAL not folded in) with one room and ``n`` answers."""
    store = SQLiteStore(path)
    code, _ = store.create_room([Question("choice", ("up", "down"))])
    for _ in range(n):
        me = new_student_id()
        store.room_view(code, me)
        store.answer(code, 1, me, "down")
    return store, code


def answers_in(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM answers").fetchone()[0]
        except sqlite3.Error:
            return 0


def test_a_backup_keeps_every_answer_that_a_plain_copy_loses(tmp_path):
    store, _ = answered_store(tmp_path / "classes.sqlite3", 30)
    try:
        shutil.copy(tmp_path / "classes.sqlite3", tmp_path / "cp.sqlite3")
        done = subprocess.run([sys.executable, str(BACKUP), str(tmp_path / "backup.sqlite3"),
                               "--store", str(tmp_path / "classes.sqlite3")],
                              capture_output=True, text=True, timeout=120)
    finally:
        store.close()
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"backup: {tmp_path}/classes.sqlite3 -> "
                                  f"{tmp_path}/backup.sqlite3 (1 rooms, 30 answers, ")
    assert answers_in(tmp_path / "backup.sqlite3") == 30
    assert answers_in(tmp_path / "cp.sqlite3") < 30        # the answers were in the WAL


def test_backups_taken_while_a_class_writes_keep_what_was_saved_before_them(tmp_path):
    """A writer answers on without a pause; each backup (into a folder, 2 kept) holds every
    answer saved before it began, passes its integrity check, and the folder keeps 2."""
    path = tmp_path / "classes.sqlite3"
    store, code = answered_store(path, 1)
    saved, stop = [1], threading.Event()

    def write() -> None:
        while not stop.is_set():
            me = new_student_id()
            store.room_view(code, me)
            store.answer(code, 1, me, "up")
            saved[0] += 1
            time.sleep(0.005)              # a busy hall's pace: within a class's 2,000
    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    folder = tmp_path / "backups"
    folder.mkdir()
    try:
        for i in range(3):
            while saved[0] < 20 * (i + 1):
                time.sleep(0.01)
            before = saved[0]
            assert backup_main([str(folder), "--store", str(path), "--keep", "2"]) == 0
            newest = sorted(folder.glob("classes-*.sqlite3"))[-1]
            assert answers_in(newest) >= before
            time.sleep(1.1)                                 # the next backup's name differs
    finally:
        stop.set()
        writer.join(30)
        store.close()
    assert len(list(folder.glob("classes-*.sqlite3"))) == 2
    assert [p for p in folder.iterdir() if p.name.startswith(".")] == []


def test_a_backup_of_no_store_says_so_in_one_line(tmp_path, capsys):
    assert backup_main([str(tmp_path / "b.sqlite3"), "--store", str(tmp_path / "none")]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "no class store at" in err


def unit_for_here(data: Path, logs: Path) -> str:
    """deploy/xattn.service with this checkout, this Python and these folders for its own."""
    text = (ROOT / "deploy" / "xattn.service").read_text()
    return (text.replace("/opt/xattn/.venv/bin/python", sys.executable)
            .replace("/opt/xattn", str(ROOT)).replace("/var/lib/xattn", str(data))
            .replace("/var/log/xattn", str(logs)))


def unit_values(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in text.splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            out.setdefault(key, []).append(value)
    return out


def test_the_systemd_unit_is_valid_and_says_what_the_recipe_needs(tmp_path):
    text = unit_for_here(tmp_path / "data", tmp_path / "logs")
    unit = unit_values(text)
    env = dict(v.split("=", 1) for v in unit["Environment"])
    assert env["PYTHON"] == sys.executable and env["XATTN_BIND"] == "127.0.0.1"
    assert unit["ExecStart"] == [str(ROOT / "deploy" / "entrypoint.sh")]
    assert unit["SuccessExitStatus"] == ["143"] and unit["KillSignal"] == ["SIGTERM"]
    assert int(unit["TimeoutStopSec"][0]) > 15                      # serve.sh's 15 s
    assert unit["ProtectSystem"] == ["strict"] and unit["PrivateTmp"] == ["true"]
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed: the unit's syntax is not checked")
    (tmp_path / "xattn.service").write_text(text.replace("User=xattn", "User=root")
                                            .replace("Group=xattn", "Group=root"))
    done = subprocess.run(["systemd-analyze", "verify", str(tmp_path / "xattn.service")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.fixture(scope="module")
def unit_hall(tmp_path_factory):
    """The unit's ExecStart with its environment (this checkout's paths), as systemd runs it."""
    need_haproxy()
    top = tmp_path_factory.mktemp("unit")
    data, logs = top / "data", top / "logs"
    unit = unit_values(unit_for_here(data, logs))
    env = dict(v.split("=", 1) for v in unit["Environment"])
    env.update(XATTN_REDIS_URL="", XATTN_CLASS_STORE="", XATTN_RUN_DIR="",
               XATTN_LIMITS="join_work_bits=10,new_rooms=100/3600")
    env.pop("PORT")                      # the hall's own free port
    for folder in (data, logs):          # StateDirectory=, LogsDirectory=
        folder.mkdir()
    hall = LectureHall(processes=1, env=env, command=unit["ExecStart"])
    with hall:
        yield hall, data, logs


def test_the_unit_runs_a_class_behind_caddy_and_stops_cleanly(unit_hall, tmp_path):
    """Caddy with deploy/Caddyfile's site block (plain HTTP on a free port here: no public
    name for a certificate) in front of the unit's hall: a class of 3 phones walks 2 steps
    through it; the store and logs are in the unit's folders; SIGTERM ends it with 143, which
    the unit counts as success."""
    hall, data, logs = unit_hall
    caddy = shutil.which("caddy")
    if caddy is None:
        pytest.skip("caddy is not installed (apt-get install -y caddy)")
    port = free_port()
    text = (ROOT / "deploy" / "Caddyfile").read_text()
    site = text.replace("class.example.org {", f"http://127.0.0.1:{port} {{")
    site = site.replace("reverse_proxy 127.0.0.1:8501", f"reverse_proxy 127.0.0.1:{hall.port}")
    assert site != text
    config = tmp_path / "Caddyfile"
    config.write_text("{\n\tadmin off\n\tauto_https off\n}\n" + site)
    proc = subprocess.Popen([caddy, "run", "--config", str(config), "--adapter", "caddyfile"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, "HOME": str(tmp_path),
                                 "XDG_DATA_HOME": str(tmp_path)})
    try:
        for _ in range(600):
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.05)
        r = run_async(check(f"http://127.0.0.1:{port}/", 3, 2, ramp=1.0, say=lambda _: None))
    finally:
        proc.terminate()
        proc.wait(30)
    assert r.joined == 3 and r.sent == r.counted == 6 and r.ended and not r.problems, r
    assert (data / "classes.sqlite3").exists() and (logs / "s1.log").stat().st_size > 0
    assert hall.stop(signal.SIGTERM) == 143
    assert hall.leftovers() == []
