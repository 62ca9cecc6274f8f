"""The lecturer's page inside another page (a Hugging Face Space shows its app in a frame of
huggingface.co) says to teach from the app's own address; at that address it says nothing.
A phone's page framed over http says to open a tab of its own. A page on another port of the
same host, holding the lecturer's cookie, opens no websocket and ends no class. In Chromium,
against ``streamlit run app.py`` with a store of its own."""

from __future__ import annotations

import pytest

from devtools.browser import ARTIFACTS, StreamlitServer
from xattn.ui.room.framed import FRAMED

TIMEOUT_MS = 120_000


@pytest.fixture(scope="module")
def own_server(chromium, tmp_path_factory):
    env = {"XATTN_CLASS_STORE": str(tmp_path_factory.mktemp("framed") / "classes.sqlite3"),
           "XATTN_REDIS_URL": "", "XATTN_PUBLIC_URL": ""}
    with StreamlitServer(env=env, log=ARTIFACTS / "framed-server.log") as server:
        yield server


def test_a_lecturers_page_in_a_frame_says_to_teach_from_its_own_address(chromium, own_server):
    context = chromium.new_context(viewport={"width": 1400, "height": 1000})
    try:
        around = context.new_page()               # another site's page, the app in its frame
        around.set_content(f'<iframe id="app" src="{own_server.url}?class=new" '
                           'width="1350" height="950"></iframe>')
        note = around.frame_locator("#app").locator(".xattn-framed")
        note.wait_for(state="visible", timeout=TIMEOUT_MS)
        assert note.text_content() == FRAMED.replace("{own}", own_server.url)
        page = context.new_page()                 # the app at its own address
        page.goto(own_server.url + "?class=new")
        page.locator(".xattn-framed").wait_for(state="attached", timeout=TIMEOUT_MS)
        page.locator(".st-key-reveal").wait_for(timeout=TIMEOUT_MS)
        assert page.locator(".xattn-framed").is_hidden()
        assert page.locator(".xattn-framed").text_content() == ""
    finally:
        context.close()


# --- one origin: a page on another port of the same host, holding the lecturer's cookie ------

@pytest.fixture(scope="module")
def other_port():
    """A page of another origin on this host (same site: the lecturer's cookie goes along)."""
    import http.server
    import threading

    class Blank(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<!doctype html><title>another origin</title>")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blank)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


_OPEN_WS = """async (url) => await new Promise((done) => {
  const ws = new WebSocket(url, ["streamlit"]);
  ws.onopen = () => { ws.close(); done("open"); };
  ws.onerror = () => done("refused");
})"""
_END = """async (url) => { try { await fetch(url, { method: "POST", credentials: "include",
  mode: "no-cors" }); return "sent"; } catch (e) { return "failed"; } }"""


def test_a_page_on_another_port_cannot_use_the_lecturers_cookie(chromium, own_server,
                                                                 other_port):
    from xattn.classroom import Question, SQLiteStore

    store = SQLiteStore(own_server.env["XATTN_CLASS_STORE"])
    code, key = store.create_room([Question("choice", ("up", "down"))])
    context = chromium.new_context()
    try:
        context.add_cookies([{"name": f"xattn_host_{code}", "value": key,
                              "url": own_server.url}])
        ws_url = own_server.url.replace("http", "ws") + "_stcore/stream"
        own = context.new_page()
        own.goto(own_server.url + "_stcore/health")
        assert own.evaluate(_OPEN_WS, ws_url) == "open"        # the app's own origin: in
        other = context.new_page()
        other.goto(other_port)
        assert other.evaluate(_OPEN_WS, ws_url) == "refused"
        assert other.evaluate(_END, f"{own_server.url}live/{code}/end") == "sent"
        assert store.room_view(code).code == code               # the class was not ended
    finally:
        context.close()
        store.close()


def test_a_phones_page_framed_over_http_says_to_open_a_tab_of_its_own(chromium, own_server):
    """Over plain http no browser keeps a cookie in another site's frame (``SameSite=None``
    needs ``Secure``, which needs HTTPS: tests/test_phone_routes.py checks the attributes
    per request kind), so the phone's page says where to open the class instead."""
    from xattn.classroom import Question, SQLiteStore

    store = SQLiteStore(own_server.env["XATTN_CLASS_STORE"])
    code, _ = store.create_room([Question("choice", ("up", "down"))])
    store.close()
    link = f"{own_server.url}?room={code}"
    context = chromium.new_context()
    try:
        around = context.new_page()
        around.set_content(f'<iframe id="app" src="{link}" width="400" height="700"></iframe>')
        note = around.frame_locator("#app").locator("#framed")
        note.wait_for(state="visible", timeout=TIMEOUT_MS)
        assert "Open it in a tab of its own" in " ".join(note.text_content().split())
        assert note.locator("a").get_attribute("href") == link
        page = context.new_page()                 # the same link in a tab: no such note
        page.goto(link)
        page.locator("#title").wait_for(timeout=TIMEOUT_MS)
        assert page.locator("#framed").is_hidden()
    finally:
        context.close()
