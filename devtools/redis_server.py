"""A redis-server of one's own, on a unix socket: for the class store's tests and benchmarks.

Debian's ``redis-server`` with no TCP port; no persistence, or with ``persist=True`` an
append-only file, so that `RedisServer.kill` (SIGKILL) and `RedisServer.start` are a crash and
a restart that keep what was written. ``tests/classroom_helpers.py`` and
``benchmarks/bench_room.py`` use it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

__all__ = ["RedisServer", "redis_binary"]


def redis_binary() -> str | None:
    """``redis-server`` on PATH, or Debian's /usr/bin/redis-server (a normal user's PATH may
    lack it); None where neither is there."""
    return shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK) else None)


class RedisServer:
    """redis-server on a unix socket in ``directory``, started at once; ``url`` reaches it.

    Parameters
    ----------
    directory : Path
        Where its socket, log and (``persist``) append-only file go.
    persist : bool
        Keep an append-only file, written on every command (a crash loses nothing).
    timeout : float
        Seconds for the server to answer PING after a start.
    """

    def __init__(self, directory: Path, *, persist: bool = False, timeout: float = 60.0):
        self.directory, self.persist, self.timeout = Path(directory), persist, timeout
        self.socket = self.directory / "redis.sock"
        self.log = self.directory / "redis.log"
        self.url = f"unix://{self.socket}"
        self.start()

    def __repr__(self) -> str:
        return f"RedisServer({self.url!r}, pid {self.proc.pid})"

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self) -> None:
        import redis

        binary = redis_binary()
        if binary is None:
            raise RuntimeError("redis-server is not installed (Debian: apt-get install "
                               "redis-server)")
        persistence = (["--appendonly", "yes", "--appendfsync", "always", "--save", ""]
                       if self.persist else ["--save", "", "--appendonly", "no"])
        self.proc = subprocess.Popen(
            [binary, "--port", "0", "--unixsocket", str(self.socket), "--unixsocketperm", "700",
             *persistence, "--dir", str(self.directory), "--logfile", str(self.log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        client = redis.Redis(unix_socket_path=str(self.socket))
        deadline = time.monotonic() + self.timeout
        try:
            while True:
                if self.proc.poll() is not None:
                    raise RuntimeError(f"redis-server exited ({self.proc.returncode}): "
                                       f"{self.log.read_text() if self.log.exists() else ''}")
                try:
                    if client.ping():
                        return
                except (redis.ConnectionError, redis.ResponseError):   # LOADING: its file
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not answer PING in {self.timeout} s")
                time.sleep(0.05)
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is flushed beyond what was already written."""
        self.proc.kill()
        self.proc.wait(30)

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)

    def __enter__(self) -> RedisServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
