"""Lessons as files on the page: a lecturer's own lesson uploaded at *Start a class* runs a room
end to end (their sentences, their order, a question of their own, a poll) on the lecturer's
page and every phone; the server's lessons by name; a file that cannot run says why, line by
line, and starts nothing."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from apptest_helpers import decode, heatmaps
from phone_helpers import Phone
from test_app_room import class_file, count, page  # noqa: F401 (class_file: autouse)
from test_lessonfile import docs_example

from xattn.live.stores import class_store

pytestmark = pytest.mark.usefixtures("fresh_cache")


def upload(at, name: str, text: str):
    at.file_uploader(key="lesson_upload").set_value((name, text.encode(), "text/plain")).run()
    assert not at.exception, at.exception
    return at


def said(at) -> str:
    return " ".join(e.value for e in (*at.markdown, *at.caption, *at.info, *at.success,
                                      *at.warning, *at.error))


def test_a_lecturers_own_lesson_runs_a_room_end_to_end():
    host = upload(page(), "seminar.toml", docs_example())
    assert "`Attention in my seminar`: 4 steps, checked." in said(host)
    host.button(key="start_class").click().run()
    assert not host.exception, host.exception
    code = host.session_state["room"]
    key = host.session_state["_xattn_host_keys"][code]
    assert "Step 1 of 4: One head on our sentence" in said(host)
    phones = [Phone(code) for _ in range(3)]
    m = phones[0].message()["room"]
    # the lecturer's sentences, asked alike on the projector and on every phone
    assert m["n_steps"] == 4 and m["title"] == "One head on our sentence"
    assert "<code>homme</code>" in m["question"] and "head 2" in m["question"]
    assert m["ask"]["choices"] == ["the (0)", "old", "man", "reads", "the (4)", "paper"]
    assert "`homme`" in said(host) and "head 2" in said(host)
    # step 2: the lecturer's own question, their options, their right answer
    host.button(key="class_next").click().run()
    m = phones[0].message()["room"]
    assert m["ask"]["kind"] == "choice" and m["ask"]["choices"][0].startswith("The softmax")
    right, wrong = m["ask"]["choices"][0], m["ask"]["choices"][1]
    for p, pick in zip(phones, (right, right, wrong), strict=True):
        p.answer(pick)
    assert count(host) == "3 of 3 answered"
    host.button(key="reveal").click().run()
    verdicts = [p.message()["me"]["verdict"] for p in phones]
    assert verdicts[0].startswith("<p><strong>Right</strong>") and "Not this time" in verdicts[2]
    answer = phones[0].message()["room"]["answer"]
    assert "The answer: <code>The softmax divides by the row" in answer["text"]
    # step 4: a poll: no right answer, no verdict of right or wrong, nothing outlined
    store = class_store()
    store.set_step(code, key, 4)
    host.run()
    m = phones[0].message()["room"]
    assert m["ask"]["kind"] == "poll" and m["ask"]["control"] == "pills"
    for p, pick in zip(phones, ("Yes, mostly", "Not at all", "Not at all"), strict=True):
        p.answer(pick)
    host.run()
    host.button(key="reveal").click().run()
    me = phones[1].message()
    assert "no right answer" in me["me"]["verdict"] and "Right" not in me["me"]["verdict"]
    bars = me["room"]["answer"]["charts"][0]
    assert bars["panels"][0]["series"][0]["y"] == [1.0, 0.0, 2.0]
    assert not any("right" in t for t in bars["panels"][0]["series"][0]["text"])
    assert "outlined" not in bars["alt"]
    rows = list(csv.reader(io.StringIO(_csv(code, key))))
    assert [r[:6] for r in rows if r[0] == "4"] == [
        ["4", "1", "poll", "0", "Yes, mostly", "1"], ["4", "1", "poll", "1", "Some of them", "0"],
        ["4", "1", "poll", "2", "Not at all", "2"]]


def _csv(code: str, key: str) -> str:
    from xattn.classroom import answers_csv

    return answers_csv(class_store().results(code, key))


def test_a_lesson_file_that_cannot_run_says_why_line_by_line_and_starts_nothing():
    text = docs_example().replace("heads = 2\nseed = 7", "heads = 3\nseed = 7", 1) \
        .replace('answer = "The softmax divides by the row\'s total"', 'answer = "Magic"')
    host = upload(page(), "broken.toml", text)
    errors = " ".join(e.value for e in host.error)
    assert "This lesson file cannot run" in errors
    assert "step 1, `page.heads`: expected the number of heads among" not in errors  # random
    assert "step 1, `page.heads`" not in errors or "divide" in errors
    assert "step 2, `question.answer`: expected one of the options, found 'Magic'" in errors
    assert not _has(host, "start_class")              # nothing to start until it is mended


def _has(at, key: str) -> bool:
    try:
        at.button(key=key)
        return True
    except KeyError:
        return False


def test_a_step_whose_weights_cannot_be_made_here_starts_no_class(tmp_path, monkeypatch):
    """Every step's page and question are made before the class starts: a word the trained
    weights do not know is said for its step, and no room is made."""
    text = docs_example().replace('view = "Heads"\n[step.question]\nkind = "poll"',
                                  'view = "Heads"\nweights = "trained"\ntr_src = "the zebra"'
                                  '\n[step.question]\nkind = "poll"')
    host = upload(page(), "zebra.toml", text)
    host.button(key="start_class").click().run()
    assert "room" not in host.query_params
    warned = " ".join(w.value for w in host.warning)
    assert "No class was started" in warned and "Step 4 (line" in warned and "zebra" in warned


def test_a_link_starts_a_class_with_one_of_the_servers_lessons():
    host = page(**{"class": "new", "course": "short"})
    code = host.session_state["room"]
    m = Phone(code).message()["room"]
    assert m["n_steps"] == 5 and m["title"] == "What do you expect?"
    assert m["ask"]["kind"] == "poll"
    assert "course" not in host.query_params                  # the room keeps its lesson


def test_the_deployers_folder_of_lessons_is_offered_and_a_bad_file_is_named(tmp_path,
                                                                           monkeypatch):
    folder = tmp_path / "lessons"
    folder.mkdir()
    (folder / "seminar.toml").write_text(docs_example())
    (folder / "broken.toml").write_text('title = "x"\n')
    monkeypatch.setenv("XATTN_LESSONS", str(folder))
    at = page(view="Lesson", course="seminar")
    assert "Step 1 of 4: One head on our sentence" in said(at)
    assert at.session_state["heads"] == 2 and at.session_state["seed"] == 7
    options = at.selectbox(key="course").options
    assert any("Attention in my seminar (4 steps, 40 min)" in o for o in options)
    host = page(**{"class": "new", "course": "broken"})
    assert "room" not in host.query_params
    assert "broken" in " ".join(w.value for w in host.warning)


def test_a_lesson_the_server_does_not_have_is_said_and_the_default_shown():
    at = page(view="Lesson", course="nope")
    warned = " ".join(w.value for w in at.warning)
    assert "course=nope" in warned and "cross-attention" in warned
    assert "Step 1 of 14" in said(at)


def test_each_shipped_lesson_opens_every_step_without_a_notice():
    """A lesson sets exactly what a link can: every step of every shipped lesson that runs
    here opens with its own settings and no notice about them."""
    from xattn.live.catalog import server_lessons

    compared = 0
    for name, lesson in server_lessons().items():
        if any(s.state.get("model", "toy-en-fr") != "toy-en-fr" for s in lesson.steps):
            continue                     # a model this machine cannot load: tests of its own
        for n, step in enumerate(lesson.steps, 1):
            at = page(view="Lesson", course=name, lesson=str(n))
            assert not at.warning or all("Not this step" not in w.value and "link"
                                         not in w.value for w in at.warning), (name, n)
            for key, value in step.state.items():
                if key != "view" and key in at.session_state:
                    shown = at.session_state[key]
                    assert (tuple(shown) if isinstance(shown, list) else shown) == value, \
                        (name, n, key)
                    compared += 1
            assert f"Step {n} of {len(lesson.steps)}: {step.title}" in said(at)
    assert compared >= 25                 # the settings of the 19 steps, seen on the page


def test_a_room_teaches_its_own_lesson_whatever_the_hosts_link_says():
    host = page(**{"class": "new", "course": "short"})
    code = host.session_state["room"]
    again = page(room=code, view="Lesson", course="cross-attention")
    assert "Step 1 of 5" in said(again)
    assert json.loads(json.dumps(Phone(code).message()))["room"]["n_steps"] == 5


@pytest.fixture(scope="module")
def en_de_model(tmp_path_factory):
    """A tiny random English→German Marian in a folder named as the lesson names its model
    (``opus-mt-en-de``): the lesson runs on whatever folder of that name the server lists."""
    from model_helpers import models_or_skip

    models_or_skip()
    from devtools.tiny_marian import GERMAN, save_tiny

    return save_tiny(tmp_path_factory.mktemp("models") / "opus-mt-en-de", tgt_sentences=GERMAN,
                     seed=3, spread=0.5)


def test_the_english_german_lesson_runs_a_class_on_a_model_folder(en_de_model, monkeypatch):
    """The format carries: another language pair, on a model folder, a question of the
    lecturer's own and a poll, on the lecturer's page and every phone, every step."""
    monkeypatch.setenv("XATTN_MODELS", str(en_de_model))
    host = page(**{"class": "new", "course": "en-de"})
    code = host.session_state["room"]
    key = host.session_state["_xattn_host_keys"][code]
    phone = Phone(code)
    store = class_store()
    kinds = []
    for n in range(1, 7):
        store.set_step(code, key, n)
        host.run()
        assert not host.exception, (n, host.exception)
        assert f"Step {n} of 6" in said(host)
        m = phone.message()["room"]
        kinds.append(m["ask"]["kind"])
        phone.answer_any()
        store.reveal(code, key, n)
        host.run()
        revealed = phone.message()
        assert revealed["room"]["answer"]["text"] and "verdict" in revealed["me"], n
    assert kinds == ["token", "number", "parts", "token", "choice", "poll"]
    first = Phone(code)
    store.set_step(code, key, 1)
    assert "<code>Katze</code>" in first.message()["room"]["question"]


def test_a_lesson_whose_model_is_not_here_is_unavailable_and_says_why(monkeypatch):
    from xattn.live.catalog import broken_lessons, server_lessons

    monkeypatch.setenv("XATTN_MODELS", "/nowhere/else")
    assert "en-de" not in server_lessons()
    assert "expected a model this server offers" in broken_lessons()["en-de"]
    host = page(**{"class": "new", "course": "en-de"})
    assert "room" not in host.query_params
    assert "opus-mt-en-de" in " ".join(w.value for w in host.warning)


def test_a_follow_up_asks_the_same_question_on_a_new_case_and_says_who_learned():
    """Step 1 on seed 0, then the same question on seed 1 (the first case whose answer
    differs): the phones get the new case's question, are judged by its own truth, and the
    host reads round 1 → round 2 → follow-up and the potential learners."""
    from xattn.lesson import SHIPPED
    from xattn.live.answers import class_step

    host = page(**{"class": "new"})
    code = host.session_state["room"]
    phones = [Phone(code) for _ in range(4)]
    _, first = class_step(SHIPPED, 1)
    _, new = class_step(SHIPPED, 1, case=1)
    assert new.truth != first.truth and new.question.case == 1
    wrong = next(j for j in range(len(first.question.choices)) if j not in (first.truth,
                                                                            new.truth))
    for p, pick in zip(phones, (first.truth, wrong, wrong, wrong), strict=True):
        p.answer(pick)
    host.run()
    host.button(key="reveal").click().run()
    host.button(key="ask_again").click().run()                    # a revote
    for p, pick in zip(phones, (first.truth, first.truth, first.truth, wrong), strict=True):
        p.answer(pick)
    host.run()
    host.button(key="reveal").click().run()
    host.button(key="follow_up").click().run()                    # the new case
    assert not host.exception, host.exception
    assert host.session_state["seed"] == 1         # the lecturer's page opens the new case
    m = phones[0].message()["room"]
    assert m["round"] == 3 and m["ask"]["kind"] == "token"
    assert "a new case: <code>seed 1 instead of 0</code>" in (m["note"] or "")
    assert "seed 1 instead of 0" in said(host)
    for p, pick in zip(phones, (new.truth, new.truth, first.truth, new.truth), strict=True):
        p.answer(pick)
    host.run()
    host.button(key="reveal").click().run()
    # after the reveal the lecturer's page draws the new case's heatmap (seed 1)
    a_new, _ = class_step(SHIPPED, 1, case=1)
    head_1 = heatmaps(json.loads(host.get_by_key("head_1").proto.spec))[0]
    np.testing.assert_allclose(decode(head_1["z"]), a_new.layer(0)[0], atol=1e-3)
    verdicts = [p.message()["me"]["verdict"] for p in phones]
    assert verdicts[0].startswith("<p><strong>Right") and "Not this time" in verdicts[2]
    text = said(host)
    assert "| 1 | the first vote | 4 | 1 (25%) |" in text
    assert "| 2 | a revote | 4 | 3 (75%) |" in text
    assert "| 3 | a follow-up (new case 1) | 4 | 3 (75%) |" in text
    assert "**3 potential learners** (wrong in round 1); 2 of them right after the revote; " \
           "2 of them right on the new case; weighted learning gain 67% (Porter et al. 2011: " \
           "85–89 %)." in text        # (2/3 potential learners) / (1/1 who knew) on the new case
    host.toggle(key="class_learned").set_value(True).run()
    text = said(host)
    assert "| 25% | 75% | 75% | 3 | 2 | 2 | 67% |" in text          # the learned table
    assert "*Weighted gain* (Porter et al. 2011)" in text


def test_a_pre_and_post_check_gives_the_class_its_gain():
    """A lesson with ``check = [2]`` asks its step 2 before and after the lesson; the check
    before has no Reveal; *What the class learned* gives the gain, computed by hand here:
    2 of 4 right before, 4 of 4 after: <g> = (1.00 - 0.50) / (1 - 0.50) = 1.00."""
    text = docs_example().replace("minutes = 40", "minutes = 40\ncheck = [2]")
    host = upload(page(), "checked.toml", text)
    host.button(key="start_class").click().run()
    code = host.session_state["room"]
    key = host.session_state["_xattn_host_keys"][code]
    phones = [Phone(code) for _ in range(4)]
    m = phones[0].message()["room"]
    assert m["n_steps"] == 6 and m["title"] == "Before the lesson: What does a softmax do?"
    assert "A check before the lesson" in m["about"]
    right = m["ask"]["choices"][0]
    for p, pick in zip(phones, (right, right, m["ask"]["choices"][1], m["ask"]["choices"][2]),
                       strict=True):
        p.answer(pick)
    host.run()
    assert not [b for b in host.button if b.key == "reveal"]         # nothing to reveal yet
    assert "revealed after the same question at the end" in said(host)
    store = class_store()
    store.set_step(code, key, 6)
    host.run()
    assert phones[0].message()["room"]["title"] == "After the lesson: What does a softmax do?"
    for p in phones:
        p.answer(right)
    host.run()
    host.toggle(key="class_learned").set_value(True).run()
    assert not host.exception, host.exception
    text = said(host)
    assert "| 2. `What does a softmax do?` | 4 | 2 | 4 | 1.00 |" in text
    assert "over the check: **1.00**" in text
    csv_text = host.get("download_button")
    assert any(b.proto.label == "What the class learned (CSV)" for b in csv_text)


def test_ending_a_class_takes_every_page_out_and_says_why():
    host = page(**{"class": "new"})
    code = host.session_state["room"]
    projector = page(room=code)                         # a second page of the lecturer's
    phone = Phone(code)
    phone.answer(0)
    host.run()
    host.button(key="end_class").click().run()
    assert not host.exception, host.exception
    assert "room" not in host.query_params
    assert f"The class {code} has ended" in " ".join(w.value for w in host.warning)
    projector.run()
    assert f"The class {code} has ended" in " ".join(w.value for w in projector.warning)
    with pytest.raises(Exception, match="has ended"):
        class_store().room_view(code)


def test_the_lesson_page_exports_its_questions_for_moodle():
    at = page(view="Lesson", course="short")
    at.button(key="lms_make").click().run()
    assert not at.exception, at.exception
    assert [b for b in at.get("download_button") if b.proto.label ==
            "The questions (Moodle XML)"]
    from test_lms import read_back

    (made,) = [at.session_state[k] for k in at.session_state if str(k).startswith("_xattn_lms_")]
    assert [q["type"] for q in read_back(made)] == ["multichoice", "numerical", "multichoice",
                                                    "matching"]     # the poll left out


def test_a_class_started_from_a_link_with_own_sentences_asks_alike_on_every_screen():
    """The audit's projector read "...does der look at...?" while every phone asked about
    chat: a class teaches its lesson's steps with their own settings on every screen, and
    the lecturer's page says what the class asks."""
    host = page(**{"class": "new", "src": "der Hund schläft", "tgt": "the dog sleeps"})
    code = host.session_state["room"]
    m = Phone(code).message()["room"]
    assert "<code>chat</code>" in m["question"]
    assert "`chat`" in said(host) and "`der`" not in said(host)
    assert host.session_state["src"] == "the black cat sat on the mat"


