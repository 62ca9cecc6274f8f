"""A class's screens, step by step, in Chromium: what must be on the first screen without
scrolling, for every step of the lesson.

- A student's phone (390×844, touch): the step's question and the prediction's choices (a
  row of pills per head at step 12, the aligning control at step 14).
- The host's laptop (1440×900) and a projector (a second host page, 1024×768, presenter mode):
  after the reveal, the answer, the class's answers and the chart that answers the step (at
  step 14 the class's links beside every layer and head, one chart).

One class walks through every step (the host's *Next step*), one server, one SQLite file.
"""

from __future__ import annotations

import urllib.parse

import pytest

from devtools.browser import ARTIFACTS, RUN_COUNTER_JS, StreamlitServer, wait_for_app
from xattn.lesson import STEPS

pytestmark = pytest.mark.browser

DEADLINE_MS = 120_000
PREDICT = '[class*="st-key-predict-"]'

# Boxes (px from the top of the window, the page not scrolled) of what a screen must show.
PHONE_JS = f"""
() => {{
  const box = (e) => e && e.getBoundingClientRect();
  const heading = [...document.querySelectorAll('h4')].find((h) => /^\\d+\\. /.test(h.textContent));
  const predict = document.querySelector('{PREDICT}');
  return {{scrolled: window.scrollY, heading: box(heading)?.top ?? null,
           predict: predict ? box(predict).bottom : null}};
}}
"""
HOST_JS = """
() => {
  const box = (e) => e && e.getBoundingClientRect();
  const main = document.querySelector('[data-testid="stMain"]');
  const answer = [...main.querySelectorAll('p')].find((p) => p.textContent.startsWith('The answer.'));
  const first = (sel) => [...main.querySelectorAll(sel)].map(box).sort((a, b) => a.top - b.top)[0];
  const cls = first('.st-key-class_answers .js-plotly-plot, .st-key-class_taps .js-plotly-plot, '
                    + '.st-key-class_revote .js-plotly-plot, .st-key-host_versus .js-plotly-plot');
  const chart = first('[class*="st-key-host_answer_chart_"] .js-plotly-plot, '
                      + '.st-key-class_taps .js-plotly-plot, .st-key-host_versus .js-plotly-plot');
  return {scrolled: window.scrollY, answer: answer ? box(answer).top : null,
          cls: cls ? [cls.top, cls.height] : null, chart: chart ? [chart.top, chart.height] : null};
}
"""


@pytest.fixture(scope="module")
def class_server(tmp_path_factory, chromium):
    store = tmp_path_factory.mktemp("layout") / "classes.sqlite3"
    with StreamlitServer(log=ARTIFACTS / "room-layout-server.log",
                         env={"XATTN_CLASS_STORE": str(store), "XATTN_REDIS_URL": "",
                              "XATTN_PUBLIC_URL": "http://192.0.2.1:8501/"}) as server:
        yield server


def _page(chromium, url: str, width: int, height: int, phone: bool = False):
    context = chromium.new_context(viewport={"width": width, "height": height},
                                   has_touch=phone, is_mobile=phone)
    page = context.new_page()
    page.set_default_timeout(DEADLINE_MS)
    page.add_init_script(RUN_COUNTER_JS)
    page.goto(url)
    wait_for_app(page, timeout=DEADLINE_MS)
    return page


def _settled(page, condition: str = "true") -> None:
    wait_for_app(page, condition, timeout=DEADLINE_MS)
    page.wait_for_timeout(300)          # a relay's request may follow the run: let it land
    wait_for_app(page, condition, timeout=DEADLINE_MS)


def press(page, key: str) -> None:
    """Press the host's button ``key`` itself. A click by coordinates can land on its
    neighbour when a pushed redraw of the class panel shifts it meanwhile (seen under load:
    the mouse left on *The class's answers (CSV)*, the class still on the step); where the
    button is on screen is what the layout checks above measure, not this."""
    page.locator(f".st-key-{key} button").dispatch_event("click")


def _on_screen(box, height: int) -> bool:
    """A chart begun on the first screen, with room to read it (or all of it)."""
    top, tall = box
    return top + min(200, tall) <= height


def test_every_step_puts_its_question_on_the_phone_and_its_answer_on_the_hosts_screens(
        chromium, class_server):
    base = class_server.url
    laptop = _page(chromium, base + "?class=new", 1440, 900)
    laptop.wait_for_selector(".st-key-reveal")
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(laptop.url).query))
    code, key = query["room"], query["host"]
    projector = _page(chromium, f"{base}?room={code}&host={key}&present=1", 1024, 768)
    phone = _page(chromium, f"{base}?room={code}", 390, 844, phone=True)
    problems = []
    failed = True
    try:
        for n in range(1, len(STEPS) + 1):
            _settled(phone, f"document.body.innerText.includes('{n}. ')")
            seen = phone.evaluate(PHONE_JS)
            asks = phone.locator(PREDICT).count() > 0
            if seen["heading"] is None or seen["scrolled"] or (
                    asks and seen["predict"] > 844):
                problems.append(f"phone, step {n}: {seen}")
            press(laptop, "reveal")
            for page, height, name in ((laptop, 900, "laptop"), (projector, 768, "projector")):
                _settled(page, "!!document.querySelector('.st-key-ask_again')")
                box = page.evaluate(HOST_JS)
                ok = (box["answer"] is not None and box["answer"] <= height - 40
                      and not box["scrolled"])
                if asks and box["cls"] is None:          # the class's answers, every kind
                    ok = False
                for part in ("cls", "chart"):
                    if box[part] is not None and not _on_screen(box[part], height):
                        ok = False
                if not ok:
                    problems.append(f"{name}, step {n}: {box}")
            if n < len(STEPS):
                press(laptop, "class_next")
                _settled(laptop, f"document.body.innerText.includes('Step {n + 1} of')")
        for page in (laptop, projector, phone):
            assert page.locator('[data-testid="stException"]').count() == 0
        failed = False
    finally:
        if problems or failed:                  # what each screen showed when it went wrong
            for page, name in ((laptop, "laptop"), (projector, "projector"), (phone, "phone")):
                page.screenshot(path=str(ARTIFACTS / f"room-layout-{name}.png"))
        for page in (laptop, projector, phone):
            page.context.close()
    assert not problems, "\n".join(problems)
