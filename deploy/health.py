"""The image's health check (Dockerfile's HEALTHCHECK): can the lecture hall start a class?

    python deploy/health.py          ready: exit 0 when http://127.0.0.1:$PORT/live/ready says
                                     ready (the store answers, a room can be made, the temp
                                     folder can be written: xattn/server/ready.py)
    python deploy/health.py --live   alive: exit 0 when /_stcore/health says ok (a process
                                     answers, whatever its store)

It asks HAProxy (``PORT``, default 8501), which sends the question to a Streamlit process
that is up. Unhealthy: one line on stderr says why (each cause the process gave, or that
nothing answered), exit 1. Bounded: 8 s in all, at most 64 kB read.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request

TIMEOUT = 8.0
MOST = 65_536


def ask(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT) as answer:
            return answer.status, answer.read(MOST)
    except urllib.error.HTTPError as err:          # 503: not ready, with its causes
        return err.code, err.read(MOST)


def main(argv: list[str]) -> int:
    if argv not in ([], ["--live"]):
        print("usage: python deploy/health.py [--live]", file=sys.stderr)
        return 2
    base = f"http://127.0.0.1:{os.environ.get('PORT', '8501')}"
    url = base + ("/_stcore/health" if argv else "/live/ready")
    try:
        status, body = ask(url)
    except (urllib.error.URLError, OSError, ValueError) as err:
        print(f"unhealthy: {url}: {getattr(err, 'reason', err)}", file=sys.stderr)
        return 1
    if argv:
        if status != 200 or body.strip() != b"ok":
            print(f"unhealthy: {url} answered HTTP {status} {body[:40]!r}, not ok",
                  file=sys.stderr)
            return 1
        return 0
    try:
        said = json.loads(body)
        ready, causes = said["ready"] is True, [str(c) for c in said["causes"]]
    except (ValueError, KeyError, TypeError):
        print(f"unhealthy: {url} answered HTTP {status} {body[:40]!r}, not xattn's readiness",
              file=sys.stderr)
        return 1
    if status != 200 or not ready:
        print(f"unhealthy: not ready: {'; '.join(causes) or f'HTTP {status}'}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
