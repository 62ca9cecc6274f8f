"""Run ``deploy/serve.sh N PORT`` (N Streamlit processes behind HAProxy) from Python.

Used by tests/test_deploy.py, tests/test_reconnect_page.py, tests/test_browser_phones.py and the
benchmarks (load_test, bench_room).
``LectureHall`` starts the script on local ports that are free when it looks, reads the lines
it prints (``xattn: backend s1 pid 123 port 8702 ...``, ``xattn: ready ...``) to learn every
process id, and stops it with SIGTERM, the way an operator or systemd would, then checks that
every process it started is gone.

Ports: a port free when this module looks may be taken by another program (another test, a
server started at the same moment) before serve.sh binds it. serve.sh checks that each port
is free and, once a process answers, that the answer came from its own process; otherwise it
exits with status 3 (`PORT_IN_USE`) and `LectureHall.start` tries again on other ports.

Signals: serve.sh starts with SIGINT and SIGHUP at their defaults (``env
--default-signal=INT,HUP``), as a terminal's foreground job does, whatever this process
inherited: a shell started with a signal ignored cannot trap it, so Ctrl-C
(``stop(signal.SIGINT, group=True)``) would stop nothing, nor would SIGHUP under ``nohup``.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SERVE = ROOT / "deploy" / "serve.sh"
REQUIRE_ENV = "XATTN_REQUIRE_HAPROXY"
PORT_IN_USE = 3      # serve.sh's exit status when a port is held by another program

_BACKEND = re.compile(r"^xattn: backend (s\d+) pid (\d+) port (\d+) log (.+)/s\d+\.log$")
_HAPROXY = re.compile(r"^xattn: haproxy pid (\d+) port (\d+)")


def haproxy_path() -> str | None:
    """HAProxy as serve.sh finds it: $HAPROXY if set, else `haproxy` on PATH, else Debian's
    /usr/sbin/haproxy (a normal user's PATH lacks /usr/sbin)."""
    if os.environ.get("HAPROXY"):
        return shutil.which(os.environ["HAPROXY"])
    return shutil.which("haproxy") or shutil.which("/usr/sbin/haproxy")


def haproxy_missing() -> str | None:
    """Why the lecture-hall deployment cannot run here, or None when it can."""
    if haproxy_path() is None:
        return "HAProxy is not installed (`apt-get install -y haproxy` gives /usr/sbin/haproxy)"
    return None


def haproxy_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0", "false", "no")


def free_ports(count: int, tries: int = 200) -> int:
    """The first of ``count`` consecutive ports free on 127.0.0.1 when this looks: a
    candidate only, since they are released again (serve.sh checks them itself)."""
    for _ in range(tries):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            first = s.getsockname()[1]
        if first + count > 65535:
            continue
        socks = []
        try:
            for port in range(first, first + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return first
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError(f"no {count} consecutive free ports found")


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@dataclass
class LectureHall:
    """``deploy/serve.sh processes PORT`` on 127.0.0.1, PORT and the next ones free.

    Use as a context manager; ``url`` is the proxy's, ``backends`` maps each server name
    (``s1``, the value of its affinity cookie) to its (pid, port), ``run_dir_used`` is where
    serve.sh put its configuration and logs (removed on exit unless ``run_dir`` was given).
    A ``port`` given by the caller is used as it is: no retry on other ports. ``command``
    runs something that execs serve.sh instead (the image's entrypoint, given ``PORT`` and
    ``XATTN_PROCESSES`` in its environment, as a container is).
    """

    processes: int = 2
    affinity: bool = True
    run_dir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    port: int = 0
    attempts: int = 5    # starts on other ports after serve.sh found one in use
    command: list[str] | None = None
    backends: dict[str, tuple[int, int]] = field(default_factory=dict)
    haproxy_pid: int = 0
    run_dir_used: Path | None = None
    lines: list[str] = field(default_factory=list)
    proc: subprocess.Popen | None = None
    _reader: threading.Thread | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def pids(self) -> list[int]:
        return [pid for pid, _ in self.backends.values()] + [self.haproxy_pid]

    def start(self, timeout: float = 180.0) -> LectureHall:
        """Start serve.sh and wait for its "ready" line (on other ports after status 3)."""
        fixed = bool(self.port)
        for attempt in range(1, self.attempts + 1):
            if not fixed:
                self.port = free_ports(self.processes + 1)
            status = self._start_once(timeout)
            if status is None:
                return self
            if status != PORT_IN_USE or fixed or attempt == self.attempts:
                raise RuntimeError(f"deploy/serve.sh did not become ready (status {status}):\n"
                                   + self.output())
            self.lines.append(f"(harness: port in use, attempt {attempt}: trying other ports)")
        raise AssertionError("unreachable")   # the last attempt returns or raises

    def _start_once(self, timeout: float) -> int | None:
        """One start: None once ready, else serve.sh's exit status (it stopped everything)."""
        # PYTHON: this Python (a venv's, called by its path, is not python3 on PATH)
        env = {**os.environ, "PYTHON": sys.executable, "XATTN_BIND": "127.0.0.1",
               "XATTN_AFFINITY": "1" if self.affinity else "0", **self.env}
        if self.run_dir is not None:
            env["XATTN_RUN_DIR"] = str(self.run_dir)
        self.backends, self.haproxy_pid = {}, 0
        # SIGINT and SIGHUP at their defaults, as a terminal's foreground job has them: a shell
        # that inherits one ignored (pytest as a background job, or under nohup) cannot trap it
        command = ["env", "--default-signal=INT,HUP", "bash", str(SERVE), str(self.processes),
                   str(self.port)]
        if self.command:
            env = {"XATTN_PROCESSES": str(self.processes), **env, "PORT": str(self.port)}
            command = ["env", "--default-signal=INT,HUP", *self.command]
        self.proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     text=True, start_new_session=True)
        ready = threading.Event()
        self._reader = threading.Thread(target=self._read, args=(self.proc, ready), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout
        while not ready.wait(0.2):
            if self.proc.poll() is not None:
                self._join_reader()
                return self.proc.returncode
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"deploy/serve.sh was not ready within {timeout:.0f} s:\n"
                                   + self.output())
        return None

    def _read(self, proc: subprocess.Popen, ready: threading.Event) -> None:
        for line in proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if m := _BACKEND.match(line):
                self.backends[m[1]] = (int(m[2]), int(m[3]))
                self.run_dir_used = Path(m[4])
            elif m := _HAPROXY.match(line):
                self.haproxy_pid = int(m[1])
            elif line.startswith("xattn: ready "):
                ready.set()

    def _join_reader(self, timeout: float = 30.0) -> None:
        """Wait until every line serve.sh printed is in ``lines`` (its stdout has closed)."""
        if self._reader is not None:
            self._reader.join(timeout)
            if self._reader.is_alive():
                raise RuntimeError(f"serve.sh's output did not end within {timeout} s after "
                                   "it exited (a child holds its stdout)")

    def output(self) -> str:
        return "\n".join(self.lines)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 40.0, *,
             group: bool = False) -> int | None:
        """Signal serve.sh (``group``: its whole process group, as Ctrl-C in a terminal does)
        and wait for it and for the last line it printed; return its exit status (None if it
        was never started)."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            if group:
                os.killpg(self.proc.pid, sig)   # its own session: the group is serve.sh's
            else:
                self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()   # the test then fails on the processes left behind
                self.proc.wait(timeout=10)
        self._join_reader()
        return self.proc.returncode

    def routed(self, timeout: float = 120.0) -> None:
        """Wait until HAProxy sends a request to each process its cookie names (a process
        restarted after a kill is up again)."""
        import urllib.request

        deadline = time.monotonic() + timeout
        for name in self.backends:
            request = urllib.request.Request(self.url + "_stcore/health",
                                             headers={"Cookie": f"XATTN_SERVER={name}"})
            while True:
                try:
                    with urllib.request.urlopen(request, timeout=10) as r:
                        if r.headers.get("X-Xattn-Server") == name:
                            break
                except OSError:
                    pass
                assert time.monotonic() < deadline, f"HAProxy never sent a request to {name}"
                time.sleep(0.5)                     # poll interval of a bounded loop

    def leftovers(self, within: float = 20.0) -> list[int]:
        """Processes serve.sh started that are still alive after ``within`` seconds."""
        deadline = time.monotonic() + within
        while True:
            left = [pid for pid in self.pids if pid and alive(pid)]
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(0.2)

    def __enter__(self) -> LectureHall:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.stop()
        for pid in self.leftovers(within=5.0):   # never leave a server behind a failed test
            os.kill(pid, signal.SIGKILL)
