"""Accessibility checks of a page in Chromium: axe-core, plus a contrast estimate where axe
cannot decide.

axe-core is the copy bundled by the pip package ``axe-playwright-python`` (no download),
injected into the page and run with its default rules (WCAG 2 A/AA and best practices). A
finding *blocks* when axe rates it "serious" or "critical" (text contrast, an image without a
text alternative, a scrolling box out of the keyboard's reach, ...). Nothing is excluded.

axe leaves text whose background it cannot see as "incomplete", not as a violation: text in
an SVG chart (its background is a ``<rect>`` or a heatmap image, not a CSS colour), text
overlapped by another element (Streamlit's radio captions), tab labels with a pseudo-element.
`audit` estimates those itself: the text's colour (with every opacity above it) over the
first opaque background below it, for Plotly text the plot's own background, for text in an
SVG of the page's own (the phone's charts, ``xattn/server/assets/phone.js``) the shape
drawn under it (a heatmap's cell), and flags a ratio under WCAG 1.4.3's 4.5:1 (3:1 for large
text). Text drawn over a Plotly heatmap's cells (an image) is the one case left undecided
(``Audit.undecided``).

No imports of playwright or pytest: ``page`` is any playwright sync ``Page``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BLOCKING", "Finding", "Audit", "audit", "report", "open_expanders"]

BLOCKING = ("serious", "critical")


def _axe_source() -> str:
    from axe_playwright_python.base import AXE_FILE_PATH  # the bundled axe.min.js
    return Path(AXE_FILE_PATH).read_text(encoding="utf-8")


@dataclass(frozen=True)
class Finding:
    """One failing element: the rule, how bad, where, and what is wrong."""
    page: str
    rule: str
    impact: str
    target: str
    summary: str

    def __str__(self) -> str:
        return f"[{self.page}] {self.rule} ({self.impact}) at {self.target}: {self.summary}"


@dataclass
class Audit:
    """The result of `audit` on one page.

    ``findings``: every violation (axe's, with impact) and every estimated contrast failure;
    ``undecided``: text whose contrast nobody could work out (over a heatmap's cells).
    """
    page: str
    findings: list[Finding] = field(default_factory=list)
    undecided: list[str] = field(default_factory=list)

    def blocking(self) -> list[Finding]:
        return [f for f in self.findings if f.impact in BLOCKING]

    def rule(self, rule: str) -> list[Finding]:
        return [f for f in self.findings if f.rule == rule]


# Runs axe on the document; returns the violations and the incomplete colour-contrast nodes
# (their selectors, for the estimate below), each node with its impact, target and summary.
_RUN_JS = """
async () => {
  const r = await axe.run(document, {resultTypes: ['violations', 'incomplete']});
  const nodes = (v) => v.nodes.map((n) => ({
      target: n.target.flat().join(' >>> '), impact: n.impact || v.impact,
      summary: (n.failureSummary || v.help).replace(/\\s+/g, ' ').trim()}));
  return {violations: r.violations.map((v) => ({id: v.id, nodes: nodes(v)})),
          incomplete: r.incomplete.filter((v) => v.id === 'color-contrast')
                                  .map((v) => ({id: v.id, nodes: nodes(v)}))};
}
"""

# The contrast of each element (by selector) from computed styles: [selector, text, ratio,
# needed, fg, bg] or [selector, text, null, reason] where it cannot be told.
_ESTIMATE_JS = """
(selectors) => {
  const parse = (c) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(c || '');
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]))
      .concat([1]);
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
                            return (x + 0.05) / (y + 0.05); };
  const hex = (c) => '#' + c.slice(0, 3).map((v) => Math.round(v).toString(16).padStart(2, '0'))
      .join('');
  const background = (start) => {      // CSS background colours, innermost first, to white
    const layers = [];
    for (let e = start; e && e.nodeType === 1; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.backgroundImage && s.backgroundImage !== 'none') return null;
      const c = parse(s.backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    return layers.reverse().reduce((under, c) => over(c, under), [255, 255, 255, 1]);
  };
  const barUnder = (e, bg) => {     // text Plotly drew inside a bar, wholly over it: its fill
    const point = e.closest('.point'), path = point && point.querySelector('path');
    if (!path || !e.classList.contains('bartext-inside')) return null;
    const t = e.getBoundingClientRect(), b = path.getBoundingClientRect();
    if (t.left < b.left - 1 || t.right > b.right + 1 || t.top < b.top - 1
        || t.bottom > b.bottom + 1) return null;
    const fill = parse(getComputedStyle(path).fill);
    return fill && over([fill[0], fill[1], fill[2],
                         fill[3] * parseFloat(getComputedStyle(path).fillOpacity || '1')], bg);
  };
  const shapeUnder = (e) => {       // an SVG of the page's own (a phone's chart): the topmost
    const svg = e.ownerSVGElement;   // shape under the text's centre, over the CSS background
    const bg = background(svg ? svg.parentElement : e.parentElement);
    if (!svg || bg === null) return bg;
    e.scrollIntoView({block: 'center'});           // hit-testing sees the window only
    const box = e.getBoundingClientRect();
    for (const s of document.elementsFromPoint(box.left + box.width / 2,
                                               box.top + box.height / 2)) {
      if (!(s instanceof SVGGeometryElement) || s.ownerSVGElement !== svg) continue;
      const fill = parse(getComputedStyle(s).fill);      // none (an outline): look below
      const alpha = fill ? fill[3] * parseFloat(getComputedStyle(s).fillOpacity || '1') : 0;
      if (alpha > 0) return over([fill[0], fill[1], fill[2], alpha], bg);
    }
    return bg;
  };
  const plotBackground = (e) => {   // Plotly: the paper, or the plot area under its centre
    const gd = e.closest('.js-plotly-plot'), fl = gd && gd._fullLayout;
    if (!gd) return shapeUnder(e);
    if (!fl) return background(e.parentElement);
    let bg = over(parse(fl.paper_bgcolor) || [0, 0, 0, 0], background(gd));
    const bar = barUnder(e, over(parse(fl.plot_bgcolor) || [0, 0, 0, 0], bg));
    if (bar) return bar;
    const box = e.getBoundingClientRect(), top = gd.getBoundingClientRect();
    const cx = box.left + box.width / 2 - top.left, cy = box.top + box.height / 2 - top.top;
    for (const [id, sp] of Object.entries(fl._plots || {})) {
      const xa = sp.xaxis, ya = sp.yaxis;
      if (!xa || !ya || cx < xa._offset || cx > xa._offset + xa._length || cy < ya._offset
          || cy > ya._offset + ya._length) continue;
      if (e.closest('.xaxislayer-above, .yaxislayer-above, .g-xtitle, .g-ytitle')) break;
      if ((gd._fullData || []).some((t) => t.type === 'heatmap' && t.visible !== false
                                     && (t.xaxis || 'x') + (t.yaxis || 'y') === id))
        return 'text over the cells of a heatmap';
      bg = over(parse(fl.plot_bgcolor) || [0, 0, 0, 0], bg);
      break;
    }
    return bg;
  };
  return selectors.map((sel) => {
    const e = document.querySelector(sel);
    const text = e ? (e.textContent || '').trim().slice(0, 60) : '';
    if (!e || !text) return [sel, text, null, 'no text'];
    const s = getComputedStyle(e), box = e.getBoundingClientRect();
    if (s.visibility === 'hidden' || !box.width || !box.height) return [sel, text, null, 'hidden'];
    const svg = e instanceof SVGElement;
    let fg = parse(svg ? s.fill : s.color);
    if (!fg) return [sel, text, null, 'no colour'];
    let alpha = fg[3] * (svg ? parseFloat(s.fillOpacity || '1') : 1);
    for (let a = e; a && a.nodeType === 1; a = a.parentElement)
      alpha *= parseFloat(getComputedStyle(a).opacity || '1');
    const bg = svg ? plotBackground(e) : background(e);
    if (bg === null) return [sel, text, null, 'a background image'];
    if (typeof bg === 'string') return [sel, text, null, bg];
    const shown = over([fg[0], fg[1], fg[2], alpha], bg);
    const px = parseFloat(s.fontSize), bold = parseInt(s.fontWeight, 10) >= 700;
    const needed = px >= 24 || (bold && px >= 18.66) ? 3 : 4.5;
    return [sel, text, ratio(shown, bg), needed, hex(shown), hex(bg), px];
  });
}
"""


def audit(page, label: str) -> Audit:
    """Run axe-core on ``page`` (injected once per document) and estimate the contrast of the
    text axe left undecided. ``label`` names the page in the findings."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(_axe_source())
    page.evaluate("document.fonts.ready.then(() => true)")   # KaTeX's fonts set its widths
    result = page.evaluate(_RUN_JS)
    out = Audit(label)
    for v in result["violations"]:
        out.findings += [Finding(label, v["id"], n["impact"], n["target"], n["summary"])
                         for n in v["nodes"]]
    seen = set()
    targets = [n["target"] for v in result["incomplete"] for n in v["nodes"]
               if not (n["target"] in seen or seen.add(n["target"]))]
    for sel, text, ratio, *rest in page.evaluate(_ESTIMATE_JS, targets):
        if ratio is None:
            if rest[0] not in ("no text", "hidden"):
                out.undecided.append(f"{sel} ({text!r}): {rest[0]}")
        elif ratio < rest[0]:
            needed, fg, bg, px = rest
            out.findings.append(Finding(
                label, "color-contrast (estimated)", "serious", sel,
                f"text {text!r} has contrast {ratio:.2f}:1 ({fg} on {bg}, {px:g}px); WCAG "
                f"1.4.3 asks {needed}:1"))
    return out


