"""Hostile tokens through every view (AppTest): nothing a user types is ever interpreted.

Markdown (alerts, captions, tables' neighbours) must hold them inside code spans; Plotly
figures must hold them escaped (no tag, no ``$...$``, no ``%{...}``); tables hold plain text.
The browser version, which looks at what is drawn, is in test_browser_hostile.py.
"""

import json
import re

import pytest
from apptest_helpers import run_app
from markdown_helpers import user_text_is_inert

from xattn.lesson import STEPS
from xattn.literal import plotly_text
from xattn.ui.page import VIEWS

# No whitespace inside a token: the page's "whitespace" tokenizer keeps each one whole.
HOSTILE = [
    "<a/href='https://example.com'>Click</a>", "<b>B</b>", "<img/src=x/onerror=alert(1)>",
    "**bold**", "[click](https://example.com)", "_it_", "~~del~~", "#h", "`code`", "x``y",
    "$x^2$", "$$y$$", "\\(z\\)", ":red[RED]", ":material/home:", ":smile:", "%{x}",
    "%{meta[0]}", "{{x}}", "=HYPERLINK(\"http://x.example\",\"y\")", "@SUM(1)", "&amp;",
    "x" * 300,
]
SRC, TGT = " ".join(HOSTILE[:12]), " ".join(HOSTILE[11:])


pytestmark = pytest.mark.usefixtures("fresh_cache")

def markdown_texts(at) -> list[str]:
    return [e.value for e in (*at.markdown, *at.caption, *at.warning, *at.info, *at.error,
                              *at.success)]


def figure_strings(at) -> list[str]:
    out = []

    def walk(x):
        if isinstance(x, str):
            out.append(x)
        elif isinstance(x, dict):
            for k, v in x.items():
                walk(k)
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    for el in at.get("plotly_chart"):
        walk(json.loads(el.proto.spec))
    return out


@pytest.mark.parametrize("view", list(VIEWS))
@pytest.mark.parametrize("mask", ["none", "padding"])
def test_hostile_tokens_are_never_interpreted(view, mask):
    query = {"tok": "whitespace", "src": SRC, "tgt": TGT, "view": view, "mask": mask}
    if mask == "padding":
        query["pad"] = ["1: <b>B</b>", "4: [click](https://example.com)"]
    at = run_app(query)
    assert not at.exception, at.exception
    for text in markdown_texts(at):
        # the page's own Markdown (headings, formulas in $...$) comes from constants: only
        # texts that quote a token are checked, and those must keep it in a code span
        if any(t in text for t in HOSTILE):
            own = [f"**Head {h}**" for h in range(1, 17)]
            # the lesson's own Markdown (constants of xattn.lesson): the pieces of its texts
            # around the «fields» a token fills, its headings and labels
            own += [piece for step in STEPS for part in (step.text, step.look, step.question)
                    for piece in re.split("«[a-z_]+»", part) if piece.strip()]
            own += [f"## Step {n} of {len(STEPS)}: {s.title}" for n, s in enumerate(STEPS, 1)]
            own += ["**Look at:**", "**Question for the class:**", "**Your prediction.**",
                    "*chat*", "*noir*", "*le*", "*the*"]
            assert user_text_is_inert(text, *own), text
    strings = figure_strings(at)
    for token in HOSTILE:
        if any(c in token for c in "<>$") or token == "%{meta[0]}":
            assert not any(token in s for s in strings), token       # never raw in a figure
    if view in ("Heads", "Step through", "Lines"):
        escaped = " ".join(strings)
        assert plotly_text("<a/href='https://example.com'>Click</a>")[:30] in escaped
    if mask == "padding":
        assert at.multiselect(key="pad").value == ["1: <b>B</b>",
                                                   "4: [click](https://example.com)"]


def test_hostile_words_in_the_trained_view_are_quoted():
    at = run_app({"weights": "trained", "tr_src": "the **cat** [x](https://e.com) sees",
                  "tr_tgt": "le $chat$ :red[voit]"})
    assert not at.exception
    warnings = [t for t in markdown_texts(at) if "Words outside the lexicon" in t]
    assert len(warnings) == 1
    text = warnings[0]
    assert user_text_is_inert(text, "**Words outside the lexicon**", "*The lexicon*",
                              "*the sad king follows a pink horse*"), text
    assert "`https`" in text and "French `red`" in text   # punctuation is not a word here
