"""Numbers in an answer's words, so that no claim reads as 0.000 against 0.000.

Three decimals are the page's habit. A change too small for them is either said ("no change
at 3 decimals") or shown with the digits that make it visible (`pair`); a cost below zero is
said as a rise, never "costs −0.000" (`cost`). The digits are chosen on the number itself,
then the number is written as the context's language writes it (``xattn.words.number``:
``0,123`` in French), and `cost`'s words are said in that language.
"""

from __future__ import annotations

from xattn.words import number, say

__all__ = ["pair", "cost", "three"]

MAX_DECIMALS = 8


def three(x: float) -> str:
    """``x`` at three decimals; a nonzero value that would read 0.000 gets two significant
    digits instead (``0.00021``), and −0.000 reads 0.000.

    >>> three(0.1234), three(0.00021), three(-0.00004), three(0.0)
    ('0.123', '0.00021', '−0.000040', '0.000')
    """
    x = float(x)
    if x == 0 or abs(x) >= 0.0005:
        return _written(0.0 if f"{x:.3f}" == "-0.000" else x, 3)
    for d in range(4, MAX_DECIMALS + 1):
        if abs(x) >= 10 ** -(d - 1):
            return _written(x, d)
    return _written(x, MAX_DECIMALS)


def _written(x: float, digits: int) -> str:
    """``x`` at ``digits`` decimals in the context's language, with a true minus sign."""
    return number(x, f".{digits}f").replace("-", "−")


def pair(before: float, after: float) -> tuple[str, str]:
    """``before`` and ``after`` with as many decimals (3 to 8) as it takes for them to differ
    where they do, and for neither to read 0 unless it is.

    >>> pair(0.8, 0.5), pair(0.00012, 0.00003), pair(0.5, 0.5)
    (('0.800', '0.500'), ('0.00012', '0.00003'), ('0.500', '0.500'))
    """
    for d in range(3, MAX_DECIMALS + 1):
        a, b = f"{before:.{d}f}", f"{after:.{d}f}"
        shows = all(float(t) != 0 or x == 0 for t, x in ((a, before), (b, after)))
        if before == after or (a != b and shows):
            return _written(before, d), _written(after, d)
    return _written(before, MAX_DECIMALS), _written(after, MAX_DECIMALS)


def cost(drop: float, only: bool = False) -> str:
    """What masking something costs a probability, in words: "costs 0.123" ("costs only
    0.123" with ``only``), "raises it by 0.012" for a negative cost, "changes nothing at 3
    decimals" below 0.0005 either way.

    >>> cost(0.1234), cost(0.1234, only=True), cost(-0.0123)
    ('costs 0.123', 'costs only 0.123', 'raises it by 0.012')
    >>> cost(0.00001) == cost(-0.00004) == "changes nothing at 3 decimals"
    True
    """
    drop = float(drop)
    if abs(drop) < 0.0005:
        return say("changes nothing at 3 decimals")
    if drop < 0:
        return say("raises it by {rise:.3f}", rise=-drop)
    return say("costs only {drop:.3f}", drop=drop) if only else say("costs {drop:.3f}",
                                                                       drop=drop)
