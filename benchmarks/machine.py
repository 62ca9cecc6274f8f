"""The line every benchmark prints first: which machine, Python, NumPy and BLAS measured it."""

import os
import platform

import numpy as np


def machine_line() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    blas = "unknown BLAS"
    try:
        info = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        blas = f"{info['name']} {info['version']}"
    except Exception:  # older NumPy or a build without the info: keep the placeholder
        pass
    env = " ".join(f"{k}={os.environ[k]}" for k in sorted(os.environ)
                   if k.startswith(("OPENBLAS_", "OMP_", "MKL_")))
    load = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, "
            f"NumPy {np.__version__}, {blas}" + (f" ({env})" if env else "") + load)
