"""The image (Dockerfile, deploy/entrypoint.sh, compose.yaml), tested without a Docker daemon.

These machines cannot run ``docker build``, so the test does the closest thing: it reads the
Dockerfile's promises (a slim Python 3.11+ base, the runtime requirements only, a user of its
own, port 8501, a health check, the entrypoint), lays out the build context as ``COPY . .``
would (what .dockerignore leaves), and runs the entrypoint from there as the container would:
with the Dockerfile's environment, as uid 1000 where the test runs as root, on the port given
in ``PORT``. Then the image's health check, a class of 20 protocol phones walked through three
steps by the readiness check (devtools/ready.py: ``deploy/serve.sh 2`` behind the entrypoint),
and ``docker stop``'s SIGTERM. Nothing here asserts on time.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import tomllib
from pathlib import Path

import pytest
import yaml

from devtools.browser import free_port
from devtools.lecture_hall import ROOT, LectureHall, haproxy_missing, haproxy_required
from devtools.protocol import run_async
from devtools.ready import check
from xattn.classroom import SQLiteStore

NEEDED = ("app.py", "requirements.txt", ".streamlit/config.toml", "deploy/serve.sh",
          "deploy/entrypoint.sh", "deploy/health.py", "xattn/ui/main.py",
          "xattn/server/assets/phone/main.js", "xattn/encdec/toy-en-fr/MODEL_CARD.md")
USER_ID = 1000          # a Space runs its container as uid 1000


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile as (INSTRUCTION, arguments): continuation lines joined, comments out."""
    out, pending = [], ""
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if not pending and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        name, _, args = (pending + line).strip().partition(" ")
        out.append((name.upper(), " ".join(args.split())))
        pending = ""
    return out


def only(name: str) -> str:
    found = [args for n, args in instructions() if n == name]
    assert len(found) == 1, f"{name}: {found}"
    return found[0]


def image_env() -> dict[str, str]:
    return dict(item.split("=", 1) for item in shlex.split(only("ENV")))


def requirements(path: Path) -> list[str]:
    """Every requirement ``path`` names, ``-r`` includes followed."""
    out = []
    for line in path.read_text().splitlines():
        line = line.split("#")[0].strip()
        if line.startswith("-r"):
            out += requirements(path.parent / line[2:].strip())
        elif line:
            out.append(line)
    return out


def test_the_image_is_a_slim_python_that_pyproject_allows_with_the_runtime_requirements_only():
    base = re.fullmatch(r"python:3\.(\d+)-slim(-\w+)?", only("FROM"))
    assert base, only("FROM")
    floor = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert int(base[1]) >= int(re.fullmatch(r">=3\.(\d+)", floor)[1]) >= 11
    pips = [args for name, args in instructions() if name == "RUN" and "pip " in args]
    assert pips == ["pip install --no-cache-dir -r requirements.txt"], pips
    names = [re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower()
             for r in requirements(ROOT / "requirements.txt")]
    assert "streamlit" in names and not {"torch", "transformers"} & set(names), names


def test_the_image_runs_as_a_user_of_its_own_who_owns_the_data_folder():
    assert only("USER") not in ("root", "0")
    runs = " && ".join(args for name, args in instructions() if name == "RUN")
    assert f"useradd --create-home --uid {USER_ID} {only('USER')}" in runs
    assert f"chown {only('USER')}:{only('USER')} {image_env()['XATTN_DATA']}" in runs
    assert json.loads(only("VOLUME")) == [image_env()["XATTN_DATA"]]


def test_the_image_listens_on_8501_checks_its_health_and_starts_the_entrypoint():
    assert image_env()["PORT"] == only("EXPOSE") == "8501"
    assert image_env()["XATTN_BIND"] == "0.0.0.0"
    health = only("HEALTHCHECK")
    assert health.startswith("--interval=") and " CMD " in health
    assert json.loads(health.split(" CMD ", 1)[1]) == ["python", "deploy/health.py"]
    assert json.loads(only("ENTRYPOINT")) == ["deploy/entrypoint.sh"]   # exec form: PID 1
    assert only("STOPSIGNAL") == "SIGTERM" and only("WORKDIR") == "/app"
    assert os.access(ROOT / "deploy" / "entrypoint.sh", os.X_OK)


def ignored(relative: str, patterns: list[str]) -> bool:
    """Whether .dockerignore's ``patterns`` leave ``relative`` (or a folder above it) out."""
    parts = relative.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    for pattern in patterns:
        anywhere = pattern.startswith("**/")
        for prefix in prefixes:
            tail = prefix.rsplit("/", 1)[-1] if anywhere else prefix
            if fnmatch.fnmatchcase(tail, pattern[3:] if anywhere else pattern):
                return True
    return False


def dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def test_the_build_context_holds_what_the_hall_needs_and_leaves_out_the_rest():
    patterns = dockerignore()
    assert not [path for path in NEEDED if ignored(path, patterns)]
    for path in (".git/HEAD", "tests/conftest.py", "node_modules/eslint/package.json",
                 "benchmarks/bench_room.py",
                 "xattn/__pycache__/cache.cpython-311.pyc", "docs/screenshot.png"):
        assert ignored(path, patterns), path


def test_compose_runs_two_app_containers_on_one_redis_with_persistence():
    compose = yaml.safe_load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    redis = services.pop("redis")
    assert "--appendonly" in redis["command"] and "yes" in redis["command"]
    volume = redis["volumes"][0].split(":")
    assert volume[1] == "/data" and volume[0] in compose["volumes"]
    assert sorted(services) == ["app1", "app2"]
    ports = set()
    for app in services.values():
        env = app["environment"]
        assert app["build"] == "." and env["XATTN_REDIS_URL"] == "redis://redis:6379/0"
        assert env["XATTN_SECRET"].startswith("${XATTN_SECRET:?")   # one secret for all
        assert "redis" in app["depends_on"] and app["init"] is True
        assert int(app["stop_grace_period"].rstrip("s")) > 15       # serve.sh's 15 s
        ports |= {p.split(":")[0] for p in app["ports"]}
        assert all(p.endswith(":8501") for p in app["ports"])
    assert len(ports) == 2


