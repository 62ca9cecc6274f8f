"""The lecturer's page inside another page (a Hugging Face Space shows its app in a frame of
huggingface.co) says to teach from the app's own address; at that address it says nothing.
In Chromium, against ``streamlit run app.py`` with a store of its own."""

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
