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
from xattn.classroom.store import Tally
from xattn.literal import csv_cell

__all__ = ["answers_csv", "qr_svg", "CSV_HEADER"]

CSV_HEADER = ("step", "round", "kind", "index", "answer", "count", "timer_seconds",
              "changed_to_this")
_MAX_URL = 2000


def answers_csv(tallies, *, moves: dict | None = None) -> str:
    """The class's answers (`ClassStore.results`) as CSV: counts only, no ids.

    ``index`` is the 0-based position of a choice or token (empty for a number); every option
    of a choice or token question has a row, zeros included. ``timer_seconds`` is the round's
    countdown (empty: none). ``changed_to_this`` (a revote, from ``moves``: for each (step,
    round) after the first, `ClassStore.changes` from the round before) counts the students who
    gave this answer in this round and another one in the round before; peer instruction's
    measure is this count on the right answer's row.

    Examples
    --------
    >>> from xattn.classroom import Question
    >>> q = Question("token", ("=A1", "cat"))
    >>> answers_csv([Tally(1, 1, q, {0: 3, 1: 0})]).splitlines()[1:]
    ["1,1,token,0,'=A1,3,,", '1,1,token,1,cat,0,,']
    >>> moved = {(1, 2): {(0, 1): 2, (1, 1): 1, (None, 1): 4}}
    >>> answers_csv([Tally(1, 2, q, {0: 0, 1: 7})], moves=moved).splitlines()[2]
    '1,2,token,1,cat,7,,2'
    """
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow(CSV_HEADER)
    moves = moves or {}
    for t in tallies:
        if not isinstance(t, Tally):
            raise TypeError(f"answers_csv takes Tally records (ClassStore.results); received "
                            f"{type(t).__name__} {quote(t)}.")
        q = t.question
        timer = "" if t.timer is None else f"{t.timer.seconds:g}"
        moved = moves.get((t.step, t.round))
        for value, n in t.counts.items():
            came = "" if moved is None else sum(k for (a, b), k in moved.items()
                                                if b == value and a is not None and a != value)
            if q.kind == "number":
                row = ("", f"{value:.{q.decimals}f}")
            else:
                index = value if q.kind == "token" else q.choices.index(value)
                row = (index, csv_cell(q.choices[index]))
            writer.writerow((t.step, t.round, q.kind, *row, n, timer, came))
    return buf.getvalue()


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
