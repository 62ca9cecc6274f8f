"""`xattn.classroom.said`: what a server tells a phone as a catalog message (an id ``why.*``
and named values, beside the English), carried by the class store's errors and receipts."""

from __future__ import annotations

import json

import pytest

from xattn.classroom import (
    AnswerRefused,
    Question,
    RoomEnded,
    RoomNotFound,
    SQLiteStore,
    new_student_id,
)
from xattn.classroom.errors import StoreUnavailable
from xattn.classroom.frames import receipt_json
from xattn.classroom.outbox import Receipt
from xattn.classroom.said import said, said_of


def test_a_message_is_an_id_and_its_values_as_a_phone_gets_it():
    assert said("why.stale.round", sent=1, step=2, current=3).json() == [
        "why.stale.round", {"sent": 1, "step": 2, "current": 3}]


@pytest.mark.parametrize(("id_", "args", "error", "match"), [
    ("stale.round", {}, ValueError, "an id starting 'why.', received 'stale.round'"),
    (3, {}, ValueError, "an id starting 'why.', received 3"),
    ("why.x", {"n": True}, TypeError, "n is an int, a float or a str, received bool"),
    ("why.x", {"n": [1]}, TypeError, "n is an int, a float or a str, received list"),
])
def test_a_message_refuses_what_a_catalog_cannot_say(id_, args, error, match):
    with pytest.raises(error, match=match):
        said(id_, **args)


def test_an_error_tells_its_message_or_one_by_its_kind():
    assert said_of(RoomNotFound.for_code("HJK23M")) == said("why.no.class", code="HJK23M")
    assert said_of(RoomEnded.for_code("HJK23M")) == said("why.ended", code="HJK23M")
    assert said_of(StoreUnavailable("redis is down")) == said("why.store")
    assert said_of(AnswerRefused("no words for it")) is None
    assert said_of(ValueError("x")) is None


def test_the_stores_refusals_carry_their_messages(tmp_path):
    store = SQLiteStore(tmp_path / "c.sqlite3")
    me = new_student_id()
    code, key = store.create_room([Question("choice", ("up", "down")),
                                   Question("choice", ("a", "b"))])
    with pytest.raises(AnswerRefused, match="the class is on step 1, not step 2") as got:
        store.answer(code, 2, me, 0)
    assert said_of(got.value) == said("why.step.other", current=1, step=2)
    store.reveal(code, key, 1)
    with pytest.raises(AnswerRefused, match="step 1 is revealed") as got:
        store.answer(code, 1, me, 0)
    assert said_of(got.value) == said("why.revealed", step=1)
    with pytest.raises(AnswerRefused, match="round 3 of step 1") as got:
        store.answer(code, 1, me, 0, round_=3)
    assert said_of(got.value) == said("why.stale.round", sent=3, step=1, current=1)
    store.close()


def test_a_receipt_carries_its_message_to_the_phone():
    told = said("why.revealed", step=2)
    data = json.loads(receipt_json(Receipt(2, 1, 0, "refused", "step 2 is revealed.", None,
                                           told)))
    assert data["why"] == "step 2 is revealed." and data["say"] == ["why.revealed", {"step": 2}]
    assert "say" not in json.loads(receipt_json(Receipt(2, 1, 0, "saved")))
