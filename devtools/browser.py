"""Run `streamlit run app.py` on a free local port and drive it from headless Chromium.

Used by the browser tests, scripts/make_screenshot.py and benchmarks/load_test.py. It imports
neither pytest nor playwright at module level, so a script can use the server part alone.

The browser is Debian's Chromium (``apt-get install -y chromium``) driven by the pip package
``playwright``; ``playwright install`` (a browser download) is never needed.

Synchronisation never relies on fixed sleeps: the server is ready when its health endpoint
answers (polled until a deadline), a page is ready when Streamlit reports its script finished
(``[data-testid="stApp"][data-test-script-state="notRunning"]``), no skeleton is left and the
chart satisfies the test's condition (polled in the page by ``wait_for_function``).
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]
REQUIRE_ENV = "XATTN_REQUIRE_BROWSER"
TIMEOUT_MS = 60_000   # a loaded 2-core CI machine can take several seconds per rerun


# --- the server ------------------------------------------------------------------------------

PORTS_ENV = "XATTN_PORTS"   # e.g. "9500-9800": where servers started here take their ports


def port_range() -> range | None:
    """The ports ``$XATTN_PORTS`` allows (``LOW-HIGH``, both included), or None: any free one
    (a machine shared with others who keep to ranges of their own)."""
    text = os.environ.get(PORTS_ENV, "").strip()
    if not text:
        return None
    low, _, high = text.partition("-")
    return range(int(low), int(high or low) + 1)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def free_ports(count: int = 1) -> int:
    """The first of ``count`` consecutive ports free on 127.0.0.1 when this looks (within
    ``$XATTN_PORTS`` if set): a candidate only, as another program may take them meanwhile."""
    allowed = port_range()
    if allowed is None:
        for _ in range(200):
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                first = s.getsockname()[1]
            if first + count <= 65536 and all(_bindable(p) for p in range(first, first + count)):
                return first
        raise RuntimeError(f"no {count} consecutive free ports found")
    import random
    starts = list(allowed)[: max(0, len(allowed) - count + 1)]
    random.shuffle(starts)     # two runs at once rarely try the same ports first
    for first in starts:
        if all(_bindable(p) for p in range(first, first + count)):
            return first
    raise RuntimeError(f"no {count} consecutive free ports in {PORTS_ENV}={allowed.start}-"
                       f"{allowed.stop - 1}")


def free_port() -> int:
    return free_ports(1)


class StreamlitServer:
    """``python -m streamlit run app.py`` (or ``script``) on 127.0.0.1, stopped by ``stop()``.

    Use as a context manager: ``with StreamlitServer() as server: ...`` gives ``server.url``
    (ready: its health endpoint answered) and ``server.pid``; the process ends on exit.
    """

    def __init__(self, port: int | None = None, *, log: Path | None = None,
                 extra_args: tuple[str, ...] = (), script: str = "app.py",
                 root: Path = ROOT, env: dict[str, str] | None = None):
        self.script = script      # relative to ``root``: this checkout, or another one
        self.root = Path(root)
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.log_path = log
        self.extra_args = extra_args
        self.env = env            # on top of this process's environment (a store's path)
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def pid(self) -> int:
        assert self.proc is not None, "server not started"
        return self.proc.pid

    def start(self, timeout: float = 90.0) -> StreamlitServer:
        cmd = [sys.executable, "-m", "streamlit", "run", self.script,
               "--server.port", str(self.port), "--server.address", "127.0.0.1",
               "--server.headless", "true", "--browser.gatherUsageStats", "false",
               # other people edit the checkout while tests run: no reloads mid-test
               "--server.fileWatcherType", "none", *self.extra_args]
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "wb")  # noqa: SIM115 - closed in stop()
        out = self._log if self._log is not None else subprocess.DEVNULL
        self.proc = subprocess.Popen(cmd, cwd=self.root, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL,
                                     env=None if self.env is None else {**os.environ, **self.env})
        try:
            self._wait_healthy(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_healthy(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        health = f"{self.url}_stcore/health"
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"streamlit exited with code {self.proc.returncode} before "
                                   f"it was healthy; log: {self.log_tail()}")
            try:
                with urllib.request.urlopen(health, timeout=2) as r:
                    if r.status == 200 and r.read().strip() == b"ok":
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError, OSError):
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"{health} did not answer within {timeout:.0f} s; log: "
                                   f"{self.log_tail()}")
            time.sleep(0.2)   # poll interval of a bounded loop, not a synchronisation point

    def log_tail(self, n: int = 2000) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        if self._log is not None:
            self._log.flush()
        return self.log_path.read_bytes()[-n:].decode(errors="replace")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=15)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> StreamlitServer:
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.stop()


# --- the browser -----------------------------------------------------------------------------

def chromium_path() -> str | None:
    for candidate in (os.environ.get("XATTN_CHROMIUM"), "/usr/bin/chromium",
                      shutil.which("chromium")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def browser_missing() -> str | None:
    """Why the browser tests cannot run here, or None when they can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the pip package `playwright` is not installed (pip install -r requirements-dev.txt)"
    if chromium_path() is None:
        return "Chromium is not installed (`apt-get install -y chromium` gives /usr/bin/chromium)"
    return None


def browser_required() -> bool:
    return os.environ.get(REQUIRE_ENV, "").strip() not in ("", "0", "false", "no")


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)


# Counts finished script runs (the stApp's state changing to "notRunning"), whatever React
# batches: the new value of a mutation is the old value of the next one on the same element.
RUN_COUNTER_JS = """
window.__xattnRuns = 0;
new MutationObserver((ms) => {
  ms.forEach((m, i) => {
    const next = ms.slice(i + 1).find((n) => n.target === m.target);
    const now = next ? next.oldValue : m.target.getAttribute('data-test-script-state');
    if (now === 'notRunning' && m.oldValue !== 'notRunning') window.__xattnRuns += 1;
  });
}).observe(document, {subtree: true, attributes: true, attributeOldValue: true,
                      attributeFilter: ['data-test-script-state']});
"""

