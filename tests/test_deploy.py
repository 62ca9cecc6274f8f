"""deploy/serve.sh: N Streamlit processes behind HAProxy with cookie affinity.

The end-to-end test starts 2 processes behind HAProxy on free ports, opens two sessions in
headless Chromium (separate browser contexts, so separate cookie jars), checks that each got
the per-head heatmaps and its CSV download through the proxy, that the two were held by
different processes, that a download URL is served only with its own session's cookie, that a
crashed process is restarted, and that SIGTERM stops every process serve.sh started; another
test sends SIGINT to the whole process group, as Ctrl-C in a terminal does.

Skipped, with the reason printed, where HAProxy is missing; failed instead when
XATTN_REQUIRE_HAPROXY=1 (CI installs haproxy and sets it). The browser part follows the
browser tests' rule (XATTN_REQUIRE_BROWSER) and shares their Chromium (conftest). Nothing here
asserts on time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

import pytest

from devtools.browser import ARTIFACTS, HEADS_DRAWN_JS, RUN_COUNTER_JS, wait_for_app
from devtools.lecture_hall import (
    REQUIRE_ENV,
    ROOT,
    SERVE,
    LectureHall,
    alive,
    haproxy_missing,
    haproxy_path,
    haproxy_required,
)

CSV_HEADER = "head,tgt_pos,tgt_token,src_pos,src_token,weight"
FOUR_HEADS_DRAWN = ("traces && traces.filter((t) => t.type === 'heatmap').length === 4 && "
                    f"{HEADS_DRAWN_JS} === 4")


def no_haproxy(reason: str):
    if haproxy_required():
        pytest.fail(f"{REQUIRE_ENV} is set but the deployment tests cannot run: {reason}",
                    pytrace=False)
    pytest.skip(f"deployment tests skipped: {reason}")


def config(n: int, port: int, **env: str) -> str:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("XATTN_")}
    return subprocess.run(["bash", str(SERVE), "--config", str(n), str(port)], env={**clean, **env},
                          capture_output=True, text=True, check=True).stdout


# --- the configuration -------------------------------------------------------------------------

def test_haproxy_is_available():
    """Fails in CI (XATTN_REQUIRE_HAPROXY=1) and skips elsewhere when HAProxy is missing."""
    reason = haproxy_missing()
    if reason:
        no_haproxy(reason)


def test_config_has_cookie_affinity_websockets_health_checks_and_bounds():
    cfg = config(3, 9000)
    for line in ("mode http", "timeout tunnel 2h", "balance leastconn",
                 'cookie XATTN_SERVER insert indirect nocache httponly attr "SameSite=Lax"',
                 "http-check send meth GET uri /_stcore/health", "http-check expect string ok",
                 "bind 0.0.0.0:9000", "maxconn 1000", "option redispatch",
                 "server s1 127.0.0.1:9001 cookie s1", "server s3 127.0.0.1:9003 cookie s3"):
        assert line in cfg, line
    assert "balance source" not in cfg and "s4" not in cfg


def test_affinity_switch_removes_the_cookie_only():
    cfg = config(2, 9000, XATTN_AFFINITY="0")
    assert not [line for line in cfg.splitlines() if line.strip().startswith("cookie")]
    assert "cookie s1" not in cfg and "balance roundrobin" in cfg
    assert "server s2 127.0.0.1:9002\n" in cfg
    assert "timeout tunnel 2h" in cfg and "http-check expect string ok" in cfg


def test_shipped_config_is_what_the_script_generates():
    """deploy/haproxy.cfg, for people who run HAProxy themselves, stays in step with serve.sh."""
    assert (ROOT / "deploy" / "haproxy.cfg").read_text() == config(4, 8501)


@pytest.mark.parametrize("affinity", ["1", "0"])
def test_haproxy_accepts_the_config(affinity, tmp_path):
    if haproxy_missing():
        no_haproxy(haproxy_missing())
    path = tmp_path / "haproxy.cfg"
    path.write_text(config(2, 9000, XATTN_AFFINITY=affinity))
    check = subprocess.run([haproxy_path(), "-c", "-f", str(path)], capture_output=True,
                           text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_bad_arguments_are_refused():
    for args in ([], ["0"], ["two"], ["2", "x"], ["2", "8501", "extra"]):
        run = subprocess.run(["bash", str(SERVE), *args], capture_output=True, text=True)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "serve.sh N [PORT]" in run.stderr


# --- end to end --------------------------------------------------------------------------------

@pytest.fixture
def haproxy():
    """Skip (or fail, where required) before anything starts when HAProxy is missing."""
    if haproxy_missing():
        no_haproxy(haproxy_missing())


def open_session(browser, url: str):
    """A new browser context (its own cookies), the app loaded and four heatmaps drawn."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(90_000)
    page.add_init_script(RUN_COUNTER_JS)
    page.goto(url)
    wait_for_app(page, FOUR_HEADS_DRAWN, timeout=90_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    cookies = {c["name"]: c["value"] for c in context.cookies()}
    return context, page, cookies["XATTN_SERVER"]


def download_csv(page) -> tuple[str, str]:
    """Click "Download the weights as CSV": the URL the browser fetched and the file's text."""
    with page.expect_download() as info:
        page.locator(".st-key-dl_csv").get_by_role("button",
                                                    name="Download the weights as CSV").click()
    download = info.value
    assert download.failure() is None, download.failure()
    return download.url, open(download.path(), encoding="utf-8").read()


def fetch(url: str, cookie: str) -> tuple[int, str | None]:
    """GET through the proxy with one affinity cookie: status and the serving process."""
    request = urllib.request.Request(url, headers={"Cookie": f"XATTN_SERVER={cookie}"})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status, r.headers.get("X-Xattn-Server")
    except urllib.error.HTTPError as err:
        return err.code, err.headers.get("X-Xattn-Server")


def wait_until(condition, what: str, hall: LectureHall, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}, not within {timeout} s:\n{hall.output()}"
        time.sleep(0.2)   # poll interval of a bounded loop


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
            return r.read() == b"ok"
    except OSError:
        return False


def test_two_sessions_on_two_processes_through_the_proxy_then_sigterm_stops_all(
        haproxy, chromium):
    with LectureHall(processes=2, run_dir=ARTIFACTS / "lecture-hall") as hall:
        assert sorted(hall.backends) == ["s1", "s2"], hall.output()
        started = list(hall.pids)

        ctx_a, page_a, server_a = open_session(chromium, hall.url + "?seed=7")   # A's own numbers
        url_a, csv_a = download_csv(page_a)
        ctx_b, page_b, server_b = open_session(chromium, hall.url)

        # cookie affinity: the second student was given the other process
        assert {server_a, server_b} == {"s1", "s2"}, (server_a, server_b)
        assert url_a.startswith(hall.url + "media/") and url_a.endswith(".csv"), url_a
        assert csv_a.splitlines()[0] == CSV_HEADER
        assert len(csv_a.splitlines()) == 1 + 4 * 8 * 7   # heads x target x source tokens
        # the file lives in the process that holds session A, and only there (so far)
        assert fetch(url_a, server_a) == (200, server_a)
        assert fetch(url_a, server_b) == (404, server_b)

        url_b, csv_b = download_csv(page_b)
        assert csv_b.splitlines()[0] == CSV_HEADER and csv_b != csv_a   # B's numbers: seed 0
        assert fetch(url_b, server_b) == (200, server_b)
        ctx_a.close()
        ctx_b.close()

        # a crashed process is restarted on its port; HAProxy sends students there again
        os.kill(hall.backends["s1"][0], signal.SIGKILL)
        wait_until(lambda: hall.backends["s1"][0] not in started, "s1 restarted", hall)
        assert "xattn: backend s1 exited with status 137: restarting it (restart 1)" in hall.lines
        wait_until(lambda: healthy(hall.backends["s1"][1]), "restarted s1 healthy", hall)

        status = hall.stop(signal.SIGTERM)
        assert status == 128 + signal.SIGTERM, hall.output()
        assert hall.leftovers() == [], f"left running after SIGTERM:\n{hall.output()}"
        assert not any(alive(pid) for pid in started)
        assert hall.lines[-1] == "xattn: stopped", hall.output()


def test_ctrl_c_stops_everything(haproxy):
    """Ctrl-C in a terminal signals the whole foreground process group, serve.sh and its
    children at once: everything must still stop, and serve.sh say so."""
    with LectureHall(processes=1) as hall:
        started = list(hall.pids)
        status = hall.stop(signal.SIGINT, group=True)
        assert status == 128 + signal.SIGINT, hall.output()
        assert hall.leftovers() == [], f"left running after Ctrl-C:\n{hall.output()}"
        assert not any(alive(pid) for pid in started)
        assert hall.lines[-1] == "xattn: stopped", hall.output()
