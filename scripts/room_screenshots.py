"""Screenshots of a class in a room: on the projector (1024 x 768, presenter mode)
docs/room-host.png (the code and the QR code), room-host-answers.png (the count and the class's
answers before the reveal) and room-host-revealed.png (the answer, the class's answers and the
step's chart on one screen); on a phone's own page (390 x 844) docs/room-student-before.png
and room-student-after.png (before and after the reveal: the receipt, then the student's own
prediction marked and the verdict) and room-student-class.png (the answer's chart). Step 14,
the class aligns: room-student-aligns.png (a phone drawing links) and room-host-aligns.png
(the class's links beside every layer and head, and the AER table).

    python -m scripts.room_screenshots

Starts the app with a class store of its own (a temporary SQLite file), opens ``?class=new``
as the lecturer, lets twelve students answer through the store (the page's own code path for
an answer) and one through a phone's page, reveals through the host's page, moves the class to
step 14 (the store's ``set_step``, as the host's step picker does) for the aligning pictures,
and stops the app.
"""

from __future__ import annotations

import os
import sys
import tempfile
import urllib.parse
from pathlib import Path

from devtools.browser import RUN_COUNTER_JS, StreamlitServer, browser_missing, launch_chromium

ROOT = Path(__file__).resolve().parent.parent
IDLE = ("() => !!document.querySelector('[data-testid=\"stApp\"][data-test-script-state="
        "\"notRunning\"]') && !document.querySelector('[data-testid=\"stSkeleton\"]')")


def settle(page, js: str = "() => true", timeout: float = 60_000) -> None:
    page.wait_for_function(f"() => ({IDLE})() && ({js})()", timeout=timeout, polling=200)
    page.evaluate("document.fonts.ready")


def show(page, selector: str) -> None:
    """Scroll Streamlit's own container so that ``selector``'s element ends the screen."""
    page.locator(selector).first.evaluate("e => e.scrollIntoView({block: 'end'})")
    page.wait_for_timeout(500)                  # the scroll settles; Plotly redraws nothing


def main() -> int:
    missing = browser_missing()
    if missing:
        print(f"cannot take the screenshots: {missing}", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    from xattn.classroom import new_student_id, open_store

    store_file = Path(tempfile.mkdtemp()) / "classes.sqlite3"
    env = {"XATTN_CLASS_STORE": str(store_file), "XATTN_REDIS_URL": "",
           "XATTN_PUBLIC_URL": "http://192.168.1.20:8501/"}     # what a lecturer would set
    os.environ.update(env)
    docs = ROOT / "docs"
    with StreamlitServer(env=env) as server, sync_playwright() as p:
        browser = launch_chromium(p)
        host = browser.new_page(viewport={"width": 1024, "height": 768})
        host.add_init_script(RUN_COUNTER_JS)
        host.goto(server.url + "?class=new&present=1")
        settle(host, "() => location.search.includes('host=')")
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(host.url).query)
        code, key = query["room"][0], query["host"][0]
        store = open_store()
        view = store.room_view(code)
        for k in range(12):                 # a class answering: most tap "the (5)"
            store.answer(code, view.step, new_student_id(), [5, 5, 5, 2, 6, 5, 1, 5, 0, 5, 6,
                                                            2][k])
        phone = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                                    is_mobile=True, device_scale_factor=2).new_page()
        phone.goto(server.url + f"?room={code}")  # the phone's own page: its cookie comes with it
        phone.wait_for_selector("#controls .pill")
        phone.locator("#controls .pill").nth(5).tap()
        phone.wait_for_selector(".receipt.saved")
        phone.screenshot(path=str(docs / "room-student-before.png"))
        settle(host, "() => document.body.innerText.includes('13 of')")
        host.screenshot(path=str(docs / "room-host.png"))
        show(host, ".st-key-class_answers")        # the count and the class's answers, live
        host.screenshot(path=str(docs / "room-host-answers.png"))
        host.evaluate("window.scrollTo(0, 0)")
        host.locator(".st-key-reveal button").click()
        settle(host, "() => !!document.querySelector('.st-key-ask_again')", timeout=90_000)
        host.wait_for_timeout(1000)                 # the charts finish drawing
        host.screenshot(path=str(docs / "room-host-revealed.png"))
        phone.wait_for_selector("#verdict strong", timeout=90_000)
        phone.screenshot(path=str(docs / "room-student-after.png"))
        phone.locator("#charts figure").first.evaluate("e => e.scrollIntoView({block: 'end'})")
        phone.screenshot(path=str(docs / "room-student-class.png"))

        store.set_step(code, key, 14)               # the class aligns
        gold = [(0, 0), (1, 2), (2, 1), (3, 3), (4, 4), (5, 5)]
        votes = [gold] * 7 + [[(t, 0) if t == 4 else (t, s) for t, s in gold]] * 3 + [
            [(0, 0), (1, 1), (2, 2), (3, 3), (4, 0), (5, 5)]] * 2
        for links in votes:
            store.answer(code, 14, new_student_id(), tuple(sorted(links)))
        phone.wait_for_function("document.getElementById('where').textContent.includes("
                                "'step 14 of')", timeout=90_000)
        for t, src in ((0, "the"), (1, "king"), (2, "sick")):   # three links by touch
            phone.locator("[aria-label='Target word'] .pill").nth(t).tap()
            phone.locator("[aria-label$='translates'] .pill").filter(
                has_text=src).first.tap()
            phone.wait_for_function(f"document.getElementById('receipt').textContent"
                                    f".includes('Saved: {t + 1} link')")
        phone.evaluate("window.scrollTo(0, 0)")
        phone.screenshot(path=str(docs / "room-student-aligns.png"))
        settle(host, "() => document.body.innerText.includes('14. ') || "
                     "document.body.innerText.includes('Step 14 of')")
        host.locator(".st-key-reveal button").click()
        settle(host, "() => !!document.querySelector('.st-key-ask_again')", timeout=90_000)
        host.wait_for_timeout(1500)
        host.screenshot(path=str(docs / "room-host-aligns.png"))
        browser.close()
    for name in ("room-host", "room-host-answers", "room-host-revealed", "room-student-before",
                 "room-student-after", "room-student-class", "room-student-aligns",
                 "room-host-aligns"):
        print(docs / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
