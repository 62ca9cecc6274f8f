"""Readiness: can this process start a class now? (``GET /live/ready``)

Liveness is Streamlit's ``/_stcore/health`` (the server answers). Readiness asks more, and
answers ``{"ready": true|false, "causes": [...]}`` with HTTP 200 or 503:

- **temp folder**: the folder of the weights' snapshots (``xattn.encdec.snapshot``, in
  ``$TMPDIR`` or ``/tmp``) can be written (a read-only root without its tmpfs: classes would
  read every model's weights into each process's memory);
- **store**: the class store answers, and **a room can be made**: a room is made and ended
  at once (the write a lecturer's *Start a class* makes; an SQLite file on a read-only volume
  answers reads and refuses this). A store already holding its most rooms says so ("limit
  reached"), one that cannot be reached says "store down".

Anyone may ask, so a process runs the checks at most once per `EVERY` seconds, one run at a
time, and answers every request meanwhile with the last result: at most one room is made and
ended per process per `EVERY` seconds, however often the route is asked. A run that takes
longer than `TIMEOUT` seconds (a Redis that does not answer) is a cause itself.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import tempfile
import time
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import JSONResponse

from xattn.classroom import LimitReached, Question, StoreUnavailable

__all__ = ["Readiness", "ready", "checks", "EVERY", "TIMEOUT"]

EVERY = float(os.environ.get("XATTN_READY_EVERY", "") or 10.0)   # seconds a result is reused
TIMEOUT = 5.0      # seconds the checks may take
_HEADERS = {"cache-control": "no-store"}


@dataclass
class Readiness:
    """One run of the checks: ``causes`` is empty when the process can start a class."""

    causes: list[str] = field(default_factory=list)
    at: float = 0.0                      # time.monotonic() of the run

    @property
    def ready(self) -> bool:
        return not self.causes


def _temp_cause() -> str | None:
    from xattn.encdec.snapshot import cache_folder

    try:
        folder = cache_folder()
        target = folder if folder.is_dir() else folder.parent
        probe = target / f".xattn-ready-{os.getpid()}-{secrets.token_hex(4)}"
        probe.write_bytes(b"")
        probe.unlink()
    except (OSError, FileNotFoundError) as err:
        where = os.environ.get("TMPDIR") or tempfile.tempdir or "/tmp"
        return (f"temp folder: none can be written ({getattr(err, 'strerror', None) or err}; "
                f"TMPDIR or /tmp: {where}): give the container a tmpfs on /tmp")
    return None


def _store_cause() -> str | None:
    from xattn.live.stores import class_store

    try:
        store = class_store()
        code, secret = store.create_room([Question("choice", ("ready", "not ready"))])
        store.end_room(code, secret)
    except StoreUnavailable as err:
        return f"store down: {err}"
    except LimitReached as err:
        return f"limit reached: no room can be made: {err}"
    except Exception as err:  # noqa: BLE001 - any other refusal is a cause, said as it is
        first = (str(err).splitlines() or [""])[0][:300]
        return f"store: no room can be made ({type(err).__name__}: {first})"
    return None


def checks() -> Readiness:
    """Run every check now (blocking: the store is asked)."""
    causes = [c for c in (_temp_cause(), _store_cause()) if c]
    return Readiness(causes, time.monotonic())


_last: list[Readiness] = []
_lock = asyncio.Lock()


async def ready(request: Request) -> JSONResponse:
    """``GET /live/ready``: 200 when this process can start a class, 503 with the causes."""
    async with _lock:
        if not _last or time.monotonic() - _last[0].at >= EVERY:
            try:
                result = await asyncio.wait_for(asyncio.to_thread(checks), TIMEOUT)
            except TimeoutError:
                result = Readiness([f"store down: the checks took more than {TIMEOUT:g} s "
                                    "(a store that does not answer?)"], time.monotonic())
            _last[:] = [result]
        result = _last[0]
    return JSONResponse({"ready": result.ready, "causes": result.causes},
                        status_code=200 if result.ready else 503, headers=_HEADERS)
