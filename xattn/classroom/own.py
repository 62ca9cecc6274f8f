"""A kind's keys in a lesson file: what a lecturer's own question of that kind takes beside
its prompt (``[step.question]`` with ``kind = "choice"``, ``options`` and ``answer``, say),
read and written back (``xattn.lesson.lessonfile``).

A kind that a lesson file may ask carries `OwnKeys` (``Kind.own``); ``parse`` takes the
question's table and gives the fields of ``xattn.lesson.Own`` it sets (``options``,
``answer``, ``low``, ``high``, ``decimals``, ``tolerance``), or raises `KeyRefused` naming
the key and what was expected; ``write`` gives those keys back from an ``Own``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from xattn._checks import quote

__all__ = ["OwnKeys", "KeyRefused", "MAX_OPTIONS", "OPTIONS", "NUMBER", "shown"]

MAX_OPTIONS = 8              # a lecturer's own options: a phone's screen of pills


class KeyRefused(ValueError):
    """A lesson file's key refused: ``key`` and why (the problem's words)."""

    def __init__(self, key: str, why: str):
        super().__init__(f"{key}: {why}")
        self.key, self.why = key, why


class OwnKeys(NamedTuple):
    """The keys a kind's own question takes in a lesson file, read and written."""

    keys: tuple[str, ...]        # beside kind, prompt, explain, head and layer
    parse: Callable              # (the Kind, the table) -> Own's fields; raises KeyRefused
    write: Callable              # an Own -> its keys (a dict)


def shown(value) -> str:
    """A found value in a problem's words: a missing key is "nothing", never "None"."""
    return "nothing (the key is missing)" if value is None else quote(value, 60)


def _parse_options(kind, data: dict) -> dict:
    options = data.get("options")
    if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS or not all(
            isinstance(o, str) and 0 < len(o) <= 120 for o in options) \
            or len(set(options)) != len(options):
        raise KeyRefused("options", f"expected 2 to {MAX_OPTIONS} different texts of 1 to 120 "
                                    f"characters, found {shown(options)}")
    answer = data.get("answer")
    if not kind.graded and answer is not None:
        raise KeyRefused("answer", f"expected no answer (a {kind.name} has no right answer: use "
                                   f"kind = \"choice\" for one), found {shown(answer)}")
    if kind.graded and answer not in options:
        raise KeyRefused("answer", f"expected one of the options, found {shown(answer)}")
    return {"options": tuple(options), "answer": answer}


def _write_options(own) -> dict:
    out = {"options": list(own.options)}
    if own.answer is not None:
        out["answer"] = own.answer
    return out


def _parse_number(kind, data: dict) -> dict:
    values = {}
    for key, default in (("low", None), ("high", None), ("answer", None), ("tolerance", 0.005),
                         ("decimals", 2)):
        value = data.get(key, default)
        whole = key == "decimals"
        if value is None or isinstance(value, bool) or not isinstance(
                value, int if whole else (int, float)) or (whole and not 0 <= value <= 6) \
                or (key == "tolerance" and not 0 <= value < 1e9) or value != value:
            raise KeyRefused(key, "expected " + (
                "a whole number from 0 to 6" if whole else "a number" + (
                    " (required)" if default is None else "")) + f", found {shown(value)}")
        values[key] = value
    if not values["low"] < values["high"] or not values["low"] <= values["answer"] <= \
            values["high"]:
        raise KeyRefused("answer", f"expected low < high and the answer between them, found "
                                   f"low {values['low']}, high {values['high']}, answer "
                                   f"{values['answer']}")
    return {"answer": float(values["answer"]), "low": float(values["low"]),
            "high": float(values["high"]), "decimals": values["decimals"],
            "tolerance": float(values["tolerance"])}


def _write_number(own) -> dict:
    return {"low": own.low, "high": own.high, "answer": own.answer, "decimals": own.decimals,
            "tolerance": own.tolerance}


OPTIONS = OwnKeys(("options", "answer"), _parse_options, _write_options)
NUMBER = OwnKeys(("low", "high", "answer", "decimals", "tolerance"), _parse_number,
                 _write_number)
