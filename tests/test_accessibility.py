"""Accessibility, as a gate: axe-core in Chromium over every view, every lesson step, presenter
mode, the app on a phone-sized window, trained weights, and a student's phone page in a class
(asking, its receipt, revealed, a job per head, the links and the class beside the heads,
the join form), failing on "serious" and "critical" findings.

Each page is opened once (one tab per viewport, reused; the lesson's steps walked one after
another with *Next*), with every expander opened so that what it hides is checked too, and
audited by ``devtools.axe.audit``: axe-core's violations plus its own estimate of the text
contrast axe leaves undecided (chart text, captions under radio options). The audits are cached for the module, so the heading test reads the same run.
A page built to fail (tests/a11y_bad_page.py) proves the gate reports what it should, and that
the page's CSS is what clears it. A student without a mouse picks a cell for Step through
with the keyboard alone.
"""

from __future__ import annotations

import re
import urllib.parse

import numpy as np
import pytest

from devtools.axe import Audit, audit, open_expanders, report
from devtools.browser import (
    ARTIFACTS,
    RUN_COUNTER_JS,
    StreamlitServer,
    chart,
    wait_for_app,
)
from xattn.lesson import STEPS
from xattn.live.link import VIEW_NAMES
from xattn.pipeline import Settings, run

pytestmark = pytest.mark.browser

DESKTOP = {"width": 1400, "height": 1100}
PHONE = {"width": 390, "height": 844}
# The page is audited once Streamlit is idle and every chart has drawn its SVG.
DRAWN = """[...document.querySelectorAll('[data-testid="stPlotlyChart"]')]
             .every((c) => c.querySelector('.main-svg'))"""

# name: (link, viewport, open the expanders that draw on a rerun too). A lesson step draws a
# view that its own page checks with every expander open; the step's own (the answer) opens
# without a rerun, so lazy ones are left closed there to keep the run short.
PAGES: dict[str, tuple[dict, dict, bool]] = {
    **{f"view {v}": ({"view": v}, DESKTOP, True) for v in VIEW_NAMES if v != "Lesson"},
    **{f"lesson {n}": ({"view": "Lesson", "lesson": n}, DESKTOP, n == 1)
       for n in range(1, len(STEPS) + 1)},
    "presenter": ({"present": 1}, DESKTOP, True),
    "phone": ({}, PHONE, True),
    "phone lesson 3": ({"view": "Lesson", "lesson": 3}, PHONE, False),
    "trained": ({"weights": "trained"}, DESKTOP, True),
    "trained step through": ({"weights": "trained", "view": "Step through"}, DESKTOP, False),
    "lines, a token masked for every target": (
        {"view": "Lines", "mask": "padding", "pad": "6: mat"}, DESKTOP, False),
}
KNOWN: dict[str, str] = {}   # page: why it fails today (an xfail(strict=True) until fixed)


def _pages(names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[n]))
            if n in KNOWN else n for n in names]


@pytest.fixture(scope="module")
def audits(tabs):
    """``audits(name)``: the audit of one of PAGES, opened and audited on first use."""
    taken, done, shown = {}, {}, {}

    def tab(viewport: dict):
        key = (viewport["width"], viewport["height"], False)
        if key not in taken:
            taken[key] = tabs.take(*key)
        return taken[key].page

    def show(viewport: dict, query: dict):
        """The page of ``query``; the lesson's steps walked with *Next* as a class does (the
        next step of the one on screen), any other page opened from its link."""
        page = tab(viewport)
        step = query.get("lesson") if set(query) == {"view", "lesson"} else None
        if step is not None and shown.get(id(page)) == step - 1:
            page.locator(".st-key-lesson_next button").click()
            heading = ("[...document.querySelectorAll('h2')]"
                       f".some((h) => h.textContent.startsWith('Step {step} of '))")
            wait_for_app(page, f"{heading} && {DRAWN}", after_runs=-1)
        else:
            page.goto(f"{tabs.server.url}?{urllib.parse.urlencode(query)}")
            wait_for_app(page, DRAWN)
        shown[id(page)] = step
        return page

    def audit_of(name: str) -> Audit:
        if name not in done:
            query, viewport, lazy = PAGES[name]
            page = show(viewport, query)
            errors = page.locator('[data-testid="stException"]').all_inner_texts()
            assert not errors, f"{name}: the page shows an error instead of the view: {errors}"
            open_expanders(page, lazy=lazy)
            done[name] = audit(page, name)
            if done[name].blocking() or done[name].undecided:
                _save(page, name)
        return done[name]

    yield audit_of
    for key, tab_ in taken.items():
        tabs.give_back(tab_, key, reuse=True)


