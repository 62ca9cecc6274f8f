"""Several parts (question kind ``parts``: each head's job): a choice per row, stored as
``"2,-,0"``, judged row by row against the measures (``key.parts``: each row's name, its truth
and the answers also right)."""

from __future__ import annotations

from xattn.words import say, say_n

__all__ = ["encode_parts", "as_parts", "right_parts", "verdict_parts"]


def _code_span(text) -> str:
    """A Markdown code span of ``text`` (imported late: the store needs no Markdown)."""
    from xattn.literal import md_code

    return md_code(str(text))


def encode_parts(q, value) -> str | None:
    """``"2,-,0"``: each row's choice index, ``-`` for a row left out; None if refused."""
    if isinstance(value, dict):
        if not all(isinstance(k, str) and k in q.rows for k in value):
            return None
        value = [value.get(r) for r in q.rows]
    if not isinstance(value, (tuple, list)) or len(value) != len(q.rows):
        return None
    if any(v is not None and not (isinstance(v, str) and v in q.choices) for v in value) \
            or all(v is None for v in value):
        return None
    return ",".join("-" if v is None else str(q.choices.index(v)) for v in value)


def as_parts(q, answer) -> dict:
    return answer if isinstance(answer, dict) else dict(zip(q.rows, answer, strict=True))


def right_parts(q, key, answer) -> bool:
    if answer is None:
        return False
    said = as_parts(q, answer)
    return all(said.get(name) == truth or said.get(name) in also
               for name, truth, also in key.parts)


def verdict_parts(q, key, answer) -> str:
    """How many parts are right, and which are not."""
    said = as_parts(q, answer)
    made = {name: said.get(name) for name, _, _ in key.parts if said.get(name) is not None}
    if not made:
        return ""
    wrong = [(name, truth) for name, truth, also in key.parts
             if name in made and made[name] != truth and made[name] not in also]
    right, left = len(made) - len(wrong), len(key.parts) - len(made)
    text = say_n("**{n} of {total} right**", "**{n} of {total} right**", right, total=len(made))
    if left:
        text += " " + say_n("({n} not guessed)", "({n} not guessed)", left)
    if not wrong:
        return say("{said}.", said=text)
    return say("{said}: {wrong}.", said=text, wrong=say("; ").join(
        say("{name}: you said {said}, the measures say {true}", name=name,
            said=_code_span(made[name]), true=_code_span(truth)) for name, truth in wrong))
