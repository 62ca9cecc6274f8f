"""The image's health check (Dockerfile's HEALTHCHECK): is the lecture hall answering?

    python deploy/health.py        exit 0 when http://127.0.0.1:$PORT/_stcore/health says ok

It asks HAProxy (``PORT``, default 8501), which sends the question to a Streamlit process
that is up: healthy while one process serves; unhealthy when none does (HAProxy then answers
503) or HAProxy itself is gone. One line on stderr says why it is unhealthy.
"""

import os
import sys
import urllib.error
import urllib.request

port = os.environ.get("PORT", "8501")
url = f"http://127.0.0.1:{port}/_stcore/health"
try:
    with urllib.request.urlopen(url, timeout=5) as answer:
        body = answer.read(100).strip()
except (urllib.error.URLError, OSError, ValueError) as err:
    sys.exit(f"unhealthy: {url}: {getattr(err, 'reason', err)}")
if body != b"ok":
    sys.exit(f"unhealthy: {url} answered {body[:40]!r}, not ok")