def _save(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    stem = "a11y-" + re.sub(r"[^\w.-]+", "_", name)
    page.screenshot(path=str(ARTIFACTS / f"{stem}.png"), full_page=True)
    print(f"screenshot of {name!r}: {ARTIFACTS / stem}.png")


@pytest.mark.parametrize("name", _pages(PAGES))
def test_no_serious_or_critical_accessibility_violations(audits, name):
    result = audits(name)
    assert not result.blocking(), (
        f"{len(result.blocking())} serious or critical accessibility findings on {name!r}:\n"
        + report(result.blocking()))
    assert not result.undecided, (
        f"text whose contrast could not be checked on {name!r}: {result.undecided}")


@pytest.mark.parametrize("name", [n for n in PAGES if n not in KNOWN])
def test_headings_never_skip_a_level(audits, name):
    """The lesson's step title sits under the page's h1 (the tabs make no heading)."""
    skipped = audits(name).rule("heading-order")
    assert not skipped, report(skipped)


# --- the phone's own page (a student's link in a class) ---------------------------------------

# name: what the phone shows (the class moved by the store, as the lecturer's buttons do).
PHONE_STATES = ("asking", "saved", "how sure", "revealed", "step 12 asking", "step 12 revealed",
                "step 14 revealed", "a revote beside round 1", "the class is gone")


@pytest.fixture(scope="module")
def phone_audits(chromium, tmp_path_factory):
    """``phone_audits(state)``: the audit of the phone's page of a class in that state, on a
    server of its own (its own class store), each <details> opened first."""
    from devtools.browser import Host, Phone

    store_path = tmp_path_factory.mktemp("a11y-phone") / "classes.sqlite3"
    env = {"XATTN_CLASS_STORE": str(store_path), "XATTN_REDIS_URL": ""}
    with StreamlitServer(log=ARTIFACTS / "a11y-phone-server.log", env=env) as server:
        from xattn.classroom import SQLiteStore
        store = SQLiteStore(store_path)
        host = Host(chromium, server.url)
        code, key = host.start()
        host.close()
        phone = Phone(chromium, "phone", 390, 844).open(f"{server.url}?room={code}")
        done: dict[str, Audit] = {}

        def show(state: str) -> None:
            if state == "saved":
                phone.tap_option(2)
                phone.wait_receipt("saved")
            elif state == "how sure":               # sure / think so / guess, one pressed
                store.set_options(code, key, confidence=True)
                phone.wait("document.querySelectorAll('#sure .pill').length === 3")
                phone.tap_sure("think so")
                phone.wait_receipt("saved", "Saved: cat, think so.")
            elif state == "revealed":
                store.reveal(code, key, 1)
                phone.on_step(1, revealed=True)
            elif state == "step 12 asking":
                store.set_step(code, key, 12)
                phone.on_step(12, open_=True)
                phone.tap_part(0, "aligns")
                phone.wait_receipt("saved")
            elif state == "step 12 revealed":      # numbers drawn on a heatmap's cells
                store.reveal(code, key, 12)
                phone.on_step(12, revealed=True)
            elif state == "step 14 revealed":
                store.set_step(code, key, 14)
                phone.on_step(14, open_=True)
                phone.tap_link(1, 2)
                phone.wait_receipt("saved")
                store.reveal(code, key, 14)
                phone.on_step(14, revealed=True)
            elif state == "a revote beside round 1":  # the round before's chart above it
                store.set_options(code, key, histogram_before=True)
                store.reveal(code, key, 14)
                store.ask_again(code, key, 14)
                phone.wait("!document.getElementById('earlier').hidden")
            elif state == "the class is gone":
                phone.page.goto(f"{server.url}?room=NOPE22")
                phone.wait("!document.getElementById('join').hidden")
            phone.page.evaluate("document.querySelectorAll('details').forEach((d) => "
                                "{ d.open = true; })")

        def audit_of(state: str) -> Audit:
            if state not in done:
                for earlier in PHONE_STATES[:PHONE_STATES.index(state) + 1]:
                    if earlier not in done:
                        show(earlier)
                        done[earlier] = audit(phone.page, f"phone {earlier}")
                        if done[earlier].blocking() or done[earlier].undecided:
                            _save(phone.page, f"phone {earlier}")
            return done[state]

        yield audit_of
        phone.close()


@pytest.mark.parametrize("state", PHONE_STATES)
def test_the_phones_page_has_no_serious_or_critical_violations(phone_audits, state):
    result = phone_audits(state)
    assert not result.blocking(), (
        f"{len(result.blocking())} serious or critical accessibility findings on the phone, "
        f"{state}:\n" + report(result.blocking()))
    assert not result.undecided, f"text whose contrast could not be checked: {result.undecided}"
    assert not result.rule("heading-order"), report(result.rule("heading-order"))


# --- the gate can fail ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def bad_page(browser):
    with StreamlitServer(script="tests/a11y_bad_page.py",
                         log=ARTIFACTS / "a11y-bad-page-server.log") as srv:
        context = browser.new_context(viewport=DESKTOP)
        page = context.new_page()
        page.add_init_script(RUN_COUNTER_JS)

        def open_(fixed: bool) -> Audit:
            page.goto(srv.url + ("?fixed=1" if fixed else ""))
            wait_for_app(page, DRAWN)
            return audit(page, "bad page" + (", fixed" if fixed else ""))

        yield open_
        context.close()


def test_the_gate_reports_each_known_failure_of_a_bad_page(bad_page):
    result = bad_page(False)
    found = {(f.rule, f.impact) for f in result.findings}
    text = report(result.findings)
    assert ("image-alt", "critical") in found, text
    assert ("heading-order", "moderate") in found, text
    contrast = [f.summary for f in result.blocking() if f.rule == "color-contrast"]
    assert any("#828180" in s and "3.88" in s for s in contrast), text      # the caption
    assert any("#b0b0b0" in s for s in contrast), text                      # the grey text
    charts = [f.summary for f in result.rule("color-contrast (estimated)")]
    assert charts and all("#808495" in s and "3.72:1" in s for s in charts), text
    assert any("'two'" in s for s in charts), text                          # a tick label


def test_the_page_css_clears_the_caption_and_chart_text_of_the_bad_page(bad_page):
    result = bad_page(True)
    assert not result.findings, report(result.findings)
    assert not result.undecided, result.undecided


# Text on the cells of a heatmap drawn as SVG shapes (the phone's charts): white on the
# darkest viridis cell reads; grey on it does not; dark text under an outline (a mark with no
# fill) is read against the cell below the outline.
SVG_CELLS_PAGE = """<!doctype html><html lang="en"><head><title>cells</title></head><body>
<main><h1>Cells</h1><figure><svg role="img" aria-label="cells" width="200" height="60"
 viewBox="0 0 200 60" style="font: 14px sans-serif">
<rect x="0" y="0" width="60" height="60" fill="#440154"/>
<text x="30" y="35" text-anchor="middle" style="fill:#fff">white</text>
<rect x="70" y="0" width="60" height="60" fill="#440154"/>
<text x="100" y="35" text-anchor="middle" style="fill:#808080">grey</text>
<rect x="140" y="0" width="60" height="60" fill="#fde725"/>
<rect x="141" y="1" width="58" height="58" fill="none" stroke="#ff2d55"/>
<text x="170" y="35" text-anchor="middle" style="fill:#1b1b1f">dark</text>
</svg></figure></main></body></html>"""


def test_the_gate_reads_text_on_the_shapes_of_a_pages_own_svg(chromium):
    context = chromium.new_context(viewport=DESKTOP)
    try:
        page = context.new_page()
        page.set_content(SVG_CELLS_PAGE)
        result = audit(page, "svg cells")
        failing = [f.summary for f in result.blocking()]
        assert len(failing) == 1 and "'grey'" in failing[0] and "#440154" in failing[0], (
            report(result.findings))
        assert not result.undecided, result.undecided
    finally:
        context.close()


# --- the keyboard ---------------------------------------------------------------------------

FOCUSED_JS = """() => {
  const e = document.activeElement;
  return e ? {role: e.getAttribute('role') || '', label: e.getAttribute('aria-label') || '',
              text: (e.textContent || '').trim().slice(0, 40),
              option: e.getAttribute('aria-activedescendant') || ''} : null;
}"""
OPTION_JS = """(id) => (document.getElementById(id) || {}).textContent || ''"""


def focused(page) -> dict:
    return page.evaluate(FOCUSED_JS)


def tab_to(page, matches, what: str, limit: int = 150) -> dict:
    """Press Tab until the focused element ``matches``; fail naming what focus went through."""
    seen = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        now = focused(page)
        if now and matches(now):
            return now
        seen.append(now and (now["label"] or now["text"] or now["role"]))
    pytest.fail(f"Tab never reached {what}; focus went through: {seen}")


def choose(page, option: str) -> None:
    """In the focused combobox: open it (arrow down), arrow to ``option``, Enter."""
    page.keyboard.press("ArrowDown")
    page.wait_for_function("() => document.activeElement.getAttribute('aria-expanded') "
                           "=== 'true'")
    for _ in range(100):
        now = focused(page)["option"]
        if page.evaluate(OPTION_JS, now) == option:
            page.keyboard.press("Enter")
            return
        page.keyboard.press("ArrowDown")
        page.wait_for_function("(was) => document.activeElement.getAttribute("
                               "'aria-activedescendant') !== was", arg=now)
    pytest.fail(f"the option {option!r} was never reached with the arrow keys")


def test_a_student_without_a_mouse_picks_a_cell_for_step_through(app):
    """Tab, arrows and Enter only: the view, a head, a target token (row) and a source token
    (column); the page then shows that cell's weight, marked, with its row's weights."""
    head, row, col = 3, 4, 3
    r = run(Settings())
    weights = r.module().trace(r.decoder_state, r.encoder_output, r.mask).weights
    tgt, src = f"{row}: {r.tgt_tokens[row]}", f"{col}: {r.src_tokens[col]}"
    page = app.page
    app.open(None, "true")

    for _ in range(2 * len(VIEW_NAMES)):
        # A rerun still finishing on a loaded machine may take focus back to the page's
        # body; a keyboard user then tabs to the views again, and so does this test.
        if focused(page)["role"] != "tab":
            tab_to(page, lambda f: f["role"] == "tab", "the tabs of the views")
        if focused(page)["text"] == "Step through":
            break
        page.keyboard.press("ArrowRight")
    assert focused(page)["text"] == "Step through"
    page.keyboard.press("Enter")
    wait_for_app(page, "traces && traces.length", after_runs=-1, key="step_pick")

    for label, param, option in (("Head", "step_head", str(head)),
                                 ("Target token", "step_tgt", tgt),
                                 ("Source token", "step_src", src)):
        tab_to(page, lambda f, label=label: f["role"] == "combobox"
               and f["label"].startswith(label), f"the {label!r} picker")
        choose(page, option)
        # The link follows once the rerun has finished (false before: no run count needed).
        wait_for_app(page, f"traces && traces.length && new URLSearchParams(location.search)"
                           f".get({param!r}) === {option!r}", after_runs=-1, key="step_bar")

    bar = chart(page, "step_bar")[0]
    np.testing.assert_allclose(np.asarray(bar["y"], dtype=float), weights[head - 1, row],
                               rtol=1e-6)                                   # the row
    texts = page.evaluate("[...document.querySelectorAll('.st-key-step_bar .bartext')]"
                          ".map((t) => t.textContent)")
    assert texts[col] == f"{weights[head - 1, row, col]:.3f}"                  # the cell's number
    widths = page.evaluate("document.querySelector('.st-key-step_bar .js-plotly-plot')"
                           ".data[0].marker.line.width")
    assert [j for j, w in enumerate(widths) if w] == [col]                     # its bar marked
    shapes = page.evaluate("document.querySelector('.st-key-step_pick .js-plotly-plot')"
                           ".layout.shapes")
    assert any(s["x0"] == col - 0.5 and s["x1"] == col + 0.5 and s["y0"] == row - 0.5
               for s in shapes), shapes                                      # its cell outlined
    app.assert_clean()
