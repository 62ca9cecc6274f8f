"""Screenshots of a class in a room: on the projector (1024 x 768, presenter mode)
docs/room-host.png (the code and the QR code), room-host-answers.png (the count and the class's
answers before the reveal) and room-host-revealed.png (the class's expected attention beside
the true row); on a phone (390 x 844) docs/room-student-before.png and room-student-after.png
(before and after the reveal, the student's own prediction marked) and
room-student-class.png (the class's answers and guess beside the weights).

    python -m scripts.room_screenshots

Starts the app with a class store of its own (a temporary SQLite file), opens ``?class=new``
as the lecturer, lets twelve students answer through the store (the page's own code path for
an answer) and one through a phone's page, reveals through the host's page, and stops the app.
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
    os.environ["XATTN_CLASS_STORE"] = str(store_file)
    os.environ.pop("XATTN_REDIS_URL", None)
    with StreamlitServer() as server, sync_playwright() as p:
        browser = launch_chromium(p)
        host = browser.new_page(viewport={"width": 1024, "height": 768})
        host.add_init_script(RUN_COUNTER_JS)
        host.goto(server.url + "?class=new&present=1")
        settle(host, "() => location.search.includes('host=')")
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(host.url).query)
        code = query["room"][0]
        store = open_store()
        view = store.room_view(code)
        for k in range(12):                 # a class answering: most tap "the (5)"
            store.answer(code, view.step, new_student_id(), [5, 5, 5, 2, 6, 5, 1, 5, 0, 5, 6,
                                                            2][k])
        phone = browser.new_page(viewport={"width": 390, "height": 844}, has_touch=True,
                                 is_mobile=True)
        phone.goto(server.url + f"?room={code}")
        settle(phone, "() => !!document.querySelector('.st-key-predict button')")
        phone.locator(".st-key-predict button").nth(5).tap()
        settle(phone, "() => document.body.innerText.includes('Your prediction is in')")
        phone.screenshot(path=str(ROOT / "docs" / "room-student-before.png"))
        settle(host, "() => document.body.innerText.includes('13 of')")
        host.screenshot(path=str(ROOT / "docs" / "room-host.png"))
        show(host, ".st-key-class_answers")        # the count and the class's answers, live
        host.screenshot(path=str(ROOT / "docs" / "room-host-answers.png"))
        host.locator(".st-key-reveal button").click()
        settle(host, "() => !!document.querySelector('.st-key-class_taps .js-plotly-plot')",
               timeout=90_000)
        show(host, ".st-key-class_taps")           # the class's row beside the true one
        host.screenshot(path=str(ROOT / "docs" / "room-host-revealed.png"))
        settle(phone, "() => document.body.innerText.includes('Right')", timeout=90_000)
        # the student's own prediction marked, then the truth below it
        phone.get_by_text("Right", exact=False).first.evaluate(
            "e => e.scrollIntoView({block: 'start'})")
        phone.wait_for_timeout(500)
        phone.screenshot(path=str(ROOT / "docs" / "room-student-after.png"))
        show(phone, ".st-key-class_taps")         # the class's guess beside the weights
        phone.screenshot(path=str(ROOT / "docs" / "room-student-class.png"))
        browser.close()
    for name in ("room-host", "room-host-answers", "room-host-revealed", "room-student-before",
                 "room-student-after", "room-student-class"):
        print(ROOT / "docs" / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
