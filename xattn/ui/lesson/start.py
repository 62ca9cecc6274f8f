"""Choosing the lesson: the page's lesson outside a class, and the lesson a new class teaches.

Outside a class the Lesson view teaches one of the server's lessons (``course=NAME`` in the
link, the default lesson without it), picked above its steps. *Start a class* (sidebar) starts
a room with that lesson, or with a lesson file the lecturer uploads there: the file is checked
at once, each problem on its own line (its line in the file, what was expected and what was
found), and a class starts only with a lesson whose every step can be made on this server.
``?class=new&course=NAME`` starts one from a link; ``homework=DAYS`` (1 to 30) makes it a
homework open that many days instead of a live class.
"""

from __future__ import annotations

import streamlit as st

from xattn.lesson import Lesson, LessonError, read_lesson
from xattn.lesson.translated import words_in
from xattn.literal import md_code, show_value
from xattn.live.catalog import broken_lessons, default_lesson, lesson_named, server_lessons
from xattn.live.link import CLASS, COURSE, HOMEWORK, LESSON, MAX_HOMEWORK_DAYS, ROOM, lesson_setting
from xattn.live.prepared import StepUnavailable, lesson_questions
from xattn.ui.i18n import N_, ngettext, page_lang
from xattn.ui.i18n import gettext as _
from xattn.ui.room.language import start_choice
from xattn.ui.state import Notice, PageState
from xattn.ui.weights.progress import page_shown
from xattn.words import translated

__all__ = ["page_lesson", "lesson_picker", "start_panel", "new_class", "lms_export",
           "UPLOADED"]

UPLOADED = "_xattn_uploaded_lesson"   # session: the lecturer's checked upload (a Lesson)
MODES = {"live": N_("in class, live"), "homework": N_("as homework, each at their own pace")}
_UPLOAD_KEY = "lesson_upload"


def page_lesson(state: PageState) -> Lesson:
    """The lesson this page teaches outside a class: the link's ``course`` (one of the
    server's lessons), else the default; a name the server does not have is said."""
    others = [k for k, v in server_lessons().items() if v is not default_lesson()]
    if state.forced.get(COURSE.key) == default_lesson().name:
        state.forced[COURSE.key] = ""                    # the default, by its name
    name = state.value(COURSE, ["", *others], closest=lambda _: "",
                       why="(not one of this server's lessons: "
                           + ", ".join(md_code(n) for n in [default_lesson().name, *others])
                           + ")")
    return lesson_named(name) or default_lesson()


def _title(lesson: Lesson) -> str:
    """The lesson's title in the page's language where the lesson has it, its length."""
    lang = words_in(lesson, page_lang())
    title = (lesson.texts.get(lang, {}).get("title")
             or (translated(lesson.title, lang) if lesson.language == "en" else None)
             or lesson.title)
    n = len(lesson.steps)
    if lesson.minutes:
        return ngettext("{title} ({n} step, {minutes} min)", "{title} ({n} steps, {minutes} min)",
                        n, title=title, minutes=lesson.minutes)
    return ngettext("{title} ({n} step)", "{title} ({n} steps)", n, title=title)


def _picked() -> None:
    st.session_state[LESSON.key] = 1             # another lesson opens at its first step


def lesson_picker(state: PageState, lesson: Lesson) -> None:
    """Above the steps outside a class: which of the server's lessons the page teaches."""
    lessons, broken = server_lessons(), broken_lessons()
    if broken:
        with st.expander(_("Lessons not available on this server ({n})", n=len(broken))):
            for name, why in broken.items():
                st.markdown(f"- {md_code(name)}: {md_code(why)}")
    if len(lessons) < 2:
        return
    names = {"": _title(default_lesson()),
             **{k: _title(v) for k, v in lessons.items() if v is not default_lesson()}}
    st.selectbox(_("Lesson"), list(names), key=COURSE.key, format_func=names.get,
                 on_change=_picked, help=_("The server's lessons: the shipped ones and the "
                                           "deployer's (docs/lesson-files.md)."))


def lms_export(lesson: Lesson) -> None:
    """The lesson's questions with their computed answers as Moodle XML (made on a press: it
    computes every step's weights)."""
    with st.popover(_("Export the questions for Moodle"), icon=":material/download:"):
        st.caption(_("Every question of this lesson with the answer computed from its step's "
                     "own weights, as Moodle XML (multiple choice, numerical, matching); polls "
                     "have no right answer and are left out."))
        key = f"_xattn_lms_{lesson.digest}"
        if st.button(_("Make the file"), key="lms_make"):
            try:
                st.session_state[key] = _moodle(lesson)
            except StepUnavailable as err:
                st.error(_("A step cannot be made here: {why}", why=md_code(str(err))),
                         icon=":material/error:")
        if key in st.session_state:
            st.download_button(_("The questions (Moodle XML)"), st.session_state[key],
                               f"xattn-{lesson.name}-moodle.xml", "application/xml",
                               key="lms_download", on_click="ignore")


