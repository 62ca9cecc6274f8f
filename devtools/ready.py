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
check could not run: one line says why, starting with its cause:

- ``down:`` nothing listens there (refused for `REFUSED_S` s), or nothing accepts the
  connection within `CONNECT_S` s (a firewall, a wrong address); a sleeping app that answers
  HTTP 502/503/504 is waited for up to ``--wake`` seconds instead;
- ``wrong service:`` the port answers, but not in HTTP (a Redis, a database), or not as
  Streamlit, or not as xattn, or sends more than `MOST` bytes or for more than `REQUEST_S` s
  where a short answer is due (a stream without end: never read past `MOST` bytes);
- ``prefix:`` the app answers at the host's root but not under the URL's path (a proxy that
  strips or lacks the prefix), or its student link leaves the prefix out;
- ``limit reached:`` the server refused the new class (its per-address or per-store limits);
- ``store down:`` the server's ``/live/ready`` says its class store does not answer (also
  ``temp folder:`` there);
- not an address, no such host, TLS problems, a redirect to a login page.

Every request before the class has a connect timeout (`CONNECT_S`), a whole-answer timeout
(`REQUEST_S`) and a size bound (`MOST`); the whole check a total deadline (``--deadline``).

The phones run on this machine and its network: run it from the network the class will use,
not on the server. It lives in ``devtools/`` because it drives the lecturer's page over
Streamlit's protocol and plays phones, which the library never does; it needs only
``requirements.txt``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import random
import re
import socket
import ssl
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit

from devtools.lecturer import Host
from devtools.phones import Phone, Pick
from devtools.ready_report import Report, table, verdict
from xattn.lesson import STEPS

__all__ = ["NotReady", "check", "main"]

_TRIES = (OSError, TimeoutError, ConnectionError, RuntimeError, asyncio.IncompleteReadError,
          ValueError, IndexError)   # what a server that is down, slow or not HTTP raises here
CONNECT_S = 5.0        # seconds a connection may take to be accepted
REQUEST_S = 10.0       # seconds a short answer (health, the phone's page) may take in all
REFUSED_S = 10.0       # seconds a refused connection is tried again (a hall still starting)
MOST = 1_000_000       # bytes read of a short answer, at most (the phone's page is ~50 kB)
_STATUS = re.compile(rb"HTTP/\d(?:\.\d)? (\d{3})")


class NotReady(Exception):
    """The check could not run; the message is one line that says why, its cause first."""


class Refused(NotReady):
    """Nothing listens on that port (yet)."""


@dataclass
class Answer:
    """An HTTP answer read within the bounds: status, headers (lower-case names), body."""

    status: int
    headers: dict[str, str]
    body: bytes


def _where(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'https' else 80)}"


async def fetch(url: str, *, most: int | None = None, connect_s: float | None = None,
                total_s: float | None = None) -> Answer:
    """GET ``url`` (HTTP/1.0: the body ends with the connection), bounded (by default `MOST`
    bytes, `CONNECT_S` and `REQUEST_S` seconds): `Refused`, or `NotReady` with its cause,
    when it is not a short HTTP answer. TLS and name errors (``ssl.SSLError``,
    ``socket.gaierror``) are raised as they are."""
    most = MOST if most is None else most
    connect_s = CONNECT_S if connect_s is None else connect_s
    total_s = REQUEST_S if total_s is None else total_s
    parts = urlsplit(url)
    tls = parts.scheme == "https"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(
            parts.hostname, parts.port or (443 if tls else 80), ssl=True if tls else None),
            connect_s)
    except ConnectionRefusedError:
        raise Refused(f"down: nothing listens on {_where(url)} (connection refused)") from None
    except TimeoutError:
        raise NotReady(f"down: {_where(url)} accepts no connection within {connect_s:g} s (a "
                       "firewall, or the wrong address?)") from None
    data = bytearray()
    try:
        writer.write(f"GET {path} HTTP/1.0\r\nHost: {parts.netloc}\r\n\r\n".encode("latin-1"))

        async def read() -> None:
            await writer.drain()
            while len(data) <= most and (chunk := await reader.read(65536)):
                data.extend(chunk)
        await asyncio.wait_for(read(), total_s)
    except TimeoutError:
        if not data:
            raise NotReady(f"wrong service: {_where(url)} took the connection but said nothing "
                           f"for {total_s:g} s (is that the app's port?)") from None
        if not _STATUS.match(bytes(data[:16])):
            raise _not_http(url, bytes(data)) from None
        raise NotReady(f"wrong service: {url} answered for {total_s:g} s without ending (a "
                       "stream where a short answer is due: is that the app's address?)") \
            from None
    except (ConnectionError, OSError) as err:
        if not data:
            raise NotReady(f"down: {_where(url)} closed the connection ({err})") from None
    finally:
        writer.close()
    if len(data) > most:
        raise NotReady(f"wrong service: {url} sent more than {most:,} bytes where a short "
                       "answer is due (a stream without end?): read no further")
    raw = bytes(data)
    status = _STATUS.match(raw[:16])
    if not status:
        if not raw:
            raise NotReady(f"wrong service: {_where(url)} closed the connection without a "
                           "word, not HTTP (a Redis does that): give the app's address")
        raise _not_http(url, raw)
    head, _, body = raw.partition(b"\r\n\r\n")
    headers = {}
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Answer(int(status[1]), headers, body)


