"""A lesson as a file: a title, then steps, each with its page, its words and its question.

A lecturer writes a lesson in TOML (docs/lesson-files.md has a complete example):

.. code-block:: toml

    title = "Cross-attention in five questions"
    minutes = 50

    [[step]]
    title = "One head"
    text = "Each **row** is a target token; each column a source token."
    look = "The row of «target»."
    ask = "Which source word does «target» look at most?"
    [step.page]                 # the prepared page: the link's settings, the rest default
    heads = 1
    src = "the black cat sat on the mat"
    [step.question]             # a computed question, with its arguments ...
    computed = "strongest_source"
    target = "chat"

A step's question is a built-in computed question (``xattn.lesson.computed``), or the
lecturer's own (``kind = "choice"`` with ``options`` and ``answer``; ``"poll"``, options and no
answer; ``"number"`` with ``low``, ``high`` and ``answer``), or none (a step the class reads).
`read_lesson` checks everything before a class starts and raises `LessonError` holding one
line per problem: its line in the file, what was expected and what was found. A checked
lesson travels as canonical JSON (`Lesson.to_json`, what a room keeps in the class store) and
comes back with `Lesson.from_json`.

The words a lesson says (``text``, ``look``, ``ask``, ``explain``, ``prompt``, ``about``) are
Markdown of the lesson's own small kind (``xattn.markup``): bold, italics, code spans, ``$``
formulas, lists and tables. Links, images and HTML are refused (a projector shows the page and
a link on it is a link given to the class). Everything the class types or taps is shown as the
characters it is, everywhere.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field

from xattn.classroom.kinds import KINDS, own_kinds
from xattn.classroom.own import KeyRefused
from xattn.lesson._budget import check_budget
from xattn.lesson._step import Ask, Own, Step
from xattn.lesson.charts import CHARTS
from xattn.lesson.checks import MAX_CHECK, check_steps, with_checks
from xattn.lesson.computed import COMPUTED
from xattn.lesson.problems import (
    Problems,
    Where,
    checked_text,
    shown,
    toml_problem,
    unknown_keys,
)
from xattn.lesson.translated import read_language, read_texts
from xattn.words import LANGS, speaking

__all__ = ["Lesson", "LessonError", "read_lesson", "MAX_LESSON_BYTES", "MAX_STEPS",
           "MAX_CHECK", "MAX_ROOM_STEPS"]

MAX_LESSON_BYTES = 65_536    # a lesson file (and its JSON), checked before it is parsed
MAX_STEPS = 16               # steps of a lesson file (a room holds one question a step)
MAX_ROOM_STEPS = MAX_STEPS + 2 * MAX_CHECK   # a lesson's steps, its checks included
MAX_TITLE = 120
_WORDS = ("text", "look", "ask")
_STEP_KEYS = ("title", *_WORDS, "chart", "page", "question", *LANGS)   # [step.fr]: its words
_OWN_KEYS = ("kind", "prompt", "explain", "head", "layer")   # and the kind's own (Kind.own)
_TOP_KEYS = ("title", "minutes", "about", "check", "step", "format", "language", *LANGS)


class LessonError(ValueError):
    """A lesson that cannot run: ``problems`` holds one line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        shown = self.problems[:20] + ([f"... and {len(self.problems) - 20} more"]
                                      if len(self.problems) > 20 else [])
        super().__init__("the lesson cannot run:\n" + "\n".join(shown))


