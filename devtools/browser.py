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
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]
REQUIRE_ENV = "XATTN_REQUIRE_BROWSER"
TIMEOUT_MS = 60_000   # a loaded 2-core CI machine can take several seconds per rerun


# --- the server ------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