def _not_http(url: str, raw: bytes) -> NotReady:
    redis = raw[:1] in (b"-", b"+", b"$", b"*", b":")
    return NotReady(f"wrong service: {_where(url)} answers, but not in HTTP (it said "
                    f"{raw[:40]!r}{': a Redis?' if redis else ''}): give the app's address")


# --- before the class ---------------------------------------------------------------------------
async def wake(base: str, seconds: float, say=print) -> float:
    """Ask ``/_stcore/health`` until it answers ok (seconds it took); `NotReady` if it never
    does: at once where waiting cannot help (no such host, a redirect, not Streamlit, not
    HTTP), after `REFUSED_S` s of refused connections (down), after ``seconds`` of a proxy's
    502/503/504 (an app still waking)."""
    start = time.monotonic()
    last, told = "no answer", False
    while True:
        try:
            answer = await fetch(base + "_stcore/health")
        except ssl.SSLCertVerificationError as err:
            raise NotReady(f"{base}: its TLS certificate is not trusted here "
                           f"({err.verify_message})") from None
        except ssl.SSLError as err:
            raise NotReady(f"{base}: no TLS conversation on that port ({err.reason}): is it "
                           "http:// ?") from None
        except socket.gaierror:
            raise NotReady(f"{urlsplit(base).hostname}: no such host (check the address)") \
                from None
        except Refused as err:
            if time.monotonic() - start > min(seconds, REFUSED_S):
                raise NotReady(f"{err} for {min(seconds, REFUSED_S):g} s: start the server, or "
                               "check the port") from None
            last = str(err)
        else:
            if answer.status == 200 and answer.body.strip() == b"ok":
                return time.monotonic() - start
            if 300 <= answer.status < 400:
                raise NotReady(f"{base} sends visitors elsewhere (HTTP {answer.status} to "
                               f"{answer.headers.get('location', '?')}): a sleeping Community "
                               "Cloud app or a login page. Open it in a browser, wake it, run "
                               "this again")
            if answer.status == 404 and urlsplit(base).path.strip("/"):
                await _prefix_missing(base)
            if answer.status not in (502, 503, 504):      # a proxy whose app is still starting
                raise NotReady(f"wrong service: {base} answers, but not as a Streamlit app "
                               f"(/_stcore/health: HTTP {answer.status})")
            last = f"HTTP {answer.status}"
            if time.monotonic() - start > seconds:
                raise NotReady(f"down: {base} did not answer within {seconds:g} s (last: "
                               f"{last})")
        if not told:
            say(f"waiting for {base} to answer ({last}) ...")
            told = True
        await asyncio.sleep(min(1.0, seconds / 4))


async def _prefix_missing(base: str) -> None:
    """`NotReady` (prefix) when the host's root answers as Streamlit where ``base``'s path
    does not: a proxy that does not pass the path on, or an app served at / only."""
    parts = urlsplit(base)
    root = f"{parts.scheme}://{parts.netloc}/"
    try:
        answer = await fetch(root + "_stcore/health")
    except (NotReady, OSError, ssl.SSLError):
        return
    if answer.status == 200 and answer.body.strip() == b"ok":
        raise NotReady(f"prefix: {root} answers as the app but {base} does not (HTTP 404): "
                       f"open {root}, or make the proxy pass {parts.path} on (docs/deploy.md: "
                       "a path prefix)")


async def is_xattn(base: str) -> None:
    """`NotReady` unless a student's link answers with the phone's page."""
    try:
        answer = await fetch(base + "?room=-")
    except NotReady:
        raise
    except _TRIES as err:
        raise NotReady(f"{base}: a student's link did not answer ({err})") from None
    if b"const JOIN = " not in answer.body:
        raise NotReady(f"wrong service: {base} is a Streamlit app but not xattn: a student's "
                       "link (/?room=...) does not answer with the phone's page")