@dataclass(frozen=True, eq=False)
class Lesson:
    """A checked lesson: its name (a file's stem), title, steps, length in minutes (0: not
    said), one paragraph about it, and its canonical JSON."""

    name: str
    title: str
    steps: tuple[Step, ...]
    minutes: int = 0
    about: str = ""
    data: str = ""
    check: tuple[int, ...] = ()     # the lesson's steps its pre/post check asks again
    language: str = "en"            # the language of its texts (``xattn.words``)
    texts: dict = field(default_factory=dict)   # lang -> its texts in lang (translated.py)

    def step_number(self, n: int) -> int:
        """Room step ``n`` (from 1, the checks' steps included) as the lesson's own step."""
        step = self.steps[n - 1]
        return step.of_step if step.check else n - len(self.check)

    def checks(self) -> list[tuple[int, int]]:
        """Each checked question as (its room step before, its room step after)."""
        k, n = len(self.check), len(self.steps)
        return [(i + 1, n - k + i + 1) for i in range(k)]

    @property
    def digest(self) -> str:
        """The first 16 hex digits of the SHA-256 of its JSON: the same lesson, the same
        digest, in every process."""
        return hashlib.sha256(self.data.encode()).hexdigest()[:16]

    def to_json(self) -> str:
        return self.data

    @classmethod
    def from_json(cls, text: str, *, page: Callable | None = None) -> Lesson:
        """A lesson from its JSON (`to_json`), checked again; `LessonError` if it fails."""
        if not isinstance(text, str) or len(text.encode()) > MAX_LESSON_BYTES:
            raise LessonError([f"a lesson's JSON is text of at most {MAX_LESSON_BYTES:,} bytes; "
                               f"found {type(text).__name__} of {len(str(text)):,} characters"])
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise LessonError([f"the lesson's JSON is not valid: {err}"]) from None
        name = data.pop("name", "lesson") if isinstance(data, dict) else "lesson"
        return _build(data, str(name), Where({}), page)

    def __repr__(self) -> str:
        return f"Lesson({self.name!r}, {len(self.steps)} steps)"


def read_lesson(text: str | bytes, name: str = "lesson", *,
                page: Callable | None = None) -> Lesson:
    """The lesson a TOML file holds, checked; `LessonError` naming every problem.

    Parameters
    ----------
    text : str or bytes
        The file's contents (UTF-8), at most `MAX_LESSON_BYTES`.
    name : str
        What the lesson is called on the server (its file's stem).
    page : callable (key, value) -> value, optional
        Checks one setting of a step's page and returns it as the page holds it, or raises
        ValueError saying what it expects (the page's own table of settings:
        ``xattn.live.link.lesson_setting``); None takes any text, number, true/false or list of
        texts (a notebook's check).

    Examples
    --------
    >>> lesson = read_lesson('title = "Mine"\\n[[step]]\\ntitle = "One head"\\n'
    ...                      '[step.question]\\ncomputed = "strongest_source"\\n')
    >>> lesson.title, lesson.steps[0].ask.computed
    ('Mine', 'strongest_source')
    >>> read_lesson('title = "Mine"\\n[[step]]\\ntitle = 3\\n')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    xattn.lesson.lessonfile.LessonError: the lesson cannot run:
    line 3: step 1, `title`: expected text, found 3
    """
    if isinstance(text, bytes):
        if len(text) > MAX_LESSON_BYTES:
            raise LessonError([f"a lesson file holds at most {MAX_LESSON_BYTES:,} bytes; this "
                               f"one has {len(text):,}"])
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise LessonError([f"a lesson file is UTF-8 text; byte {err.start} is not"]) from None
    if not isinstance(text, str):
        raise TypeError(f"read_lesson takes the file's text (str or bytes); received "
                        f"{type(text).__name__}.")
    if len(text.encode()) > MAX_LESSON_BYTES:
        raise LessonError([f"a lesson file holds at most {MAX_LESSON_BYTES:,} bytes; this one "
                           f"has {len(text.encode()):,}"])
    over = check_budget(text, MAX_STEPS)        # before tomllib: its costly shapes
    if over is not None:
        raise LessonError([over])
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise LessonError([toml_problem(str(err))]) from None
    return _build(data, name, Where.of(text), page)