# The figure of one st.plotly_chart, read from Plotly's own `gd.data`, as plain JSON lists.
# z arrives as Plotly's typed-array spec {dtype, bdata, shape}, which plotly.js decodes into
# `_inputArray` (an array of Float32Array rows); older builds keep plain arrays of arrays.
# The key "heads" gathers the Heads view's charts (one per head, keys head_1, head_2, ...): every
# head's heatmap in order, then their other traces (mask crosses, gold marks).
CHART_JS = """
(key) => {
  const plots = key === 'heads'
    ? [...Array(16).keys()]
        .map((h) => document.querySelector(`.st-key-head_${h + 1} .js-plotly-plot`))
        .filter((gd) => gd)
    : [document.querySelector(`.st-key-${key} .js-plotly-plot`)].filter((gd) => gd);
  if (!plots.length || !plots.every((gd) => Array.isArray(gd.data))) return null;
  const plain = (v) => {
    if (v === undefined || v === null) return null;
    if (v._inputArray !== undefined) v = v._inputArray;
    else if (v.bdata !== undefined) return {bdata: v.bdata, dtype: v.dtype, shape: String(v.shape)};
    if (ArrayBuffer.isView(v)) return Array.from(v);
    return Array.from(v, (r) => (r !== null && typeof r === 'object') ? Array.from(r) : r);
  };
  const traces = plots.flatMap((gd) => gd.data.map((t) => ({
      type: t.type, name: t.name, x: plain(t.x), y: plain(t.y),
      z: t.type === 'heatmap' ? plain(t.z) : null})));
  return traces.filter((t) => t.type === 'heatmap').concat(
      traces.filter((t) => t.type !== 'heatmap'));
}
"""
# Plotly has drawn every head (its image of the heatmap is in the page).
HEADS_DRAWN_JS = """[...document.querySelectorAll('[class*="st-key-head_"] g.hm image')].length"""

# The page's notices (link and "changed" notices, errors), not the banner naming the weights.
NOTICES = '[data-testid="stAlert"]:not(.st-key-banner *)'
BANNER = '.st-key-banner [data-testid="stAlert"]'

APP_IDLE_JS = """
() => !!document.querySelector('[data-testid="stApp"][data-test-script-state="notRunning"]')
      && !document.querySelector('[data-testid="stSkeleton"]')
"""


def runs(page) -> int:
    return page.evaluate("window.__xattnRuns || 0")


def wait_for_app(page, condition: str = "true", *, after_runs: int = 0, key: str = "heads",
                 timeout: float = TIMEOUT_MS) -> None:
    """Wait until the script finished more than ``after_runs`` times, the page is idle and the
    JS expression ``condition`` holds, where ``traces`` is the chart's trace list (or null)."""
    page.wait_for_function(
        f"""([key, after]) => {{
              if ((window.__xattnRuns || 0) <= after || !({APP_IDLE_JS})()) return false;
              const traces = ({CHART_JS})(key);
              return !!({condition});
            }}""",
        arg=[key, after_runs], timeout=timeout, polling=100)


def chart(page, key: str = "heads") -> list[dict] | None:
    return page.evaluate(CHART_JS, key)


def decode_z(z):
    """A heatmap's z from CHART_JS as a float64 ndarray (lists, or Plotly's bdata spec)."""
    import base64

    import numpy as np
    if isinstance(z, dict):
        arr = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"])
        return arr.reshape([int(n) for n in z["shape"].split(",")]).astype(np.float64)
    return np.asarray(z, dtype=np.float64)


def heatmaps(traces: list[dict]) -> list[dict]:
    return [t for t in traces if t["type"] == "heatmap"]


def tick_texts(page, axis: str, key: str = "head_1") -> list[str]:
    """Rendered tick labels (SVG textContent) of a chart's (first subplot's) x or y axis."""
    return page.evaluate(
        """([key, axis]) => [...document.querySelectorAll(
               `.st-key-${key} .${axis}axislayer-above .${axis}tick text`)]
               .map((t) => t.textContent)""", [key, axis])


# Every element of the page's main column that is wider than the screen or clips its text.
CUT_TEXT_JS = """
() => [...document.querySelectorAll(
        '[data-testid="stMain"] p, [data-testid="stMain"] h1, [data-testid="stMain"] h3,'
        + ' [data-testid="stMain"] button, [data-testid="stMain"] label')]
  .filter((e) => e.offsetParent !== null)
  .filter((e) => { const r = e.getBoundingClientRect();
                   return r.width > 0 && (r.right > window.innerWidth + 1 || r.left < -1); })
  .map((e) => e.textContent.slice(0, 60))
"""


def coloured_share(png: bytes) -> float:
    """Share of a screenshot's pixels that are coloured (channel spread > 40: no white, grey
    or black); viridis, the weights' colour scale, has no greys."""
    import io

    import numpy as np
    from PIL import Image

    rgb = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)
    return float(((rgb.max(-1) - rgb.min(-1)) > 40).mean())


# --- for the tests --------------------------------------------------------------------------

def unavailable(reason: str):
    """Skip with the reason, or fail where the browser tests are required (CI)."""
    import pytest

    if browser_required():
        pytest.fail(f"{REQUIRE_ENV} is set but the browser tests cannot run: {reason}",
                    pytrace=False)
    pytest.skip(f"browser tests skipped: {reason}")


