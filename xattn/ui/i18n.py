"""The lecturer's page in its language (issue 45; docs/languages.md).

The page's own labels are a gettext ``app`` domain read with Babel
(``xattn/locale/<lang>/LC_MESSAGES/app.po``): the msgid is the English text, as the code
writes it, so the code reads as English and ``pybabel extract`` finds every message.

- `gettext`, imported as ``_`` (one message), and `ngettext` (a count's plural form:
  CLDR's, as the catalog's ``Plural-Forms``, Arabic's six) translate into the page's
  language this run; ``{name}``s are filled after the lookup, so a translation may move
  them;
- `N_` marks a message kept in a table (an option's label) for `_` to translate when drawn;
- `setup` sets the page's language at the top of a run: the link's ``lang`` (the picker,
  `language_picker`), else the browser's (``st.context.locale``), else English; Arabic
  gets ``dir="rtl"`` (`rtl_style`), the charts left to right.

A widget's key and a value compared in code are never translated: only what is displayed
(a label; an option's ``format_func``, a table of this run's translations rather than a
function calling `_` later).
"""

from __future__ import annotations

from functools import cache
from gettext import c2py

import streamlit as st
from babel.messages.pofile import read_po

from xattn.live.link import LANG
from xattn.locales import LANGS, LOCALE_DIR, NAMES, RTL, check_lang
from xattn.server.languages import negotiate
from xattn.ui.internals import in_page

__all__ = ["gettext", "N_", "ngettext", "translated", "page_lang", "setup", "language_picker",
           "catalog", "said_label", "lesson_says", "DOMAIN", "KEYWORDS"]

DOMAIN = "app"
# what `pybabel extract -k` is told (tests/test_languages.py extracts with them)
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2)}
_SESSION = "_xattn_lang"     # session: the page's language this run


@cache
def catalog(lang: str):
    """The Babel catalog of ``lang``'s page (its ``app.po``)."""
    with open(LOCALE_DIR / check_lang(lang) / "LC_MESSAGES" / f"{DOMAIN}.po", "rb") as f:
        return read_po(f, locale=lang)


@cache
def _table(lang: str) -> tuple[dict, object]:
    """``{msgid: text}`` (a plural message: ``{singular: forms}``) and the plural index."""
    cat = catalog(lang)
    texts = {}
    for m in cat:
        if m.id and m.pluralizable:
            texts[m.id[0]] = tuple(m.string)
        elif m.id and m.string:
            texts[m.id] = m.string
    return texts, c2py(cat.plural_expr)


def page_lang() -> str:
    """The page's language this run ("en" before `setup`, and outside a page)."""
    if not in_page():                   # no page: a bare import, a test
        return "en"
    return st.session_state.get(_SESSION) or "en"


def gettext(message: str, **names) -> str:
    """``message`` in the page's language, its ``{name}``s filled from ``names``; modules
    import it as ``_`` (``from xattn.ui.i18n import gettext as _``), gettext's name."""
    text = _table(page_lang())[0].get(message, message)
    return text.format(**names) if names else text


_ = gettext


def translated(message: str, lang: str) -> str:
    """``message`` in ``lang`` (whatever the page's language), itself where the catalog
    lacks it."""
    return _table(check_lang(lang))[0].get(message, message)


def said_label(a, layer: int) -> str:
    """What the weights ``a`` (``xattn.record.Attention``) are, in the page's language: its
    label's sentences (``a.said``, the ``lesson`` catalog's; else its English ``label``),
    plus which layer is shown when there are several (``Attention.describe``'s words)."""
    if a.said:
        from xattn.sources import said_text
        from xattn.words import speaking

        with speaking(page_lang()):
            label = " ".join(said_text(s) for s in a.said)
    else:
        label = a.label
    if a.n_layers == 1:
        return label
    return label + " " + _("Layer {layer} of {n}.", layer=layer + 1, n=a.n_layers)


def lesson_says(msgid: str, **values) -> str:
    """A message of the ``lesson`` catalog (``xattn.words``: a caveat, a label's sentence)
    in the page's language."""
    from xattn.words import say, speaking

    with speaking(page_lang()):
        return say(msgid, **values)


def N_(message: str) -> str:
    """``message`` itself: marked for the catalogs, translated where it is drawn (`_`)."""
    return message


def ngettext(singular: str, plural: str, n: int, **names) -> str:
    """The form of ``singular``/``plural`` for ``n`` in the page's language, ``{n}`` and
    ``names`` filled."""
    texts, index = _table(page_lang())
    forms = texts.get(singular)
    text = forms[index(n)] if forms else (singular if n == 1 else plural)
    return text.format(n=n, **names)


def browser_lang() -> str:
    """The browser's language (``st.context.locale``) if the page speaks it, else English
    (also under AppTest, whose locale is None unless a test sets it)."""
    locale = st.context.locale
    return negotiate(locale) if isinstance(locale, str) else "en"


def setup(state) -> str:
    """The page's language this run, first thing of the run: the link's or picker's
    ``lang``, else the browser's."""
    lang = state.value(LANG, LANGS, default=browser_lang())
    st.session_state[_SESSION] = lang
    return lang


def language_picker(where=None) -> None:
    """The page's language (the sidebar's *Display* section): kept in the link's ``lang``
    when it is not the browser's, so a reload or a shared link keeps it."""
    (where or st.sidebar).selectbox(
        _("Language of this page"), LANGS, key=LANG.key, format_func=NAMES.get,
        help=_("The projector shows this page in it. Each phone picks its own; a class's "
               "default for the phones is set in its class panel."))


_RTL = """<style>
[data-testid="stMain"], [data-testid="stSidebar"] { direction: rtl; }
[data-testid="stMain"] :is(.js-plotly-plot, .stPlotlyChart, svg, code, pre, .katex),
[data-testid="stSidebar"] :is(code, pre) { direction: ltr; unicode-bidi: isolate; }
[data-testid="stMain"] [data-testid="stHorizontalBlock"]:has(.stPlotlyChart),
[data-testid="stMain"] .xattn-ltr { direction: ltr; }
[data-testid="stMain"] :is(h1, h2, h3, p, li, input, textarea),
[data-testid="stSidebar"] :is(h1, h2, h3, p, li, input, textarea) {
  unicode-bidi: plaintext; text-align: start; }
</style>"""


def rtl_style() -> None:
    """Right to left for a right-to-left language (Arabic): the text and the widgets'
    order mirror; the charts, formulas and code stay left to right (a row of columns that
    holds a chart too: heads 1..h left to right, as the colour bar), and each paragraph or
    field takes the direction of its own first letter (a sentence typed or still in English
    reads left to right, its full stop at its end) (constant CSS)."""
    if page_lang() in RTL:
        st.html(_RTL)