async def store_ready(base: str) -> None:
    """`NotReady` with the server's own causes when ``/live/ready`` says it cannot start a
    class (its store down, no temp folder, its rooms full); nothing where the server has no
    such route (an older xattn)."""
    try:
        answer = await fetch(base + "live/ready")
    except NotReady:
        raise
    except _TRIES as err:
        raise NotReady(f"{base}live/ready did not answer ({err})") from None
    if answer.status not in (200, 503):
        return
    try:
        causes = [str(c) for c in json.loads(answer.body)["causes"]]
    except (ValueError, KeyError, TypeError):
        return
    if answer.status == 503 or causes:
        raise NotReady("; ".join(causes) or "the server says it cannot start a class")


async def open_class(base: str, timeout: float) -> Host:
    host = Host(base, timeout)
    try:
        await host.open()
    except _TRIES as err:
        with contextlib.suppress(Exception):
            await host.close()
        first = str(err).splitlines()[0][:300] if str(err) else type(err).__name__
        cause = "limit reached: " if "could be started" in str(err) else ""
        raise NotReady(f"{cause}the lecturer's page could not open a class: {first}") from None
    return host


async def student_link_ok(host: Host) -> None:
    """`NotReady` (prefix) unless the student link the lecturer's page shows (its QR code's)
    opens the phone's page, and a request relative to it, as the phone's page makes them
    (``live/CODE/...``), reaches the app: behind a proxy at /xattn/, a link without the
    prefix or its last slash sends phones' requests past the app."""
    link = host.link
    if not link:
        raise NotReady("the lecturer's page shows no student link (an older xattn?)")
    try:
        page = await fetch(link)
        health = await fetch(urljoin(link, "_stcore/health"))
    except NotReady as err:
        raise NotReady(f"the student link {link} does not work from here: {err}") from None
    except _TRIES as err:
        raise NotReady(f"the student link {link} does not answer here ({err})") from None
    if b"const JOIN = " not in page.body:
        raise NotReady(f"prefix: the student link {link} does not open the phone's page (HTTP "
                       f"{page.status}): set XATTN_PUBLIC_URL to the app's address with its "
                       "path, e.g. https://HOST/xattn/")
    if health.status != 200 or health.body.strip() != b"ok":
        raise NotReady(f"prefix: the phones' requests from the student link {link} go to "
                       f"{urljoin(link, '_stcore/health')}, which is not the app (HTTP "
                       f"{health.status}): the link must end with the path's slash, e.g. "
                       "https://HOST/xattn/?room=CODE")


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
    r.woke = await wake(base, wake_s, say)
    await is_xattn(base)
    await store_ready(base)
    host = await open_class(base, timeout)
    r.code = host.code
    say(f"class {host.code} opened; {students} phones join")
    rng = random.Random(seed)
    spawn = multiprocessing.get_context("spawn")      # no fork of a process with threads
    pool = ProcessPoolExecutor(min(8, os.cpu_count() or 1), mp_context=spawn)
    phones = [Phone(i, base, host.code, timeout=timeout, rng=random.Random(seed * 7919 + i),
                    work=pool) for i in range(students)]
    try:
        await student_link_ok(host)
        r.link = host.link
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
    ap.add_argument("--deadline", type=float, help="seconds the whole check may take "
                    "(default: --wake plus 900); then it stops, and ends the class it opened")
    a = ap.parse_args(argv)
    if not 1 <= a.students <= 5000 or not 1 <= a.steps <= len(STEPS):
        ap.error(f"--students is 1 to 5,000 and --steps 1 to {len(STEPS)}")
    return a


def main(argv=None) -> int:
    a = parse_args(argv)

    def say(text: str) -> None:
        print(f"  {time.strftime('%H:%M:%S')} {text}", file=sys.stderr, flush=True)
    deadline = a.deadline if a.deadline is not None else a.wake + 900
    try:
        report = asyncio.run(asyncio.wait_for(
            check(_address(a.url), a.students, a.steps, wake_s=a.wake, timeout=a.timeout,
                  ramp=a.ramp, say=say), deadline))
    except TimeoutError:
        print(f"xattn ready: the check took more than {deadline:g} s (--deadline): stopped "
              "(the class it opened was ended)", file=sys.stderr)
        return 2
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
