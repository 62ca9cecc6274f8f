"""Time to the first heatmap in a real browser: the app against a minimal Streamlit page.

    python -m benchmarks.first_screen [--repeats 7] [--compare 53c1af1 ...]

Starts servers on free 127.0.0.1 ports, ``streamlit run app.py`` and ``streamlit run
benchmarks/minimal_page.py`` (one Plotly heatmap, nothing else: the floor), plus the app at each
``--compare`` commit (a temporary git worktree, benchmarks/checkouts.py), loads each page once
to warm the server (imports, caches), then in headless Chromium (Debian's /usr/bin/chromium)
loads the pages in turn, the order rotating every round, each time in a fresh browser context
(no HTTP cache, no cookies), and measures the time from navigation to the first heatmap image
drawn by Plotly (``.st-key-head_1 g.hm image``; the app before the classroom issue drew one
chart keyed ``per_head``).

The time is read in the page: ``performance.now()`` (zero at navigation start) when a
MutationObserver first sees that image; the wall time of ``goto`` + ``wait_for_selector``
(visible) in Python is printed beside it as a check. One more row, the minimal page drawing the
app's own four charts (``?figure=app``), separates the figures' cost from the rest of the page.

Then one more load of each page is taken apart: the ForwardMsgs (decoded with
``streamlit.proto``) that arrived before the chart, with their arrival times and sizes; the
HTTP resources fetched before it (JavaScript, CSS, fonts: KaTeX's among them); and the
main-thread long tasks (PerformanceObserver ``longtask``) before it. That says where the app's
extra time goes. Medians of ``--repeats`` loads; the machine and its load average come first:
this 2-core machine is shared, so single numbers are noisy.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import os
import statistics
import sys
import time

from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from benchmarks.checkouts import checkouts
from benchmarks.machine import machine_line
from devtools.browser import (
    ARTIFACTS,
    ROOT,
    StreamlitServer,
    browser_missing,
    launch_chromium,
)

SELECTOR = ".st-key-head_1 g.hm image, .st-key-per_head g.hm image"
TIMEOUT_MS = 120_000

# Installed before the page's own scripts: timestamps of the first drawn heatmap, of every
# websocket message (and its bytes, for the analysis), and the main thread's long tasks.
INIT_JS = """
(() => {
  window.__firstChart = null;
  window.__frames = [];
  window.__longTasks = [];
  const seen = () => {
    if (window.__firstChart === null && document.querySelector('SELECTOR'))
      window.__firstChart = performance.now();
  };
  new MutationObserver(seen).observe(document, {subtree: true, childList: true});
  try {
    new PerformanceObserver((list) => list.getEntries().forEach(
      (e) => window.__longTasks.push([e.startTime, e.duration]))
    ).observe({type: 'longtask', buffered: true});
  } catch (e) {}
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => window.__frames.push([performance.now(), e.data]));
    }
  };
})();
""".replace("SELECTOR", SELECTOR)

SUMMARY_JS = """
(keep) => {
  const chart = window.__firstChart;
  const size = (d) => d.byteLength !== undefined ? d.byteLength : (d.size || d.length || 0);
  const before = window.__frames.filter(([t]) => t <= chart);
  const res = performance.getEntriesByType('resource').filter((r) => r.responseEnd <= chart);
  const fcp = performance.getEntriesByName('first-contentful-paint')[0];
  const b64 = (buf) => {
    const bytes = new Uint8Array(buf); let s = '';
    for (let i = 0; i < bytes.length; i += 0x8000)
      s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(s);
  };
  return {
    chart,
    fcp: fcp ? fcp.startTime : null,
    frames: before.length,
    frameBytes: before.reduce((a, [, d]) => a + size(d), 0),
    resources: res.length,
    resourceBytes: res.reduce((a, r) => a + (r.encodedBodySize || 0), 0),
    longTasks: window.__longTasks.filter(([t]) => t <= chart),
    detail: keep ? {
      frames: window.__frames.map(([t, d]) => [t, d instanceof ArrayBuffer ? b64(d) : null]),
      resources: res.map((r) => [r.name, r.startTime, r.responseEnd, r.encodedBodySize]),
    } : null,
  };
}
"""


def load(browser, url: str, keep: bool = False) -> dict:
    """One navigation in a fresh context: in-page and wall time to the first heatmap."""
    context = browser.new_context(viewport={"width": 1400, "height": 1100})
    try:
        page = context.new_page()
        page.add_init_script(INIT_JS)
        start = time.perf_counter()
        page.goto(url, wait_until="commit", timeout=TIMEOUT_MS)
        page.wait_for_selector(SELECTOR, state="visible", timeout=TIMEOUT_MS)
        wall = time.perf_counter() - start
        page.wait_for_function("window.__firstChart !== null", timeout=TIMEOUT_MS)
        out = page.evaluate(SUMMARY_JS, keep)
        out["wall"] = wall * 1e3
        return out
    finally:
        context.close()


def describe(msg: ForwardMsg) -> str:
    kind = msg.WhichOneof("type")
    if kind == "delta":
        delta = msg.delta.WhichOneof("type")
        if delta == "new_element":
            el = msg.delta.new_element
            name = el.WhichOneof("type")
            wid = getattr(getattr(el, name), "id", "")
            key = wid.rsplit("-", 1)[-1] if wid.startswith("$$ID") else ""
            return f"{name}" + (f" ({key})" if key else "")
        if delta == "add_block":
            return f"block: {msg.delta.add_block.WhichOneof('type')}"
        return delta
    return kind


def analyse(name: str, result: dict) -> None:
    """Print what arrived and what ran before the first heatmap of one load."""
    chart = result["chart"]
    detail = result["detail"]
    print(f"\n#### {name}: before the first heatmap at {chart:.0f} ms\n")
    rows = []
    for t, data in detail["frames"]:
        if data is None:
            continue
        raw = base64.b64decode(data)
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        rows.append((t, len(raw), describe(msg)))
    chart_msg = next((t for t, _, what in rows
                      if what.endswith(("(head_1)", "(per_head)"))), None)
    before = [r for r in rows if chart_msg is None or r[0] <= chart_msg]
    kinds: dict[str, int] = {}
    for _, _, what in before:
        what = what.split(" (")[0]
        kinds[what] = kinds.get(what, 0) + 1
    print(f"- websocket messages up to and including the chart's: {len(before)}, "
          f"{sum(n for _, n, _ in before) / 1e3:.1f} kB; first at {rows[0][0]:.0f} ms, "
          f"the chart's at {chart_msg:.0f} ms, drawn {chart - chart_msg:.0f} ms later"
          if rows and chart_msg is not None else "- no chart message seen")
    print("- by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(),
                                                                 key=lambda kv: -kv[1])))
    print("- in order: " + " → ".join(what for _, _, what in before[:60])
          + (" …" if len(before) > 60 else ""))
    after = [r for r in rows if chart_msg is not None and r[0] > chart_msg]
    print(f"- after the chart's message: {len(after)} messages, "
          f"{sum(n for _, n, _ in after) / 1e3:.1f} kB")
    res = detail["resources"]
    groups: dict[str, list] = {}
    for url, _, end, size in res:
        tail = url.rsplit("/", 1)[-1].split("?")[0]
        group = ("KaTeX font" if "KaTeX" in tail else "font" if tail.endswith(("woff2", "woff"))
                 else "JavaScript" if tail.endswith(".js") else "CSS" if tail.endswith(".css")
                 else "other")
        groups.setdefault(group, []).append((end, size, tail))
    print(f"- HTTP resources finished before the chart: {len(res)}, "
          f"{sum(r[3] for r in res) / 1e6:.2f} MB encoded")
    for group, items in sorted(groups.items()):
        last = max(e for e, _, _ in items)
        print(f"  - {group}: {len(items)}, {sum(s for _, s, _ in items) / 1e3:.0f} kB, "
              f"last done at {last:.0f} ms")
    tasks = result["longTasks"]
    print(f"- main-thread long tasks (> 50 ms) before the chart: {len(tasks)}, "
          f"{sum(d for _, d in tasks):.0f} ms in all: "
          + ", ".join(f"{d:.0f} ms at {t:.0f}" for t, d in tasks[:12]))


def median(results: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in results)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=7, help="loads per page (median)")
    ap.add_argument("--compare", nargs="*", default=[], metavar="REF",
                    help="also load the app at these commits, side by side in the same run")
    a = ap.parse_args()
    reason = browser_missing()
    if reason:
        print(f"first_screen: cannot run: {reason}")
        return 2
    from playwright.sync_api import sync_playwright

    print(machine_line())
    load_before = os.getloadavg()
    logs = ARTIFACTS / "first-screen"
    with checkouts(a.compare) as roots, contextlib.ExitStack() as stack:
        def serve(name: str, script: str, root) -> StreamlitServer:
            return stack.enter_context(StreamlitServer(log=logs / f"{name}.log", script=script,
                                                       root=root))
        app = serve("app", "app.py", roots.pop(next(k for k in roots if k.startswith("this"))))
        low = serve("minimal", "benchmarks/minimal_page.py", ROOT)
        pages = {"app (default view)": app.url, "minimal page: one heatmap": low.url,
                 "minimal page with the app's four charts": low.url + "?figure=app"}
        for n, (label, root) in enumerate(roots.items()):
            pages[f"app at {label}"] = serve(f"app-{n}", "app.py", root).url
        p = stack.enter_context(sync_playwright())
        browser = launch_chromium(p)
        for url in pages.values():
            load(browser, url)       # warm-up: imports and caches in the server
        results: dict[str, list[dict]] = {name: [] for name in pages}
        order = list(pages)
        for i in range(a.repeats):
            for name in order[i % len(order):] + order[:i % len(order)]:
                results[name].append(load(browser, pages[name]))
        detail = {name: load(browser, pages[name], keep=True)
                  for name in ("app (default view)", "minimal page: one heatmap")}
        browser.close()
    load_after = os.getloadavg()

    floor = median(results["minimal page: one heatmap"], "chart")
    print(f"\nfresh browser context per load, {a.repeats} loads each, alternating; load "
          f"average {load_before[0]:.2f} before, {load_after[0]:.2f} after\n")
    print("| page | navigation → first heatmap (median) | × minimal | range | wall (goto → "
          "visible) | first contentful paint | ws messages / kB before | HTTP resources / MB "
          "before | long tasks before |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for name, rs in results.items():
        chart = median(rs, "chart")
        fcp = statistics.median(r["fcp"] for r in rs if r["fcp"] is not None)
        tasks = statistics.median(sum(d for _, d in r["longTasks"]) for r in rs)
        print(f"| {name} | {chart:.0f} ms | {chart / floor:.2f}× | "
              f"{min(r['chart'] for r in rs):.0f}–{max(r['chart'] for r in rs):.0f} ms | "
              f"{median(rs, 'wall'):.0f} ms | {fcp:.0f} ms | {median(rs, 'frames'):.0f} / "
              f"{median(rs, 'frameBytes') / 1e3:.0f} | {median(rs, 'resources'):.0f} / "
              f"{median(rs, 'resourceBytes') / 1e6:.2f} | {tasks:.0f} ms |")
    for name, result in detail.items():
        analyse(name, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
