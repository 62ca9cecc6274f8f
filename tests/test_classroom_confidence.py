"""How sure each answer is (``xattn/classroom/confidence.py``): the levels, their check, and
how the class's counts split by right and wrong and by each part or link. The store's side
(saved with the answer, counted, kept by a snapshot, the host's switches) is in
tests/test_classroom_store.py, on SQLite and a real redis-server."""

from __future__ import annotations

from xattn.classroom import Question
from xattn.classroom.confidence import LEVELS, by_element, check_level, split

# --- the levels themselves ---------------------------------------------------------------------

def test_check_level_takes_the_three_levels_or_none():
    assert [check_level(v) for v in (*LEVELS, None)] == [*LEVELS, None]


def test_a_split_by_right_and_level_counts_every_student_once():
    counts = {("cat", "sure"): 7, ("cat", "think_so"): 2, ("cat", "guess"): 3,
              ("the", "sure"): 5, ("the", None): 1, ("mat", "guess"): 2}
    s = split(counts, lambda a: a == "cat")
    assert (s.right_sure, s.right_guessing, s.wrong_sure, s.answered) == (7, 3, 5, 20)
    assert s.count(False, "guess") == 2 and s.count(False, None) == 1 and s.graded
    poll = split(counts, None)                                   # no right answer
    assert not poll.graded and poll.count(None, "sure") == 12 and poll.right_sure == 0


def test_by_element_splits_each_part_and_link_by_its_students_levels():
    jobs = Question("parts", ("sink", "aligns"), rows=("head 1", "head 2"))
    counts = {(("sink", "aligns"), "sure"): 2, (("sink", None), "guess"): 1,
              ((None, "aligns"), None): 4}
    assert by_element(jobs, counts) == {("head 1", "sink"): {"sure": 2, "guess": 1},
                                        ("head 2", "aligns"): {"sure": 2, None: 4}}
    pair = Question("links", ("the", "cat"), rows=("le", "chat"))
    links = {(((0, 0), (1, 1)), "sure"): 3, (((0, 0),), "think_so"): 1}
    assert by_element(pair, links) == {(0, 0): {"sure": 3, "think_so": 1},
                                       (1, 1): {"sure": 3}}
