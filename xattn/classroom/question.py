"""What one lesson step asks the class, and which answers it accepts.

A `Question` is the spec a room keeps for each step, so that every process (and every VM)
validates a student's answer the same way, whatever page sent it:

- ``"choice"``: one of a few texts (``choices``), e.g. ``("up", "down")``;
- ``"token"``: the position of one token among ``choices`` (the source tokens as shown); tokens
  may repeat, so the answer is an int index, never the text;
- ``"number"``: a finite number from ``low`` to ``high``, rounded to ``decimals`` places, so
  that answers a hair apart count together.

An accepted answer is stored as a short canonical text (`Question.encode`) and read back with
`Question.decode`: the index of a choice or token, or the rounded number.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass

from xattn._checks import quote
from xattn.classroom.errors import AnswerRefused

__all__ = ["Question", "KINDS", "MAX_CHOICES", "MAX_QUESTION_BYTES", "NO_QUESTION"]

KINDS = ("choice", "token", "number")
MAX_CHOICES = 64             # a token question lists the source tokens: at most 64 (MAX_TOKENS)
MAX_QUESTION_BYTES = 16_384  # one question as JSON: 64 tokens of a 2,000-character sentence fit


@dataclass(frozen=True)
class Question:
    """What a step accepts as an answer.

    Parameters
    ----------
    kind : {"choice", "token", "number"}
    choices : tuple of str
        ``"choice"``: the options (2 or more, distinct); ``"token"``: the tokens a student may
        tap, in order (1 or more; repeats allowed); ``"number"``: empty.
    low, high : float
        ``"number"`` only: the accepted range, both ends included.
    decimals : int
        ``"number"`` only: answers are rounded to this many decimals (0 to 6).

    Examples
    --------
    >>> q = Question("choice", ("up", "down"))
    >>> q.encode("down"), q.decode(q.encode("down"))
    ('1', 'down')
    >>> Question("number", low=0, high=1, decimals=2).encode(0.333)
    '0.33'
    >>> Question("number", low=-1, high=1, decimals=2).encode(-0.001)
    '0.00'
    """

    kind: str
    choices: tuple[str, ...] = ()
    low: float = 0.0
    high: float = 1.0
    decimals: int = 2

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"Question.kind must be one of {KINDS}; received {quote(self.kind)}.")
        if isinstance(self.choices, str) or not isinstance(self.choices, (tuple, list)):
            raise TypeError("Question.choices must be a tuple of str; received "
                            f"{type(self.choices).__name__} {quote(self.choices)}.")
        object.__setattr__(self, "choices", tuple(self.choices))
        bad = next((c for c in self.choices if not isinstance(c, str)), None)
        if bad is not None:
            raise TypeError(f"Question.choices must hold str; received {type(bad).__name__} "
                            f"{quote(bad)}.")
        if self.kind == "number":
            self._check_range()
        else:
            self._check_choices()
        if len(self.to_json().encode()) > MAX_QUESTION_BYTES:
            raise ValueError(f"a question holds at most {MAX_QUESTION_BYTES} bytes as JSON "
                             "(MAX_QUESTION_BYTES); shorten its choices.")

    def _check_choices(self) -> None:
        least = 2 if self.kind == "choice" else 1
        if not least <= len(self.choices) <= MAX_CHOICES:
            raise ValueError(f"a {self.kind} question needs {least} to {MAX_CHOICES} choices "
                             f"(MAX_CHOICES); received {len(self.choices)}.")
        if self.kind == "choice" and len(set(self.choices)) != len(self.choices):
            raise ValueError("a choice question's choices must differ (an answer names one); "
                             f"received {quote(self.choices)}.")

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
        return f"Question({self.kind!r}, {self.choices!r})"

    def expects(self) -> str:
        """What an answer must be, in words (the end of every refusal)."""
        if self.kind == "choice":
            return "one of " + ", ".join(quote(c, 30) for c in self.choices)
        if self.kind == "token":
            return f"a token position from 0 to {len(self.choices) - 1}"
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
        raise AnswerRefused(f"this step takes {self.expects()}; received {quote(value)}.")

    def decode(self, text: str):
        """An answer as the student gave it: the choice (str), the token's index (int) or the
        number (float)."""
        if self.kind == "choice":
            return self.choices[int(text)]
        return int(text) if self.kind == "token" else float(text)

    def options(self) -> list:
        """Every answer a choice or token question accepts, in order (empty for a number)."""
        if self.kind == "choice":
            return list(self.choices)
        return list(range(len(self.choices))) if self.kind == "token" else []

    def to_json(self) -> str:
        """The spec as compact JSON (what a room stores)."""
        spec = {"kind": self.kind}
        if self.kind == "number":
            spec.update(low=self.low, high=self.high, decimals=self.decimals)
        else:
            spec["choices"] = list(self.choices)
        return json.dumps(spec, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> Question:
        spec = json.loads(text)
        spec["choices"] = tuple(spec.get("choices", ()))
        return cls(**spec)


# What a room asks on a step that asks nothing (a step the class reads, then sees): a room
# holds one question per step, and pages draw no prediction and no count for this one.
NO_QUESTION = Question("choice", ("no question on this page", "-"))
