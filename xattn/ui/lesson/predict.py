"""The prediction control of each kind of question, for one thumb on a phone: a row of pills
(a choice, a token), a number, a row of pills per part (each head's job), the aligning
control (tap a target word, then its source word; tap a link to take it back), a patch of
an image (its row and column) and a moment of a clip (its time bin).

Each returns what ``xattn.classroom.Question.encode`` takes, or None while nothing is
picked. Every control is keyed under one ``key`` (the room's question, or the lesson's own):
a new question is a new key, so an old tap can never be cast into it.
"""

from __future__ import annotations

import streamlit as st

from xattn.classroom import Question
from xattn.classroom.question import MAX_LINKS
from xattn.jobs import LABELS
from xattn.lesson import Told
from xattn.literal import md_code
from xattn.ui.i18n import gettext as _
from xattn.ui.i18n import ngettext

__all__ = ["prediction_widget", "WIDGETS"]



def prediction_widget(told: Told, key: str, *, default=None, disabled: bool = False,
                      on_change=None, shown: list[str] | None = None):
    """The prediction control for ``told``'s question under ``key`` (a tap on a token or a
    choice, a number, a choice per part, or links); its value, or None. ``default``: the
    answer as stored (a number, a choice, a tuple per part, the links). ``shown``: a row of
    pills' labels in the page's language (``xattn.ui.lesson.words.option_labels``), the
    values the same."""
    q = told.question
    label = _("**Your prediction.** {prompt}", prompt=told.prompt)
    draw = WIDGETS[q.of.asked.draws]     # xattn.classroom.controls: the control's drawing
    if shown is not None and draw is _pills:
        return _pills(q, key, label, default, disabled, on_change, shown=shown)
    return draw(q, key, label, default, disabled, on_change)


def _number(q: Question, key: str, label: str, default, disabled: bool, on_change):
    return st.number_input(label, q.low, q.high, value=default, step=10 ** -q.decimals,
                           format=f"%.{q.decimals}f", key=key, disabled=disabled,
                           placeholder=_("type a number"), on_change=on_change)


def _pills(q: Question, key: str, label: str, default, disabled: bool, on_change, *,
           shown=None):
    """A row of pills of the question's options (its choices, or its tokens by position)."""
    options = q.options()
    names = dict(zip(options, shown or options, strict=True))
    return st.pills(label, options, key=key, disabled=disabled, on_change=on_change,
                    default=default if default in options else None,
                    format_func=lambda o: md_code(names[o]))


def _tokens(q: Question, key: str, label: str, default, disabled: bool, on_change):
    return _pills(q, key, label, default, disabled, on_change, shown=q.choices)


def _parts(q: Question, key: str, label: str, default, disabled: bool, on_change):
    """One row of pills per part (``{key}_part_{k}``): one tap picks, another takes it back.
    Returns part: choice for the parts picked, or None."""
    said = {}
    mine = default if isinstance(default, tuple) and len(default) == len(q.rows) else \
        (None,) * len(q.rows)
    with st.container(key=key):           # no widget has this key: the whole control
        st.markdown(label)
        for k, (name, was) in enumerate(zip(q.rows, mine, strict=True)):
            said[name] = st.pills(name, list(q.choices), key=f"{key}_part_{k}",
                                  default=was if was in q.choices else None,
                                  disabled=disabled, on_change=on_change,
                                  format_func=lambda o: LABELS.get(o, o))
    said = {k: v for k, v in said.items() if v is not None}
    return said or None


def _keys(key: str) -> tuple[str, str, str, str]:
    """Session keys of the aligning control: its links, the target picked, the source tapped,
    the links shown (tap one to take it back)."""
    return f"{key}_links", f"{key}_tgt", f"{key}_src", f"{key}_drawn"


def _next_row(q: Question, links, after: int) -> int:
    """The first target word after ``after`` (wrapping) that has no link yet, else ``after``."""
    linked = {t for t, _ in links}
    n = len(q.rows)
    return next(((after + d) % n for d in range(1, n + 1) if (after + d) % n not in linked),
                max(after, 0))


def _tap_source(q: Question, key: str) -> None:
    """A source word tapped: link it to the target word picked, or take the link back; the
    target moves on to the next word without a link."""
    links_key, tgt_key, src_key, drawn_key = _keys(key)
    t, s = st.session_state.get(tgt_key), st.session_state.get(src_key)
    st.session_state[src_key] = None
    if t is None or s is None:
        return
    links = set(st.session_state.get(links_key, ()))
    if (t, s) in links:
        links.discard((t, s))
    elif len(links) < MAX_LINKS:
        links.add((t, s))
        st.session_state[tgt_key] = _next_row(q, links, t)
    st.session_state[links_key] = tuple(sorted(links))
    st.session_state[drawn_key] = list(st.session_state[links_key])


