"""A tap on an image (question kind ``tap``): a patch, its row and column, right within
``TAP_REACH`` patches of the truth (the patch of the model's attention peak); and a tap on a
clip's time strip (kind ``tap_time``): a time bin, right within ``TIME_REACH`` bins of the
truth (the bin of a head's attention peak)."""

from __future__ import annotations

import numbers

from xattn.words import say, say_n

__all__ = ["TAP_REACH", "encode_tap", "patches_apart", "patch_words", "right_tap", "verdict_tap",
           "off_tap", "differs_tap", "TIME_REACH", "time_bin_labels", "encode_time", "expects_time",
           "time_words", "right_time", "verdict_time", "off_time", "differs_time"]

TAP_REACH = 1                # a tap this many patches from the truth is right (a diagonal: 1)


def encode_tap(q, value) -> str | None:
    """``"1-2"``: the patch's row and column; None if refused."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2) or any(
            isinstance(k, bool) or not isinstance(k, numbers.Integral) for k in value):
        return None
    r, c = int(value[0]), int(value[1])
    if not (0 <= r < len(q.rows) and 0 <= c < len(q.choices)):
        return None
    return f"{r}-{c}"


def patches_apart(a, b) -> int:
    """Patches between two patches, a diagonal step counting one (0: the same)."""
    return max(abs(int(a[0]) - int(b[0])), abs(int(a[1]) - int(b[1])))


def patch_words(q, value) -> str:
    """A patch in English words, as the CSV names it (`patch_said`: in a verdict's language)."""
    return f"row {q.rows[value[0]]}, column {q.choices[value[1]]}"


def patch_said(q, value) -> str:
    return say("row {row}, column {column}", row=str(q.rows[value[0]]),
               column=str(q.choices[value[1]]))


def right_tap(q, key, answer) -> bool:
    return answer is not None and key.truth is not None \
        and patches_apart(answer, key.truth) <= TAP_REACH


def verdict_tap(q, key, answer) -> str:
    apart = patches_apart(answer, key.truth)
    said, true = patch_said(q, answer), patch_said(q, key.truth)
    if apart == 0:
        return say("**Right**: you tapped the peak's patch ({true}).", true=true)
    if apart <= TAP_REACH:
        return say("**Right**: you tapped {said}, next to the peak's patch ({true}): within "
                   "one patch counts.", said=said, true=true)
    return say_n("**Not this time**: you tapped {said}, {n} patch from the peak's patch "
                 "({true}).", "**Not this time**: you tapped {said}, {n} patches from the "
                 "peak's patch ({true}).", apart, said=said, true=true)


def off_tap(q, key, answer) -> float:
    return min(1.0, patches_apart(answer, key.truth) / max(len(q.rows), len(q.choices), 1))


def differs_tap(q, key, other_q, other) -> bool:
    return other.truth is not None and key.truth is not None \
        and patches_apart(key.truth, other.truth) > TAP_REACH


# --- a tap on a clip's time strip (question kind ``tap_time``) -------------------------------
TIME_REACH = 1               # a tap this many time bins from the truth is right


def time_bin_labels(n_bins: int, seconds: float) -> tuple[str, ...]:
    """Names of ``n_bins`` bins of ``seconds`` each from 0: ``"0.00–0.10 s"``, ... (what a
    ``tap_time`` question's choices are: a screen reader, the CSV and a verdict read them)."""
    return tuple(f"{k * seconds:.2f}–{(k + 1) * seconds:.2f} s" for k in range(n_bins))


def encode_time(q, value) -> str | None:
    """``"3"``: the time bin's index; None if refused (a bool is not a bin)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or not 0 <= value < len(q.choices):
        return None
    return str(int(value))


def expects_time(q) -> str:
    return (f"a time bin from 0 to {len(q.choices) - 1} (0 is {q.choices[0]}, "
            f"{len(q.choices) - 1} is {q.choices[-1]})")


def time_words(q, value) -> str:
    return q.choices[value] if isinstance(value, int) and 0 <= value < len(q.choices) \
        else str(value)


def right_time(q, key, answer) -> bool:
    return answer is not None and key.truth is not None \
        and abs(int(answer) - int(key.truth)) <= TIME_REACH


def verdict_time(q, key, answer) -> str:
    apart = abs(int(answer) - int(key.truth))
    said, true = time_words(q, answer), time_words(q, key.truth)
    if apart == 0:
        return say("**Right**: you tapped the peak's moment ({true}).", true=true)
    if apart <= TIME_REACH:
        return say("**Right**: you tapped {said}, next to the peak's moment ({true}): within "
                   "one time bin counts.", said=said, true=true)
    return say_n("**Not this time**: you tapped {said}, {n} time bin from the peak's moment "
                 "({true}).", "**Not this time**: you tapped {said}, {n} time bins from the "
                 "peak's moment ({true}).", apart, said=said, true=true)


def off_time(q, key, answer) -> float:
    return min(1.0, abs(int(answer) - int(key.truth)) / max(len(q.choices), 1))


def differs_time(q, key, other_q, other) -> bool:
    return other.truth is not None and key.truth is not None \
        and abs(int(key.truth) - int(other.truth)) > TIME_REACH
