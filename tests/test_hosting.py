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

import os
import subprocess
import sys
from pathlib import Path

import pytest

from devtools.lecture_hall import SERVE, haproxy_missing, haproxy_required


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
    assert run.stdout.splitlines()[0].endswith(f", python {empty_venv}/bin/python")
    assert f"serve.sh: {empty_venv}/bin/python has no streamlit" in run.stderr
