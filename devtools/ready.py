"""Before class, on the deployment the class will use: does it hold the class?

    python -m devtools.ready URL [--students 200] [--steps 3] [--wake 180]

URL is the app's own address, as phones will open it (``https://USER-SPACE.hf.space/``,
``https://NAME.streamlit.app/``, ``http://HOST:8501/``), never a page that shows the app in a
frame. The check

1. wakes the app: it asks ``/_stcore/health`` until the answer is ``ok`` (a Space that
   slept, a container that is starting), for at most ``--wake`` seconds;
2. makes sure the app is xattn: a student's link must answer with the phone's page;
3. opens a class as a lecturer's page does (``?class=new`` over Streamlit's protocol:
   ``devtools/lecturer.py``) and joins ``--students`` phones that speak what the phone's
   page speaks (``devtools/phones.py``: the page, its proof of work, the room's stream,
   answers until a receipt says *saved*);
4. walks ``--steps`` lesson steps: every phone answers, the lecturer's count must show every
   answer, then *Reveal*, then *Next*;
5. ends the class it opened, whatever happened (``POST /live/CODE/end`` with the host's
   cookie: nothing of it is kept), and waits until the server says it has ended.

It prints *Next* → phone and *Reveal* → phone (p50 / p95), the answers the lecturer's page
counted, a phone's first load, each beside its target, and a one-line verdict: "holds N
students", or what to change. Exit status: 0 when it holds, 1 when it does not, 2 when the
check could not run (one line says why: not an address, a host that does not answer, a
server that is not xattn).

The phones run on this machine and its network: run it from the network the class will use,
not on the server. It lives in ``devtools/`` because it drives the lecturer's page over
Streamlit's protocol and plays phones, which the library never does; it needs only
``requirements.txt``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import multiprocessing
import os
import random
import socket
import ssl
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from urllib.parse import urlsplit

from devtools.lecturer import Host
from devtools.phones import Phone, Pick
from devtools.protocol import http_get
from devtools.ready_report import Report, table, verdict
from xattn.lesson import STEPS

__all__ = ["NotReady", "check", "main"]

_TRIES = (OSError, TimeoutError, ConnectionError, RuntimeError, asyncio.IncompleteReadError,
          ValueError, IndexError)   # what a server that is down, slow or not HTTP raises here


class NotReady(Exception):
    """The check could not run; the message is one line that says why."""


# --- before the class ---------------------------------------------------------------------------
async def wake(base: str, seconds: float) -> float:
    """Ask ``/_stcore/health`` until it answers ok (seconds it took); `NotReady` if it never
    does, at once where waiting cannot help (no such host, a redirect, not Streamlit)."""
    start = time.monotonic()
    last = "no answer"
    while True:
        try:
            status, headers, _, body = await http_get(base + "_stcore/health", {}, 15)
        except ssl.SSLCertVerificationError as err:
            raise NotReady(f"{base}: its TLS certificate is not trusted here "
                           f"({err.verify_message})") from None
        except ssl.SSLError as err:
            raise NotReady(f"{base}: no TLS conversation on that port ({err.reason}): is it "
                           "http:// ?") from None
        except socket.gaierror:
            raise NotReady(f"{urlsplit(base).hostname}: no such host (check the address)") \
                from None
        except _TRIES as err:
            last = f"{type(err).__name__}: {err}".strip(": ")
        else:
            if status == 200 and body.strip() == b"ok":
                return time.monotonic() - start
            if 300 <= status < 400:
                raise NotReady(f"{base} sends visitors elsewhere (HTTP {status} to "
                               f"{headers.get('location', '?')}): a sleeping Community Cloud "
                               "app or a login page. Open it in a browser, wake it, run this "
                               "again")
            if status not in (502, 503, 504):      # a proxy whose app is still starting
                raise NotReady(f"{base} answers, but not as a Streamlit app "
                               f"(/_stcore/health: HTTP {status})")
            last = f"HTTP {status}"
        if time.monotonic() - start > seconds:
            raise NotReady(f"{base} did not answer within {seconds:g} s (last: {last})")
        await asyncio.sleep(min(2.0, seconds / 4))


async def is_xattn(base: str) -> None:
    """`NotReady` unless a student's link answers with the phone's page."""
    try:
        _, _, _, body = await http_get(base + "?room=-", {}, 30)
    except _TRIES as err:
        raise NotReady(f"{base}: a student's link did not answer ({err})") from None
    if b"const JOIN = " not in body:
        raise NotReady(f"{base} is a Streamlit app but not xattn: a student's link "
                       "(/?room=...) does not answer with the phone's page")


async def open_class(base: str, timeout: float) -> Host:
    host = Host(base, timeout)
    try:
        await host.open()
    except _TRIES as err:
        with contextlib.suppress(Exception):
            await host.close()
        first = str(err).splitlines()[0][:300] if str(err) else type(err).__name__
        raise NotReady(f"the lecturer's page could not open a class: {first}") from None
    return host


# --- the class ------------------------------------------------------------------------------
async def join_all(phones: list[Phone], ramp: float, r: Report) -> list[Phone]:
    """Every phone joins, spread over ``ramp`` seconds; those that did."""
    t0 = time.monotonic()

    async def one(i: int, p: Phone) -> None:
        await asyncio.sleep(max(0.0, t0 + ramp * i / max(1, len(phones) - 1) - time.monotonic()))
        await p.join()
    results = await asyncio.gather(*(one(i, p) for i, p in enumerate(phones)),
                                   return_exceptions=True)
    joined = []
    for p, result in zip(phones, results, strict=True):
        if isinstance(result, BaseException):
            r.refused.append(str(result) or type(result).__name__)
        else:
            joined.append(p)
            r.first_load.append(p.wire["page"] / 1000)
            name = p.backends[0] or "one process"
            r.processes[name] = r.processes.get(name, 0) + 1
    r.joined = len(joined)
    return joined


async def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


async def move(host: Host, key: str, shows, phones: list[Phone], arrived, what: str,
               into: list[float], r: Report, timeout: float) -> None:
    """The lecturer presses ``key``; how long until each phone showed it (``arrived``)."""
    sent, _ = await host.click(key, shows)
    await until(lambda: all(arrived(p) is not None for p in phones), timeout)
    late = [p for p in phones if arrived(p) is None]
    if late:
        r.problems.append(f"{len(late)} phones never showed {what} within {timeout:g} s")
    into += [arrived(p) - sent for p in phones if arrived(p) is not None]


async def answer_all(phones: list[Phone], step: int, think, rng: random.Random,
                     timeout: float) -> list[Pick]:
    """Every phone asked a question answers ``think`` seconds after, until it is saved."""
    async def one(p: Phone) -> Pick | None:
        await asyncio.sleep(rng.uniform(*think))
        room = p.room
        if p.ask is None or room is None or room["step"] != step:
            return None
        return await p.answer(timeout=timeout)
    picks = await asyncio.gather(*(one(p) for p in phones))
    return [pick for pick in picks if pick is not None]


async def one_step(host: Host, phones: list[Phone], step: int, a, rng, r: Report) -> None:
    if step > 1:
        await move(host, "class_next", lambda h: h.step == step, phones,
                   lambda p: p.first_step.get(step), f"step {step}", r.next_s, r, a.timeout)
    since = time.monotonic()
    picks = await answer_all(phones, step, a.think, rng, a.timeout)
    saved = sum(pick.is_saved for pick in picks)
    r.sent, r.saved = r.sent + len(picks), r.saved + saved

    def shown() -> int:
        return max((n for started, _, s, n in host.counts if s == step and started >= since),
                   default=0)
    if picks:
        await until(lambda: shown() >= saved, a.timeout)
        r.counted += min(shown(), saved)
    await move(host, "reveal", lambda h: h.step == step and "ask_again" in h.buttons, phones,
               lambda p: p.revealed.get((step, 1)), f"step {step}'s answer", r.reveal_s, r,
               a.timeout)


async def end_class(host: Host, r: Report, timeout: float) -> None:
    """End the class the check opened, and wait until the server says it has ended."""
    try:
        status = await host.end()
    except _TRIES as err:
        r.problems.append(f"the class {host.code} could not be ended: {err}")
        return
    if status != 204:
        r.problems.append(f"the class {host.code} could not be ended: HTTP {status}")
        return
    r.ended = await until(lambda: host.gone is not None, timeout)
    if not r.ended:
        r.problems.append(f"the class {host.code} was ended, but the server never said so")


async def check(url: str, students: int = 200, steps: int = 3, *, wake_s: float = 180.0,
                timeout: float = 60.0, think: tuple[float, float] = (1.0, 3.0),
                ramp: float | None = None, seed: int = 0, say=print) -> Report:
    """The whole check against ``url`` (its docstring's five parts); `NotReady` when it
    cannot run."""
    base = url.split("?")[0].split("#")[0].rstrip("/") + "/"
    a = argparse.Namespace(timeout=timeout, think=think)
    r = Report(base, students, steps)
    r.woke = await wake(base, wake_s)
    await is_xattn(base)
    host = await open_class(base, timeout)
    r.code = host.code
    say(f"class {host.code} opened; {students} phones join")
    rng = random.Random(seed)
    spawn = multiprocessing.get_context("spawn")      # no fork of a process with threads
    pool = ProcessPoolExecutor(min(8, os.cpu_count() or 1), mp_context=spawn)
    phones = [Phone(i, base, host.code, timeout=timeout, rng=random.Random(seed * 7919 + i),
                    work=pool) for i in range(students)]
    try:
        phones = await join_all(phones, max(2.0, students / 20) if ramp is None else ramp, r)
        pool.shutdown(cancel_futures=True)
        for step in range(1, steps + 1):
            await one_step(host, phones, step, a, rng, r)
            say(f"step {step} of {steps} walked")
    except _TRIES as err:
        r.problems.append(f"the class stopped: {str(err).splitlines()[0][:300]}")
    finally:
        pool.shutdown(cancel_futures=True)
        await asyncio.gather(*(p.leave() for p in phones), return_exceptions=True)
        await end_class(host, r, timeout)
        with contextlib.suppress(Exception):
            await host.close()
    r.problems += ([x for p in phones for x in p.problems] + host.problems)[:5]
    return r


def _address(text: str) -> str:
    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise NotReady(f"{text!r} is not an address: write http://HOST:PORT/ or "
                       "https://HOST/ (the app's own address)")
    return text.strip()


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m devtools.ready",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("url", help="the app's own address, as phones open it")
    ap.add_argument("--students", type=int, default=200, help="phones to join (1 to 5,000)")
    ap.add_argument("--steps", type=int, default=3, help=f"lesson steps (1 to {len(STEPS)})")
    ap.add_argument("--wake", type=float, default=180.0,
                    help="seconds to wait for a sleeping or starting app")
    ap.add_argument("--timeout", type=float, default=60.0,
                    help="seconds any one wait may take before it is a problem")
    ap.add_argument("--ramp", type=float, help="seconds over which phones join "
                    "(default: students / 20, at least 2)")
    a = ap.parse_args(argv)
    if not 1 <= a.students <= 5000 or not 1 <= a.steps <= len(STEPS):
        ap.error(f"--students is 1 to 5,000 and --steps 1 to {len(STEPS)}")
    return a


def main(argv=None) -> int:
    a = parse_args(argv)

    def say(text: str) -> None:
        print(f"  {time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)
    try:
        report = asyncio.run(check(_address(a.url), a.students, a.steps, wake_s=a.wake,
                                   timeout=a.timeout, ramp=a.ramp, say=say))
    except NotReady as err:
        print(f"xattn ready: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("xattn ready: stopped (the class it opened was ended)", file=sys.stderr)
        return 130
    holds, line = verdict(report)
    print(table(report))
    print(line)
    return 0 if holds else 1


if __name__ == "__main__":
    sys.exit(main())
