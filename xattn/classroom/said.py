"""What a phone is told by the server, as a message of its catalog: an id and named values
(``["why.stale.round", {"sent": 1, "step": 2, "current": 3}]``), sent beside the English
sentence (``why``: kept for logs and older pages). The phone says it in its own language
from ``xattn/locale/<lang>/LC_MESSAGES/phone.po`` (ids ``why.*``, fetched when first needed:
docs/languages.md).

- `said`: one such message; every id a server may send is a literal ``said("why.…")`` in the
  code (a test collects them and checks every catalog has each, with its names);
- `said_of`: what a `ClassroomError` tells a phone (the message it carries, else one by its
  kind), or None.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Said", "said", "said_of"]


class Said(NamedTuple):
    """A catalog's message id (``why.…``) and the values its ``{name}``s take (a plural
    message's count is ``n``)."""

    id: str
    args: dict

    def json(self) -> list:
        """As a phone gets it: ``[id, {name: value}]``."""
        return [self.id, dict(self.args)]


def said(id_: str, **args: int | float | str) -> Said:
    """The message ``id_`` with ``args``.

    >>> said("why.revealed", step=3).json()
    ['why.revealed', {'step': 3}]
    """
    if not isinstance(id_, str) or not id_.startswith("why."):
        raise ValueError(f"a message a server sends has an id starting 'why.', received "
                         f"{id_!r}")
    for name, value in args.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise TypeError(f"{id_}: {name} is an int, a float or a str, received "
                            f"{type(value).__name__}")
    return Said(id_, args)


def said_of(err: BaseException) -> Said | None:
    """What ``err`` tells a phone: the message it carries (``err.said``), else by its kind
    (a store not answering), else None (the English alone)."""
    from xattn.classroom.errors import StoreUnavailable

    found = getattr(err, "said", None)
    if found is not None:
        return found
    if isinstance(err, StoreUnavailable):
        return said("why.store")
    return None
