"""The light phone page reached from the Streamlit page, and used by keyboard. In Chromium,
against ``streamlit run app.py`` with a store of its own; bytes from the DevTools protocol.

- A class code typed on the Streamlit page (its join box, ``xattn/ui/room/typed.py``) opens
  the class's light phone page (``/?room=CODE``) in the same tab, in the browser's language
  (each of six), and what the typing loads is that page's 16.3-17.0 kB, not Streamlit's
  front end again; with its streams, its join and the question, at most 20 kB.
- On the full page a student explores, *Back to the class* goes back to it in the same tab.
- A tap by keyboard keeps the focus on its button while the controls are drawn again."""

from __future__ import annotations

import pytest

from devtools.browser import ARTIFACTS, RUN_COUNTER_JS, StreamlitServer, wait_for_app

TIMEOUT_MS = 120_000
TYPED_BUDGET = 20_000          # bytes of the page a typed code opens (a first load: <= 20 kB)
# Everything it loads, in every language (the browser's, as Accept-Language says it): the
# page, its stream, its join, the stream again once joined and, when it comes within the
# wait, the room's first frame (the question, in the phone's language: 0.8-1.2 kB). Issue
# 43's target: 20 kB for all of it. Measured on 6 December: 17.3-19.4 kB (the charts fetched
# once a phone has answered, late.js; the frame sent once: the stream opened once joined says
# it has it, ?had=); docs/phone-page.md says the numbers.
TYPED_ALL = 20_000
LANGS = ("en", "fr", "de", "es", "zh", "ar")


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
    received (``loadingFinished``'s ``encodedDataLength``; a stream still open or closed: its
    headers and body so far) and every websocket frame's payload."""

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

    def _data(self, e):          # (a stream's encoded length may come as 0: its decoded one)
        if e["requestId"] in self.seen:
            self.seen[e["requestId"]]["data"] += max(int(e.get("encodedDataLength") or 0),
                                                     int(e.get("dataLength") or 0))

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


@pytest.mark.parametrize("lang", LANGS)
def test_a_typed_code_opens_the_light_page_in_the_same_tab_in_20_kb(chromium, own_server,
                                                                         room, lang):
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, locale=lang)
    try:
        page = context.new_page()
        page.add_init_script(RUN_COUNTER_JS)
        page.goto(own_server.url)
        wait_for_app(page, timeout=TIMEOUT_MS)
        box = page.get_by_label(_label(lang))              # the form in the page's language
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
                               f".includes('{room}')", polling=100, timeout=TIMEOUT_MS)
        page.wait_for_function("() => document.getElementById('question').innerHTML !== ''",
                               polling=100, timeout=TIMEOUT_MS)   # the question seen
        for _ in range(100):                  # the stream again, as the student it now is
            if sum("/events" in url for _, url in wire.rows()) == 2:
                break
            page.wait_for_timeout(100)
        page.wait_for_timeout(500)                              # a late request counts too
        loaded = sum(n for n, _ in wire.rows())
        print(f"\nwhat a typed code loads in {lang}: {loaded:,} B (target <= {TYPED_ALL:,} B)"
              f"\n{wire.table()}")
        assert page.evaluate("document.documentElement.lang") == lang     # in its language
        assert len(context.pages) == 1, [p.url for p in context.pages]      # the same tab
        assert not any("/static/" in url or "_stcore" in url for _, url in wire.rows()), \
            wire.table()
        first = max(n for n, url in wire.rows() if "?room=" in url)
        assert 0 < first <= TYPED_BUDGET, wire.table()
        assert loaded <= TYPED_ALL, wire.table()
        streams = [(n, url) for n, url in wire.rows() if "/events" in url]
        if len(streams) == 2 and streams[0][0] > 600:   # the first frame came before joining:
            assert "?had=" in streams[1][1], wire.table()    # not sent again once joined
    finally:
        context.close()


def _label(lang: str) -> str:
    """The join box's label as the Streamlit page in ``lang`` says it (its ``app.po``)."""
    from xattn.ui.i18n import catalog

    said = catalog(lang).get("Join a class: its code")
    return said.string if said is not None and said.string else "Join a class: its code"


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


_FOCUSED = "() => document.activeElement && document.activeElement.dataset.key || null"


def test_a_tap_by_keyboard_keeps_the_focus_on_its_button(chromium, own_server):
    """The controls are drawn again after every tap (the answer pressed, its receipt): the
    focus stays on the button of the same key (phone/view.js), so a keyboard's or a screen
    reader's user does not start again from the top of the page."""
    from xattn.classroom import SQLiteStore
    from xattn.lesson import SHIPPED
    from xattn.live.answers import class_step

    store = SQLiteStore(own_server.env["XATTN_CLASS_STORE"])
    room, _ = store.create_room([class_step(SHIPPED, 1)[1].question])
    store.close()
    context = chromium.new_context(viewport={"width": 390, "height": 844})
    try:
        page = context.new_page()
        page.goto(f"{own_server.url}?room={room}")
        page.wait_for_function("() => window.__xattnJoinedAt !== undefined", polling=100,
                               timeout=TIMEOUT_MS)
        for key, press in (("choice-1", "Enter"), ("choice-0", " ")):
            button = page.locator(f'#controls [data-key="{key}"]')
            button.wait_for(timeout=TIMEOUT_MS)
            button.focus()
            page.keyboard.press(press)
            page.wait_for_function("() => document.getElementById('receipt').className"
                                   " === 'receipt saved'", polling=100, timeout=TIMEOUT_MS)
            page.wait_for_function(f"() => document.querySelector('#controls [data-key=\"{key}\"]')"
                                   ".getAttribute('aria-pressed') === 'true'", polling=100,
                                   timeout=TIMEOUT_MS)        # drawn again, pressed
            assert page.evaluate(_FOCUSED) == key
            assert page.locator(f'#controls [data-key="{key}"]').evaluate(
                "b => b === document.activeElement")
    finally:
        context.close()
