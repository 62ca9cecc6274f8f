"""The ``lesson`` catalogs' msgids, found in the code and the shipped lessons, and the
catalogs brought up to date with them (``python -m devtools.lesson_catalog``).

The msgids are every literal ``say("...")`` / ``say_n("...", "...", n)`` of the lesson's
Python (Babel's extractor over `SOURCES`) and every text of the shipped lessons
(``xattn/lesson/lessons/*.toml``: ``xattn.lesson.translated.texts_of``, and each English
lesson's title). Updating keeps each
translation, adds a new msgid untranslated (English: the msgid itself) and drops an unused
one; ``tests/test_lesson_languages.py`` fails on either, so a catalog never drifts.
"""

from __future__ import annotations

from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir, extract_from_file
from babel.messages.pofile import read_po, write_po

from xattn.words import DOMAIN, LANGS, LOCALE_DIR

__all__ = ["SOURCES", "code_msgids", "lesson_msgids", "msgids", "update"]

ROOT = Path(__file__).resolve().parent.parent
SOURCES = ("xattn/lesson", "xattn/live", "xattn/classroom", "xattn/sources.py",  # said there
           "xattn/media.py", "xattn/media_models.py")
KEYWORDS = {"say": (1,), "say_n": (1, 2), "N_": (1,)}
HEADER = ("The lesson's words in {lang}: msgid = the English text (xattn/words.py, "
          "docs/languages.md). Made by python -m devtools.lesson_catalog; translations by hand.")


def code_msgids() -> set:
    """Every ``say`` / ``say_n`` literal of `SOURCES`: a str, or (singular, plural)."""
    found = set()
    for where in SOURCES:
        path = ROOT / where
        if path.is_dir():
            found.update(m[2] for m in extract_from_dir(path, [("**.py", "python")],
                                                         keywords=KEYWORDS))
        else:
            found.update(m[1] for m in extract_from_file("python", path, keywords=KEYWORDS))
    return found


def lesson_msgids() -> set[str]:
    """Every text of the shipped lessons, and the title of each English one (the lesson
    picker's; a lesson file's ``[fr] title`` still wins)."""
    from xattn.lesson import shipped_lessons
    from xattn.lesson.translated import texts_of

    lessons = shipped_lessons().values()
    return ({t for lesson in lessons for t in texts_of(lesson)}
            | {lesson.title for lesson in lessons if lesson.language == "en"})


def msgids() -> set:
    return code_msgids() | lesson_msgids()


def _path(lang: str) -> Path:
    return LOCALE_DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.po"


def update(lang: str, wanted: set | None = None) -> tuple[int, int]:
    """Bring ``lang``'s catalog to exactly ``wanted`` (default `msgids`), keeping every
    translation it had: (added, dropped)."""
    wanted = msgids() if wanted is None else wanted
    old = read_po(open(_path(lang), "rb"), locale=lang) if _path(lang).exists() else None
    had = {m.id: m.string for m in old if m.id} if old is not None else {}
    cat = Catalog(locale=lang, domain=DOMAIN, project="xattn lesson", version="1",
                  header_comment="# " + HEADER.format(lang=lang), fuzzy=False)
    for msgid in sorted(wanted, key=lambda m: m if isinstance(m, str) else m[0]):
        if lang == "en":
            string = msgid if isinstance(msgid, str) else tuple(msgid)
        else:
            string = had.get(msgid, "" if isinstance(msgid, str) else ("",) * cat.num_plurals)
        cat.add(msgid, string)
    with open(_path(lang), "wb") as f:
        write_po(f, cat, width=100, omit_header=False, sort_output=False)
    return len(set(wanted) - set(had)), len(set(had) - set(wanted))


if __name__ == "__main__":
    for lang in LANGS:
        added, dropped = update(lang)
        print(f"{lang}: added {added}, dropped {dropped}")
