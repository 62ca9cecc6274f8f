"""A class code typed on the Streamlit page (its join box, ``xattn/ui/room/typed.py``) opens
the class's light phone page (``/?room=CODE``) in the same tab, and what the typing loads is
that page's ~16 kB, not Streamlit's front end again; on the full page a student explores,
*Back to the class* goes back to it in the same tab (no second tab). In Chromium, against
``streamlit run app.py`` with a store of its own; bytes from the DevTools protocol."""

from __future__ import annotations

import pytest

from devtools.browser import ARTIFACTS, RUN_COUNTER_JS, StreamlitServer, wait_for_app

TIMEOUT_MS = 120_000
TYPED_BUDGET = 20_000          # bytes a typed code may load (the issue's: the page's ~16 kB)


@pytest.fixture(scope="module")
def own_server(chromium, tmp_path_factory):
    env = {"XATTN_CLASS_STORE": str(tmp_path_factory.mktemp("typed") / "classes.sqlite3"),
           "XATTN_REDIS_URL": "", "XATTN_PUBLIC_URL": ""}
    with StreamlitServer(env=env, log=ARTIFACTS / "typed-server.log") as server:
        yield server


@pytest.fixture
def room(own_server):
    from xattn.classroom import Question, SQLiteStore

    store = SQLiteStore(own_server.env["XATTN_CLASS_STORE"])
    code, _ = store.create_room([Question("choice", ("up", "down"))])
    store.close()
    return code


class Wire:
    """What a tab receives from the moment `start` is called: each response's bytes as
    received (``loadingFinished``'s ``encodedDataLength``; a stream still open: its headers
    and body so far) and every websocket frame's payload."""

    def __init__(self, page):
        self.cdp = page.context.new_cdp_session(page)
        self.on, self.seen, self.frames = False, {}, []
        self.cdp.on("Network.requestWillBeSent", self._sent)
        self.cdp.on("Network.responseReceived", self._head)
        self.cdp.on("Network.dataReceived", self._data)
        self.cdp.on("Network.loadingFinished", self._done)
        self.cdp.on("Network.webSocketFrameReceived", self._frame)
        self.cdp.send("Network.enable")
        self.cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})

    def start(self) -> None:
        self.on = True

    def _sent(self, e):
        if self.on:
            self.seen[e["requestId"]] = {"url": e["request"]["url"], "head": 0, "data": 0,
                                         "done": None}

    def _head(self, e):
        if e["requestId"] in self.seen:
            self.seen[e["requestId"]]["head"] = int(e["response"].get("encodedDataLength") or 0)

    def _data(self, e):
        if e["requestId"] in self.seen:
            self.seen[e["requestId"]]["data"] += int(e.get("encodedDataLength") or 0)

    def _done(self, e):
        if e["requestId"] in self.seen:
            self.seen[e["requestId"]]["done"] = int(e.get("encodedDataLength") or 0)

    def _frame(self, e):
        if self.on:
            self.frames.append(len(e["response"].get("payloadData") or ""))

    def rows(self) -> list[tuple[int, str]]:
        rows = [(r["done"] if r["done"] is not None else r["head"] + r["data"], r["url"])
                for r in self.seen.values()]
        return rows + [(n, "websocket frame") for n in self.frames]

    def table(self) -> str:
        return "\n".join(f"  {n:>7} B  {url}" for n, url in self.rows())


def test_a_typed_code_opens_the_light_page_in_the_same_tab_at_its_16_kb(chromium, own_server,
                                                                         room):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.add_init_script(RUN_COUNTER_JS)
        page.goto(own_server.url)
        wait_for_app(page, timeout=TIMEOUT_MS)
        box = page.get_by_label("Join a class: its code")
        box.wait_for(timeout=TIMEOUT_MS)
        wire = Wire(page)
        wire.start()
        typed = room.lower()[:3] + "-" + room[3:]            # as a student types it
        box.fill(typed)
        box.press("Enter")
        page.wait_for_url(f"**/?room={typed}", timeout=TIMEOUT_MS)
        page.wait_for_function("() => window.__xattnJoinedAt !== undefined", polling=100,
                               timeout=TIMEOUT_MS)             # joined: its work done
        page.wait_for_function(f"() => document.getElementById('where').textContent"
                               f".includes('class {room}')", polling=100, timeout=TIMEOUT_MS)
        page.wait_for_timeout(500)                              # a late request counts too
        loaded = sum(n for n, _ in wire.rows())
        print(f"\nwhat a typed code loads: {loaded:,} B (target <= {TYPED_BUDGET:,} B)\n"
              f"{wire.table()}")
        assert len(context.pages) == 1, [p.url for p in context.pages]      # the same tab
        assert not any("/static/" in url or "_stcore" in url for _, url in wire.rows()), \
            wire.table()
        assert 0 < loaded <= TYPED_BUDGET, wire.table()
    finally:
        context.close()


def test_back_to_the_class_opens_the_light_page_in_the_same_tab(chromium, own_server, room):
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(f"{own_server.url}?room={room}&explore=1")   # the phone's link to explore
        back = page.get_by_role("link", name="Back to the class")
        back.wait_for(timeout=TIMEOUT_MS)                       # (after the token's work)
        assert back.get_attribute("target") == "_self"
        back.click()
        page.wait_for_url(f"**/?room={room}", timeout=TIMEOUT_MS)
        page.wait_for_function(f"() => !!document.getElementById('where') && document"
                               f".getElementById('where').textContent.includes('class {room}')",
                               polling=100, timeout=TIMEOUT_MS)  # the phone's own page
        assert len(context.pages) == 1, [p.url for p in context.pages]      # no second tab
    finally:
        context.close()
