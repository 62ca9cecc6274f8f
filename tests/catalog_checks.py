"""One check for a gettext catalog against the messages the code says (the app's, the
charts'): none missing, none unused, each plural where the code says a plural, none
untranslated, and the catalog's plural rule Babel's for its language."""

from __future__ import annotations

from babel.messages.plurals import get_plural


def check_catalog(lang: str, catalog, wanted: dict, at_least: int, plural) -> None:
    """``wanted``: msgid (a plural's singular) -> what the code says; ``plural(value)``
    whether that is a plural message; ``at_least`` guards against finding only a few."""
    held = {(m.id[0] if m.pluralizable else m.id): m for m in catalog if m.id}
    assert len(wanted) >= at_least
    missing, unused = set(wanted) - set(held), set(held) - set(wanted)
    assert not missing and not unused, f"{lang}: missing {sorted(missing)}, unused {sorted(unused)}"
    for key, m in held.items():
        assert m.pluralizable == plural(wanted[key]), (lang, key)
        forms = m.string if m.pluralizable else (m.string,)
        assert all(forms), f"{lang}: untranslated {key!r}"
    assert catalog.plural_forms == get_plural(lang).plural_forms


def check_names(lang: str, catalog, names_of) -> None:
    """Each translation keeps its English's ``{name}``s (``names_of(text)``); a plural form
    may drop ``{n}`` (a form may say the number in words: Arabic's "two")."""
    for m in catalog:
        if not m.id:
            continue
        if m.pluralizable:
            names = names_of(m.id[0]) | names_of(m.id[1])
            for t in m.string:
                assert names - {"n"} <= names_of(t) <= names, (lang, m.id, t)
        else:
            assert names_of(m.string) == names_of(m.id), (lang, m.id, m.string)