def report(findings: list[Finding]) -> str:
    """One line per finding, for an assertion message."""
    return "\n".join(str(f) for f in findings) or "(none)"


# The index of the first closed expander (a <details> without [open]) in view, or -1; one in
# a folded sidebar (0 px wide: presenter mode, a phone) is not in view. With ``lazy`` false,
# only one whose content is already drawn (opening it needs no rerun).
_CLOSED_JS = """(lazy) => [...document.querySelectorAll('[data-testid="stExpander"]')]
.findIndex((e) => {
  const bar = e.closest('[data-testid="stSidebar"]');
  return !e.querySelector('details').open && !(bar && bar.getBoundingClientRect().width === 0)
      && (lazy || e.querySelector(
            '[data-testid="stExpanderDetails"] [data-testid="stElementContainer"]') !== null);
})"""
# The n-th expander is open, has drawn its content (a lazy one after its rerun) and the script
# is idle.
_OPENED_JS = """(n) => {
  const e = document.querySelectorAll('[data-testid="stExpander"]')[n];
  return !!e && e.querySelector('details').open
      && e.querySelectorAll('[data-testid="stExpanderDetails"] [data-testid="stElementContainer"]')
           .length > 0
      && !!document.querySelector('[data-testid="stApp"][data-test-script-state="notRunning"]')
      && !document.querySelector('[data-testid="stSkeleton"]');
}"""


