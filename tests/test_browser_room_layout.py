"""A class's screens, step by step, in Chromium: what must be on the first screen without
scrolling, for every step of the lesson.

- A student's phone (the light page of ``xattn/server/assets/phone.*``, touch; 390×844 and
  a narrower 360×740): the step's title, question and every control of the prediction (a row
  of pills per head at step 12, the target and source words at step 14), no sideways scroll;
  after the reveal, the phone's verdict.
- The host's laptop (1440×900) and a projector (a second host page, 1024×768, presenter mode):
  after the reveal, the answer, the class's answers and the chart that answers the step, on
  the first screen; that chart is the one the question asks about, at every step (its title
  names the head, layer, seeds or measure of the question on the step's own weights; beside a
  tapped word, the weights' row named by its layer and head: at step 13 layer 2's, the layer
  the answer is about; at step 14 the class's links beside every layer and head).

One class walks through every step (the host's *Next step*), one server (``streamlit run
app.py``), one SQLite file.
"""

from __future__ import annotations

import pytest

from devtools.browser import ARTIFACTS, Host, Phone, StreamlitServer
from xattn.lesson import STEPS

pytestmark = pytest.mark.browser

DEADLINE_MS = 120_000
# The phone every step must fit (question and controls on the first screen, the verdict
# after the reveal), and a smaller one that must show the title and question and never
# scroll sideways (step 12's four rows of pills end below its first screen: printed).
PHONES = ((390, 844), (360, 740))

