"""What a server process costs, read from /proc (Linux), and percentiles of timings: the
measures the load benchmarks (``load_test``, ``cpu_per_click``, ``bench_room``, ...) share."""

from __future__ import annotations

import contextlib
import os
import statistics
import threading
import time

from devtools.protocol import rss_mb

__all__ = ["MemorySampler", "cpu_pressure_seconds", "cpu_seconds", "fmt_s", "pct", "rss_mb",
           "runqueue_wait_seconds"]


def cpu_seconds(pid: int) -> float:
    """CPU time of a process so far, user + system, in seconds (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def runqueue_wait_seconds(pid: int) -> float:
    """Time the process's main thread (Streamlit's event loop: every websocket send and
    receive) was ready to run but waited for a CPU (/proc/PID/schedstat, second field)."""
    with open(f"/proc/{pid}/schedstat") as f:
        return int(f.read().split()[1]) / 1e9


def cpu_pressure_seconds() -> float | None:
    """Machine-wide time during which some runnable task waited for a CPU (Linux PSI)."""
    try:
        with open("/proc/pressure/cpu") as f:
            return int(f.readline().rsplit("total=", 1)[1]) / 1e6
    except (OSError, IndexError, ValueError):
        return None


class MemorySampler(threading.Thread):
    """RSS of each server process every ``every`` seconds: ``samples[name]`` = [(t, MB)]."""

    def __init__(self, pids: dict[str, int], every: float = 0.25):
        super().__init__(daemon=True)
        self.pids, self.every = pids, every
        self.samples: dict[str, list[tuple[float, float]]] = {name: [] for name in pids}
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            for name, pid in self.pids.items():
                with contextlib.suppress(OSError, RuntimeError):   # a restarting process
                    self.samples[name].append((time.monotonic(), rss_mb(pid)))
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join()


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def fmt_s(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"{pct(values, 50):.2f} / {pct(values, 95):.2f} / {max(values):.2f} s"
