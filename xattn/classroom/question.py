"""What one lesson step asks the class, and which answers it accepts.

A `Question` is the spec a room keeps for each step, so that every process (and every VM)
validates a student's answer the same way, whatever page sent it:

- ``"choice"``: one of a few texts (``choices``), e.g. ``("up", "down")``;
- ``"poll"``: the same, with no right answer (what the class thinks);
- ``"token"``: the position of one token among ``choices`` (the source tokens as shown); tokens
  may repeat, so the answer is an int index, never the text;
- ``"number"``: a finite number from ``low`` to ``high``, rounded to ``decimals`` places, so
  that answers a hair apart count together;
- ``"parts"``: one of ``choices`` for each of several named ``rows`` (each head's job), some
  rows left out if the student likes; at least one answered;
- ``"links"``: a set of ``(target, source)`` position pairs between the ``rows`` (the target
  words) and the ``choices`` (the source words): a word alignment, 1 to `MAX_LINKS` links;
- ``"tap"``: a patch of an ``image`` (``rows`` × ``choices`` patches) as ``(row, column)``,
  right within one patch of the truth;
- ``"head"``: one head of the model (``"L1 H2"``), as a choice;
- ``"tap_time"``: a time bin of a clip (``choices`` name the bins in seconds, ``image`` is its
  spectrogram) as the bin's index, right within one bin of the truth.

An accepted answer is stored as a short canonical text (`Question.encode`) and read back with
`Question.decode`: the index of a choice or token, the rounded number, each row's choice index
(``"2,-,0"``), or the links sorted and deduplicated (``"0-0 1-2 2-1"``). What an answer counts
towards (`Question.elements`) is the answer itself, or each part's choice, or each link: the
class's counts are sums over stored answers of their elements (``xattn.classroom.store``).
Each kind is declared once, in ``xattn.classroom.kinds``: a `Question` asks its kind.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass

from xattn._checks import quote
from xattn.classroom.errors import AnswerRefused
from xattn.classroom.kinds import KINDS as _KINDS
from xattn.classroom.kinds import MAX_CHOICES, MAX_LINKS, MAX_ROWS, MAX_WORDS, Kind
from xattn.classroom.said import said

__all__ = ["Question", "KINDS", "MAX_CHOICES", "MAX_ROWS", "MAX_WORDS", "MAX_LINKS",
           "MAX_CASES", "MAX_QUESTION_BYTES", "NO_QUESTION"]

_BOUNDS = {MAX_CHOICES: " (MAX_CHOICES)", MAX_ROWS: " (MAX_ROWS)", MAX_WORDS: " (MAX_WORDS)"}
KINDS = tuple(_KINDS)        # the built-in kinds' names (xattn.classroom.kinds.KINDS: all)
MAX_CASES = 8                # follow-ups of one step: the same question on new cases
MAX_QUESTION_BYTES = 16_384  # one question as JSON: 64 tokens of a 2,000-character sentence fit
IMAGE_URLS = ("data:image/png;base64,", "data:image/jpeg;base64,")   # a tap question's image


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
    case : int
        0: the step's own question; 1 to `MAX_CASES`: the same question on a new case (a
        follow-up, ``xattn.lesson.followup``): a round asked of other weights.
    image : str
        ``"tap"`` and ``"tap_time"`` only: the image tapped on, a small PNG or JPEG as a
        ``data:`` URL (the question, image included, holds at most `MAX_QUESTION_BYTES`);
        for a tap ``rows`` and ``choices`` then name its rows and columns of patches, for a
        tap on time ``choices`` name the clip's time bins over its spectrogram.

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
    case: int = 0
    image: str = ""


    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"Question.kind must be one of {tuple(_KINDS)}; received "
                             f"{quote(self.kind)}.")
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
        if self.of.choices is None:
            self._check_range()
        else:
            self._check_choices()
        self._check_rows()
        self._check_image()
        if isinstance(self.case, bool) or not isinstance(self.case, int) \
                or not 0 <= self.case <= MAX_CASES:
            raise ValueError(f"Question.case must be an int from 0 to {MAX_CASES}; received "
                             f"{quote(self.case)}.")
        if len(self.to_json().encode()) > MAX_QUESTION_BYTES:
            raise ValueError(f"a question holds at most {MAX_QUESTION_BYTES} bytes as JSON "
                             "(MAX_QUESTION_BYTES); shorten its choices.")

    @property
    def of(self) -> Kind:
        """This question's kind (``xattn.classroom.kinds``): everything it decides."""
        return _KINDS[self.kind]

    def _check_choices(self) -> None:
        least, most = self.of.choices
        if not least <= len(self.choices) <= most:
            raise ValueError(f"a {self.kind} question needs {least} to {most} choices"
                             f"{_BOUNDS.get(most, '')}; received {len(self.choices)}.")
        if self.of.distinct and len(set(self.choices)) != len(self.choices):
            raise ValueError(f"a {self.kind} question's choices must differ (an answer names "
                             f"one); received {quote(self.choices)}.")

    def _check_rows(self) -> None:
        if self.of.rows is None:
            if self.rows:
                raise ValueError(f"only {' and '.join(k for k, v in _KINDS.items() if v.rows)} "
                                 f"questions take rows; received {quote(self.rows)} for a "
                                 f"{self.kind} question.")
            return
        least, most = self.of.rows
        if not least <= len(self.rows) <= most:
            raise ValueError(f"a {self.kind} question needs {least} to {most} rows"
                             f"{_BOUNDS.get(most, '')}; received {len(self.rows)}.")
        if self.of.distinct and len(set(self.rows)) != len(self.rows):
            raise ValueError(f"a {self.kind} question's rows must differ (an answer names "
                             f"them); received {quote(self.rows)}.")

    def _check_image(self) -> None:
        if not isinstance(self.image, str):
            raise TypeError(f"Question.image must be a str (a data: URL); received "
                            f"{type(self.image).__name__} {quote(self.image)}.")
        if self.image and not self.of.image:
            raise ValueError(f"only {' and '.join(k for k, v in _KINDS.items() if v.image)} "
                             f"questions take an image; received one for a {self.kind} "
                             "question.")
        if self.image and not self.image.startswith(IMAGE_URLS):
            raise ValueError(f"Question.image must be a data: URL starting with one of "
                             f"{IMAGE_URLS}; received {quote(self.image, 40)}.")

    def _check_range(self) -> None:
        if self.choices:
            raise ValueError(f"a {self.kind} question takes low and high, not choices; "
                             f"received {quote(self.choices)}.")
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
        case = f", case={self.case}" if self.case else ""
        if self.of.choices is None:
            return (f"Question({self.kind!r}, low={self.low!r}, high={self.high!r}, "
                    f"decimals={self.decimals!r}{case})")
        rows = f", rows={self.rows!r}" if self.rows else ""
        return f"Question({self.kind!r}, {self.choices!r}{rows}{case})"

    def expects(self) -> str:
        """What an answer must be, in words (the end of every refusal)."""
        return self.of.expects(self)

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
        text = self.of.encode(self, value)
        if text is None:
            raise AnswerRefused(f"this step takes {self.expects()}; received {quote(value)}."
                                ).saying(said("why.bad.answer"))
        return text

    def decode(self, text: str):
        """An answer as the student gave it: the choice (str), the token's index (int), the
        number (float), each part's choice (a tuple of str or None, one per row) or the links
        (a sorted tuple of (target, source))."""
        return self.of.decode(self, text)

    def options(self) -> list:
        """Every answer a choice or token question accepts, in order (empty for a number);
        for parts every (row, choice), for links every (target, source): what a count is
        kept of (`elements`)."""
        return self.of.options(self)

    def elements(self, answer) -> tuple:
        """What a decoded ``answer`` counts towards: itself (choice, token, number), each
        answered part's ``(row, choice)``, or each link."""
        return self.of.elements(self, answer)

    def to_json(self) -> str:
        """The spec as compact JSON (what a room stores)."""
        spec = {"kind": self.kind}
        if self.of.choices is None:
            spec.update(low=self.low, high=self.high, decimals=self.decimals)
        else:
            spec["choices"] = list(self.choices)
        if self.rows:
            spec["rows"] = list(self.rows)
        if self.case:
            spec["case"] = self.case
        if self.image:
            spec["image"] = self.image
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