def _untap(key: str) -> None:
    """A link tapped in the list: taken back."""
    links_key, _, _, drawn_key = _keys(key)
    st.session_state[links_key] = tuple(sorted(st.session_state.get(drawn_key) or ()))


def _links(q: Question, key: str, label: str, default, disabled: bool, on_change=None):
    """Tap a target word, then its source word: the link is drawn and the next target word
    without a link is picked; a link tapped again (or in the list) is taken back. Returns the
    links, sorted, or None. (``on_change`` is not called: its taps have callbacks of their
    own.)"""
    links_key, tgt_key, src_key, drawn_key = _keys(key)
    if links_key not in st.session_state:
        st.session_state[links_key] = tuple(sorted(default or ()))
    links = st.session_state[links_key]
    if tgt_key not in st.session_state:
        st.session_state[tgt_key] = _next_row(q, links, -1)
    st.session_state[drawn_key] = list(links)
    linked = {t for t, _ in links}
    with st.container(key=key):
        st.markdown(label)
        t = st.pills(_("Target word"), range(len(q.rows)), key=tgt_key, disabled=disabled,
                     label_visibility="collapsed",   # the prompt above says what it is
                     format_func=lambda i: q.rows[i] + (" ✓" if i in linked else ""))
        st.pills(_("its source word") if t is None else _("{word} translates:", word=q.rows[t]),
                 range(len(q.choices)), key=src_key, disabled=disabled or t is None,
                 on_change=_tap_source, args=(q, key),
                 format_func=lambda j: q.choices[j] + (" ✓" if (t, j) in links else ""))
        if links:
            st.pills(ngettext("Your {n} link (tap it to take it back)",
                              "Your {n} links (tap one to take it back)", len(links)),
                     list(links), key=drawn_key, selection_mode="multi",
                     disabled=disabled, on_change=_untap, args=(key,),
                     format_func=lambda lk: f"{q.rows[lk[0]]} → {q.choices[lk[1]]}")
    return links or None


def _tap(q: Question, key: str, label: str, default, disabled: bool, on_change):
    """The image, then its patch by row and column (a mouse has no tap on a Streamlit image):
    two rows of pills under ``{key}_row`` and ``{key}_col``. Returns (row, column), or None
    until both are picked."""
    mine = default if isinstance(default, tuple) and len(default) == 2 else (None, None)
    with st.container(key=key):
        st.markdown(label)
        if q.image:
            st.image(q.image, width=240, caption=_("{rows} × {columns} patches", rows=len(q.rows),
                                                       columns=len(q.choices)))
        r = st.pills(_("Row of patches (from the top)"), range(len(q.rows)), key=f"{key}_row",
                     default=mine[0], disabled=disabled, on_change=on_change,
                     format_func=lambda i: q.rows[i])
        c = st.pills(_("Column of patches (from the left)"), range(len(q.choices)),
                     key=f"{key}_col", default=mine[1], disabled=disabled,
                     on_change=on_change, format_func=lambda j: q.choices[j])
    return None if r is None or c is None else (r, c)


def _strip(q: Question, key: str, label: str, default, disabled: bool, on_change):
    """The clip's spectrogram, then its time bin as a row of pills (each named by its time
    in seconds). Returns the bin's index, or None."""
    with st.container(key=key):
        st.markdown(label)
        if q.image:
            st.image(q.image, width="stretch",
                     caption=ngettext("The clip's spectrogram, {start} to {end}: {n} time bin",
                                      "The clip's spectrogram, {start} to {end}: {n} time bins",
                                      len(q.choices), start=q.choices[0].split("–")[0],
                                      end=q.choices[-1].split("–")[1]))
        return st.pills(_("Time bin (seconds)"), range(len(q.choices)), key=f"{key}_bin",
                        default=default if isinstance(default, int) else None,
                        disabled=disabled, on_change=on_change,
                        format_func=lambda i: q.choices[i])


# Each drawing of xattn.classroom.controls.DRAWN as a widget (phone.js's CONTROLS draws the
# same names; tests/test_classroom_kinds.py compares them).
WIDGETS = {"pills": _pills, "tokens": _tokens, "number": _number, "grid": _parts,
           "links": _links, "tap": _tap, "strip": _strip}