def _build(data: dict, name: str, where: Where, page) -> Lesson:
    problems = Problems(where)
    if not isinstance(data, dict):
        raise LessonError([f"a lesson is a table with a title and steps; found {shown(data)}"])
    unknown_keys(problems, -1, "", data, _TOP_KEYS)
    title = checked_text(problems, -1, "", "title", data.get("title"), most=MAX_TITLE, words=False,
                  required=True)
    minutes = data.get("minutes", 0)
    if isinstance(minutes, bool) or not isinstance(minutes, int) or not 0 <= minutes <= 600:
        problems.add(-1, "", "minutes", f"expected a whole number of minutes from 1 to 600, "
                                        f"found {shown(minutes)}")
        minutes = 0
    about = checked_text(problems, -1, "", "about", data.get("about"))
    raw = data.get("step")
    if not isinstance(raw, list) or not raw or not all(isinstance(s, dict) for s in raw):
        problems.add(-1, "", "step", "expected one or more [[step]] tables, found "
                     + (shown(raw) if raw is not None else "none"))
        raw = []
    if len(raw) > MAX_STEPS:
        problems.add(-1, "", None, f"expected at most {MAX_STEPS} steps (a room asks one "
                                   f"question a step), found {len(raw)}")
        raw = raw[:MAX_STEPS]
    steps = [_step(problems, k, s, page) for k, s in enumerate(raw)]
    check = check_steps(problems, data.get("check", []), steps)
    language = read_language(problems, data)
    texts = read_texts(problems, data, raw, steps, language)
    if problems.found:
        raise LessonError(problems.found)
    canonical = {"format": 1, "name": name, "title": title, "minutes": minutes, "about": about,
                 "check": list(check), "step": [_data(s) for s in steps]}
    if language != "en":
        canonical["language"] = language
    for lang, said in texts.items():           # each language's texts where the file had them
        if said["title"] or said["about"]:
            canonical[lang] = {k: said[k] for k in ("title", "about") if said[k]}
        for k, table in enumerate(said["steps"]):
            if table:
                canonical["step"][k][lang] = table
    with speaking(language):                   # the checks' own words in the lesson's
        asked = with_checks(steps, check)
    return Lesson(name, title, asked, minutes, about,
                  json.dumps(canonical, ensure_ascii=False, separators=(",", ":"),
                             sort_keys=True), check, language, texts)


def _step(problems, k: int, data: dict, page) -> Step:
    unknown_keys(problems, k, "", data, _STEP_KEYS)
    title = checked_text(problems, k, "", "title", data.get("title"), most=MAX_TITLE, words=False,
                  required=True)
    text, look, ask = (checked_text(problems, k, "", key, data.get(key)) for key in _WORDS)
    chart = data.get("chart", "")
    if chart and chart not in CHARTS:
        problems.add(k, "", "chart", f"expected one of {', '.join(CHARTS)}, found "
                                     f"{shown(chart)}")
        chart = ""
    state = _page(problems, k, data.get("page", {}), page)
    question = data.get("question")
    if question is None:
        asked = None
    elif not isinstance(question, dict):
        problems.add(k, "", "question", f"expected a [step.question] table, found "
                                        f"{shown(question)}")
        asked = None
    elif "computed" in question:
        asked = _computed(problems, k, question, state)
    elif "kind" in question:
        asked = _own(problems, k, question)
    else:
        problems.add(k, "question", None, "expected `computed = ...` (one of "
                     + ", ".join(COMPUTED) + ") or `kind = ...` (one of "
                     + ", ".join(own_kinds()) + "), found neither")
        asked = None
    return Step(title, state, text, look, ask, asked, chart or "",
                problems.where.line(k))


def _page(problems, k: int, data, check) -> dict:
    if not isinstance(data, dict):
        problems.add(k, "", "page", f"expected a [step.page] table of settings, found "
                                    f"{shown(data)}")
        return {}
    state = {}
    for key, value in data.items():
        try:
            state[key] = check(key, value) if check is not None else _plain(value)
        except (ValueError, TypeError) as err:
            problems.add(k, "page", key, str(err))
    return state


def _plain(value):
    """A setting as a notebook takes it: text, a number, true/false, or a list of texts."""
    if isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ValueError(f"expected text, a number, true or false, or a list of texts; found "
                     f"{shown(value)}")


def _computed(problems, k: int, data: dict, state: dict) -> Ask | None:
    name = data.get("computed")
    if name not in COMPUTED:
        problems.add(k, "question", "computed", "expected one of " + ", ".join(COMPUTED)
                     + f", found {shown(name)}")
        return None
    spec = COMPUTED[name]
    unknown_keys(problems, k, "question", data, ("computed", *spec.args))
    if spec.media:
        _media_page(problems, k, name, spec.media, state)
    args = {}
    for arg, a in spec.args.items():
        value = data.get(arg, state.get(a.page, a.default) if a.page else a.default)
        if a.kind is str:
            ok = isinstance(value, str) and 0 < len(value) <= 200 and (
                not a.choices or value in a.choices)
            want = ("one of " + ", ".join(a.choices)) if a.choices else "a word"
        else:
            ok = (not isinstance(value, bool) and isinstance(value, (int, float) if a.kind is
                                                             float else int)
                  and (a.minimum is None or value >= a.minimum))
            want = ("a whole number" if a.kind is int else "a number") + (
                f" from {a.minimum:g}" if a.minimum is not None else "")
        if not ok:
            problems.add(k, "question", arg, f"expected {want} ({a.about}), found "
                                             f"{shown(value)}")
            continue
        args[arg] = a.kind(value)
    return Ask(name, tuple(sorted(args.items())))


