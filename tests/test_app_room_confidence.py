"""How sure the class was, and the round before during a revote: the lecturer's switches under
AppTest beside phones that answer as the route does (tests/phone_helpers.py) and read the
message every server process sends them; the store is a real SQLite file. Every number of the
host's table is counted by hand from the taps the test makes."""

from __future__ import annotations

import csv
import io

import pytest
from phone_helpers import Phone, chart_values
from test_app_room import page

from xattn.classroom import answers_csv
from xattn.lesson import SHIPPED
from xattn.live.answers import class_step
from xattn.live.stores import class_store

pytestmark = pytest.mark.usefixtures("fresh_cache")

LEVELS = [["sure", "sure"], ["think_so", "think so"], ["guess", "guess"]]


@pytest.fixture(autouse=True)
def class_file(tmp_path, monkeypatch):
    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    monkeypatch.delenv("XATTN_PUBLIC_URL", raising=False)
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "classes.sqlite3"))


def said(at) -> str:
    return " ".join(e.value for e in (*at.markdown, *at.caption))


def start():
    host = page(**{"class": "new"})
    code = host.session_state["room"]
    return host, code, host.session_state["_xattn_host_keys"][code]


def switch(host, key: str, on: bool):
    host.toggle(key=key).set_value(on).run()
    assert not host.exception, host.exception
    return host


def test_the_host_asks_how_sure_and_reads_right_and_sure_after_the_reveal():
    host, code, key = start()
    _, told = class_step(SHIPPED, 1)
    right = told.truth
    wrong = [j for j in range(len(told.question.choices)) if j != right]
    phones = [Phone(code) for _ in range(10)]
    before = class_store().room_view(code).version
    assert "levels" not in phones[0].message()["room"]["ask"]          # off by default
    assert host.toggle(key="class_confidence").value is False
    switch(host, "class_confidence", True)
    view = class_store().room_view(code)
    assert view.confidence and not view.histogram_before and view.version > before
    assert phones[0].message()["room"]["ask"]["levels"] == LEVELS
    # by hand: right: 3 sure, 1 think so, 2 guess; wrong: 2 sure, 1 guess, 1 said nothing
    taps = [(right, "sure"), (right, "sure"), (right, "sure"), (right, "think_so"),
            (right, "guess"), (right, "guess"), (wrong[0], "sure"), (wrong[1], "sure"),
            (wrong[0], "guess"), (wrong[1], None)]
    for p, (value, level) in zip(phones, taps, strict=True):
        assert p.answer(value, level) == value
    phones[0].answer(right, "guess")                   # changed its mind, then back: sure
    phones[0].answer(right, "sure")
    assert [p.message()["me"]["level"] for p in phones[3:7]] == ["think_so", "guess", "guess",
                                                                  "sure"]
    assert phones[0].message()["me"] == {"mine": right, "level": "sure"}
    assert phones[9].message()["me"] == {"mine": wrong[1], "level": None}
    host.run()
    assert "right and sure" not in said(host)                          # not before the reveal
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    text = said(host)
    assert "| right | 3 | 1 | 2 | 0 |" in text and "| wrong | 2 | 0 | 1 | 1 |" in text
    assert "**3 right and sure** · **2 right but guessing** · **2 wrong and sure**: the " \
           "misconception to discuss first." in text
    # the CSV: each answer's count split by how sure its students said they were
    store = class_store()
    rows = list(csv.DictReader(io.StringIO(answers_csv(
        store.results(code, key), confidence=store.confidences(code, key)))))
    mine = {int(r["index"]): r for r in rows if r["step"] == "1"}
    assert (mine[right]["count"], mine[right]["sure"], mine[right]["think_so"],
            mine[right]["guess"]) == ("6", "3", "1", "2")
    assert (mine[wrong[0]]["count"], mine[wrong[0]]["sure"], mine[wrong[0]]["guess"]) == \
        ("2", "1", "1")
    assert (mine[wrong[1]]["count"], mine[wrong[1]]["sure"], mine[wrong[1]]["guess"]) == \
        ("2", "1", "0")                                 # the other said nothing: in count only


def test_a_follow_ups_confidence_is_judged_by_its_own_cases_truth():
    """Round 2 asks step 1 on seed 1, whose right word differs: three students keep round 1's
    answer and are sure of it; on the new case they are wrong and sure."""
    host, code, _ = start()
    _, first = class_step(SHIPPED, 1)
    _, new = class_step(SHIPPED, 1, case=1)
    assert new.truth != first.truth and new.question.case == 1
    switch(host, "class_confidence", True)
    phones = [Phone(code) for _ in range(6)]
    for p in phones:
        p.answer(first.truth, "sure")
    host.run()
    host.button(key="reveal").click().run()
    assert "**6 right and sure** · **0 right but guessing** · **0 wrong and sure**." \
        in said(host)
    host.button(key="follow_up").click().run()
    assert not host.exception, host.exception
    assert phones[0].message()["room"]["ask"]["levels"] == LEVELS     # a follow-up asks too
    taps = [(new.truth, "sure"), (new.truth, "sure"), (new.truth, "guess"),
            (first.truth, "sure"), (first.truth, "sure"), (first.truth, "sure")]
    for p, (value, level) in zip(phones, taps, strict=True):
        p.answer(value, level)
    host.run()
    host.button(key="reveal").click().run()
    text = said(host)
    assert "| right | 2 | 0 | 1 | 0 |" in text and "| wrong | 3 | 0 | 0 | 0 |" in text
    assert "**2 right and sure** · **1 right but guessing** · **3 wrong and sure**" in text


def test_without_the_switch_nothing_asks_how_sure_and_no_table_shows():
    host, code, _ = start()
    phones = [Phone(code) for _ in range(2)]
    for p in phones:
        p.answer(0)
    host.run()
    host.button(key="reveal").click().run()
    assert "right and sure" not in said(host) and "how sure" not in said(host)
    assert "level" not in phones[0].message()["me"]


def test_a_revote_shows_the_round_before_only_where_the_host_says_so():
    """Default: a revote's phones see no earlier chart while they vote. With the switch on,
    the asking round's message carries round 1's counts (no answer marked); the reveal shows
    the round's own answers as before."""
    host, code, key = start()
    q = class_store().room_view(code).question
    phones = [Phone(code) for _ in range(5)]
    for p, value in zip(phones, (0, 0, 2, 2, 2), strict=True):
        p.answer(value)
    host.run()
    host.button(key="reveal").click().run()
    host.button(key="ask_again").click().run()
    assert "earlier" not in phones[0].message()["room"]          # off: only with the reveal
    switch(host, "class_histogram", True)
    room = phones[0].message()["room"]
    assert (room["round"], room["phase"], room["earlier"]["round"]) == (2, "asking", 1)
    chart = room["earlier"]["chart"]
    assert chart["title"] == "Round 1: how the class answered (5 answers)"
    expected = [0] * len(q.choices)
    expected[0], expected[2] = 2, 3
    assert chart_values(chart) == [[expected]]
    assert "right" not in str(chart["panels"])                   # the votes, not the truth
    phones[0].answer(1)
    host.run()
    host.button(key="reveal").click().run()
    assert "earlier" not in phones[0].message()["room"]          # the reveal has its own
    host.button(key="ask_again").click().run()
    room = phones[0].message()["room"]
    assert room["earlier"]["round"] == 2                          # always the round before
    switch(host, "class_histogram", False)
    assert "earlier" not in phones[0].message()["room"]
    assert not class_store().room_view(code).histogram_before
    assert class_store().snapshot(code).histogram_before is False
    assert key not in str(room)
