"""Several predictions in one step, in a room of three phones (tests/phone_helpers.py) and the
lecturer's page under AppTest (a real SQLite store): each head's job (step 12, a job a head)
and the class aligning words (step 14, links between words). What each phone stores, the
host's live grid, the reveal's verdicts each phone is sent ("3 of 4 right", each student's
AER) and its chart, and the class's AER recomputed here from the stored votes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_helpers import decode
from phone_helpers import Phone
from test_app_room import class_file, count, start_class  # noqa: F401

from xattn.classroom import answers_csv
from xattn.jobs import JOBS, head_jobs

pytestmark = pytest.mark.usefixtures("fresh_cache")

GOLD = {(0, 0), (1, 2), (2, 1), (3, 3), (4, 4), (5, 5)}     # le-the, roi-king, malade-sick, ...


def text(at) -> str:
    return " ".join(m.value for m in at.markdown)


def to_step(host, code: str, key: str, n: int) -> None:
    from xattn.live.stores import class_store
    class_store().set_step(code, key, n)
    host.run()
    assert not host.exception, host.exception


def shipped_jobs():
    from test_lesson import shipped_attention
    a = shipped_attention()
    return head_jobs(a, a.n_layers - 1)            # the step's layer 2 (its own setting)


def test_three_students_label_each_head_then_see_how_many_they_got_right():
    jobs = shipped_jobs()
    truth = [j.job for j in jobs]
    wrong = [next(o for o in JOBS if o != j.job and o not in j.close) for j in jobs]
    host, code, key = start_class()
    to_step(host, code, key, 12)
    phones = [Phone(code) for _ in range(3)]
    picks = [dict(enumerate(truth)),                                   # all four right
             {0: wrong[0], 1: truth[1], 2: truth[2], 3: truth[3]},     # one wrong
             {3: truth[3]}]                                            # one part only
    for p, said in zip(phones, picks, strict=True):
        room = p.message()["room"]
        assert "What is the job of each of the four heads of layer 2?" in room["question"]
        assert room["ask"]["rows"] == ["head 1", "head 2", "head 3", "head 4"]
        assert room["ask"]["choices"] == list(JOBS)
        expected = tuple(said.get(k) for k in range(4))
        assert p.answer(list(expected)) == expected and p.mine() == expected
    assert count(host) == "3 of 3 answered"
    grid = json.loads(host.get_by_key("class_answers").proto.spec)["data"][0]
    z = decode(grid["z"])                                   # (parts, jobs): shares of 3
    for k in range(4):
        for c, job in enumerate(JOBS):
            assert z[k, c] == pytest.approx(sum(p.get(k) == job for p in picks) / 3)
    host.button(key="reveal").click().run()
    verdicts = []
    for p in phones:
        m = p.message()
        verdicts.append(m["me"]["verdict"])
        grid = m["room"]["answer"]["charts"][0]["panels"][0]      # the class's labels first
        np.testing.assert_allclose(grid["z"], z, atol=1e-3)
        assert len([mk for mk in grid["marks"] if mk[2] == "outline"]) >= 4   # truth outlined
    assert verdicts[0] == "<p><strong>4 of 4 right</strong>.</p>"
    assert verdicts[1].startswith("<p><strong>3 of 4 right</strong>: head 1: you said "
                                  f"<code>{wrong[0]}</code>")
    assert verdicts[2] == "<p><strong>1 of 1 right</strong> (3 not guessed).</p>"
    marks = json.loads(host.get_by_key("class_answers").proto.spec)["data"][1]
    assert marks["name"] == "right" and len(marks["x"]) == 4   # one right job a head
    from xattn.live.stores import class_store
    csv = answers_csv(class_store().results(code, key)).splitlines()
    assert f"12,1,parts,{JOBS.index(truth[3])},head 4: {truth[3]},3,,,3,,,," in csv


def test_three_students_align_words_and_the_class_is_scored_from_their_votes():
    host, code, key = start_class()
    to_step(host, code, key, 14)
    phones = [Phone(code) for _ in range(3)]
    votes = [GOLD,                                                   # the gold alignment
             GOLD - {(4, 4)} | {(4, 0)},                             # the other "the"
             GOLD - {(1, 2), (2, 1), (4, 4)} | {(1, 1), (2, 2), (4, 0)}]   # word for word
    for p, links in zip(phones, votes, strict=True):
        room = p.message()["room"]
        assert "Which source word does each target word translate?" in room["question"]
        assert room["ask"]["kind"] == "links" and len(room["ask"]["rows"]) == 6
        assert p.answer([list(lk) for lk in sorted(links)]) == tuple(sorted(links))
    phones[2].answer(sorted(votes[2] | {(5, 0)}))                    # a seventh link...
    assert phones[2].mine() == tuple(sorted(votes[2] | {(5, 0)}))
    phones[2].answer(sorted(votes[2]))                               # ...taken back
    assert phones[2].mine() == tuple(sorted(votes[2]))
    assert count(host) == "3 of 3 answered"
    counts = {(t, s): sum((t, s) in v for v in votes) for t in range(6) for s in range(6)}
    z = decode(json.loads(host.get_by_key("class_answers").proto.spec)["data"][0]["z"])
    np.testing.assert_allclose(z, np.array([[counts[t, s] / 3 for s in range(6)]
                                            for t in range(6)]), atol=1e-6)
    host.button(key="reveal").click().run()
    assert not host.exception, host.exception
    # The class's majority alignment (links more than half drew) and its AER, by hand.
    majority = {lk for lk, n in counts.items() if 2 * n > 3}
    assert majority == GOLD - {(4, 4)} | {(4, 0)}              # two of three took "the (0)"
    class_aer = 1 - 2 * len(majority & GOLD) / (len(majority) + len(GOLD))
    assert class_aer == pytest.approx(1 / 6)
    said = text(host)
    assert f"| **the class** (links drawn by more than half of 3) | {class_aer:.3f} |" in said
    assert f"AER (lower is better): the class {class_aer:.2f} · layer 2 0.00 · best head 0.00 " \
           "(layer 2, head 2)." in said
    assert host.get_by_key("host_versus")
    own = [1 - 2 * len(v & GOLD) / (len(v) + len(GOLD)) for v in votes]
    for p, aer in zip(phones, own, strict=True):
        m = p.message()
        assert m["me"]["verdict"].startswith(
            "<p><strong>Right: the gold alignment exactly</strong>" if aer == 0 else
            f"<p><strong>Your AER {aer:.2f}</strong>")
        versus = m["room"]["answer"]["charts"][0]
        assert versus["panels"][0]["name"] == "the class"      # the class's links first
        np.testing.assert_allclose(versus["panels"][0]["z"], z, atol=1e-3)
        assert f"the class {class_aer:.2f}" in m["room"]["answer"]["versus"]
    from xattn.live.stores import class_store
    csv = answers_csv(class_store().results(code, key)).splitlines()
    assert "14,1,links,4-0,le (4) → the (0),2,,,3,,,," in csv
