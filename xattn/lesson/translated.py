"""A lesson's texts in other languages: read from its file, or from the ``lesson`` catalogs.

A lesson is written in one language (its ``language`` key, default ``"en"``). Its file may
carry each step's words in other languages as a table named by the language under the step
(docs/lesson-files.md)::

    language = "en"
    [fr]                         # the lesson's own title and paragraph (optional)
    title = "L'attention croisée en cinq questions"

    [[step]]
    title = "One head"
    text = "..."
    [step.fr]
    title = "Une tête"           # any of: title, text, look, ask, prompt, explain, options
    text = "..."

A lesson written in English whose every text is a msgid of a language's ``lesson.po`` (the
shipped lessons) speaks that language from the catalog. `speaks` says whether a lesson has a
language; `words_in` gives the language a phone in ``lang`` is shown (the lesson's own when it
lacks ``lang``); `step_in` a room's step with its words in that language.
"""

from __future__ import annotations

from dataclasses import replace

from xattn.lesson._step import Step
from xattn.lesson.checks import checked_copy
from xattn.lesson.problems import checked_text, shown, unknown_keys
from xattn.words import LANGS, speaking, translated

__all__ = ["STEP_KEYS", "TOP_KEYS", "read_language", "read_texts", "speaks", "words_in",
           "step_in", "said_as", "labels_in", "texts_of"]

STEP_KEYS = ("title", "text", "look", "ask", "prompt", "explain", "options")
TOP_KEYS = ("title", "about")
MAX_TITLE = 120


def read_language(problems, data: dict) -> str:
    """A lesson file's ``language`` (default ``"en"``), one of ``LANGS``."""
    value = data.get("language", "en")
    if value not in LANGS:
        problems.add(-1, "", "language", f"expected one of {', '.join(LANGS)}, found "
                                         f"{shown(value)}")
        return "en"
    return value


def read_texts(problems, data: dict, raw_steps: list, steps: list[Step],
               language: str) -> dict:
    """The file's texts in other languages: ``{lang: {"title", "about", "steps": ({key:
    text}, one per file step)}}`` for each language the file carries, checked like the
    lesson's own texts (their length, their Markdown); a language table in the lesson's
    own language is a problem (one text per language)."""
    out: dict = {}
    for lang in LANGS:
        top = data.get(lang)
        tables = [s.get(lang) if isinstance(s, dict) else None for s in raw_steps]
        if top is None and all(t is None for t in tables):
            continue
        if lang == language:
            problems.add(-1, "", lang, f"expected texts in a language other than the "
                                       f"lesson's own ({language}); found [{lang}] tables")
            continue
        said = {"title": "", "about": "", "steps": []}
        if top is not None:
            if not isinstance(top, dict):
                problems.add(-1, "", lang, f"expected a [{lang}] table, found {shown(top)}")
            else:
                unknown_keys(problems, -1, lang, top, TOP_KEYS)
                said["title"] = checked_text(problems, -1, lang, "title", top.get("title"),
                                             most=MAX_TITLE, words=False)
                said["about"] = checked_text(problems, -1, lang, "about", top.get("about"))
        for k, table in enumerate(tables):
            said["steps"].append(_step_texts(problems, k, lang, table,
                                             steps[k] if k < len(steps) else None))
        out[lang] = said
    return out


def _step_texts(problems, k: int, lang: str, table, step: Step | None) -> dict:
    if table is None:
        return {}
    if not isinstance(table, dict):
        problems.add(k, "", lang, f"expected a [step.{lang}] table, found {shown(table)}")
        return {}
    unknown_keys(problems, k, lang, table, STEP_KEYS)
    said = {}
    for key in STEP_KEYS[:-1]:
        if key in table:
            text = checked_text(problems, k, lang, key, table[key],
                                most=MAX_TITLE if key == "title" else 3000 if key != "prompt"
                                else 300, words=key != "title")
            if text:
                said[key] = text
    if "options" in table:
        options = table["options"]
        own = step.ask.own if step is not None and step.ask is not None else None
        n = len(own.options) if own is not None else 0
        if not n or not isinstance(options, list) or len(options) != n or not all(
                isinstance(o, str) and 0 < len(o) <= 200 for o in options):
            problems.add(k, lang, "options", f"expected the step's {n} options in {lang} "
                         f"(texts of 1 to 200 characters), found {shown(options)}"
                         if n else "expected options only where the step's own question "
                         "has options")
        else:
            said["options"] = list(options)
    return said