SOURCE_ONLY = '''title = "The king"
minutes = 10

[[step]]
title = "Which word matters?"
text = "The shipped model translates our sentence."
look = "The decoder's rows."
ask = "Which source word, masked, will change «target» most?"
[step.page]
weights = "model"
view = "Decode"
src = "a sick king hears the dog"
[step.question]
computed = "masking_effect"
target = "roi"
'''


def test_a_model_step_with_a_source_and_no_target_asks_about_the_model_s_translation():
    """Issue 44, G3: a lesson-file step sets the shipped model and a source but no target.
    The projector shows the model's own translation; the room, the phones and the Moodle
    file ask about the same (`roi`), not the random page's default French sentence (`le`)."""
    import xml.etree.ElementTree as ET

    from test_lms import read_back

    from xattn.encdec import cross_attention, load_encdec
    from xattn.lesson import read_lesson
    from xattn.live.answers import class_step
    from xattn.live.link import lesson_setting
    from xattn.ui.lesson.start import _moodle

    translation = cross_attention(load_encdec(), "a sick king hears the dog")
    assert translation.translated and "roi" in translation.tgt_tokens
    lesson = read_lesson(SOURCE_ONLY, "king", page=lesson_setting)
    a, told = class_step(lesson, 1)
    assert tuple(a.tgt_tokens) == tuple(translation.tgt_tokens)
    assert told.words["target"] == "`roi`" and not told.note
    xml = _moodle(lesson)
    assert [q["type"] for q in read_back(xml)] == ["multichoice"]
    text = ET.fromstring(xml.encode()).findtext("question[@type='multichoice']/questiontext/text")
    assert "<code>roi</code>" in text and "<code>le</code>" not in text
    host = upload(page(), "king.toml", SOURCE_ONLY)
    host.button(key="start_class").click().run()
    assert not host.exception, host.exception
    m = Phone(host.session_state["room"]).message()["room"]
    assert "<code>roi</code>" in m["question"] and "`roi`" in said(host)