def test_the_spaces_front_matter_in_the_docs_runs_this_image_on_its_port():
    """docs/deploy.md's block for the top of a Space's README: a Docker Space whose app_port
    is the port the image listens on."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    block = re.search(r"```yaml\n\s*---\n(.*?)\n\s*---\n\s*```", text, flags=re.S)
    assert block, "docs/deploy.md gives no front matter for a Space"
    front = yaml.safe_load(textwrap.dedent(block[1]))
    assert front["sdk"] == "docker" and str(front["app_port"]) == only("EXPOSE")


@pytest.mark.parametrize("files, env, processes", [
    ({"cpu.max": "50000 100000"}, {}, lambda cpus: 1),                # half a core: one
    ({"cpu.max": "max 100000", "memory.max": "1300000000"}, {},
     lambda cpus: min(cpus, 2)),                                      # 1.3 GB: two at most
    ({"cpu.max": "max 100000", "memory.max": "500000000"}, {}, lambda cpus: 1),   # never none
    ({"cpu/cpu.cfs_quota_us": "50000", "cpu/cpu.cfs_period_us": "100000"}, {},
     lambda cpus: 1),                                                 # cgroup v1
    ({"memory/memory.limit_in_bytes": "9223372036854771712"}, {},
     lambda cpus: cpus),                                              # v1: no limit
    ({"cpu.max": "50000 100000"}, {"XATTN_PROCESSES": "3"}, lambda cpus: 3),   # as said
])
def test_the_entrypoint_runs_a_process_per_core_within_the_containers_memory(
        tmp_path, files, env, processes):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text + "\n")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("XATTN_", "PORT"))}
    plan = subprocess.run([ROOT / "deploy" / "entrypoint.sh", "--plan"], capture_output=True,
                          text=True, check=True,
                          env={**clean, "XATTN_CGROUP": str(tmp_path), **env}).stdout
    expected = processes(len(os.sched_getaffinity(0)))     # the CPUs it may run on: nproc
    assert plan == (f"processes {expected}; port 8501 on 0.0.0.0; store sqlite "
                    "/data/classes.sqlite3; phones open the lecturer's page's own address\n")


def test_the_entrypoint_refuses_a_bad_setting_in_one_line():
    for env, says in (({"XATTN_PROCESSES": "many"}, "XATTN_PROCESSES must be a whole number"),
                      ({"XATTN_DATA": "/proc/no"}, "cannot be written")):
        done = subprocess.run([ROOT / "deploy" / "entrypoint.sh"], capture_output=True,
                              text=True, env={**os.environ, "XATTN_REDIS_URL": "", **env})
        assert done.returncode in (1, 2) and done.stderr.count("\n") == 1, done.stderr
        assert says in done.stderr


# --- the image's hall, run as the container would ---------------------------------------------
def build_context(into: Path) -> Path:
    """``COPY . .``: the checkout as the image holds it (what .dockerignore leaves)."""
    patterns = dockerignore()

    def leave(folder, names):
        here = Path(folder).relative_to(ROOT)
        return [n for n in names if ignored((here / n).as_posix(), patterns)]
    shutil.copytree(ROOT, into, ignore=leave, symlinks=True)
    return into


def _as_image_user() -> tuple[list[str], str]:
    """How to run a command as the image's user (setpriv), or why it cannot be done here: a
    test run as another user, or a Python that user cannot read (e.g. under /root)."""
    if os.geteuid() != 0:
        return [], f"the tests run as uid {os.geteuid()}, who cannot become another user"
    switch = ["setpriv", f"--reuid={USER_ID}", f"--regid={USER_ID}", "--clear-groups"]
    # through bash, as serve.sh runs it: setpriv's own exec reached a venv's python that links
    # into /root (mode 0700) where a shell of that user then got "Permission denied"
    probe = subprocess.run([*switch, "bash", "-c", '"$0" -c "import streamlit"',
                            sys.executable], capture_output=True, text=True)
    if probe.returncode != 0:
        return [], (f"uid {USER_ID} cannot run this machine's Python ({sys.executable}: "
                    f"{(probe.stderr.strip().splitlines() or ['?'])[-1]})")
    return switch, ""


@pytest.fixture(scope="module")
def entrypoint():
    """The entrypoint of a copy of the build context, with the image's environment, as uid
    1000 where the tests run as root and that user can run this Python; yields (hall, the
    copy, the SQLite file, why it runs as another user, or "")."""
    reason = haproxy_missing()
    if reason:
        (pytest.fail if haproxy_required() else pytest.skip)(reason)
    top = Path(tempfile.mkdtemp(prefix="xattn-image-"))
    os.chmod(top, 0o755)                    # the image's user reads the app, as in /app
    app, data, home = build_context(top / "app"), top / "data", top / "home"
    for folder in (data, home):
        folder.mkdir()
    switch, why_not = _as_image_user()
    if switch:                              # as the image's user, who owns only its data
        for folder in (data, home):
            os.chown(folder, USER_ID, USER_ID)
    env = {**image_env(), "XATTN_DATA": str(data), "HOME": str(home), "XATTN_REDIS_URL": "",
           "XATTN_LIMITS": "join_work_bits=10,new_rooms=100/3600", "XATTN_CLASS_STORE": ""}
    env.pop("PORT")                         # the hall's own free port, given as PORT
    hall = LectureHall(processes=2, env=env,
                       command=[*switch, str(app / Path(json.loads(only("ENTRYPOINT"))[0]))])
    with hall:
        yield hall, app, data / "classes.sqlite3", why_not
    shutil.rmtree(top, ignore_errors=True)


def _uid(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("Uid:")).split()[1])


def test_the_entrypoint_runs_the_hall(entrypoint):
    hall, _, _, _ = entrypoint
    assert sorted(hall.backends) == ["s1", "s2"]
    assert "xattn: entrypoint: 2 processes" in hall.output()


def test_the_hall_runs_as_the_images_user(entrypoint):
    hall, _, _, why_not = entrypoint
    if why_not:
        pytest.skip(f"not run as uid {USER_ID}: {why_not}")
    assert {_uid(pid) for pid in hall.pids} == {USER_ID}


def test_the_images_health_check_says_healthy_and_unhealthy(entrypoint):
    hall, app, _, _ = entrypoint
    command = json.loads(only("HEALTHCHECK").split(" CMD ", 1)[1])
    for port, status in ((hall.port, 0), (free_port(), 1)):
        done = subprocess.run(command, cwd=app, capture_output=True, text=True, timeout=60,
                              env={**os.environ, "PORT": str(port)})
        assert done.returncode == status, done.stderr
        assert done.stderr.count("\n") == status and (status == 0 or "unhealthy" in done.stderr)


def test_a_class_walks_three_steps_through_the_images_hall(entrypoint):
    """The readiness check on ``deploy/serve.sh 2`` as the entrypoint starts it: HAProxy
    sends to both processes, 20 phones join, every answer is in the lecturer's count, the
    class ended. Which process each phone gets is HAProxy's leastconn: when the phones' pages
    all load before any of their streams opens (a loaded CI machine: each phone works out its
    join first), leastconn counts only the lecturer's connections, and the process without the
    lecturer's page can get every phone (CI saw 20 of 20 on one process twice)."""
    hall, _, store_path, _ = entrypoint
    hall.routed()       # HAProxy sends to both (a process it saw down while starting is up)
    r = run_async(check(hall.url, 20, 3, ramp=2.0, say=lambda _: None))
    assert r.joined == sum(r.processes.values()) == 20, r.processes
    assert set(r.processes) <= {"s1", "s2"}, r.processes
    assert len(r.next_s) == 40 and len(r.reveal_s) == 60 and r.sent == r.counted == 60
    assert r.ended and not r.problems, r.problems
    store = SQLiteStore(store_path)
    try:
        assert store.pulse([r.code]) == {}
    finally:
        store.close()


def test_docker_stops_it_with_sigterm_and_nothing_is_left(entrypoint):
    hall, _, _, _ = entrypoint
    assert hall.stop(signal.SIGTERM) == 143
    assert hall.leftovers() == []