def texts_of(lesson) -> list[str]:
    """Every text of ``lesson`` a phone or the projector shows (msgids of the catalogs for an
    English lesson): titles, paragraphs, things to look at, questions, own prompts, options
    and explanations of the lesson's own steps."""
    out = []
    for step in lesson.steps[len(lesson.check):len(lesson.steps) - len(lesson.check)]:
        out += [step.title, step.text, step.look, step.question]
        own = step.ask.own if step.ask is not None else None
        if own is not None:
            out += [own.prompt, own.explain, *own.options]
    return [t for t in out if t]


_SPEAKS: dict = {}


def speaks(lesson, lang: str) -> bool:
    """Whether ``lesson`` has its texts in ``lang``: its own language, a language its file
    carries, or (an English lesson) a language whose catalog has every one of its texts."""
    if lang == lesson.language or lang in lesson.texts:
        return True
    if lesson.language != "en" or lang not in LANGS:
        return False
    key = (lesson.digest, lang)
    if key not in _SPEAKS:
        if len(_SPEAKS) > 512:
            _SPEAKS.clear()
        _SPEAKS[key] = all(translated(t, lang) is not None for t in texts_of(lesson))
    return _SPEAKS[key]


def words_in(lesson, lang: str) -> str:
    """The language a phone in ``lang`` is shown ``lesson``'s words in: ``lang`` if the
    lesson speaks it, else the lesson's own."""
    return lang if lang in LANGS and speaks(lesson, lang) else lesson.language


def _said(lesson, k: int, key: str, text: str, lang: str) -> str:
    """One text of the lesson's own step ``k`` (from 0) in ``lang``: the file's, else the
    catalog's (an English lesson), else the lesson's own."""
    table = lesson.texts.get(lang, {}).get("steps", ())
    if k < len(table) and key in table[k]:
        return table[k][key]
    if lesson.language == "en" and text:
        return translated(text, lang) or text
    return text


def labels_in(lesson, n: int, lang: str) -> list[str] | None:
    """Room step ``n``'s own options as a phone in ``lang`` shows them (their values stay
    the lesson's own), or None when they are the same."""
    if lang == lesson.language:
        return None
    k = lesson.step_number(n) - 1
    step = lesson.steps[len(lesson.check) + k]
    own = step.ask.own if step.ask is not None else None
    if own is None or not own.options:
        return None
    table = lesson.texts.get(lang, {}).get("steps", ())
    if k < len(table) and "options" in table[k]:
        return list(table[k]["options"])
    if lesson.language == "en":
        shown_ = [translated(o, lang) or o for o in own.options]
        return None if shown_ == list(own.options) else shown_
    return None


def step_in(lesson, n: int, lang: str) -> Step:
    """Room step ``n`` (from 1, the checks' included) of ``lesson`` with its words in
    ``lang`` (`words_in` first: a language the lesson lacks keeps its own words)."""
    step = lesson.steps[n - 1]
    if lang == lesson.language or not speaks(lesson, lang):
        return step
    k = lesson.step_number(n) - 1
    base = lesson.steps[len(lesson.check) + k]
    said = {key: _said(lesson, k, key, getattr(base, attr), lang) for key, attr in
            (("title", "title"), ("text", "text"), ("look", "look"), ("ask", "question"))}
    ask = base.ask
    if ask is not None and ask.own is not None:
        own = ask.own
        ask = replace(ask, own=replace(own, prompt=_said(lesson, k, "prompt", own.prompt, lang),
                                       explain=_said(lesson, k, "explain", own.explain, lang)))
    out = replace(base, title=said["title"], text=said["text"], look=said["look"],
                  question=said["ask"], ask=ask)
    if step.check:
        with speaking(lang):
            out = checked_copy(out, step.of_step, step.check)
    return out


def said_as(lesson, step: Step, n: int, lang: str) -> Step:
    """``step``, room step ``n`` of ``lesson`` as a page shows it (on a follow-up's case, on
    the page's own settings), with the words of `step_in` in ``lang``: its title, paragraph,
    what to look at, question and own prompt and explanation; its settings, arguments,
    options (the values a prediction sends) and case stay its own. The lecturer's page
    (``xattn.ui.lesson.words``)."""
    said = step_in(lesson, n, lang)
    if said is lesson.steps[n - 1]:
        return step
    ask = step.ask
    if ask is not None and ask.own is not None and said.ask is not None \
            and said.ask.own is not None:
        ask = replace(ask, own=replace(ask.own, prompt=said.ask.own.prompt,
                                       explain=said.ask.own.explain))
    return replace(step, title=said.title, text=said.text, look=said.look,
                   question=said.question, ask=ask)