READS = '''title = "Read, then answer"
minutes = 5

[[step]]
title = "Read this"
text = "Every row is a target word."
look = "The heatmap."
ask = "Nothing to ask."
[step.page]
heads = 2

[[step]]
title = "Now answer"
text = "One head on our sentence."
look = "The row of «target»."
ask = "Which source word does «target» look at most in «head»?"
[step.page]
heads = 2
[step.question]
computed = "strongest_source"
target = "chat"
head = 1

[[step]]
title = "Read again"
text = "That was it."
look = "The heatmap."
ask = "Nothing."
[step.page]
heads = 2
'''


def test_a_step_the_class_reads_has_no_reveal_no_timer_and_no_csv_rows():
    """Issue 44: a read-only step showed *Reveal* and a timer and added junk rows to the
    CSV. Now it opens revealed (first or reached by *Next*), offers neither, and the CSV
    holds only the step that asked something."""
    host = upload(page(), "reads.toml", READS)
    host.button(key="start_class").click().run()
    assert not host.exception, host.exception
    code = host.session_state["room"]
    phone = Phone(code)
    keys = {b.key for b in host.button}
    assert "reveal" not in keys and "timer_start" not in keys
    assert phone.message()["room"]["phase"] == "revealed"
    host.button(key="class_next").click().run()                   # step 2 asks
    assert "reveal" in {b.key for b in host.button}
    phone.answer(2)
    host.run()
    host.button(key="reveal").click().run()
    host.button(key="class_next").click().run()                   # step 3 reads
    assert not host.exception, host.exception
    keys = {b.key for b in host.button}
    assert "reveal" not in keys and "timer_start" not in keys and "ask_again" not in keys
    assert phone.message()["room"]["phase"] == "revealed"
    assert "A step the class reads" in said(host)
    key = host.session_state["_xattn_host_keys"][code]
    rows = list(csv.reader(io.StringIO(_csv(code, key))))
    assert {r[0] for r in rows[1:] if r} == {"2"}               # the step that asked
