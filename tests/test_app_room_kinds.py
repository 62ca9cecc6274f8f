"""Several predictions in one step, in a room of three students under AppTest (a real SQLite
store, the process's real relay): each head's job (step 12, one pill row a head). Each
student's receipt, the host's live grid, the reveal's verdicts ("3 of 4 right")."""

from __future__ import annotations

import json

import pytest
from apptest_helpers import decode
from test_app_room import class_file, count, page, receipt, start_class  # noqa: F401

from xattn.classroom import answers_csv
from xattn.jobs import JOBS, head_jobs

pytestmark = pytest.mark.usefixtures("fresh_cache")


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
