"""The page's state and its link: the one place that reads and writes URL query parameters.

Every control of the page is declared once as a `Param` (its key, default and how to read it
from a link); `REGISTRY` holds them all, so the page knows every parameter it understands. At
the start of a session (and when the browser goes back or forward in history) `PageState`
reads the whole query string, checks each value against its `Param` and keeps the valid
ones; no widget ever sees a raw URL value. Each widget then asks `PageState.value` for the
value it shows, checked against the options it offers this run (heads depend on d_model,
padded tokens on the sentence); anything refused falls back to a value that is offered and
becomes a notice that quotes the offending value literally. At the end of the run
`PageState.write_url` puts every non-default value of the controls drawn this run back into
the link, so a copied link reproduces the view.

Widgets are not bound to the URL by Streamlit (``bind=``): its own deserialisers run before
any app code and raise on values such as ``seed=1e400``.
"""

from __future__ import annotations

import difflib
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from xattn.literal import cut, md_code, show_value

__all__ = ["Param", "REGISTRY", "Notice", "PageState", "int_param", "choice_param",
           "bool_param", "text_param", "float_param", "list_param", "page_state", "whole_number",
           "text_value", "clean_text"]

EMBED_KEYS = ("embed", "embed_options")   # Streamlit's own parameters (embedding the app)
_MEMORY = "_xattn_memory"                 # session: per parameter, the value wanted and shown
_SEEN = "_xattn_seen"                     # session: set once the link was read


@dataclass(frozen=True)
class Param:
    """One URL parameter: a control's key, its default, and how a link spells its value.

    ``parse`` turns one URL string into a value or raises ValueError whose message completes
    "which ..." (e.g. "is not a whole number from 0 to 9"); ``spell`` turns a value back into
    URL text. ``multi`` parameters repeat (``pad=0:+the&pad=6:+mat``) and hold a tuple.
    """

    key: str
    default: object
    parse: Callable[[str], object]
    spell: Callable[[object], str] = str
    multi: bool = False
    what: str = ""                 # words for notices: "the number of heads"

    def read(self, raw: list[str]) -> tuple[object, str | None]:
        """The value of this parameter's URL strings, and why not (None when fine)."""
        if self.multi:
            values, bad = [], []
            for text in raw:
                try:
                    values.append(self.parse(text))
                except ValueError as err:
                    bad.append(f"{show_value(text)} {err}")
            return tuple(dict.fromkeys(values)), ("; ".join(bad) or None)
        if len(raw) > 1:
            return self.default, f"appears {len(raw)} times"
        try:
            return self.parse(raw[0]), None
        except ValueError as err:
            return self.default, str(err)

    def to_url(self, value) -> str | list[str]:
        return [self.spell(v) for v in value] if self.multi else self.spell(value)

    def shown(self, value) -> str:
        """``value`` as Markdown for a notice."""
        if self.multi:
            return ", ".join(show_value(self.spell(v)) for v in value) if value else "none"
        return show_value(self.spell(value))


REGISTRY: dict[str, Param] = {}


def _register(p: Param) -> Param:
    if p.key in REGISTRY and REGISTRY[p.key] != p:
        raise ValueError(f"URL parameter {p.key!r} is declared twice, differently.")
    REGISTRY[p.key] = p
    return p


def whole_number(lo: int, hi: int) -> Callable[[str], int]:
    """A parser of whole numbers from ``lo`` to ``hi`` written in ASCII digits."""
    def parse(text: str) -> int:
        # ASCII digits only: int() would also take " 4", "+4", "4_0" and "٣".
        if not (text.isascii() and text.isdigit()) or not lo <= int(text) <= hi:
            raise ValueError(f"is not a whole number from {lo:,} to {hi:,}")
        return int(text)
    return parse


def int_param(key: str, default: int, lo: int, hi: int, what: str = "") -> Param:
    """A whole number from ``lo`` to ``hi`` (non-negative), written in ASCII digits."""
    return _register(Param(key, default, whole_number(lo, hi), what=what or key))


def float_param(key: str, default: float, lo: float, hi: float, what: str = "") -> Param:
    def parse(text: str) -> float:
        try:
            value = float(text) if text.isascii() and text.strip() == text else None
        except ValueError:
            value = None
        if value is None or not lo <= value <= hi:  # also refuses nan and inf
            raise ValueError(f"is not a number from {lo} to {hi}")
        return value
    return _register(Param(key, default, parse, spell=lambda v: f"{v:g}", what=what or key))


def choice_param(key: str, default: str, choices: Sequence[str], what: str = "") -> Param:
    """One of ``choices``, matched without regard to case."""
    lookup = {c.lower(): c for c in choices}

    def parse(text: str) -> str:
        if text.lower() not in lookup:
            raise ValueError("is not one of " + ", ".join(md_code(c) for c in choices))
        return lookup[text.lower()]
    return _register(Param(key, default, parse, what=what or key))


def bool_param(key: str, default: bool, what: str = "") -> Param:
    words = {"true": True, "false": False, "1": True, "0": False}

    def parse(text: str) -> bool:
        if text.lower() not in words:
            raise ValueError("is not `true` or `false`")
        return words[text.lower()]
    return _register(Param(key, default, parse, spell=lambda v: "true" if v else "false",
                           what=what or key))


