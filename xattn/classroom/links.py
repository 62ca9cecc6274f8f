"""A word alignment (question kind ``links``): the (target, source) links a student draws,
judged by their alignment error rate against the gold links."""

from __future__ import annotations

import numbers

from xattn.words import say, say_n

__all__ = ["MAX_LINKS", "encode_links", "verdict_links"]

MAX_LINKS = 32               # links in one answer: two a word of 16, and 6 bytes each stored


def encode_links(q, value) -> str | None:
    """``"0-0 1-2"``: the (target, source) links sorted, once each; None if refused."""
    if isinstance(value, (str, bytes, dict)) or not isinstance(
            value, (tuple, list, set, frozenset)):
        return None
    links = set()
    for link in value:
        if not (isinstance(link, (tuple, list)) and len(link) == 2) or any(
                isinstance(k, bool) or not isinstance(k, numbers.Integral) for k in link):
            return None
        t, s = int(link[0]), int(link[1])
        if not (0 <= t < len(q.rows) and 0 <= s < len(q.choices)):
            return None
        links.add((t, s))
    if not 1 <= len(links) <= MAX_LINKS:
        return None
    return " ".join(f"{t}-{s}" for t, s in sorted(links))


def verdict_links(q, key, answer) -> str:
    """The links' AER against the gold links (all sure: AER = 1 - 2|A∩S| / (|A| + |S|),
    Och and Ney 2003), and how many of them are gold."""
    links, gold = set(answer), set(key.truth)
    hits = len(links & gold)
    if hits == len(links) == len(gold):
        return say("**Right: the gold alignment exactly** (AER {aer:.2f}).", aer=0.0)
    aer = 1 - 2 * hits / (len(links) + len(gold))
    return say_n("**Your AER {aer:.2f}**: {n} of your {links} is gold, of the {gold} gold links "
                 "(lower AER is better; 0 is the gold alignment).",
                 "**Your AER {aer:.2f}**: {n} of your {links} are gold, of the {gold} gold "
                 "links (lower AER is better; 0 is the gold alignment).", hits, aer=aer,
                 links=say_n("{n} link", "{n} links", len(links)), gold=len(gold))