def _moodle(lesson: Lesson) -> str:
    from xattn.lesson.lms import moodle_xml, step_item
    from xattn.live.answers import class_step

    items = [step_item(n, step, *reversed(class_step(lesson, n)))
             for n, step in enumerate(lesson.steps, 1)]
    return moodle_xml(lesson.title, items)


def _checked_upload() -> Lesson | list[str] | None:
    upload = st.session_state.get(_UPLOAD_KEY)
    if upload is None:
        st.session_state.pop(UPLOADED, None)
        return None
    held = st.session_state.get(UPLOADED)
    if held is not None and held[0] == upload.file_id:
        return held[1]
    name = upload.name.rsplit(".", 1)[0][:60] or "lesson"
    try:
        found = read_lesson(upload.getvalue(), name, page=lesson_setting)
    except LessonError as err:
        found = err.problems
    st.session_state[UPLOADED] = (upload.file_id, found)
    return found


def start_panel(lesson: Lesson, where=None) -> None:
    """*Start a class* (``where``: a container at the top of the sidebar, so that the button
    is not a screen and a half down it; the sidebar itself by default): the page's lesson or
    an uploaded lesson file (folded), then the button that starts a room with it (this
    session its host)."""
    if st.session_state.get(ROOM.key):
        return
    sb = where if where is not None else st.sidebar
    sb.header(_("A class"))
    own = sb.expander(_("Your own lesson (a .toml file)"),
                      expanded=st.session_state.get(_UPLOAD_KEY) is not None)
    own.file_uploader(_("Your own lesson (a .toml file)"), type=["toml"], key=_UPLOAD_KEY,
                      max_upload_size=1,
                      help=_("A lesson file: a title, then steps, each with its page, its "
                             "words and its question (docs/lesson-files.md). Checked here at "
                             "once."))
    found = _checked_upload()
    if isinstance(found, list):
        sb.error(_("This lesson file cannot run:") + "\n\n" + "\n".join(
            f"- {md_code(p)}" for p in found[:20]), icon=":material/error:")
        return
    if found is not None:
        sb.success(ngettext("{title}: {n} step, checked.", "{title}: {n} steps, checked.",
                            len(found.steps), title=show_value(found.title, 80)),
                   icon=":material/check:")
    teaching = found or lesson
    mode = sb.radio(_("The class answers"), ("live", "homework"), key="class_mode",
                    format_func={m: _(text) for m, text in MODES.items()}.get,
                    help=_("Live: you move the class step by step and reveal each answer. "
                           "Homework: each student walks the steps at their own pace, on any "
                           "day until it closes, and sees each step's answer after their "
                           "own."))
    phones = sb.expander(_("The phones' language"), key="fold_class_lang", on_change="rerun")
    if phones.open:           # drawn when opened: a first visit loads no selectbox
        start_choice(phones)
    days = sb.number_input(_("Open for (days)"), 1, MAX_HOMEWORK_DAYS, 7, key="homework_days",
                           help=_("Students answer until then; you read the answers for 14 "
                                  "days after it closes. You can close it sooner or extend "
                                  "it.")) if mode == "homework" else 0
    if sb.button(_("Start a class") if mode == "live" else _("Start a homework"),
                 key="start_class", icon=":material/groups:",
                 help=_("With the lesson {title}. Students join with a code or a QR code and "
                        "predict each step's answer on their phones, then see the numbers.",
                        title=repr(teaching.title))):
        st.query_params.clear()
        st.query_params[CLASS.key] = "new"
        if days:
            st.query_params[HOMEWORK.key] = str(int(days))
        if found is None and lesson is not default_lesson():
            st.query_params[COURSE.key] = lesson.name
        st.session_state.pop("_xattn_seen", None)   # the link is read again: class=new
        st.rerun()


def new_class(state: PageState, linked: str = "") -> tuple[Lesson, list, list[str]]:
    """What a new room teaches (the session's checked upload, else the link's ``course``)
    and asks: the lesson, its questions, and one line for each step that cannot run here."""
    held = st.session_state.get(UPLOADED)
    if held is not None and isinstance(held[1], Lesson):
        lesson = held[1]
    else:
        lesson = lesson_named(linked) or default_lesson()
        if linked and lesson_named(linked) is None:
            state.notices.append(Notice("link", f"This server has no lesson "
                                        f"{md_code(linked)}; the class teaches "
                                        f"{md_code(lesson.title)}."))
    broken = broken_lessons()
    if linked in broken:
        return lesson, [], [f"The lesson file {md_code(linked)} cannot run: "
                            f"{md_code(broken[linked])}"]
    slot = st.empty()            # loading a model or training draws here: cleared after
    with slot.container(), st.spinner(_("Starting the class…")):
        questions, problems = lesson_questions(lesson, page_shown())
    slot.empty()
    return lesson, questions, problems
