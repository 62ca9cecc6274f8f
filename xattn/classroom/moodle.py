"""What a kind's question becomes in Moodle, as a plain record (``xattn.lesson.lms`` writes
it as Moodle XML): each function takes a question and its `Key` and gives the `Moodle`
question that grades it as the page does, or None where none does (a poll, an answer the
type cannot hold). None of them raises on any kind's question: a kind may name any of them
(``Kind.moodle``), and a question it cannot grade is left out of the file, never a crash.
"""

from __future__ import annotations

import math
import numbers
from typing import NamedTuple

__all__ = ["Moodle", "multichoice", "numerical", "matching", "no_moodle", "MOODLE"]


class Moodle(NamedTuple):
    """One Moodle question: its ``type`` (``multichoice``, ``numerical``, ``matching`` or
    ``cloze``) and what it holds:

    - ``multichoice``: ``answers`` of (plain text, fraction in %);
    - ``numerical``: ``answers`` of one (the number as text, its tolerance);
    - ``matching``: ``answers`` of (left, right) pairs, ``offered`` the menu's other texts;
    - ``cloze``: ``answers`` of (part name, its truth, ((choice, fraction in %), ...)), a
      menu each."""

    type: str
    answers: tuple = ()
    offered: tuple = ()


def no_moodle(q, key) -> None:
    """No Moodle question grades it as the page does."""
    return None


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except (TypeError, ValueError):      # e.g. arrays compared elementwise
        return False


def multichoice(q, key) -> Moodle | None:
    """One of the question's options right (and any tie): None without a truth among them."""
    options = list(q.options()) if q.of.choices is not None else []
    right = (key.truth, *key.also)
    marks = [100 if any(_same(o, r) for r in right) else 0 for o in options]
    if key.truth is None or len(options) < 2 or not any(marks):
        return None
    return Moodle("multichoice", tuple((str(q.of.shown(q, o)), m)
                                       for o, m in zip(options, marks, strict=True)))


def numerical(q, key) -> Moodle | None:
    """A number right within the key's tolerance: None unless the truth is a finite number."""
    truth, tol = key.truth, key.tolerance
    if isinstance(truth, bool) or not isinstance(truth, numbers.Real) \
            or not math.isfinite(truth) or isinstance(tol, bool) \
            or not isinstance(tol, numbers.Real) or not 0 <= tol < math.inf:
        return None
    decimals = q.decimals if isinstance(q.decimals, int) and 0 <= q.decimals <= 6 else 6
    return Moodle("numerical", ((f"{float(truth):.{decimals}f}", float(tol)),))


def matching(q, key) -> Moodle | None:
    """Each part a menu of every choice (``cloze``: its truth and close calls right), or each
    target word matched to its one gold source word (at least two such words); else None."""
    if key.parts:
        menus = []
        for part in key.parts:
            if not (isinstance(part, tuple) and len(part) == 3):
                return None
            name, truth, also = part
            also = also if isinstance(also, (tuple, list)) else ()
            menus.append((str(name), str(truth), tuple(
                (str(c), 100 if _same(c, truth) or any(_same(c, a) for a in also) else 0)
                for c in q.choices)))
        return Moodle("cloze", tuple(menus))
    gold = {}
    for link in key.truth if isinstance(key.truth, (tuple, list)) else ():
        if not (isinstance(link, (tuple, list)) and len(link) == 2 and all(
                isinstance(k, int) and not isinstance(k, bool) for k in link)):
            return None
        t, s = link
        if not (0 <= t < len(q.rows) and 0 <= s < len(q.choices)):
            return None
        gold.setdefault(t, []).append(s)
    pairs = tuple((q.rows[t], q.choices[s[0]]) for t, s in sorted(gold.items()) if len(s) == 1)
    return Moodle("matching", pairs, tuple(q.choices)) if len(pairs) >= 2 else None


MOODLE = {"multichoice": multichoice, "numerical": numerical, "matching": matching,
          "": no_moodle}