_WHAT = {"image": "an image", "audio": "a speech"}


def _media_page(problems, k: int, name: str, kind: str, state: dict) -> None:
    """A question on an image or a clip asks a page of such a model: ``weights = "model"``
    and a ``model`` that is a speech or image folder here (its input: the built-in
    example)."""
    from xattn.media import media_kind

    model = state.get("model")
    what = _WHAT[kind] + " (VisionEncoderDecoder)" if kind == "image" else \
        _WHAT[kind] + " (Whisper)"
    if state.get("weights") != "model" or not isinstance(model, str):
        problems.add(k, "page", "model", f"expected weights = \"model\" and model = {what} "
                                         f"folder on the server's list (question {name} asks "
                                         f"about it), found weights {shown(state.get('weights'))}"
                                         f" and model {shown(model)}")
        return
    found = media_kind(model)
    if found is not None and found != kind:
        problems.add(k, "page", "model", f"expected {what} folder (question {name} asks about "
                                         f"it), found {shown(model)}: {_WHAT[found]} model")


def _own(problems, k: int, data: dict) -> Ask | None:
    """A lecturer's own question: the keys every one takes, then its kind's own
    (``xattn.classroom.own``: ``Kind.own`` reads them)."""
    kind, names = KINDS.get(data.get("kind")) if isinstance(data.get("kind"), str) else None, \
        own_kinds()
    if kind is None or kind.own is None:
        problems.add(k, "question", "kind", f"expected one of {', '.join(names)}, found "
                                            f"{shown(data.get('kind'))}")
        return None
    unknown_keys(problems, k, "question", data, (*_OWN_KEYS, *kind.own.keys))
    before = len(problems.found)
    prompt = checked_text(problems, k, "question", "prompt", data.get("prompt"), most=300,
                   required=True)
    explain = checked_text(problems, k, "question", "explain", data.get("explain"))
    fields = {"head": 1, "layer": 0}
    for key, least in (("head", 1), ("layer", 1)):
        value = data.get(key, fields[key])
        if key in data and (isinstance(value, bool) or not isinstance(value, int)
                            or value < least):
            problems.add(k, "question", key, f"expected a whole number from {least}, found "
                                             f"{shown(value)}")
        else:
            fields[key] = value
    try:
        own = Own(kind.name, prompt, explain=explain, **kind.own.parse(kind, data), **fields)
        own.question()                    # what the kind's Question takes (a new kind's too)
    except KeyRefused as e:
        problems.add(k, "question", e.key, e.why)
        return None
    except (ValueError, TypeError) as e:
        problems.add(k, "question", "low" if kind.number else "options",
                     f"expected what a {kind.name} question takes ({e})")
        return None
    return Ask(own=own) if len(problems.found) == before else None


def _data(step: Step) -> dict:
    """A checked step as canonical data (what `Lesson.to_json` holds)."""
    out = {"title": step.title, "text": step.text, "look": step.look, "ask": step.question,
           "page": {k: list(v) if isinstance(v, tuple) else v for k, v in step.state.items()}}
    if step.chart:
        out["chart"] = step.chart
    if step.ask is not None and step.ask.own is not None:
        o = step.ask.own
        q = {"kind": o.kind, "prompt": o.prompt, "explain": o.explain, "head": o.head}
        if o.layer:
            q["layer"] = o.layer
        q.update(KINDS[o.kind].own.write(o))          # the kind's own keys
        out["question"] = q
    elif step.ask is not None:
        out["question"] = {"computed": step.ask.computed, **dict(step.ask.args)}
    return out
