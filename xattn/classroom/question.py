"""What one lesson step asks the class, and which answers it accepts.

A `Question` is the spec a room keeps for each step, so that every process (and every VM)
validates a student's answer the same way, whatever page sent it:

- ``"choice"``: one of a few texts (``choices``), e.g. ``("up", "down")``;
- ``"token"``: the position of one token among ``choices`` (the source tokens as shown); tokens
  may repeat, so the answer is an int index, never the text;
- ``"number"``: a finite number from ``low`` to ``high``, rounded to ``decimals`` places, so
  that answers a hair apart count together;
- ``"parts"``: one of ``choices`` for each of several named ``rows`` (each head's job), some
  rows left out if the student likes; at least one answered;
- ``"links"``: a set of ``(target, source)`` position pairs between the ``rows`` (the target
  words) and the ``choices`` (the source words): a word alignment, 1 to `MAX_LINKS` links.

An accepted answer is stored as a short canonical text (`Question.encode`) and read back with
`Question.decode`: the index of a choice or token, the rounded number, each row's choice index
(``"2,-,0"``), or the links sorted and deduplicated (``"0-0 1-2 2-1"``). What an answer counts
towards (`Question.elements`) is the answer itself, or each part's choice, or each link: the
class's counts are sums over stored answers of their elements (``xattn.classroom.store``).
"""

from __future__ import annotations

import json
import math
import numbers
import re
from dataclasses import dataclass

from xattn._checks import quote
from xattn.classroom.errors import AnswerRefused

__all__ = ["Question", "KINDS", "MAX_CHOICES", "MAX_ROWS", "MAX_WORDS", "MAX_LINKS",
           "MAX_QUESTION_BYTES", "NO_QUESTION"]

KINDS = ("choice", "token", "number", "parts", "links")
MAX_CHOICES = 64             # a token question lists the source tokens: at most 64 (MAX_TOKENS)
MAX_ROWS = 8                 # parts of a "parts" question (each head of a layer: jobs.MAX_HEADS)
MAX_WORDS = 16               # words on each side of a "links" question: a short pair, tapped
MAX_LINKS = 32               # links in one answer: two a word of 16, and 6 bytes each stored
MAX_QUESTION_BYTES = 16_384  # one question as JSON: 64 tokens of a 2,000-character sentence fit
_LINK = re.compile(r"(\d+)-(\d+)")


