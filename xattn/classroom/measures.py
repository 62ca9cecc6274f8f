"""Two measures each kind decides for the lesson (``Kind.off`` and ``Kind.differs``).

- ``off(q, key, answer)``: how far a wrong ``answer`` is from the `Key`'s truth, in [0, 1]
  (``xattn.lesson.misconceptions.surprise`` adds 1): a number's relative error (capped at 1),
  a token one minus the weight the row gave the pick over the answer's (``key.weights``; 1
  without them), parts the share of answered parts wrong, links their AER, a choice 1;
- ``differs(q_first, first, q_then, then)``: whether a new case's truth (``then``) is an
  answer the first case's right answer would get wrong (``xattn.lesson.followup.differs``):
  another number (beyond twice the tolerance), another word (not another place of the same
  word), another job for some head, another choice.
"""

from __future__ import annotations

__all__ = ["off_one", "off_number", "off_token", "off_parts", "off_links", "differs_one",
           "differs_number", "differs_token", "differs_parts"]


def off_one(q, key, answer) -> float:
    """A wrong answer is wholly wrong."""
    return 1.0


def off_number(q, key, answer) -> float:
    truth = float(key.truth)
    return min(1.0, abs(float(answer) - truth) / max(abs(truth), key.tolerance))


def off_token(q, key, answer) -> float:
    w = key.weights
    if not w or not 0 <= key.truth < len(w) or not w[key.truth] > 0:
        return 1.0
    return 1.0 - min(1.0, w[answer] / w[key.truth])


def off_parts(q, key, answer) -> float:
    said = dict(zip(q.rows, answer, strict=True)) if not isinstance(answer, dict) else answer
    made = [(n, t, also) for n, t, also in key.parts if said.get(n) is not None]
    return sum(said[n] != t and said[n] not in also for n, t, also in made) / max(1, len(made))


def off_links(q, key, answer) -> float:
    links, gold = set(answer), set(key.truth)
    return 1 - 2 * len(links & gold) / (len(links) + len(gold))


def differs_one(q_first, first, q_then, then) -> bool:
    right = tuple(p[2] for p in first.parts) if first.parts else first.also
    return then.truth != first.truth and then.truth not in right


def differs_number(q_first, first, q_then, then) -> bool:
    return abs(float(then.truth) - float(first.truth)) > 2 * first.tolerance


def _word(q, key, j) -> str:
    """A token answer by meaning: the word at position ``j``, without its place."""
    words = key.tokens or q.choices
    return str(words[j]) if isinstance(j, int) and 0 <= j < len(words) else str(j)


def differs_token(q_first, first, q_then, then) -> bool:
    old = {_word(q_first, first, first.truth), *(_word(q_first, first, j) for j in first.also)}
    return _word(q_then, then, then.truth) not in old


def differs_parts(q_first, first, q_then, then) -> bool:
    if not first.parts or len(first.parts) != len(then.parts):
        return differs_one(q_first, first, q_then, then)
    return any(new[1] != old[1] and new[1] not in old[2]
               for old, new in zip(first.parts, then.parts, strict=True))
