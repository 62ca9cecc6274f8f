"""No lock-out of a hall (issue 42, item 4), on a real server (``streamlit run app.py``) with
real HTTP and websocket clients: 300 fresh browsers behind the hall's one address try a code
that opens no class (each doing its join's work, as a page does), and some guess device
codes; then a new phone of the hall joins, the lecturer's page reloads and the lecturer's
second device (a device code, fresh browser) drives the class, all at that address. One
browser that keeps guessing is backed off, by its token, and only it.

The per-address bound of failed codes is set low (``failed_joins=20/600``): it is no longer
consulted, so what the hall's strangers do never counts against it."""

from __future__ import annotations

import http.client
import json
import time
from urllib.parse import urlsplit

import pytest

from devtools.browser import ARTIFACTS, StreamlitServer, browser_missing, unavailable
from devtools.lecturer import Host
from devtools.protocol import Client, run_async
from xattn.classroom import SQLiteStore
from xattn.classroom.codes import solve_work
from xattn.ui.room.identity import BROWSER_COOKIE, STUDENT_COOKIE

pytestmark = pytest.mark.server

HALL = "198.51.100.20"
LIMITS = "failed_joins=20/600,browser_failed_joins=5/600,join_work_bits=8"
STRANGERS = 300


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    reason = browser_missing()      # no browser needed, but the same server harness
    if reason and "Chromium" not in reason:
        unavailable(reason)
    store = tmp_path_factory.mktemp("lockout") / "classes.sqlite3"
    with StreamlitServer(log=ARTIFACTS / "no-hall-lockout-server.log",
                         env={"XATTN_CLASS_STORE": str(store), "XATTN_REDIS_URL": "",
                              "XATTN_LIMITS": LIMITS}) as server:
        server.store = SQLiteStore(store)
        yield server


class Browser:
    """One browser at ``address``: its cookies, kept as a browser keeps them."""

    def __init__(self, server, address: str = HALL):
        self.url = urlsplit(server.url)
        self.address = address
        self.cookies: dict[str, str] = {}

    def request(self, method: str, path: str, body: str | None = None) -> tuple[int, str]:
        c = http.client.HTTPConnection(self.url.hostname, self.url.port, timeout=30)
        headers = {"X-Forwarded-For": self.address,
                   "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:
            headers["Content-Type"] = "application/json"
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        data = r.read().decode()
        for name, value in r.getheaders():
            if name.lower() == "set-cookie":
                key, _, rest = value.split(";")[0].partition("=")
                self.cookies[key] = rest
        c.close()
        return r.status, data

    def open_class(self, code: str) -> str:
        """The student's link, and its join after the work, as the phone's page does: what
        the page or the join said (empty: joined)."""
        _, page = self.request("GET", f"/?room={code}")
        data = json.loads(page.split("const JOIN = ", 1)[1].split(";\n", 1)[0])
        if "challenge" not in data:
            return data.get("problem", "")
        nonce = solve_work(data["challenge"], data["bits"], data["pieces"])
        status, said = self.request("POST", f"/live/{code}/join", json.dumps(
            {"challenge": data["challenge"], "nonce": nonce}))
        return "" if status == 200 else json.loads(said)["why"]

    def token(self, link: str) -> None:
        """A link that may guess, without a token: its page's work, then the token."""
        _, page = self.request("GET", link)
        data = json.loads(page.split("const T = ", 1)[1].split(";\n", 1)[0])
        nonce = solve_work(data["challenge"], data["bits"], data["pieces"])
        status, _ = self.request("POST", "/live/token", json.dumps(
            {"challenge": data["challenge"], "nonce": nonce}))
        assert status == 204 and BROWSER_COOKIE in self.cookies

    def page(self, query: str) -> str:
        """The Streamlit page at ``?query`` over its websocket: its words."""
        async def go():
            async with Client(f"{self.url.scheme}://{self.url.netloc}/",
                              headers={"X-Forwarded-For": self.address},
                              cookies=self.cookies) as tab:
                return await tab.run(query)
        run = run_async(go())
        assert run.ok and not run.problems(), run.problems()
        return " ".join([a.body for a in run.of("alert")] + [m.body for m in run.of("markdown")])


def lecturer(server) -> Host:
    async def go():
        host = Host(server.url, timeout=120)
        await host.open()
        await host.close()
        return host
    return run_async(go())


def test_three_hundred_strangers_wrong_codes_lock_no_phone_and_no_lecturer_out(hall):
    host = lecturer(hall)
    started = time.perf_counter()
    for _ in range(STRANGERS):                       # fresh browsers, each its own work
        said = Browser(hall).open_class("ZZZZZZ")
        assert "No class is running with the code ZZZZZZ" in said, said
    seconds = time.perf_counter() - started
    guessers = [Browser(hall) for _ in range(10)]    # device codes, fresh tokens each
    for b in guessers:
        b.token(f"/?room={host.code}&device=ABCD-EFGH")
        assert "does not open a class" in b.page(f"room={host.code}&device=ABCDEFGH")
    print(f"\n{STRANGERS} wrong codes from fresh browsers at one address in {seconds:.1f} s "
          "(each with its join's work), then 10 device-code guesses")
    phone = Browser(hall)                            # a new phone of the hall: in
    assert phone.open_class(host.code) == ""
    assert STUDENT_COOKIE + host.code in phone.cookies
    reload = Browser(hall)                           # the lecturer's page, reloaded there
    reload.cookies[f"xattn_host_{host.code}"] = host.key
    assert "you drive this class" in reload.page(f"room={host.code}")
    device, _ = hall.store.add_device(host.code, host.key)
    second = Browser(hall)                           # the lecturer's second device, fresh
    second.token(f"/?room={host.code}&device={device}")
    assert "you drive this class" in second.page(f"room={host.code}&device={device}")


def test_one_guessing_browser_is_backed_off_by_its_token_and_only_it(hall):
    host = lecturer(hall)
    guesser = Browser(hall)
    assert "No class is running" in guesser.open_class("ZZZZZZ")   # its token, with its work
    for _ in range(4):                               # browser_failed_joins: 5 in 10 minutes
        assert "No class is running" in guesser.open_class("YYYYYY")
    for code in ("XXXXXX", host.code):               # then told to wait, even the right code
        assert "were tried in this browser" in guesser.open_class(code)
    said = guesser.page(f"room={host.code}&device=ABCDEFGH")       # and no device code
    assert "were tried in this browser" in said
    assert Browser(hall).open_class(host.code) == ""  # another browser at its address: in


def test_a_full_page_without_a_token_guesses_nothing_and_links_the_class(hall):
    """A Streamlit page whose browser has no token (a code typed in its sidebar: no request
    the token page could answer) looks nothing up and links the phone's page instead."""
    host = lecturer(hall)
    said = Browser(hall).page(f"room={host.code}&explore=1")
    assert "has not shown yet that it is a browser" in said and f"?room={host.code}" in said