# Boxes (px from the top of the window, the page not scrolled) of what a phone must show: its
# title, the bottom of the lowest control of the prediction, the verdict once revealed.
PHONE_JS = """
() => {
  const box = (e) => e.getBoundingClientRect();
  const controls = [...document.querySelectorAll('#controls .pill, #controls input, '
                                                + '#controls button')].map(box);
  const verdict = document.getElementById('verdict');
  return {scrolled: window.scrollY, title: box(document.getElementById('title')).top,
          question: box(document.getElementById('question')).bottom,
          asks: !document.getElementById('ask').hidden,
          controls: controls.length ? Math.max(...controls.map((b) => b.bottom)) : null,
          verdict: verdict.textContent.trim() ? box(verdict).bottom : null,
          wide: document.documentElement.scrollWidth};
}
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


# What the chart beside the answer shows (issue 44: step 13's showed layer 1 under an answer on
# layer 2): beside a tapped word, the rows of the class's taps and the weights' row, named by
# its layer and head; beside a link question, the class's links; else each chart's title, in
# the order of its key (``host_answer_chart_0``, ``_1``), its markup (line breaks, bold) as
# spaces.
BESIDE_JS = """() => {
  const plot = (sel) => document.querySelector(sel + ' .js-plotly-plot');
  const taps = plot('.st-key-class_taps');
  const t = taps && taps.data && taps.data.find((d) => d.type === 'heatmap');
  const title = (p) => { const x = p && p.layout && p.layout.title;
    return x == null ? null : String(x.text ?? x).replace(/<[^>]*>/g, ' '); };
  const charts = [...document.querySelectorAll('[class*="st-key-host_answer_chart_"]')]
    .map((e) => [Number(e.className.match(/st-key-host_answer_chart_(\\d+)/)[1]), e])
    .sort((a, b) => a[0] - b[0]).map(([, e]) => title(e.querySelector('.js-plotly-plot')));
  return {taps: t ? t.y : null, links: !!plot('.st-key-host_versus'), charts};
}"""


def asked_about(step) -> tuple:
    """What the chart beside ``step``'s answer must show, from the question on the step's own
    weights (as the room asks it): ("taps", the weights' row's name), ("links", None) or
    ("charts", each chart's title)."""
    from xattn.live.prepared import prepared_attention

    a = prepared_attention(step)
    told = step.tell(a, step.layer(a.n_layers))
    if told.question is not None and told.question.kind == "links":
        return "links", None
    if told.row is not None:
        head = told.row[1]
        where = f"layer {told.layer + 1}, " if a.n_layers > 1 else ""
        return "taps", where + (f"head {head + 1}" if head >= 0 else "all heads")
    return "charts", [" ".join(str(c.make(1.0).to_dict()["layout"]["title"]["text"]).split())
                      for c in told.charts]


def beside_problem(seen: dict, want: tuple) -> str | None:
    """Why the chart beside the answer is not the one asked about (None: it is)."""
    kind, what = want
    if kind == "links":
        return None if seen["links"] else "no chart of the class's links"
    if kind == "taps":
        rows = seen["taps"]
        return None if rows and str(rows[-1]).startswith(what) else f"rows {rows}, not {what}"
    shown = [" ".join(str(t).split()) if t is not None else None for t in seen["charts"]]
    return None if shown == what else f"charts {shown}, not {what}"


@pytest.fixture(scope="module")
def class_server(tmp_path_factory, chromium):
    store = tmp_path_factory.mktemp("layout") / "classes.sqlite3"
    with StreamlitServer(log=ARTIFACTS / "room-layout-server.log",
                         env={"XATTN_CLASS_STORE": str(store), "XATTN_REDIS_URL": "",
                              "XATTN_PUBLIC_URL": "http://192.0.2.1:8501/"}) as server:
        server.store_path = store
        yield server


def _settled(host: Host, condition: str = "true") -> None:
    """The page idle, following its room as drawn, ``condition`` true, and still so 300 ms
    later (a pulse may follow a run)."""
    host.idle(condition)
    host.page.wait_for_timeout(300)
    host.idle(condition)


def _on_screen(box, height: int) -> bool:
    """A chart begun on the first screen, with room to read it (or all of it)."""
    top, tall = box
    return top + min(200, tall) <= height


def test_every_step_puts_its_question_on_the_phone_and_its_answer_on_the_hosts_screens(
        chromium, class_server):
    base = class_server.url
    from xattn.classroom import SQLiteStore
    store = SQLiteStore(class_server.store_path)
    laptop = Host(chromium, base, 1440, 900, timeout_ms=DEADLINE_MS, store=store)
    code, key = laptop.start()
    projector = Host(chromium, base, 1024, 768, timeout_ms=DEADLINE_MS)
    projector.join(code, key, present=1)
    phones = [Phone(chromium, f"phone {w}x{h}", w, h, timeout_ms=DEADLINE_MS)
              .open(f"{base}?room={code}") for w, h in PHONES]
    problems, below = [], []
    wanted = {n: asked_about(step) for n, step in enumerate(STEPS, 1)}
    assert wanted[13] == ("taps", "layer 2, all heads")     # the case
    failed = True
    try:
        for n in range(1, len(STEPS) + 1):
            for phone in phones:
                phone.on_step(n)
                seen = phone.page.evaluate(PHONE_JS)
                fits = not seen["asks"] or seen["controls"] <= phone.height
                if (seen["scrolled"] or not 0 <= seen["title"] < 120
                        or seen["question"] > phone.height or seen["wide"] > phone.width
                        or (phone is phones[0] and not fits)):
                    problems.append(f"{phone.name}, step {n}: {seen}")
                elif not fits:
                    below.append(f"{phone.name} step {n}: the controls end at "
                                 f"{seen['controls']:.0f} px")
            asks = phones[0].state()["asking"]
            laptop.reveal()
            projector.follows("!!document.querySelector('.st-key-ask_again')",
                              f"the projector, step {n} revealed")
            for host, height, name in ((laptop, 900, "laptop"), (projector, 768, "projector")):
                _settled(host, "!!document.querySelector('.st-key-ask_again')")
                box = host.page.evaluate(HOST_JS)
                ok = (box["answer"] is not None and box["answer"] <= height - 40
                      and not box["scrolled"])
                if asks and box["cls"] is None:          # the class's answers, every kind
                    ok = False
                for part in ("cls", "chart"):
                    if box[part] is not None and not _on_screen(box[part], height):
                        ok = False
                if not ok:
                    problems.append(f"{name}, step {n}: {box}")
                wrong = beside_problem(host.page.evaluate(BESIDE_JS), wanted[n])
                if wrong:          # the chart beside the answer is the one asked about
                    problems.append(f"{name}, step {n}: beside the answer, {wrong}")
            for phone in phones:
                phone.on_step(n, revealed=True)
                seen = phone.page.evaluate(PHONE_JS)
                shown = not asks or (seen["verdict"] or 1e9) <= phone.height
                if seen["scrolled"] or (phone is phones[0] and not shown):
                    problems.append(f"{phone.name}, step {n}, revealed: {seen}")
                elif not shown:
                    below.append(f"{phone.name} step {n}: the verdict ends at "
                                 f"{seen['verdict']:.0f} px")
            if n < len(STEPS):
                laptop.next(n + 1)
                projector.follows(f"document.body.innerText.includes('Step {n + 1} of')",
                                  f"the projector, step {n + 1}")
        for host in (laptop, projector):
            assert not host.errors(), host.errors()
        for phone in phones:
            assert not phone.page_errors and not phone.console_errors, phone.console_errors
        failed = False
    finally:
        if problems or failed:                  # what each screen showed when it went wrong
            for page, name in ((laptop.page, "laptop"), (projector.page, "projector"),
                               *((p.page, p.name.replace(" ", "-")) for p in phones)):
                page.screenshot(path=str(ARTIFACTS / f"room-layout-{name}.png"))
        if below:
            print("\nbelow the first screen of the smaller phone: " + "; ".join(below))
        problems += [f"a lecturer's page needed its link opened again: {r}"
                     for host in (laptop, projector) for r in host.recoveries]
        for who in (laptop, projector, *phones):
            who.close()
    assert not problems, "\n".join(problems)