def text_param(key: str, default: str, max_chars: int, what: str = "") -> Param:
    """Free text. Line breaks and control characters become spaces (a text box cannot show
    them, so the tokens would not match the box) and the text is cut to ``max_chars``; the
    page then says so (`clean_text`)."""
    return _register(Param(key, default, lambda text: text, what=what or key))


def list_param(key: str, parse: Callable[[str], object], spell: Callable[[object], str] = str,
               what: str = "") -> Param:
    """A repeated parameter; its value is a tuple (default empty)."""
    return _register(Param(key, (), parse, spell=spell, multi=True, what=what or key))


def clean_text(text: str, max_chars: int) -> tuple[str, list[str]]:
    """``text`` with control characters and line breaks as spaces, cut to ``max_chars``, and
    what was changed, in words."""
    changes = []
    if not text.isprintable():
        cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch
                          for ch in text)
        if cleaned != text:
            changes.append("its line breaks or control characters became spaces")
            text = cleaned
    if len(text) > max_chars:
        changes.append(f"it was cut from {len(text):,} to {max_chars:,} characters")
        text = text[:max_chars]
    return text, changes


@dataclass(frozen=True)
class Notice:
    """A message for the top of the page. ``text`` is Markdown in which every value that came
    from a user is a code span (`xattn.literal.md_code`). ``kind``: "link" (the link asked for
    something not valid), "changed" (a control changed because another one did)."""

    kind: str
    text: str


