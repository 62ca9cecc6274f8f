"""Why were they wrong? A room of phones (tests/phone_helpers.py) and the lecturer's page under
AppTest (a real SQLite store): phones give the answers named misconceptions give, and after the
reveal the lecturer's histogram, each phone's verdict and the answers' CSV name them."""

from __future__ import annotations

import csv
import io

import pytest
from phone_helpers import Phone
from test_app_room import count, start_class  # noqa: F401
from test_app_room_kinds import text, to_step

from xattn.classroom import answers_csv
from xattn.lesson import STEPS
from xattn.live.prepared import prepared_attention

pytestmark = pytest.mark.usefixtures("fresh_cache")


def told_of(n: int):
    step = STEPS[n - 1]
    a = prepared_attention(step)
    return step.tell(a, step.layer(a.n_layers))


def csv_rows(code: str, key: str) -> list[dict]:
    from xattn.lesson import SHIPPED
    from xattn.live.stores import class_store
    from xattn.ui.room.misconceptions import csv_misconceptions

    tallies = class_store().results(code, key)
    return list(csv.DictReader(io.StringIO(answers_csv(
        tallies, misconceptions=csv_misconceptions(SHIPPED, tallies)), newline="")))


def test_phones_that_pick_distractors_are_named_on_the_host_the_phones_and_the_csv():
    told = told_of(2)                                   # what one row adds up to: a number
    slips = {d.key: d for d in told.distractors}
    assert {"swapped", "axis"} <= set(slips)
    host, code, key = start_class()
    to_step(host, code, key, 2)
    phones = [Phone(code) for _ in range(6)]
    said = [1.0, 1.0, round(slips["swapped"].value, 2), round(slips["swapped"].value, 2),
            round(slips["axis"].value, 2), 0.8]         # 2 right, 2 swapped, 1 axis, 1 other
    for p, value in zip(phones, said, strict=True):
        assert p.answer(value) == value
    assert count(host) == "6 of 6 answered"
    assert "Why were they wrong?" not in text(host)     # not before the reveal
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    shown = text(host)
    assert "**33%** (2 of 6) **rows and columns swapped**: added up the column of `" in shown
    assert "**17%** (1 of 6) **softmax over the wrong axis**: took the softmax over the " \
           "target words" in shown
    assert host.get_by_key("class_slips") is not None
    verdicts = [p.message()["me"]["verdict"] for p in phones]
    assert "known slip" not in verdicts[0] and "known slip" not in verdicts[5]
    assert "<strong>rows and columns swapped</strong>" in verdicts[2]
    assert "<strong>softmax over the wrong axis</strong>" in verdicts[4]
    rows = [r for r in csv_rows(code, key) if r["step"] == "2"]
    named = {r["answer"]: r["misconception"] for r in rows}
    assert named == {"1.00": "", f"{said[2]:.2f}": "rows and columns swapped",
                     f"{said[4]:.2f}": "softmax over the wrong axis", "0.80": ""}

    told = told_of(4)                                   # wait-k: a choice
    mask = next(d for d in told.distractors if d.key == "mask")
    to_step(host, code, key, 4)
    for p, value in zip(phones, [told.truth, mask.value, mask.value, mask.value, told.truth,
                                 told.truth], strict=True):
        assert p.answer(value) == value
    host.button(key="reveal").click().run()
    assert "**50%** (3 of 6) **mask ignored**: ignored the wait-k mask" in text(host)
    assert "<strong>mask ignored</strong>" in phones[1].message()["me"]["verdict"]
    rows = {r["answer"]: r["misconception"] for r in csv_rows(code, key) if r["step"] == "4"}
    assert rows[mask.value] == "mask ignored" and rows[told.truth] == ""


def test_each_phone_is_sent_how_far_its_own_answer_is_live_and_in_homework():
    """The surprise a phone lists its steps to revisit by (phone.js): 0 when right, 1 + the
    relative error (capped at 1) for a number, in the phone's own part of the message."""
    host, code, key = start_class()
    to_step(host, code, key, 2)
    phones = [Phone(code) for _ in range(3)]
    for p, value in zip(phones, (1.0, 1.5, 9.0), strict=True):
        p.answer(value)
    assert "surprise" not in phones[0].message()["me"]            # not before the reveal
    host.button(key="reveal").click().run()
    assert [p.message()["me"]["surprise"] for p in phones] == [0.0, 1.5, 2.0]
    host, code, key = start_class(homework="7")
    phone = Phone(code)
    phone.answer_step(2, 1.25)
    assert phone.homework_step(2)["me"]["surprise"] == 1.25
    assert "surprise" not in phone.homework_step(3)["me"]         # not answered yet