def open_expanders(page, *, lazy: bool = True, limit: int = 20,
                   timeout: float = 60_000) -> int:
    """Open every expander of the page, one at a time, each waited for; returns how many.

    ``lazy=False`` leaves closed the expanders that draw their content only when opened
    (``on_change="rerun"``): each of those costs a rerun.
    """
    opened = 0
    while opened < limit:
        n = page.evaluate(_CLOSED_JS, lazy)
        if n < 0:
            break
        _open(page, n, timeout)
        opened += 1
    return opened


_IS_OPEN_JS = """(n) => !!document.querySelectorAll('[data-testid="stExpander"]')[n]
  ?.querySelector('details').open"""
LOST_CLICK = 15_000   # ms: an expander still closed this long after its click is clicked again


def _open(page, n: int, timeout: float) -> None:
    """Click the n-th expander and wait until it is open and drawn. Once in three loaded runs
    of the whole suite (one core busy) a presenter page's expander stayed closed for 60 s
    after its click; a click can land on a summary that a rerun is replacing, so an expander
    still closed after ``LOST_CLICK`` ms is clicked again (an open one is only waited for)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    deadline = time.monotonic() + timeout / 1000
    summary = page.locator('[data-testid="stExpander"] summary').nth(n)
    summary.click()
    while True:
        left = (deadline - time.monotonic()) * 1000
        try:
            page.wait_for_function(_OPENED_JS, arg=n, timeout=max(1, min(LOST_CLICK, left)),
                                   polling=100)
            return
        except PlaywrightTimeout:
            if left <= LOST_CLICK:
                raise
            if not page.evaluate(_IS_OPEN_JS, n):
                summary.click()
