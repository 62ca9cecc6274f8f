"""In a real browser, every view: hostile tokens are drawn as the literal text they are; so is
a hostile class code on a student's phone page.

AppTest sees the Markdown and the figure JSON the page sends (tests/test_hostile.py); this
looks at what Chromium made of them: no link, image, script, bold, KaTeX, coloured text or
icon comes out of a token, and the tokens are there, character for character.
"""

from __future__ import annotations

import pytest

from xattn.ui.page import VIEWS

pytestmark = pytest.mark.browser

TOKENS = ["<a/href='https://example.com'>Click</a>", "<b>BB</b>", "<img/src=x/onerror=alert(1)>",
          "**bold**", "[click](https://example.com)", "_it_", "~~del~~", "$x^2$", ":red[RED]",
          ":material/home:", ":smile:", ":streamlit:", "%{meta[0]}", "{{x}}", "&amp;"]
SRC, TGT = " ".join(TOKENS[:8]), " ".join(TOKENS[6:] + TOKENS[:2])
LINK = f"{len(TOKENS) - 6}: {TOKENS[0]}"          # the target token that looks like a link

# Elements a token could have turned into, if anything were interpreted.
INTERPRETED_JS = """
() => {
  const found = [];
  const text = (e) => (e.textContent || '').trim();
  document.querySelectorAll('a[href*="example.com"], img[src="x"]').forEach(
      (e) => found.push(e.outerHTML.slice(0, 80)));
  document.querySelectorAll('script').forEach((e) => {
      if (text(e).includes('alert(1)')) found.push('script');
  });
  document.querySelectorAll('b, strong, em, i, del, s, u').forEach((e) => {
      if (['BB', 'bold', 'it', 'del', 'Click'].includes(text(e))) found.push(e.tagName + ' ' + text(e));
  });
  document.querySelectorAll('.katex annotation').forEach((e) => {
      if (text(e).includes('x^2')) found.push('katex ' + text(e));
  });
  document.querySelectorAll('span, div, p').forEach((e) => {
      if (e.children.length === 0 && text(e) === 'RED') found.push('coloured RED');
  });
  document.querySelectorAll('[data-testid="stIconMaterial"]').forEach((e) => {
      if (text(e) === 'home') found.push('icon home');
  });
  if (document.body.innerText.includes('\\u{1F604}')) found.push('emoji from :smile:');
  return found;
}
"""

SVG_TEXT_JS = """
() => [...document.querySelectorAll('.js-plotly-plot svg text')].map((t) => t.textContent)
"""


def open_view(app, view: str, **extra) -> None:
    query = {"tok": "whitespace", "src": SRC, "tgt": TGT, "view": view, **extra}
    condition = "traces && traces.length" if view in ("Heads",) else "true"
    app.open(query, condition)


@pytest.mark.parametrize("view", list(VIEWS))
def test_every_view_draws_hostile_tokens_literally(app, view):
    extra = ({"mask": "padding", "pad": ["1: <b>BB</b>", "3: **bold**"]} if view == "Heads"
             else {"step_tgt": LINK} if view == "Step through" else {})
    open_view(app, view, **extra)
    page = app.page
    if view == "Heads":   # the text description and the average are folded: open them
        app.act(lambda: page.get_by_text("Text description of the heatmaps").click(),
                "document.body.innerText.includes('Head 1:')", "open the description")
        app.act(lambda: page.get_by_text("The formula, the average over heads").click(),
                "!!document.querySelector('.st-key-average g.hm image')", "open the average")
    assert page.evaluate(INTERPRETED_JS) == []
    app.assert_clean()
    svg = set(page.evaluate(SVG_TEXT_JS))
    body = page.evaluate("document.body.innerText")
    if view in ("Heads", "Step through", "Lines", "Compare"):
        for token in ("<b>BB</b>", "**bold**", "$x^2$", "&amp;", "{{x}}"):
            assert token in svg or token in body, token          # drawn, character for character
    if view == "Heads":
        chips = page.evaluate("""() => [...new Set([...document.querySelectorAll(
            '.st-key-pad [data-tag] > span[title]')].map((e) => e.textContent))]""")
        assert chips == ["1: <b>BB</b>", "3: **bold**"]         # the padding picker's chips
        assert "[click](https://example.com)" in body and ":red[RED]" in body   # description
        shown = body.replace("\u200b", "")     # what a reader sees (zero-width space: literal.py)
        assert ":material/home:" in shown and ":streamlit:" in shown
    if view == "Step through":
        assert any(t.startswith("Weights of <a/href=") for t in svg)   # the bar chart's title


def test_the_trained_view_quotes_hostile_words(app):
    app.open({"weights": "trained", "tr_src": "the <b>cat</b> $x$ :red[RED] sees"}, "true")
    assert app.page.evaluate(INTERPRETED_JS) == []
    body = app.page.evaluate("document.body.innerText")
    assert "Words outside the lexicon" in body and "<b>" in body
    app.assert_clean()


def phone_interpreted(page) -> list[str]:
    """INTERPRETED_JS on the phone's page, whose one script holds what was typed as JSON data
    (``<`` escaped, so no tag can close it): that script is checked for that, not flagged."""
    found = [f for f in page.evaluate(INTERPRETED_JS) if f != "script"]
    scripts = page.evaluate("[...document.scripts].map((s) => s.textContent)")
    if len(scripts) != 1:
        found.append(f"{len(scripts)} scripts")
    found += [f"the script holds {raw!r}" for raw in ("<img", "<a/", "</script")
              if any(raw in text for text in scripts)]
    return found


@pytest.mark.parametrize("typed", [TOKENS[2], TOKENS[0], "**HJK23M**", "%{meta[0]}"])
def test_the_phones_page_shows_a_hostile_class_code_literally(window, typed):
    """A student's link (``?room=...``) is answered by the phone's own page, not Streamlit:
    a code that opens no class is said, quoted, and offered back in the join form as text."""
    import urllib.parse

    tab = window(390, 844, phone=True)
    page = tab.page
    page.goto(f"{tab.server.url}?{urllib.parse.urlencode({'room': typed})}")
    page.wait_for_selector("#join:not([hidden])")
    assert phone_interpreted(page) == []
    assert page.input_value("#code") == typed[:40]                 # offered back, as typed
    why = page.inner_text("#join-why")
    assert "is not a room code" in why and typed[:28] in why, why   # quoted, literally
    assert page.locator("#main").is_hidden()
    # typed again in the form: the page it opens says the same, and still runs nothing
    page.fill("#code", typed[:12])
    with page.expect_navigation():
        page.locator("#join button[type=submit]").click()
    page.wait_for_selector("#join:not([hidden])")
    assert phone_interpreted(page) == []
    assert not tab.dialogs and not [e for e in tab.errors if "pageerror" in e], tab.errors
