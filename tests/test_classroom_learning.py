"""What the class learned (xattn/classroom/learning.py) from a real store: a fixture class of 40
students with a pre-check, a step asked three times (a vote, a revote, a follow-up on a new
case) and a post-check, on SQLite and on Redis, every number computed by hand below."""

from __future__ import annotations

import pytest

from xattn.classroom import Question, new_student_id
from xattn.classroom.learning import check_pair, class_gain, step_learning

ABC = ("A", "B", "C")


def class_of_40(store):
    """Step 1: the pre-check (right B); step 2: vote (right B), revote, follow-up (case 1, right
    C); step 3: the post-check (the same question as step 1, right B).

    Students 0-19 are right in the vote; 0-16 stay right in the revote, 17-19 move away (A).
    Students 20-39 are wrong in the vote (A); 20-29 move to right in the revote, 30-39 stay.
    On the new case: 0-14, 20-27 and 30-35 are right (C). Pre-check: 0-15 right; post-check:
    0-33 right. A 41st student answers the pre-check only (wrong)."""
    q = Question("choice", ABC)
    code, key = store.create_room([q, q, q])
    ids = [new_student_id() for _ in range(41)]
    for s in range(41):
        store.answer(code, 1, ids[s], "B" if s < 16 else "A")
    store.set_step(code, key, 2)
    for s in range(40):
        store.answer(code, 2, ids[s], "B" if s < 20 else "A")
    store.reveal(code, key, 2)
    store.ask_again(code, key, 2)
    for s in range(40):
        store.answer(code, 2, ids[s], "B" if s < 17 or 20 <= s < 30 else "A")
    store.reveal(code, key, 2)
    store.ask_again(code, key, 2, Question("choice", ABC, case=1))
    for s in range(40):
        right = s < 15 or 20 <= s < 28 or 30 <= s < 36
        store.answer(code, 2, ids[s], "C" if right else "A")
    store.set_step(code, key, 3)
    for s in range(40):
        store.answer(code, 3, ids[s], "B" if s < 34 else "C")
    return code, key


def test_a_class_of_40_learns_as_counted_by_hand(store):
    code, key = class_of_40(store)
    questions, seqs = store.trajectories(code, key, 2)
    assert [q.case for q in questions] == [0, 0, 1] and sum(seqs.values()) == 40
    b, c = (lambda a: a == "B"), (lambda a: a == "C")
    learned = step_learning(seqs, [0, 0, 1], [b, b, c])
    assert [(r.kind, r.answered, r.right) for r in learned.rounds] == [
        ("vote", 40, 20), ("revote", 40, 27), ("follow-up", 40, 29)]   # 50 %, 67.5 %, 72.5 %
    assert learned.potential == 20             # students 20-39
    assert learned.moved_right == 10           # 20-29
    assert learned.right_on_new == 14          # 20-27 and 30-35
    assert learned.moved_away == 3             # 17-19
    assert (learned.knew, learned.knew_right_on_new) == (20, 15)   # 0-19; 0-14
    # Porter's weighted learning gain: (14/20) / (15/20) = 0.70 / 0.75
    assert learned.weighted_gain == pytest.approx(14 / 15)
    pairs = store.across(code, key, (1, 1), (3, 1))
    assert sum(pairs.values()) == 41 and pairs[("A", None)] == 1       # the 41st student
    check = check_pair(pairs, b, b)
    assert (check.matched, check.pre_right, check.post_right) == (40, 16, 34)
    # pre 16/40 = 40 %, post 34/40 = 85 %: <g> = (0.85 - 0.40) / (1 - 0.40) = 0.75
    assert check.gain == pytest.approx(0.75) and class_gain([check]) == pytest.approx(0.75)


def test_across_refuses_a_round_the_room_never_asked(store):
    code, key = class_of_40(store)
    with pytest.raises(ValueError, match=r"then must be a \(step, round\) the room has asked"):
        store.across(code, key, (1, 1), (3, 2))
