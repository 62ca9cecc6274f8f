"""Reading back what the page writes as Markdown: code spans, found as CommonMark finds them."""

import re

ACTIVE = re.compile(r"[<>\[\]$`\\|~*]|(?<!\w)_|_(?!\w)|:[a-z-]+\[|:material/")


def split_code_spans(md: str) -> tuple[str, list[str]]:
    """``md`` with every inline code span replaced by " CODE ", and the spans' contents.

    A run of n backticks opens a span that the next run of exactly n backticks closes; a run
    with no such partner is literal text (CommonMark, section 6.1).
    """
    out, spans, i = [], [], 0
    while i < len(md):
        if md[i] != "`":
            out.append(md[i])
            i += 1
            continue
        j = i
        while j < len(md) and md[j] == "`":
            j += 1
        n, k, close = j - i, j, None
        while k < len(md):
            if md[k] == "`":
                m = k
                while m < len(md) and md[m] == "`":
                    m += 1
                if m - k == n:
                    close = (k, m)
                    break
                k = m
            else:
                k += 1
        if close is None:
            out.append(md[i:j])
            i = j
        else:
            content = md[j:close[0]]
            if len(content) > 2 and content[0] == content[-1] == " " and content.strip():
                content = content[1:-1]
            spans.append(content)
            out.append(" CODE ")
            i = close[1]
    return "".join(out), spans


def user_text_is_inert(md: str, *own: str) -> bool:
    """True when, outside code spans, ``md`` holds nothing Markdown, HTML, LaTeX or Streamlit
    would interpret: whatever a user typed must sit inside the code spans. ``own``: the
    page's own Markdown in ``md`` (e.g. ``"**Head 1**"``), allowed as it is."""
    outside, _ = split_code_spans(md)
    for text in own:
        outside = outside.replace(text, "")
    return not ACTIVE.search(outside)
