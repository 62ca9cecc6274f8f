"""A page after its server process died (``xattn/ui/internals/reconnect.py``), in Chromium
through HAProxy.

Behind ``deploy/serve.sh`` the browser reconnects to another process, which starts a new
session. Streamlit 1.67 does not rerun an idle page then, and the new session's first run
carried the user's next change, which the page overrode with its link: the change snapped
back and the download button pointed at a file of the dead process. (The canaries of that
Streamlit behaviour, and the same new session in ``AppTest``, are in
``tests/test_streamlit_internals.py``.)

Here it happens for real: kill the process that holds the session of an explorer's page (the
Streamlit page; a student's phone page, ``?room=CODE``, is not a Streamlit page and follows
its room over server-sent events instead), let the page reconnect, then check that it reran
by itself and its download works, and that one change made at once takes (link and figure)
and its download works too. Nothing here asserts on time; every wait polls a condition with a
generous deadline.
"""

from __future__ import annotations

import os
import signal
import time
import urllib.parse

import pytest

from devtools.browser import ARTIFACTS, RUN_COUNTER_JS, runs, wait_for_app
from devtools.lecture_hall import LectureHall, haproxy_missing
from tests.test_deploy import CSV_HEADER, FOUR_HEADS_DRAWN, download_csv, fetch, no_haproxy

# Counts the page's websockets that opened (the second one is the reconnect), before any of
# the page's own scripts runs.
SOCKETS_JS = """
window.__xattnSockets = 0;
window.WebSocket = class extends window.WebSocket {
  constructor(...args) {
    super(...args);
    if (String(args[0]).includes('_stcore/stream')) {
      this.addEventListener('open', () => { window.__xattnSockets += 1; });
    }
  }
};
"""
RECONNECTED = ("window.__xattnSockets >= 2 && "
               "!document.querySelector('[data-testid=\"stConnectionStatus\"]')")
DEADLINE = 180.0   # seconds: a restart on a loaded 2-core machine


@pytest.fixture(scope="module")
def hall():
    if haproxy_missing():
        no_haproxy(haproxy_missing())
    with LectureHall(processes=2, run_dir=ARTIFACTS / "reconnect-hall") as running:
        yield running


def poll(condition, what: str, hall: LectureHall) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"{what}, not within {DEADLINE} s:\n{hall.output()}"
        time.sleep(0.25)   # poll interval of a bounded loop


def all_up(hall: LectureHall) -> None:
    """Wait until HAProxy sends each affinity cookie to its own process (each one is up)."""
    poll(lambda: all(fetch(f"{hall.url}_stcore/health", name) == (200, name)
                     for name in hall.backends), "every process up behind the proxy", hall)


def explorer(chromium, hall: LectureHall, query: str):
    """A new browser (own cookies) on the page; the name of the process holding it."""
    all_up(hall)
    context = chromium.new_context(viewport={"width": 1400, "height": 1100},
                                   accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(DEADLINE * 1000)
    page.add_init_script(RUN_COUNTER_JS)
    page.add_init_script(SOCKETS_JS)
    page.goto(f"{hall.url}?{query}")
    wait_for_app(page, FOUR_HEADS_DRAWN, timeout=DEADLINE * 1000)
    return context, page, server_of(context)


def server_of(context) -> str:
    return {c["name"]: c["value"] for c in context.cookies()}["XATTN_SERVER"]


def kill_holder(hall: LectureHall, server: str) -> None:
    os.kill(hall.backends[server][0], signal.SIGKILL)


def query_of(page) -> dict:
    return urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)


def test_after_a_restart_the_page_reruns_by_itself_and_its_download_works(hall, chromium):
    context, page, server = explorer(chromium, hall, "seed=7")
    _, before = download_csv(page)
    wait_for_app(page, FOUR_HEADS_DRAWN, timeout=DEADLINE * 1000)
    done = runs(page)

    kill_holder(hall, server)
    # nothing is clicked: the page reconnects and reruns in the new process by itself
    page.wait_for_function(RECONNECTED, timeout=DEADLINE * 1000, polling=100)
    wait_for_app(page, FOUR_HEADS_DRAWN, after_runs=done, timeout=DEADLINE * 1000)
    assert query_of(page) == {"seed": ["7"]}

    url, after = download_csv(page)   # the old page's file died with its process
    assert after == before and after.splitlines()[0] == CSV_HEADER   # the same numbers
    now = server_of(context)
    assert fetch(url, now) == (200, now)
    assert page.locator('[data-testid="stException"]').count() == 0
    context.close()


def test_after_a_restart_the_first_change_takes(hall, chromium):
    context, page, server = explorer(chromium, hall, "seed=7")
    kill_holder(hall, server)
    page.wait_for_function(RECONNECTED, timeout=DEADLINE * 1000, polling=100)

    # one change, at once: whether or not the page's own rerun has finished
    page.locator(".st-key-heads input[type=range]").press("ArrowRight")   # 4 -> 8 heads
    wait_for_app(page, "traces && traces.filter((t) => t.type === 'heatmap').length === 8 && "
                       "new URL(location.href).searchParams.get('heads') === '8'",
                 timeout=DEADLINE * 1000)
    assert query_of(page) == {"heads": ["8"], "seed": ["7"]}
    assert page.locator('.st-key-heads [data-testid="stSliderThumbValue"]').inner_text() == "8"

    url, csv = download_csv(page)
    assert csv.splitlines()[0] == CSV_HEADER
    assert len(csv.splitlines()) == 1 + 8 * 8 * 7   # the new heads: heads x target x source
    now = server_of(context)
    assert fetch(url, now) == (200, now)
    assert page.locator('[data-testid="stException"]').count() == 0
    context.close()