class Page:
    """A tab of the app plus everything it reported: console errors, dialogs, page errors."""

    def __init__(self, context, server):
        self.server = server
        self.page = context.new_page()
        self.page.set_default_timeout(60_000)
        self.errors: list[str] = []
        self.dialogs: list[str] = []
        self.timings: list[tuple[str, float]] = []    # printed with -s: where the time goes
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("dialog", self._dialog)
        self.page.add_init_script(RUN_COUNTER_JS)

    def _dialog(self, dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def open(self, query: dict | None = None, condition: str = "traces && traces.length",
             *, url: str | None = None) -> None:
        q = urllib.parse.urlencode(query or {}, doseq=True)
        start = time.perf_counter()
        self.page.goto(url or self.server.url + (f"?{q}" if q else ""))
        wait_for_app(self.page, condition)
        self.timings.append(("open", time.perf_counter() - start))

    def act(self, action, condition: str, label: str = "act") -> None:
        """Do something in the page, then wait for the rerun it triggers and for ``condition``.

        A condition that was false before the action proves by itself that the rerun happened;
        only a condition already true needs the count of finished runs to go up (a fast cached
        rerun can leave no "running" state for the counter to see).
        """
        start = time.perf_counter()
        before = runs(self.page)
        already = self.page.evaluate(
            f"(key) => {{ const traces = ({CHART_JS})(key); return !!({condition}); }}",
            "heads")
        action()
        wait_for_app(self.page, condition, after_runs=before if already else -1)
        self.timings.append((label, time.perf_counter() - start))

    def traces(self) -> list[dict]:
        return chart(self.page)

    def zs(self) -> list:
        return [decode_z(t["z"]) for t in heatmaps(self.traces())]  # ndarrays

    def query(self) -> dict[str, list[str]]:
        return urllib.parse.parse_qs(urllib.parse.urlsplit(self.page.url).query)

    def assert_clean(self) -> None:
        assert self.page.locator('[data-testid="stException"]').count() == 0, \
            self.page.locator('[data-testid="stException"]').all_inner_texts()
        assert not self.errors, f"console errors: {self.errors}"
        assert not self.dialogs, f"dialogs fired: {self.dialogs}"


# --- a class's phones (the light page of xattn/server/assets/phone.*) ---------------------
# A student's link (/?room=CODE) is answered with a page of our own, not the Streamlit app:
# its elements have ids (#where, #receipt, #verdict, ...), and it is ready when they say so.

# Phones' windows (CSS px): the common sizes, two of them narrower or taller than the rest.
PHONE_SIZES = ((390, 844), (390, 844), (393, 852), (375, 812), (360, 740), (412, 915))
# Chromium's DevTools throttling of a slow 3G link (the phone_load benchmark's): bytes/s.
SLOW_3G = {"latency": 150, "downloadThroughput": 1_600_000 / 8, "uploadThroughput": 750_000 / 8}
# The question is on the phone's screen: its text and the controls to answer it.
QUESTION_SHOWN_JS = """(() => { const q = document.getElementById('question'),
  ask = document.getElementById('ask');
  return !!q && q.textContent.trim().length > 0 && !!ask && !ask.hidden
    && !!document.querySelector('#controls .pill, #controls input'); })()"""
# What a phone's page shows, read from its elements.
PHONE_STATE_JS = """() => {
  const $ = (id) => document.getElementById(id);
  const shown = (e) => !!e && !e.hidden && e.getClientRects().length > 0;
  const m = /step (\\d+) of (\\d+)(?: · round (\\d+))?/.exec($('where').textContent);
  return {where: $('where').textContent, step: m ? +m[1] : null,
          round: m ? +(m[3] || 1) : null, title: $('title').textContent,
          status: $('status').hidden ? null : $('status').textContent,
          receipt: $('receipt').textContent, receipt_class: $('receipt').className,
          asking: shown($('ask')),
          open: !!document.querySelector(
            '#controls button:not([disabled]), #controls input:not([disabled])'),
          pressed: [...document.querySelectorAll('#controls .pill[aria-pressed="true"]')]
                     .map((b) => b.textContent.trim()),
          wait: $('wait').textContent, revealed: shown($('reveal')),
          verdict: $('verdict').textContent.trim(),
          charts: document.querySelectorAll('#charts figure svg[role="img"]').length,
          gone: shown($('join')), join_why: $('join-why').textContent};
}"""


def start_hall(processes: int = 2, *, env: dict[str, str] | None = None,
               run_dir: Path | None = None, attempts: int = 5):
    """``deploy/serve.sh processes PORT`` (a `devtools.lecture_hall.LectureHall`, started) on
    ports free when it looks, within ``$XATTN_PORTS`` if set; other ports after one was taken
    meanwhile (serve.sh's status 3)."""
    from devtools.lecture_hall import PORT_IN_USE, LectureHall

    for attempt in range(1, attempts + 1):
        hall = LectureHall(processes=processes, env=dict(env or {}), run_dir=run_dir,
                           port=free_ports(processes + 1))
        try:
            return hall.start()
        except RuntimeError:
            if hall.proc is None or hall.proc.returncode != PORT_IN_USE or attempt == attempts:
                raise
    raise AssertionError("unreachable")


class Wifi:
    """A phone's own network to a server: a TCP proxy on 127.0.0.1 (``url``) in front of
    ``upstream_port``, whose connections a test can cut.

    Chromium's offline emulation (``context.set_offline(True)``) fails every new request but
    leaves a connection already open alone: a phone's stream of its room kept flowing through
    it. A phone that loses its network loses both, so a test does both: `off` shuts every
    connection made through here and refuses new ones until `on`.
    """

    def __init__(self, upstream_port: int, port: int | None = None):
        import threading

        self.upstream = ("127.0.0.1", upstream_port)
        self.port = port or free_port()
        self.down = False
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", self.port))
        self._listener.listen(128)
        threading.Thread(target=self._accept, daemon=True, name=f"wifi-{self.port}").start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def _accept(self) -> None:
        import threading

        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return                                   # closed
            if self.down:
                client.close()
                continue
            try:
                server = socket.create_connection(self.upstream, timeout=10)
                server.settimeout(None)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._open.update((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, a: socket.socket, b: socket.socket) -> None:
        try:
            while data := a.recv(65536):
                b.sendall(data)
        except OSError:
            pass
        finally:
            for s in (a, b):
                self._shut(s)
            with self._lock:
                self._open.discard(a)

    @staticmethod
    def _shut(s: socket.socket) -> None:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def off(self) -> None:
        """Cut every open connection; refuse new ones."""
        self.down = True
        with self._lock:
            for s in self._open:
                self._shut(s)
            self._open.clear()

    def on(self) -> None:
        self.down = False

    def close(self) -> None:
        self.off()
        self._listener.close()

    def __enter__(self) -> Wifi:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# Before the page's own scripts: when each EventSource of the page opened (Date.now(), ms),
# in window.__xattnOpens (the phone's stream of its room: the first open, then reconnections).
STREAM_OPENS_JS = """
(() => {
  const Original = window.EventSource;
  window.__xattnOpens = [];
  window.EventSource = class extends Original {
    constructor(...args) {
      super(...args);
      this.addEventListener('open', () => window.__xattnOpens.push(Date.now()));
    }
  };
})();
"""


class Phone:
    """A student's phone: a touch, mobile browser context of its own (its cookies: one
    student) on the class's light page, and what it reported (page errors, console errors)."""

    def __init__(self, browser, name: str = "phone", width: int = 390, height: int = 844, *,
                 timeout_ms: float = 120_000, cookies: list[dict] | None = None,
                 locale: str | None = None):
        self.name, self.width, self.height = name, width, height
        extra = {"locale": locale} if locale else {}    # its Accept-Language and navigator's
        self.context = browser.new_context(viewport={"width": width, "height": height},
                                           is_mobile=True, has_touch=True,
                                           device_scale_factor=1, **extra)
        if cookies:
            self.context.add_cookies(cookies)
        self.page = self.context.new_page()
        self.page.set_default_timeout(timeout_ms)
        self.page.add_init_script(STREAM_OPENS_JS)
        self.timeout_ms = timeout_ms
        self.page_errors: list[str] = []
        self.console_errors: list[str] = []
        self.page.on("pageerror", lambda e: self.page_errors.append(str(e)))
        self.page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        self.answers: list[str] = []      # every answer sent and its receipt, for messages
        self.page.on("requestfinished", self._answered)
        self.page.on("requestfailed", lambda r: r.url.endswith("/answer") and self.answers.append(
            f"{time.time():.2f} {r.post_data} -> failed {r.failure}"))

    def __repr__(self) -> str:
        return f"Phone({self.name}, {self.width}x{self.height})"

    def _answered(self, request) -> None:
        if not request.url.endswith("/answer"):
            return
        try:
            response = request.response()
            said = f"{response.status} {response.text()[:160]}" if response else "no response"
        except Exception as err:  # noqa: BLE001 - a page gone meanwhile: say so
            said = f"unreadable ({err})"
        server = (response.headers.get("x-xattn-server", "") if response else "")
        self.answers.append(f"{time.time():.2f} {request.post_data} -> {said} {server}".strip())

    def open(self, url: str, ready: str = QUESTION_SHOWN_JS) -> Phone:
        """Open ``url`` (a student's link) and wait until ``ready`` (JS) holds."""
        self.page.goto(url)
        self.wait(ready)
        return self

    def wait(self, condition: str, timeout_ms: float | None = None, what: str = "") -> None:
        """Wait until the JS expression ``condition`` holds in the page (polled)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.page.wait_for_function(f"() => !!({condition})", polling=50,
                                        timeout=timeout_ms or self.timeout_ms)
        except PlaywrightTimeout:
            raise AssertionError(f"{self.name}: {what or condition} never held; the phone "
                                 f"shows {self.state()}; its answers: {self.answers}") from None

    def state(self) -> dict:
        return self.page.evaluate(PHONE_STATE_JS)

    def streams(self) -> int:
        """How many times the page's stream of its room opened (reconnections count)."""
        return self.page.evaluate("(window.__xattnOpens || []).length")

    def wait_streams(self, count: int) -> float:
        """Wait until the stream opened ``count`` times; when it last did (s since the
        epoch, the page's clock)."""
        self.wait(f"(window.__xattnOpens || []).length >= {count}",
                  what=f"the stream opened {count} times")
        return self.page.evaluate("window.__xattnOpens[window.__xattnOpens.length - 1]") / 1000

    def on_step(self, n: int, *, revealed: bool = False, open_: bool | None = None,
                timeout_ms: float | None = None) -> None:
        """Wait until the phone shows step ``n`` (revealed, or not), its controls open to a
        tap or not (``open_``; None: either)."""
        cond = [f"/step {n} of /.test(document.getElementById('where').textContent)",
                "!document.getElementById('reveal').hidden" if revealed else
                "document.getElementById('reveal').hidden"]
        if revealed:
            cond.append("document.querySelectorAll('#charts figure svg').length > 0")
        if open_ is not None:
            cond.append(("" if open_ else "!") + "document.querySelector('#controls button:not"
                        "([disabled]), #controls input:not([disabled])')")
        self.wait(" && ".join(cond), timeout_ms,
                  f"step {n} {'revealed' if revealed else 'asking'}")

    # --- answering ---------------------------------------------------------------------------
    def tap_option(self, i: int) -> None:
        """Tap the i-th pill of a choice or token question."""
        self.page.locator("#controls .pill").nth(i).tap()

    def send_number(self, text: str, *, enter: bool = False) -> None:
        """Type a number and tap Send (or press Enter)."""
        box = self.page.locator("#number")
        box.tap()
        box.fill(text)
        if enter:
            box.press("Enter")
        else:
            self.page.locator("#controls button.primary").tap()

    def tap_part(self, k: int, label: str) -> None:
        """Tap the pill ``label`` (e.g. "aligns") of part (head) ``k``."""
        self.page.locator("#controls .part").nth(k).get_by_role(
            "button", name=label, exact=True).tap()

    def tap_link(self, target: int, source: int) -> None:
        """Tap target word ``target`` (unless it is the one picked), then source ``source``."""
        pill = self.page.locator('#controls [aria-label="Target word"] .pill').nth(target)
        if pill.get_attribute("aria-pressed") != "true":
            pill.tap()
            self.wait(f"document.querySelectorAll('#controls [aria-label=\"Target word\"] "
                      f".pill')[{target}].getAttribute('aria-pressed') === 'true'")
        self.page.locator("#controls .group").nth(1).locator(".pill").nth(source).tap()

    def take_back(self, text: str) -> None:
        """Tap a drawn link in the list of links (taking it back)."""
        self.page.locator('#controls [aria-label="Your links"] .pill', has_text=text).tap()

    def tap_sure(self, label: str) -> None:
        """Tap how sure the answer is (``sure``, ``think so``, ``guess``), where the room
        asks it."""
        self.page.locator("#sure").get_by_role("button", name=label, exact=True).tap()

    def wait_receipt(self, state: str, starts: str = "", timeout_ms: float | None = None) -> str:
        """Wait until the receipt is of ``state`` (saved, sending, retrying, refused, hint)
        and its text starts with ``starts``; its text."""
        import json

        self.wait(f"document.getElementById('receipt').classList.contains({json.dumps(state)})"
                  f" && document.getElementById('receipt').textContent.startsWith("
                  f"{json.dumps(starts)})", timeout_ms, f"a receipt {state} {starts!r}")
        return self.page.inner_text("#receipt")

    # --- who it is -----------------------------------------------------------------------------
    def cookie(self, name: str) -> str | None:
        return next((c["value"] for c in self.context.cookies() if c["name"] == name), None)

    def server(self) -> str | None:
        """The process HAProxy's affinity cookie names for this phone."""
        return self.cookie("XATTN_SERVER")

    def student(self, store, code: str | None = None) -> str | None:
        """The student id the server gave this browser in room ``code`` (by default the
        only room it joined): its signed cookie."""
        from xattn.classroom.codes import student_of
        from xattn.ui.room.identity import STUDENT_COOKIE

        joined = {c["name"][len(STUDENT_COOKIE):]: c["value"] for c in self.context.cookies()
                  if c["name"].startswith(STUDENT_COOKIE)}
        if code is None and len(joined) == 1:
            code = next(iter(joined))
        value = joined.get(code or "")
        return None if value is None else student_of(store.signing_keys(), value, code)

    # --- pixels --------------------------------------------------------------------------------
    def shot(self, selector: str, *, scroll: bool = True) -> bytes:
        """A screenshot of the first element matching ``selector`` as it is on the screen
        (scrolled into view first, as a student would)."""
        element = self.page.locator(selector).first
        if scroll:
            element.scroll_into_view_if_needed()
        return element.screenshot(animations="disabled")

    def in_view(self, selector: str) -> bool:
        """The element's box lies in the window and the element is what the screen shows at
        its centre (not covered by the sticky bar or anything else)."""
        return self.page.evaluate("""(sel) => {
          const e = document.querySelector(sel); if (!e) return false;
          const r = e.getBoundingClientRect();
          if (!r.width || !r.height || r.top < 0 || r.bottom > innerHeight || r.left < 0
              || r.right > innerWidth) return false;
          const at = document.elementFromPoint(r.left + Math.min(20, r.width / 2),
                                               r.top + r.height / 2);
          return !!at && (at === e || e.contains(at));
        }""", selector)

    def network_errors_only(self) -> list[str]:
        """Console errors other than a request that failed (expected while offline)."""
        return [e for e in self.console_errors if not e.startswith("Failed to load resource")]

    def close(self) -> None:
        self.context.close()


def pixels(png: bytes):
    """A screenshot as an (h, w, 3) int16 RGB array."""
    import io

    import numpy as np
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=np.int16)


def _viridis(samples: int = 64):
    import numpy as np
    from plotly.colors import sequential

    anchors = np.array([[int(h[i:i + 2], 16) for i in (1, 3, 5)] for h in sequential.Viridis],
                       dtype=float)
    t = np.linspace(0, len(anchors) - 1, samples)
    i = np.minimum(t.astype(int), len(anchors) - 2)
    return anchors[i] + (anchors[i + 1] - anchors[i]) * (t - i)[:, None]


def viridis_colours(png: bytes, *, bins: int = 8, least: int = 25, tolerance: float = 14.0) -> int:
    """How many of ``bins`` equal stretches of the viridis scale have at least ``least``
    pixels of the screenshot within ``tolerance`` (RGB distance) of a colour of theirs: the
    distinct colours a heatmap shows (1: one flat colour; 0: none of viridis)."""
    import numpy as np

    rgb = pixels(png).reshape(-1, 3).astype(float)
    scale = _viridis()
    dist = np.linalg.norm(rgb[:, None, :] - scale[None, :, :], axis=-1)
    near = dist.min(axis=1) <= tolerance
    where = dist.argmin(axis=1)[near] * bins // len(scale)
    return int((np.bincount(where, minlength=bins) >= least).sum())


def dominant_colour(png: bytes) -> tuple[int, int, int]:
    """The commonest colour of a screenshot (a box's background)."""
    import numpy as np

    rgb = pixels(png).reshape(-1, 3)
    colours, counts = np.unique(rgb, axis=0, return_counts=True)
    return tuple(int(v) for v in colours[counts.argmax()])


def ink_share(png: bytes, *, distance: float = 120.0) -> float:
    """Share of a screenshot's pixels far (RGB distance over ``distance``) from its commonest
    colour: the text (or anything else) drawn on a box's background."""
    import numpy as np

    rgb = pixels(png).reshape(-1, 3)
    background = np.asarray(dominant_colour(png))
    return float((np.linalg.norm(rgb - background, axis=1) > distance).mean())


# --- a phone's first load -------------------------------------------------------------------

# In the page before its own scripts: the time (ms since navigation began) of the first
# animation frame in which the condition holds (that frame paints it).
_READY_AT_JS = """
(() => {
  const ready = () => { try { return !!(CONDITION); } catch (e) { return false; } };
  const look = () => { if (ready()) window.__xattnReadyAt = performance.now();
                       else requestAnimationFrame(look); };
  requestAnimationFrame(look);
})();
"""


@dataclass
class Load:
    """One first load of a page: every response (url, type, bytes on the wire), the seconds
    from navigation to the condition on screen."""

    requests: list[tuple[str, str, int]]
    seconds: float
    joined: float = float("nan")   # navigation to the phone's join done (it can answer)

    @property
    def bytes(self) -> int:
        return sum(n for _, _, n in self.requests)


def first_load(browser, url: str, *, ready: str = QUESTION_SHOWN_JS,
               throttle: dict | None = None, size: tuple[int, int] = (390, 844),
               settle_ms: float = 500, timeout_ms: float = 180_000, cpu: float = 1.0,
               joined: bool = False) -> Load:
    """Open ``url`` in a new phone context (empty cache, no cookies), ``throttle`` (e.g.
    `SLOW_3G`) applied through the DevTools protocol, and count what came over the wire until
    ``ready`` held on screen (and ``settle_ms`` after: a late request counts too).

    Bytes on the wire per response, from the DevTools protocol: ``loadingFinished``'s
    ``encodedDataLength`` (headers and body as received, compressed) for a finished response;
    for one still open at the end (the room's stream) its headers plus the body received so
    far (``dataReceived``; the stream is not compressed). Requests sent are not counted.
    ``cpu``: Chromium's CPU slowed that many times (a phone's); ``joined``: also wait until
    the phone's page has joined the class (its work done and its cookie set).
    """
    context = browser.new_context(viewport={"width": size[0], "height": size[1]},
                                  is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.add_init_script(_READY_AT_JS.replace("CONDITION", ready))
        cdp = context.new_cdp_session(page)
        seen: dict[str, dict] = {}

        def sent(e):
            seen.setdefault(e["requestId"], {"data": 0, "enc": 0, "head": 0, "done": None}).update(
                url=e["request"]["url"], type=e.get("type", ""))

        def head(e):
            r = seen.setdefault(e["requestId"], {"data": 0, "enc": 0, "done": None})
            r["head"] = int(e["response"].get("encodedDataLength") or 0)
            r.setdefault("url", e["response"]["url"])
            r.setdefault("type", e.get("type", ""))

        def data(e):
            r = seen.get(e["requestId"])
            if r is not None:
                r["data"] += int(e.get("dataLength") or 0)
                r["enc"] += int(e.get("encodedDataLength") or 0)

        def done(e):
            r = seen.get(e["requestId"])
            if r is not None:
                r["done"] = int(e.get("encodedDataLength") or 0)

        cdp.on("Network.requestWillBeSent", sent)
        cdp.on("Network.responseReceived", head)
        cdp.on("Network.dataReceived", data)
        cdp.on("Network.loadingFinished", done)
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        if throttle:
            cdp.send("Network.emulateNetworkConditions", {"offline": False, **throttle})
        if cpu != 1.0:
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": cpu})
        page.goto(url, wait_until="commit", timeout=timeout_ms)
        page.wait_for_function("() => window.__xattnReadyAt !== undefined", polling=50,
                               timeout=timeout_ms)
        if joined:
            page.wait_for_function("() => window.__xattnJoinedAt !== undefined", polling=50,
                                   timeout=timeout_ms)
        page.wait_for_timeout(settle_ms)
        seconds = page.evaluate("window.__xattnReadyAt") / 1000
        joined_at = page.evaluate("window.__xattnJoinedAt") if joined else None
        rows = []
        for r in seen.values():
            if "url" not in r or r["url"].startswith("data:"):
                continue
            wire = r["done"] if r["done"] is not None else r["head"] + (r["enc"] or r["data"])
            rows.append((r["url"], r["type"], wire))
        return Load(rows, seconds, joined_at / 1000 if joined_at is not None else float("nan"))
    finally:
        context.close()


# --- the lecturer's page (the Streamlit app) ------------------------------------------------

# The lecturer's page follows its room (xattn/ui/room/follow.py keeps, per room, the last
# pulse and what the page drew in window.__xattnFollow): quiet when every room's last pulse
# is the version drawn (no rerun about to be asked). True where there is no follower.
FOLLOW_QUIET_JS = """(() => { const all = window.__xattnFollow;
  return !all || Object.values(all).every((f) => !f.last || !f.drawn
                                          || f.last.version === f.drawn.version); })()"""


class Host:
    """The lecturer's page of a class (the Streamlit app): ``start`` makes a room
    (``?class=new``; the link becomes ``?room=CODE&view=Lesson``, the key a cookie), `press`
    uses its own buttons (*Reveal*, *Next step*, *Ask again*)."""

    RECOVER_MS = 20_000

    def __init__(self, browser, base_url: str, width: int = 1440, height: int = 900, *,
                 timeout_ms: float = 120_000, store=None):
        self.base_url, self.timeout_ms = base_url, timeout_ms
        self.store = store            # the class store, if the caller has it: `act` checks it
        self.context = browser.new_context(viewport={"width": width, "height": height})
        self.page = self.context.new_page()
        self.page.set_default_timeout(timeout_ms)
        self.page.add_init_script(RUN_COUNTER_JS)
        self.code = self.key = ""
        self.sockets: list[list] = []     # [opened at (time.time()), frames received]
        self.recoveries: list[str] = []   # presses whose result the page did not show (act)
        self.extra: dict = {}

        def opened(ws):
            record = [time.time(), 0]
            self.sockets.append(record)
            ws.on("framereceived", lambda _: record.__setitem__(1, record[1] + 1))
        self.page.on("websocket", opened)

    def start(self, query: str = "class=new", ready: str = ".st-key-reveal") -> tuple[str, str]:
        """A new class (``query``: its link's; a homework: ``class=new&homework=7``, its page
        ready when ``ready`` shows); its code and host key."""
        self.page.goto(f"{self.base_url}?{query}")
        self.page.wait_for_selector(ready, timeout=self.timeout_ms)
        wait_for_app(self.page, timeout=self.timeout_ms)
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.page.url).query))
        assert "class" not in q and "host" not in q and q.get("view") == "Lesson", self.page.url
        self.code = q["room"]
        self.key = self.host_cookie(self.timeout_ms / 1000)
        return self.code, self.key

    def host_cookie(self, timeout: float = 0.0) -> str:
        """The host key this browser holds for its class (an HttpOnly cookie the page's own
        request set, ``xattn/server/host.py``), waiting up to ``timeout`` s for it."""
        deadline = time.monotonic() + timeout
        while True:
            key = next((c["value"] for c in self.context.cookies()
                        if c["name"] == f"xattn_host_{self.code}"), "")
            if key or time.monotonic() >= deadline:
                return key
            self.page.wait_for_timeout(100)     # poll interval (the page's events run here)

    @property
    def student_url(self) -> str:
        return f"{self.base_url}?room={self.code}"

    def idle(self, condition: str = "true", timeout_ms: float | None = None) -> None:
        """Wait until the page ran, is idle, follows its room as drawn (`FOLLOW_QUIET_JS`)
        and ``condition`` (JS) holds."""
        wait_for_app(self.page, f"({FOLLOW_QUIET_JS}) && ({condition})",
                     timeout=timeout_ms or self.timeout_ms)

    def press(self, key: str) -> float:
        """Press the button keyed ``key`` itself, once the page is idle and draws it once; the
        time of the press. (A click by coordinates can land on a neighbour when a redraw of
        the class panel shifts it meanwhile.)"""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        shown = f"document.querySelectorAll('.st-key-{key}').length === 1"
        try:
            self.idle(shown, timeout_ms=min(self.RECOVER_MS, self.timeout_ms))
        except PlaywrightTimeout:     # seen: a step drawn with the last one's settings and no
            self.recoveries.append(   # class panel (see `act`)
                f"{key}: no such button {self.RECOVER_MS / 1000:g} s on; the class's link "
                "opened again")
            self.reopen()
            self.idle(shown)
        pressed = time.time()
        self.page.locator(f".st-key-{key} button").first.dispatch_event("click")
        return pressed

    def act(self, key: str, done: str, what: str, moved=None) -> float:
        """Press ``key`` and wait until the page shows ``done`` (JS) and, with a ``store``,
        the class store has it (``moved(view)``: a ``RoomView`` is as the press makes it).

        A page that does not get there within `RECOVER_MS` has its class's link opened
        again, as a lecturer would, and is pressed again if the class has not moved (noted in
        ``recoveries``). Seen with the page following its room: the press dropped, or the page
        drawing the next step while the class stayed on this one, or the next step drawn with
        this one's settings and no class panel."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        def there(timeout_ms: float) -> bool:
            try:
                self.idle(done, timeout_ms=timeout_ms)
            except PlaywrightTimeout:
                return False
            deadline = time.monotonic() + 5
            while not self._moved(moved):          # the store is written before the page
                if time.monotonic() > deadline:     # draws it: a few seconds at most
                    return False
                time.sleep(0.1)
            return True

        pressed = self.press(key)
        if there(min(self.RECOVER_MS, self.timeout_ms)):
            return pressed
        self.recoveries.append(f"{what}: not shown {self.RECOVER_MS / 1000:g} s after the "
                               "press; the class's link opened again")
        self.reopen()
        if not self._moved(moved) or (moved is None
                                      and not self.page.evaluate(f"() => !!({done})")):
            self.recoveries[-1] += "; pressed again"
            pressed = self.press(key)
        if not there(self.timeout_ms):
            view = self.store.room_view(self.code) if self.store is not None else None
            shown = self.page.evaluate("""() => [[...document.querySelectorAll('h2')]
                .map((h) => h.textContent).filter((t) => t.startsWith('Step ')),
              ['reveal', 'ask_again', 'class_next'].filter((k) =>
                document.querySelector('.st-key-' + k))]""")
            raise AssertionError(f"{what}: the lecturer's page or the class never got there; "
                                 f"the page shows {shown}, the store "
                                 f"{view and (view.step, view.phase, view.version)}")
        return pressed

    def _moved(self, moved) -> bool:
        if moved is None or self.store is None:
            return True
        return bool(moved(self.store.room_view(self.code)))

    def follows(self, condition: str, what: str) -> None:
        """Wait until the page, following its room, shows ``condition`` (JS); one that does
        not within `RECOVER_MS` (seen: a page quiet on the room's version but drawing the
        step before) has its class's link opened again, noted in ``recoveries``."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        try:
            self.idle(condition, timeout_ms=min(self.RECOVER_MS, self.timeout_ms))
            return
        except PlaywrightTimeout:
            pass
        self.recoveries.append(f"{what}: not followed {self.RECOVER_MS / 1000:g} s after the "
                               "move; the class's link opened again")
        self.reopen()
        self.idle(condition)

    def add_device(self) -> str:
        """*Your devices* → *Add a device*: the one-time device code the page shows."""
        if not self.page.locator(".st-key-add_device button").first.is_visible():
            self.page.get_by_text("Your devices", exact=True).click()   # open the expander
        self.press("add_device")
        self.idle("/Device code [A-Z2-9]{4}-[A-Z2-9]{4}/.test(document.body.innerText)")
        found = re.search(r"device=([A-Z2-9]{8})", self.page.evaluate("document.body.innerText"))
        assert found, "no device link on the page"
        return found[1]

    def pair(self, code: str, device: str, **extra) -> None:
        """Open a class's one-time device link (``?room=CODE&device=…``) on this browser: it
        then drives the class with the key its cookie gets."""
        self.code, self.extra = code, extra
        query = urllib.parse.urlencode({"room": code, "device": device, "view": "Lesson",
                                        **extra})
        self.page.goto(f"{self.base_url}?{query}")
        self.idle("document.querySelectorAll('.st-key-reveal, .st-key-ask_again').length >= 1")
        self.key = self.host_cookie(self.timeout_ms / 1000)
        assert self.key, "the device link gave this browser no host cookie"

    def join(self, code: str, key: str, **extra) -> None:
        """Open an existing class's host link (``extra``: more of the link, e.g.
        ``present=1`` for a projector)."""
        self.code, self.key, self.extra = code, key, extra
        self.reopen()

    def reopen(self) -> None:
        """Open the class's link again (a fresh session on the room as it is)."""
        query = urllib.parse.urlencode({"room": self.code, "host": self.key, "view": "Lesson",
                                        **self.extra})
        self.page.goto(f"{self.base_url}?{query}")
        self.idle("document.querySelectorAll('.st-key-reveal, .st-key-ask_again').length >= 1")

    def switch(self, key: str, moved=None) -> float:
        """Flip the class panel's toggle keyed ``key`` (*Ask how sure*, ...) once the page is
        idle; wait until the page shows it flipped and, with a ``store``, the class store has
        it (``moved(view)``). When it was flipped."""
        box = f"document.querySelector('.st-key-{key} input[type=\"checkbox\"]')"
        self.idle(f"!!{box}")
        was = self.page.evaluate(f"{box}.checked")
        flipped = time.time()
        self.page.locator(f".st-key-{key} label").first.click()
        self.idle(f"!!{box} && {box}.checked === {'false' if was else 'true'}")
        deadline = time.monotonic() + 10
        while not self._moved(moved):               # the store is written before the page
            assert time.monotonic() < deadline, f"{key}: the class store never had it"
            time.sleep(0.1)
        return flipped

    def reveal(self) -> float:
        return self.act("reveal", "document.querySelectorAll('.st-key-ask_again').length === 1",
                        "Reveal", lambda view: view.phase == "revealed")

    def ask_again(self) -> float:
        return self.act("ask_again", "document.querySelectorAll('.st-key-reveal').length === 1",
                        "Ask again", lambda view: view.phase != "revealed")

    def follow_up(self) -> float:
        """*Ask a follow-up: a new case* (after a reveal): a new round on another case."""
        return self.act("follow_up", "document.querySelectorAll('.st-key-reveal').length === 1",
                        "Ask a follow-up", lambda view: view.phase != "revealed"
                        and view.question.case > 0)

    def next(self, to: int) -> float:
        """*Next step*, then wait until the page shows step ``to`` and its class panel."""
        return self.act("class_next", f"document.body.innerText.includes('Step {to} of ') && "
                        "document.querySelectorAll('.st-key-reveal').length === 1",
                        f"Next step to {to}", lambda view: view.step == to)

    def reconnected(self, since: float) -> None:
        """Wait until the page opened a websocket after ``since`` (time.time()) that the
        server answered (its server restarted), and is idle."""
        deadline = time.monotonic() + self.timeout_ms / 1000
        while not any(at > since and frames for at, frames in self.sockets):
            assert time.monotonic() < deadline, "the lecturer's page never reconnected"
            self.page.wait_for_timeout(200)     # poll interval (the page's events run here)
        self.idle()

    def counted(self, answered: int, present: int | None = None) -> str:
        """Wait until the page counts ``answered`` ("N of M answered"); the text."""
        import re

        of = r"\d+" if present is None else str(present)
        want = re.compile(rf"^{answered} of {of} answered$")
        self.page.wait_for_function(
            """(pattern) => [...document.querySelectorAll('[data-testid="stMetricValue"]')]
                             .some((e) => new RegExp(pattern).test(e.textContent.trim()))""",
            arg=want.pattern, timeout=self.timeout_ms, polling=100)
        return next(t.strip() for t in self.page.locator('[data-testid="stMetricValue"]')
                    .all_inner_texts() if want.match(t.strip()))

    def server(self) -> str | None:
        return next((c["value"] for c in self.context.cookies()
                     if c["name"] == "XATTN_SERVER"), None)

    def errors(self) -> list[str]:
        return self.page.locator('[data-testid="stException"]').all_inner_texts()

    def close(self) -> None:
        self.context.close()
