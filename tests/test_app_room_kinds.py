"""Several predictions in one step, in a room of three students under AppTest (a real SQLite
store, the process's real relay): each head's job (step 12, one pill row a head) and the
class aligning words (step 14, tap a target word, then its source word). Each student's
receipt, the host's live grid, the reveal's verdicts ("3 of 4 right", each student's AER), and
the class's AER recomputed here from the stored votes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from apptest_helpers import decode
from test_app_room import class_file, count, page, receipt, start_class  # noqa: F401

from xattn.classroom import answers_csv
from xattn.jobs import JOBS, head_jobs

pytestmark = pytest.mark.usefixtures("fresh_cache")

GOLD = {(0, 0), (1, 2), (2, 1), (3, 3), (4, 4), (5, 5)}     # le-the, roi-king, malade-sick, ...


def widget(at, suffix: str):
    """The student's control whose key ends with ``suffix`` (its key names the question)."""
    found = [w for w in at.get("button_group")
             if (w.key or "").startswith("predict-") and w.key.endswith(suffix)]
    assert len(found) == 1, [w.key for w in at.get("button_group")]
    return found[0]


def stored(code: str, student):
    from xattn.ui.room import class_store
    return class_store().room_view(code, student.session_state["_xattn_student"],
                                   present=False).mine


def text(at) -> str:
    return " ".join(m.value for m in at.markdown)


def to_step(host, code: str, key: str, n: int) -> None:
    from xattn.ui.room import class_store
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
    students = [page(room=code) for _ in range(3)]
    picks = [dict(enumerate(truth)),                                   # all four right
             {0: wrong[0], 1: truth[1], 2: truth[2], 3: truth[3]},     # one wrong
             {3: truth[3]}]                                            # one part only
    for s, said in zip(students, picks, strict=True):
        assert "What is the job of each of the four heads of layer 2?" in text(s)
        for k, job in said.items():
            widget(s, f"_part_{k}").set_value(job).run()
            assert not s.exception, s.exception
        expected = tuple(said.get(k) for k in range(4))
        assert stored(code, s) == expected and receipt(s).startswith("Saved: head")
    assert count(host) == "3 of 3 answered"
    grid = json.loads(host.get_by_key("class_answers").proto.spec)["data"][0]
    z = decode(grid["z"])                                   # (parts, jobs): shares of 3
    for k in range(4):
        for c, job in enumerate(JOBS):
            assert z[k, c] == pytest.approx(sum(p.get(k) == job for p in picks) / 3)
    host.button(key="reveal").click().run()
    verdicts = []
    for s in students:
        s.run()
        assert not s.exception, s.exception
        verdicts.append(next(m.value for m in s.markdown if " right**" in m.value))
        assert s.get_by_key("class_answers")               # the class's labels, truth outlined
    assert verdicts[0] == "**4 of 4 right**."
    assert verdicts[1].startswith(f"**3 of 4 right**: head 1: you said `{wrong[0]}`")
    assert verdicts[2] == "**1 of 1 right** (3 not guessed)."
    marks = json.loads(host.get_by_key("class_answers").proto.spec)["data"][1]
    assert marks["name"] == "right" and len(marks["x"]) == 4   # one right job a head
    from xattn.ui.room import class_store
    csv = answers_csv(class_store().results(code, key)).splitlines()
    assert f"12,1,parts,{JOBS.index(truth[3])},head 4: {truth[3]},3,,,3" in csv


def link(student, t: int, s: int) -> None:
    """Tap target word ``t``, then source word ``s``."""
    widget(student, "_tgt").set_value(t).run()
    widget(student, "_src").set_value(s).run()
    assert not student.exception, student.exception


def test_three_students_align_words_and_the_class_is_scored_from_their_votes():
    host, code, key = start_class()
    to_step(host, code, key, 14)
    students = [page(room=code) for _ in range(3)]
    votes = [GOLD,                                                   # the gold alignment
             GOLD - {(4, 4)} | {(4, 0)},                             # the other "the"
             GOLD - {(1, 2), (2, 1), (4, 4)} | {(1, 1), (2, 2), (4, 0)}]   # word for word
    for s, links in zip(students, votes, strict=True):
        assert "Which source word does each target word translate?" in text(s)
        for t, src in sorted(links):
            link(s, t, src)
        assert stored(code, s) == tuple(sorted(links))
        assert receipt(s).startswith(f"Saved: {len(links)} links.")
    link(students[2], 5, 0)                                          # a seventh link...
    assert stored(code, students[2]) == tuple(sorted(votes[2] | {(5, 0)}))
    shown = widget(students[2], "_drawn")
    shown.set_value([lk for lk in shown.value if lk != (5, 0)]).run()  # ...taken back
    assert stored(code, students[2]) == tuple(sorted(votes[2]))
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
    for s, aer in zip(students, own, strict=True):
        s.run()
        assert not s.exception, s.exception
        verdict = next(m.value for m in s.markdown
                       if m.value.startswith(("**Right", "**Your AER")))
        assert verdict.startswith("**Right: the gold alignment exactly**" if aer == 0 else
                                  f"**Your AER {aer:.2f}**")
        fig = json.loads(s.get_by_key("answer_chart_0").proto.spec)
        assert fig["data"][0]["name"] == "the class"            # the class's links first
        np.testing.assert_allclose(decode(fig["data"][0]["z"]), z, atol=1e-6)
    from xattn.ui.room import class_store
    csv = answers_csv(class_store().results(code, key)).splitlines()
    assert "14,1,links,4-0,le (4) → the (0),2,,,3" in csv