@dataclass
class PageState:
    """What this run shows, read from the link, the widgets and this session's memory."""

    memory: dict = field(default_factory=dict)
    forced: dict = field(default_factory=dict)      # values that override the widgets this run
    from_link: set = field(default_factory=set)     # keys whose forced value came from the link
    drawn: dict = field(default_factory=dict)       # key: value of every control drawn this run
    defaults: dict = field(default_factory=dict)    # key: its default this run (see `value`)
    refused: dict = field(default_factory=dict)     # key: (raw, why) of bad link values
    notices: list = field(default_factory=list)

    # ---------------------------------------------------------------- reading the link
    def read_link(self, query: dict[str, list[str]]) -> None:
        """Take every parameter of ``query``; unknown keys and bad values become notices."""
        unknown = [k for k in query if k not in REGISTRY and k.lower() not in EMBED_KEYS]
        if unknown:
            self._unknown(unknown)
        for key, p in REGISTRY.items():
            value = p.default
            if key in query:
                value, problem = p.read(query[key])
                if problem:   # said once the control shows what replaces it (`value`)
                    self.refused[key] = ("&".join(query[key]), problem)
                self.from_link.add(key)
            self.forced[key] = value

    def _unknown(self, keys: list[str]) -> None:
        names = ", ".join(show_value(k, 30) for k in keys[:5])
        more = f" and {len(keys) - 5} more" if len(keys) > 5 else ""
        hints = [difflib.get_close_matches(k, REGISTRY, n=1, cutoff=0.75) for k in keys[:5]]
        hint = "; ".join(f"{md_code(h[0])} instead of {show_value(k, 30)}"
                         for k, h in zip(keys, hints, strict=False) if h)
        self.notices.append(Notice("link", (
            f"The link has {'a parameter' if len(keys) == 1 else 'parameters'} this page does "
            f"not know, ignored: {names}{more}." + (f" Did you mean {hint}?" if hint else ""))))

    def link_notice(self, key: str, raw: str, problem: str, shown=None) -> None:
        """Say that the link's ``key=raw`` was refused because of ``problem``; ``shown`` is
        the value used instead (None: the control was not drawn this run)."""
        p = REGISTRY[key]
        if shown is None:
            instead = "It is left at its default."
        elif p.multi and not shown:
            instead = f"{p.what[:1].upper()}{p.what[1:]}: none."
        else:
            instead = f"Showing {p.what} {p.shown(shown)} instead."
        self.notices.append(Notice("link", (
            f"The link asked for {show_value(f'{key}={raw}')}, which {problem}. {instead}")))

    # ---------------------------------------------------------------- the controls
    def value(self, key: str, options: Sequence | None = None, *,
              closest: Callable[[object], object] | None = None, why: str = "",
              default=None) -> object:
        """The value control ``key`` shows this run, put into session state for its widget.

        Each control has a *wanted* value: the last one the link, a lesson step or the user
        chose (a widget change the page did not make). It is shown whenever the control offers
        it; when it does not (``options``: the values offered now; 16 heads after d_model
        became 24), ``closest(wanted)`` is shown instead (by default the default), and the
        wanted value comes back as soon as it is offered again. A notice says what was shown
        instead and why (``why`` completes "... is not available ..."), once per change.

        A parameter whose default is not offered (the default target token of another
        sentence) has ``closest(default)``, or the first option, as its default this run,
        silently: the link then leaves it out. ``default`` gives this run's default outright
        (e.g. "the sidebar's seed + 1").
        """
        p = REGISTRY[key]
        ss = st.session_state
        mem = self.memory.setdefault(key, {})
        default = p.default if default is None else default
        if options is not None:
            options = list(options)
            if not p.multi and default not in options:
                default = closest(default) if closest else options[0]
            if closest is None:
                closest = ((lambda v: v if v in options else None) if p.multi
                           else (lambda _: default))
        if key in self.forced:
            wanted, source = self.forced.pop(key), "link" if key in self.from_link else "set"
        elif key in ss and "shown" in mem and _same(ss[key], mem["shown"], p.multi) is False:
            wanted, source = ss[key], "user"
        elif "wanted" in mem:
            wanted, source = mem["wanted"], "kept"
        else:
            wanted, source = ss.get(key, p.default), "user"
        wanted = tuple(wanted) if p.multi else wanted
        value = default if wanted == p.default else wanted
        if options is not None:
            value = self._offered(p, value, options, closest)
            if not _same(value, wanted if wanted != p.default else default, p.multi) and (
                    source != "kept" or not _same(value, mem.get("shown"), p.multi)):
                self._changed(p, wanted, value, why, source, closest)
        if key in self.refused:
            self.link_notice(key, *self.refused.pop(key), value)
        self.defaults[key] = default
        if key not in ss or not _same(ss[key], value, p.multi):
            ss[key] = list(value) if p.multi else value
        mem["wanted"], mem["shown"] = wanted, value
        self.drawn[key] = value
        return value

    @staticmethod
    def _offered(p: Param, value, options: list, closest):
        if p.multi:
            return tuple(dict.fromkeys(k for v in value if (k := closest(v)) is not None))
        return value if value in options else closest(value)

    def _changed(self, p: Param, old, new, why: str, source: str, closest) -> None:
        if source == "link":
            raw = p.to_url(old)
            raw = "&".join(raw) if isinstance(raw, list) else raw
            self.link_notice(p.key, raw, f"is not available {why}".rstrip(), new)
            return
        what = p.what[:1].upper() + p.what[1:]
        if not p.multi:
            text = (f"{what} {p.shown(old)} is not available {why}".rstrip()
                    + f": showing {p.shown(new)} until it is.")
        else:
            moved = [(v, k) for v in old if (k := closest(v)) is not None and k != v]
            gone = [v for v in old if closest(v) is None]
            parts = ([f"{show_value(p.spell(v))} is now {show_value(p.spell(k))}"
                      for v, k in moved]
                     + [f"{show_value(p.spell(v))} is left out until it is available again"
                        for v in gone])
            text = f"{what}: " + "; ".join(parts) + "."
        self.notices.append(Notice("changed", text))

    def force(self, values: dict) -> None:
        """Impose ``values`` (key: value) on their controls this run (a lesson step)."""
        for key, value in values.items():
            self.forced[key] = value
            self.from_link.discard(key)

    # ---------------------------------------------------------------- writing the link
    def finish(self) -> list[Notice]:
        """The notices of this run, including refused link values of controls not drawn."""
        for key, (raw, problem) in self.refused.items():
            self.link_notice(key, raw, problem)
        self.refused.clear()
        return self.notices

    def url(self) -> dict[str, str | list[str]]:
        """The query of this view: every control drawn this run that is not at its default."""
        return {k: REGISTRY[k].to_url(v) for k, v in self.drawn.items()
                if v != self.defaults.get(k, REGISTRY[k].default)}

    def write_url(self) -> None:
        """Put this view into the browser's address bar (a new history entry if it changed)."""
        query = self.url()
        current = {k: st.query_params.get_all(k) for k in st.query_params
                   if k.lower() not in EMBED_KEYS}
        wanted = {k: v if isinstance(v, list) else [v] for k, v in query.items()}
        if current != wanted:
            st.query_params.from_dict(query)


def _same(a, b, multi: bool) -> bool:
    """Whether two values of a control are equal (a multiselect's list equals its tuple)."""
    return (tuple(a) == tuple(b)) if multi and a is not None and b is not None else a == b


def page_state() -> PageState:
    """This run's state. The link is read on the session's first run and after the browser's
    back or forward button; otherwise the address bar only echoes what the page wrote."""
    ss = st.session_state
    state = PageState(memory=ss.setdefault(_MEMORY, {}))
    ctx = get_script_run_ctx()
    if not ss.get(_SEEN) or getattr(ctx, "is_history_navigation", False):
        ss[_SEEN] = True
        state.read_link({k: st.query_params.get_all(k) for k in st.query_params})
    return state


def text_value(state: PageState, key: str, max_chars: int) -> str:
    """A free-text control's value, with what `clean_text` changed said in a notice."""
    value = state.value(key)
    cleaned, changes = clean_text(value, max_chars)
    if changes:
        p = REGISTRY[key]
        state.notices.append(Notice("changed", (
            f"{p.what[:1].upper()}{p.what[1:]} {show_value(cut(value, 40))}: "
            + " and ".join(changes) + ".")))
        st.session_state[key] = cleaned
        state.drawn[key] = cleaned
        state.memory[key].update(wanted=cleaned, shown=cleaned)
    return cleaned
