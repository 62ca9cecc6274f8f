"""Messages a student reads are plain English: no Python argument names (``first_index=0``)
and no "1 heads" or "1 problems", on the page's text and in its charts' titles."""

from __future__ import annotations

import json
import re

import pytest
from apptest_helpers import run_app

from xattn._checks import counted

pytestmark = pytest.mark.usefixtures("fresh_cache")

WRONG_PLURAL = re.compile(r"\b1 (heads|layers|steps|problems|links|tokens|pieces|words)\b")
ARGUMENT = re.compile(r"\b[a-z]+_[a-z_]+=")        # first_index=0, n_heads=4, ...


def everything(at) -> str:
    texts = [e.value for kind in ("markdown", "caption", "info", "warning", "error")
             for e in getattr(at, kind)]
    charts = [json.loads(c.proto.spec).get("layout", {}).get("title", {}).get("text", "")
              for c in at.get("plotly_chart")]
    return "\n".join(texts + charts)


def test_counted_says_one_in_the_singular():
    assert counted(1, "head") == "1 head" and counted(3, "head") == "3 heads"
    assert counted(1, "decoder layer") == "1 decoder layer"


@pytest.mark.parametrize("view", ["Heads", "Compare", "Step through", "Switch heads off",
                                  "Lines", "Head statistics"])
def test_one_head_is_one_head(view):
    query = {"heads": "1", "view": view} | ({"cmp": "heads", "cmp_heads": "1"}
                                            if view == "Compare" else {})
    at = run_app(query)
    assert not at.exception, at.exception
    text = everything(at)
    assert not WRONG_PLURAL.search(text), WRONG_PLURAL.search(text)
    assert not ARGUMENT.search(text.replace("d_model", "").replace("d_head", "")), \
        ARGUMENT.search(text)


def test_a_gold_file_s_messages_name_no_argument():
    at = run_app({"view": "Alignment"})
    at.radio(key="gold").set_value("file").run()
    at.radio(key="gold_first").set_value(0)
    at.file_uploader(key="gold_upload").set_value(("g.txt", b"9-9 1-1\n", "text/plain"))
    at.run()
    text = everything(at)
    assert "Read its positions as counting from 1" in text or "counting from" in text
    assert "first_index" not in text and not WRONG_PLURAL.search(text)
