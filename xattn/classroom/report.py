"""What a room shows outside the store: the class's answers as CSV, and the student link as a
QR code.

The CSV holds counts only (no student ids), one row per answer per round per step; it follows
the project's CSV rules (`xattn.export.weights_csv`): RFC 4180 with CRLF line ends, and any
text a spreadsheet would run as a formula gets a ``'`` in front (`xattn.literal.csv_cell`).
"""

from __future__ import annotations

import csv
import html
import io
from urllib.parse import parse_qs, urlsplit

import segno

from xattn._checks import quote
from xattn.classroom.confidence import LEVELS, by_element
from xattn.classroom.question import NO_QUESTION
from xattn.classroom.records import Tally
from xattn.literal import csv_cell

__all__ = ["answers_csv", "qr_svg", "CSV_HEADER"]

CSV_HEADER = ("step", "round", "kind", "index", "answer", "count", "timer_seconds",
              "changed_to_this", "answered", "sure", "think_so", "guess", "misconception")
_MAX_URL = 2000


def answers_csv(tallies, *, moves: dict | None = None, confidence: dict | None = None,
                misconceptions: dict | None = None) -> str:
    """The class's answers (`ClassStore.results`) as CSV: counts only, no ids.

    ``index`` is the 0-based position of a choice or token (empty for a number); every option
    of a choice or token question has a row, zeros included. A parts question has a row per
    part and choice (``index`` the choice's, ``answer`` "part: choice"), a links question a
    row per link at least one student drew (``index`` "target-source", ``answer`` "target →
    source"); their ``count`` is the students whose answer holds it. ``timer_seconds`` is the
    round's countdown (empty: none). ``changed_to_this`` (a revote, from ``moves``: for each
    (step, round) after the first, `ClassStore.changes` from the round before) counts the
    students who gave this answer (holds this part's choice, this link) in this round and not
    in the round before; peer instruction's measure is this count on the right answer's row.
    ``answered``: how many students answered the round (a link's share is its count over it).
    ``sure``, ``think_so`` and ``guess`` (a room that asks how sure each answer is, from
    ``confidence``: for each (step, round), `ClassStore.confidence`'s counts) split ``count``
    by the confidence its students gave (those who gave none are the rest); empty for a round
    in which nobody gave one. ``misconception`` (from ``misconceptions``: for each (step,
    round), a function of a counted answer) names the misconception whose answer a wrong
    answer is ("softmax over the wrong axis", ``xattn.lesson.misconceptions``); empty for a
    right answer, for one no named misconception gives, and for a number only within the
    question's tolerance of none.

    Examples
    --------
    >>> from xattn.classroom import Question
    >>> q = Question("token", ("=A1", "cat"))
    >>> answers_csv([Tally(1, 1, q, {0: 3, 1: 0})]).splitlines()[1:]
    ["1,1,token,0,'=A1,3,,,3,,,,", '1,1,token,1,cat,0,,,3,,,,']
    >>> moved = {(1, 2): {(0, 1): 2, (1, 1): 1, (None, 1): 4}}
    >>> answers_csv([Tally(1, 2, q, {0: 0, 1: 7})], moves=moved).splitlines()[2]
    '1,2,token,1,cat,7,,2,7,,,,'
    >>> sure = {(1, 1): {(0, "sure"): 2, (0, None): 1, (1, "guess"): 4}}
    >>> answers_csv([Tally(1, 1, q, {0: 3, 1: 4})], confidence=sure).splitlines()[1:]
    ["1,1,token,0,'=A1,3,,,7,2,0,0,", '1,1,token,1,cat,4,,,7,0,0,4,']
    >>> pair = Question("links", ("the", "cat"), rows=("le", "chat"))
    >>> answers_csv([Tally(2, 1, pair, {(0, 0): 2, (0, 1): 0, (1, 0): 0, (1, 1): 1}, None,
    ...                    2)]).splitlines()[1:]
    ['2,1,links,0-0,le → the,2,,,2,,,,', '2,1,links,1-1,chat → cat,1,,,2,,,,']
    >>> slip = {(1, 1): lambda value: "rows and columns swapped" if value == 1 else ""}
    >>> answers_csv([Tally(1, 1, q, {0: 3, 1: 4})], misconceptions=slip).splitlines()[2]
    '1,1,token,1,cat,4,,,7,,,,rows and columns swapped'
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    moves, confidence, slips = moves or {}, confidence or {}, misconceptions or {}
    for t in tallies:
        if not isinstance(t, Tally):
            raise TypeError(f"answers_csv takes Tally records (ClassStore.results); received "
                            f"{type(t).__name__} {quote(t)}.")
        q = t.question
        if q == NO_QUESTION:            # a step the class reads: nothing was asked (issue 44)
            continue
        timer = "" if t.timer is None else f"{t.timer.seconds:g}"
        moved = moves.get((t.step, t.round))
        n_answered = t.n_answered if t.n_answered is not None else (
            sum(t.counts.values()) if q.of.one_answer else "")
        sure = confidence.get((t.step, t.round))
        levels = None if sure is None else by_element(q, sure)
        slip = slips.get((t.step, t.round), lambda value: "")
        for value, n in t.counts.items():
            if q.of.drawn.sparse and not n:
                continue                       # links nobody drew: up to 256 empty rows
            came = "" if moved is None else sum(
                k for (a, b), k in moved.items() if a is not None and b is not None
                and value in q.elements(b) and value not in q.elements(a))
            by_level = ("",) * len(LEVELS) if levels is None else tuple(
                levels.get(value, {}).get(level, 0) for level in LEVELS)
            writer.writerow((t.step, t.round, q.kind, *_named(q, value), n, timer, came,
                             n_answered, *by_level, slip(value)))
    return buf.getvalue()


def _named(q, value) -> tuple:
    """(index, answer) of one counted answer (its kind's ``named``): a text a safe cell, a
    number as it is (a spreadsheet reads ``-0.50`` as the number it is)."""
    index, answer = q.of.named(q, value)
    return index, answer if q.of.number else csv_cell(answer)


def qr_svg(url: str, *, label: str = "QR code of the class link") -> str:
    """The QR code of ``url`` as an inline SVG element (``role="img"``, a ``<title>`` and an
    ``aria-label``), black on white with its quiet zone, scaling to its container.

    A host link is refused: a QR code on a projector is for students, and a ``host=`` secret
    in it would let anyone in the room drive the class.

    Examples
    --------
    >>> svg = qr_svg("https://example.org/?room=HJK23M")
    >>> svg[:61]
    '<svg role="img" aria-label="QR code of the class link: https:'
    >>> qr_svg("https://example.org/?room=HJK23M&host=s3cret")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: this URL carries the host secret (host=...): make the QR code of the student ...
    """
    if not isinstance(url, str) or not isinstance(label, str):
        raise TypeError(f"qr_svg takes a str url and label; received {type(url).__name__} "
                        f"{quote(url)}.")
    if not url or len(url) > _MAX_URL:
        raise ValueError(f"a QR code's URL must have 1 to {_MAX_URL} characters; received "
                         f"{len(url)}.")
    if "host" in parse_qs(urlsplit(url).query, keep_blank_values=True):
        raise ValueError("this URL carries the host secret (host=...): make the QR code of the "
                         "student link (?room=CODE) instead.")
    text = f"{label}: {url}"
    buf = io.BytesIO()
    segno.make(url, error="m").save(buf, kind="svg", xmldecl=False, svgns=True, title=text,
                                    omitsize=True, border=4, dark="#000", light="#fff", scale=1)
    svg = buf.getvalue().decode()
    return svg.replace("<svg ", f'<svg role="img" aria-label="{html.escape(text)}" ', 1)
