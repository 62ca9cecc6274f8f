"""The page's state and its link: the one place that reads and writes URL query parameters.

Every control of the page is declared once as a `Param` in one table, ``xattn.live.link``
(its key, default and how to read it from a link), which exists before any widget. At
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import streamlit as st

from xattn.literal import md_code, show_value
from xattn.live.link import REGISTRY
from xattn.live.params import Param, Why, clean_text
from xattn.ui.i18n import N_, ngettext, page_lang
from xattn.ui.i18n import gettext as _
from xattn.words import number, sentences

__all__ = ["LINK_READ", "Notice", "PageState", "page_state", "text_value", "said", "REASONS"]

EMBED_KEYS = ("embed", "embed_options")   # Streamlit's own parameters (embedding the app)
_MEMORY = "_xattn_memory"                 # session: per parameter, the value wanted and shown
LINK_READ = "_xattn_seen"                 # session: set once the link was read
_RUNS = "_xattn_runs"                     # session: its full runs so far


# What ``xattn.live.params`` and ``xattn.live.link`` may say of a link's value (their `Why`s),
# marked for the ``app`` catalog; the controls' names (``Param.what``) that are words, too.
REASONS = (
    N_("is not a whole number from {lo} to {hi}"), N_("not a whole number from {lo} to {hi}"),
    N_("is not a number from {lo} to {hi}"), N_("not a number from {lo} to {hi}"),
    N_("is not one of {choices}"), N_("not one of {choices}"),
    N_("is not `true` or `false`"), N_("not `true` or `false`"),
    N_("is not of the form `position: token` (e.g. `6: mat`)"),
    N_("not of the form `position: token` (e.g. `6: mat`)"),
    N_("appears {n} times"), N_("holds {bad}"), N_("{value}, {why}"), N_("is not available"),
    N_("is not available {why}"),
    N_("its line breaks or control characters became spaces"),
    N_("it was cut from {n} to {max} characters"),
)
WHATS = (
    N_("B"),
    N_("a new class"),
    N_("hiding sink tokens"),
    N_("how weights become links"),
    N_("positional encoding"),
    N_("presenter mode"),
    N_("reading a word's alignment at the step after it"),
    N_("the English sentence"),
    N_("the French sentence"),
    N_("the class code"),
    N_("the colour scale"),
    N_("the days the homework is open"),
    N_("the decoder step"),
    N_("the device code"),
    N_("the division by √d_head"),
    N_("the embedder"),
    N_("the forced tokens"),
    N_("the full page of the class's step"),
    N_("the gold alignment"),
    N_("the head"),
    N_("the head opened"),
    N_("the heads of B"),
    N_("the heads switched off"),
    N_("the heads to draw"),
    N_("the host key"),
    N_("the image format"),
    N_("the layer"),
    N_("the layer of B"),
    N_("the lesson"),
    N_("the lesson step"),
    N_("the link threshold"),
    N_("the mask"),
    N_("the masked source tokens"),
    N_("the model"),
    N_("the number of heads"),
    N_("the number of training steps"),
    N_("the page of heads"),
    N_("the page's language"),
    N_("the seed"),
    N_("the seed of B"),
    N_("the source sentence"),
    N_("the source token"),
    N_("the target sentence"),
    N_("the target token"),
    N_("the threshold"),
    N_("the tokenizer"),
    N_("the training seed"),
    N_("the training snapshot"),
    N_("the view"),
    N_("the weights"),
    N_("the window"),
    N_("whole words"),
)


def said(why) -> str:
    """A `Why` (or plain text) in the page's language: its whole numbers as the language
    writes them (*2.147.483.647*), the values a user typed, already code spans in its names,
    put in as they are."""
    if not isinstance(why, Why):
        return str(why)
    names = {k: said(v) if isinstance(v, Why) else
             "; ".join(said(x) for x in v) if isinstance(v, tuple) else
             number(v, "", page_lang()) if isinstance(v, int) and not isinstance(v, bool) else v
             for k, v in why.names}
    return _(why.msgid, **names) if names else _(why.msgid)


def _what(p: Param, capital: bool = False) -> str:
    what = _(p.what) if p.what != p.key else p.what       # a key is code, never translated
    return what[:1].upper() + what[1:] if capital else what


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
    unknown: list = field(default_factory=list)     # the link's names this page does not know
    narrow: bool = False      # the views are drawn in a narrow column (beside a lesson step)
    run: int = 1              # this session's full run (`page_state` counts them)

    # ---------------------------------------------------------------- reading the link
    def read_link(self, query: dict[str, list[str]]) -> None:
        """Take every parameter of ``query``; unknown keys and bad values become notices."""
        # said by `finish`, once the page's language (itself a parameter) is known
        self.unknown = [k for k in query if k not in REGISTRY and k.lower() not in EMBED_KEYS]
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
        if len(keys) > 5:
            names = _("{names} and {n} more", names=names, n=len(keys) - 5)
        hints = [difflib.get_close_matches(k, REGISTRY, n=1, cutoff=0.75) for k in keys[:5]]
        hint = "; ".join(_("{right} instead of {wrong}", right=md_code(h[0]),
                           wrong=show_value(k, 30))
                         for k, h in zip(keys, hints, strict=False) if h)
        self.notices.append(Notice("link", sentences(ngettext(
            "The link has a parameter this page does not know, ignored: {names}.",
            "The link has parameters this page does not know, ignored: {names}.", len(keys),
            names=names), _("Did you mean {hint}?", hint=hint) if hint else "",
            lang=page_lang())))

    def link_notice(self, key: str, raw: str, problem, shown=None) -> None:
        """Say that the link's ``key=raw`` was refused because of ``problem`` (a
        ``xattn.live.params.Why``); ``shown`` is the value used instead (None: the control
        was not drawn this run). Said in the page's language; ``raw`` quoted as it is."""
        p = REGISTRY[key]
        if shown is None:
            instead = _("It is left at its default.")
        elif p.multi and not shown:
            instead = _("{what}: none.", what=_what(p, capital=True))
        else:
            instead = _("Showing {what} {value} instead.", what=_what(p), value=p.shown(shown))
        asked, why = show_value(f"{key}={raw}"), said(problem)
        text = (_("The link asked for {asked} ({what}), which {why}.", asked=asked,
                  what=_what(p), why=why) if p.what != key else
                _("The link asked for {asked}, which {why}.", asked=asked, why=why))
        self.notices.append(Notice("link", sentences(text, instead, lang=page_lang())))

    # ---------------------------------------------------------------- the controls
    def value(self, param: Param, options: Sequence | None = None, *,
              closest: Callable[[object], object] | None = None, why: str = "",
              default=None) -> object:
        """The value control ``param`` shows this run, put into session state for its widget
        (whose key is ``param.key``).

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
        if not isinstance(param, Param):
            raise TypeError(f"param must be a Param of xattn.live.link; received {param!r}.")
        p, key = param, param.key
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
        # A session's first run puts the link's value into every widget, and the browser
        # draws it when the run's elements arrive. A page reconnected to another process is
        # clicked at once: the user's value reaches the server first, and the browser then
        # shows the link's older value while the page uses the user's. The second run puts
        # the user's value in again, so that the browser shows what is used. (Only then: a
        # value put in makes the browser drop what is being typed into that control.)
        imposed = mem.get("imposed")
        again = (source == "user" and imposed is not None and imposed[0] == 1 == self.run - 1
                 and not _same(imposed[1], value, p.multi))
        if key not in ss or not _same(ss[key], value, p.multi) or again:
            ss[key] = list(value) if p.multi else value
            mem["imposed"] = (self.run, value)
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
            self.link_notice(p.key, raw, Why("is not available {why}", (("why", why),)) if why
                             else Why("is not available"), new)
            return
        what = _what(p, capital=True)
        if not p.multi:
            text = (_("{what} {old} is not available {why}: showing {new} until it is.",
                      what=what, old=p.shown(old), why=why, new=p.shown(new)) if why else
                    _("{what} {old} is not available: showing {new} until it is.",
                      what=what, old=p.shown(old), new=p.shown(new)))
        else:
            moved = [(v, k) for v in old if (k := closest(v)) is not None and k != v]
            gone = [v for v in old if closest(v) is None]
            parts = ([_("{old} is now {new}", old=show_value(p.spell(v)),
                        new=show_value(p.spell(k))) for v, k in moved]
                     + [_("{old} is left out until it is available again",
                          old=show_value(p.spell(v))) for v in gone])
            text = _("{what}: {parts}.", what=what, parts="; ".join(parts))
        self.notices.append(Notice("changed", text))

    def shown(self, param: Param):
        """The value ``param``'s control showed this run (None: not drawn)."""
        return self.drawn.get(param.key)

    def take(self, param: Param):
        """An action parameter's value this run (``class=new``): read from the link once and
        never written back, so a reload does not repeat the action."""
        value = self.forced.pop(param.key, param.default)
        if param.key in self.refused:
            self.link_notice(param.key, *self.refused.pop(param.key), None)
        return value

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
        if self.unknown:
            self._unknown(self.unknown)
            self.notices.insert(0, self.notices.pop())         # said first, as it was read
            self.unknown = []
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
    back or forward button; otherwise the address bar only echoes what the page wrote. A
    control the browser shows but this session has not drawn keeps the value it shows (the
    session is new in this process after a reconnect: `xattn.ui.internals.reconnect`)."""
    from xattn.ui.internals import browser_values, history_navigation

    ss = st.session_state
    ss[_RUNS] = ss.get(_RUNS, 0) + 1
    state = PageState(memory=ss.setdefault(_MEMORY, {}), run=ss[_RUNS])
    history = history_navigation()
    shown = {} if history else browser_values(REGISTRY, drawn=state.memory)
    if not ss.get(LINK_READ) or history:
        ss[LINK_READ] = True
        state.read_link({**{k: st.query_params.get_all(k) for k in st.query_params}, **shown})
    elif shown:   # a first run cut short by a click: the rest as the browser shows it
        state.force({k: REGISTRY[k].read(v)[0] for k, v in shown.items()})
    return state


def text_value(state: PageState, param: Param, default: str | None = None) -> str:
    """A free-text control's value, cut to its ``max_chars``, with what `clean_text` changed
    said in a notice; ``default`` is this run's default (`PageState.value`)."""
    value = state.value(param, default=default)
    cleaned, changes = clean_text(value, param.max_chars)
    if changes:
        p, key = param, param.key
        state.notices.append(Notice("changed", _(
            "{what} {value}: {changes}.", what=_what(p, capital=True),
            value=show_value(value, 40), changes=_("{a} and {b}", a=said(changes[0]),
                                                   b=said(changes[1]))
            if len(changes) == 2 else said(changes[0]))))
        st.session_state[key] = cleaned
        state.drawn[key] = cleaned
        state.memory[key].update(wanted=cleaned, shown=cleaned, imposed=(state.run, cleaned))
    return cleaned