@dataclass(frozen=True)
class Question:
    """What a step accepts as an answer.

    Parameters
    ----------
    kind : {"choice", "token", "number", "parts", "links"}
    choices : tuple of str
        ``"choice"``: the options (2 or more, distinct); ``"token"``: the tokens a student may
        tap, in order (1 or more; repeats allowed); ``"number"``: empty; ``"parts"``: the
        options of every row (2 or more, distinct); ``"links"``: the source words, in order
        (1 to `MAX_WORDS`; repeats allowed).
    low, high : float
        ``"number"`` only: the accepted range, both ends included.
    decimals : int
        ``"number"`` only: answers are rounded to this many decimals (0 to 6).
    rows : tuple of str
        ``"parts"``: the parts' names (1 to `MAX_ROWS`, distinct); ``"links"``: the target
        words, in order (1 to `MAX_WORDS`; repeats allowed); empty for the other kinds.

    Examples
    --------
    >>> q = Question("choice", ("up", "down"))
    >>> q.encode("down"), q.decode(q.encode("down"))
    ('1', 'down')
    >>> Question("number", low=0, high=1, decimals=2).encode(0.333)
    '0.33'
    >>> Question("number", low=-1, high=1, decimals=2).encode(-0.001)
    '0.00'
    >>> jobs = Question("parts", ("sink", "aligns"), rows=("head 1", "head 2"))
    >>> jobs.encode({"head 2": "sink"}), jobs.decode("-,0")
    ('-,0', (None, 'sink'))
    >>> pair = Question("links", ("the", "cat"), rows=("le", "chat"))
    >>> pair.encode([(1, 1), (0, 0), (1, 1)]), pair.elements(pair.decode("0-0 1-1"))
    ('0-0 1-1', ((0, 0), (1, 1)))
    """

    kind: str
    choices: tuple[str, ...] = ()
    low: float = 0.0
    high: float = 1.0
    decimals: int = 2
    rows: tuple[str, ...] = ()

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Question.kind must be one of {KINDS}; received {quote(self.kind)}.")
        for name in ("choices", "rows"):
            texts = getattr(self, name)
            if isinstance(texts, str) or not isinstance(texts, (tuple, list)):
                raise TypeError(f"Question.{name} must be a tuple of str; received "
                                f"{type(texts).__name__} {quote(texts)}.")
            object.__setattr__(self, name, tuple(texts))
            bad = next((c for c in texts if not isinstance(c, str)), None)
            if bad is not None:
                raise TypeError(f"Question.{name} must hold str; received {type(bad).__name__} "
                                f"{quote(bad)}.")
        if self.kind == "number":
            self._check_range()
        else:
            self._check_choices()
        self._check_rows()
        if len(self.to_json().encode()) > MAX_QUESTION_BYTES:
            raise ValueError(f"a question holds at most {MAX_QUESTION_BYTES} bytes as JSON "
                             "(MAX_QUESTION_BYTES); shorten its choices.")

    def _check_choices(self) -> None:
        least = 2 if self.kind in ("choice", "parts") else 1
        most, bound = (MAX_WORDS, "MAX_WORDS") if self.kind == "links" else (MAX_CHOICES,
                                                                             "MAX_CHOICES")
        if not least <= len(self.choices) <= most:
            raise ValueError(f"a {self.kind} question needs {least} to {most} choices "
                             f"({bound}); received {len(self.choices)}.")
        if self.kind in ("choice", "parts") and len(set(self.choices)) != len(self.choices):
            raise ValueError(f"a {self.kind} question's choices must differ (an answer names "
                             f"one); received {quote(self.choices)}.")

    def _check_rows(self) -> None:
        if self.kind not in ("parts", "links"):
            if self.rows:
                raise ValueError(f"only parts and links questions take rows; received "
                                 f"{quote(self.rows)} for a {self.kind} question.")
            return
        most, bound = (MAX_ROWS, "MAX_ROWS") if self.kind == "parts" else (MAX_WORDS,
                                                                           "MAX_WORDS")
        if not 1 <= len(self.rows) <= most:
            raise ValueError(f"a {self.kind} question needs 1 to {most} rows ({bound}); "
                             f"received {len(self.rows)}.")
        if self.kind == "parts" and len(set(self.rows)) != len(self.rows):
            raise ValueError("a parts question's rows must differ (an answer names them); "
                             f"received {quote(self.rows)}.")

    def _check_range(self) -> None:
        if self.choices:
            raise ValueError("a number question takes low and high, not choices; received "
                             f"{quote(self.choices)}.")
        for name in ("low", "high"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real) \
                    or not math.isfinite(value):
                raise TypeError(f"Question.{name} must be a finite number; received "
                                f"{quote(value)}.")
            object.__setattr__(self, name, float(value))
        if not self.low < self.high:
            raise ValueError(f"Question.low must be below high; received {self.low} and "
                             f"{self.high}.")
        if isinstance(self.decimals, bool) or not isinstance(self.decimals, int) \
                or not 0 <= self.decimals <= 6:
            raise ValueError(f"Question.decimals must be an int from 0 to 6; received "
                             f"{quote(self.decimals)}.")

    def __repr__(self) -> str:
        if self.kind == "number":
            return (f"Question('number', low={self.low!r}, high={self.high!r}, "
                    f"decimals={self.decimals!r})")
        rows = f", rows={self.rows!r}" if self.rows else ""
        return f"Question({self.kind!r}, {self.choices!r}{rows})"

    def expects(self) -> str:
        """What an answer must be, in words (the end of every refusal)."""
        if self.kind == "choice":
            return "one of " + ", ".join(quote(c, 30) for c in self.choices)
        if self.kind == "token":
            return f"a token position from 0 to {len(self.choices) - 1}"
        if self.kind == "parts":
            return ("one of " + ", ".join(quote(c, 30) for c in self.choices) + " for some of "
                    + ", ".join(quote(r, 30) for r in self.rows) + " (a dict, or one choice or "
                    "None per part), at least one")
        if self.kind == "links":
            return (f"1 to {MAX_LINKS} links (target, source): target positions from 0 to "
                    f"{len(self.rows) - 1}, source positions from 0 to {len(self.choices) - 1}")
        return f"a number from {self.low:g} to {self.high:g}"

    def encode(self, value) -> str:
        """The canonical stored text of an accepted answer; `AnswerRefused` for any other.

        Examples
        --------
        >>> Question("token", ("the", "cat", "the")).encode(2)
        '2'
        >>> Question("token", ("the", "cat")).encode(True)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        xattn.classroom.errors.AnswerRefused: this step takes a token position from 0 to 1; ...
        """
        if self.kind == "choice" and isinstance(value, str) and value in self.choices:
            return str(self.choices.index(value))
        if self.kind == "token" and isinstance(value, numbers.Integral) \
                and not isinstance(value, bool) and 0 <= value < len(self.choices):
            return str(int(value))
        if self.kind == "number" and isinstance(value, numbers.Real) \
                and not isinstance(value, bool) and math.isfinite(value) \
                and self.low <= value <= self.high:
            # + 0.0 turns -0.0 (a typed "-0", or -0.001 rounded) into 0.0: one answer, one text
            return f"{round(float(value), self.decimals) + 0.0:.{self.decimals}f}"
        text = (self._encode_parts(value) if self.kind == "parts" else
                self._encode_links(value) if self.kind == "links" else None)
        if text is None:
            raise AnswerRefused(f"this step takes {self.expects()}; received {quote(value)}.")
        return text

    def _encode_parts(self, value) -> str | None:
        """``"2,-,0"``: each row's choice index, ``-`` for a row left out; None if refused."""
        if isinstance(value, dict):
            if not all(isinstance(k, str) and k in self.rows for k in value):
                return None
            value = [value.get(r) for r in self.rows]
        if not isinstance(value, (tuple, list)) or len(value) != len(self.rows):
            return None
        if any(v is not None and not (isinstance(v, str) and v in self.choices) for v in value) \
                or all(v is None for v in value):
            return None
        return ",".join("-" if v is None else str(self.choices.index(v)) for v in value)

    def _encode_links(self, value) -> str | None:
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
            if not (0 <= t < len(self.rows) and 0 <= s < len(self.choices)):
                return None
            links.add((t, s))
        if not 1 <= len(links) <= MAX_LINKS:
            return None
        return " ".join(f"{t}-{s}" for t, s in sorted(links))

    def decode(self, text: str):
        """An answer as the student gave it: the choice (str), the token's index (int), the
        number (float), each part's choice (a tuple of str or None, one per row) or the links
        (a sorted tuple of (target, source))."""
        if self.kind == "choice":
            return self.choices[int(text)]
        if self.kind == "parts":
            return tuple(None if k == "-" else self.choices[int(k)] for k in text.split(","))
        if self.kind == "links":
            return tuple((int(t), int(s)) for t, s in _LINK.findall(text))
        return int(text) if self.kind == "token" else float(text)

    def options(self) -> list:
        """Every answer a choice or token question accepts, in order (empty for a number);
        for parts every (row, choice), for links every (target, source): what a count is
        kept of (`elements`)."""
        if self.kind == "choice":
            return list(self.choices)
        if self.kind == "parts":
            return [(r, c) for r in self.rows for c in self.choices]
        if self.kind == "links":
            return [(t, s) for t in range(len(self.rows)) for s in range(len(self.choices))]
        return list(range(len(self.choices))) if self.kind == "token" else []

    def elements(self, answer) -> tuple:
        """What a decoded ``answer`` counts towards: itself (choice, token, number), each
        answered part's ``(row, choice)``, or each link."""
        if self.kind == "parts":
            return tuple((r, c) for r, c in zip(self.rows, answer, strict=True) if c is not None)
        if self.kind == "links":
            return tuple(answer)
        return (answer,)

    def to_json(self) -> str:
        """The spec as compact JSON (what a room stores)."""
        spec = {"kind": self.kind}
        if self.kind == "number":
            spec.update(low=self.low, high=self.high, decimals=self.decimals)
        else:
            spec["choices"] = list(self.choices)
        if self.rows:
            spec["rows"] = list(self.rows)
        return json.dumps(spec, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Question:
        spec = json.loads(text)
        spec["choices"] = tuple(spec.get("choices", ()))
        spec["rows"] = tuple(spec.get("rows", ()))
        return cls(**spec)


# What a room asks on a step that asks nothing (a step the class reads, then sees): a room
# holds one question per step, and pages draw no prediction and no count for this one.
NO_QUESTION = Question("choice", ("no question on this page", "-"))
