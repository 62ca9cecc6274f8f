"""Screenshots of a class in a room: docs/room-host.png (the projector, 1024 x 768, presenter
mode: the code, the QR code and the class's answers), docs/room-student-before.png and
docs/room-student-after.png (a phone, 390 x 844, before and after the reveal).

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
        host.locator(".st-key-reveal button").click()
        settle(phone, "() => document.body.innerText.includes('Right')", timeout=90_000)
        phone.locator(".st-key-class_answers").scroll_into_view_if_needed()
        phone.screenshot(path=str(ROOT / "docs" / "room-student-after.png"))
        browser.close()
    for name in ("room-host", "room-student-before", "room-student-after"):
        print(ROOT / "docs" / f"{name}.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
