"""xattn.classroom.snapshots and `ClassStore.snapshot(code, since)`: a snapshot taken after an
earlier one reads the answers of the rounds that may have changed, not every answer of the
class so far, and still equals a full read (SQLite and a real redis-server; rows counted,
never timed)."""

from __future__ import annotations

import dataclasses

import pytest
from test_classroom_hub import Builder, room_state, run, until

from xattn.classroom import Question, new_student_id
from xattn.classroom.hub import Hub
from xattn.classroom.snapshots import rounds_to_read

QUESTIONS = (Question("choice", ("a", "b", "c", "d")),) * 6
LEVELS = ("sure", "think_so", "guess", None)


def count_rows(store) -> list[int]:
    """The answers each of the store's round reads returns, one entry per read (the store's
    own read, wrapped: nothing else about it changes)."""
    reads: list[int] = []
    read = store._round_records

    def counted(code, keys):
        answers, levels = read(code, keys)
        reads.append(sum(len(a) for a in answers.values()))
        return answers, levels
    store._round_records = counted
    return reads


def answer_all(store, code, step, students, shift=0):
    for i, s in enumerate(students):
        store.answer(code, step, s, "abcd"[(i + shift) % 4], confidence=LEVELS[i % 4])


def test_a_snapshot_at_each_move_reads_its_round_not_the_class_so_far(store):
    code, secret = store.create_room(QUESTIONS)
    students = [new_student_id() for _ in range(40)]
    reads = count_rows(store)
    snap = store.snapshot(code)
    per_move = []
    for step in range(1, 7):
        if step > 1:
            store.set_step(code, secret, step)
            snap = store.snapshot(code, snap)                 # Next: the round just left
            per_move.append(reads[-1])
        answer_all(store, code, step, students)
        snap = store.snapshot(code, snap)                     # the answers of this round
        per_move.append(reads[-1])
        assert snap == store.snapshot(code)                   # the same as a full read
    full = reads[-1]
    assert full == 6 * 40 and snap.n_answers == 240
    # every read after a move is at most the round it moved from and the one it is on
    assert max(per_move) <= 40, per_move
    assert snap.levels[(6, 1)] == {s: LEVELS[i % 4] for i, s in enumerate(students)
                                   if LEVELS[i % 4]}


def test_a_snapshot_reads_again_what_changed_where_the_class_is_not(store):
    code, secret = store.create_room(QUESTIONS)
    students = [new_student_id() for _ in range(12)]
    answer_all(store, code, 1, students)
    snap = store.snapshot(code)
    store.set_step(code, secret, 2)              # the class passes through step 2 ...
    answer_all(store, code, 2, students[:5])
    store.set_step(code, secret, 3)              # ... and is on step 3 at the next snapshot
    answer_all(store, code, 3, students[:1], shift=1)
    later = store.snapshot(code, snap)
    assert later == store.snapshot(code) and len(later.answers[(2, 1)]) == 5
    # an answer changed (none added) on the step the class is on is read again
    store.answer(code, 3, students[0], "d", confidence="guess")
    again = store.snapshot(code, later)
    assert again.answers[(3, 1)] == {students[0]: "3"}
    assert again.levels[(3, 1)] == {students[0]: "guess"}
    # a round asked again: its new round is read, the old one kept
    store.ask_again(code, secret, 3)
    answer_all(store, code, 3, students[:2])
    assert store.snapshot(code, again) == store.snapshot(code)


def test_a_homeworks_answers_to_any_step_are_read_again(store):
    code, _ = store.create_room(QUESTIONS, homework=600)
    students = [new_student_id() for _ in range(6)]
    snap = store.snapshot(code)
    for step in (4, 2, 6):
        answer_all(store, code, step, students)
        snap = store.snapshot(code, snap)
        assert snap == store.snapshot(code)
    assert snap.n_answers == 18


def test_fresh_rounds_and_a_room_that_went_back_are_read_in_full(store):
    code, secret = store.create_room(QUESTIONS)
    students = [new_student_id() for _ in range(10)]
    for step in (1, 2, 3):
        store.set_step(code, secret, step)
        answer_all(store, code, step, students)
    snap = store.snapshot(code)
    reads = count_rows(store)
    store.snapshot(code, snap)
    assert reads[-1] == 10                                   # step 3's round alone
    store.snapshot(code, snap, fresh=[(1, 1)])
    assert reads[-1] == 20                                   # ... and the round named
    ahead = dataclasses.replace(snap, version=snap.version + 5)   # given back, older
    assert store.snapshot(code, ahead) == snap and reads[-1] == 30


def test_snapshot_since_must_be_a_snapshot(store):
    code, _ = store.create_room(QUESTIONS)
    with pytest.raises(TypeError, match="since must be a Snapshot or None; received dict"):
        store.snapshot(code, {})


def test_rounds_to_read_of_another_room_or_none_is_every_answered_round(store):
    code, _ = store.create_room(QUESTIONS)
    other, _ = store.create_room(QUESTIONS)
    head = store.snapshot(code)
    counts = {(1, 1): 3, (2, 1): 0}
    assert rounds_to_read(head, counts, None) == {(1, 1)}
    assert rounds_to_read(head, counts, store.snapshot(other)) == {(1, 1)}


def test_the_hubs_snapshot_at_each_move_reads_that_moves_round(store):
    """The hub rebuilds its room's message at every move, with a snapshot of the room: the
    answers that snapshot reads stay those of the round moved from and to, whatever the
    class stored before (the cost of a move does not grow as the class goes on)."""
    code, secret = store.create_room(QUESTIONS)
    students = [new_student_id() for _ in range(30)]
    reads = count_rows(store)

    async def main():
        hub = Hub(store, Builder())
        hub.start()
        try:
            phone = hub.subscribe(code, students[0])
            for step in range(1, 7):
                if step > 1:
                    store.set_step(code, secret, step)
                await until(phone, room_state(step, "asking"))
                answer_all(store, code, step, students)
                store.reveal(code, secret, step)
                await until(phone, room_state(step, "revealed"))   # its snapshot taken
            assert hub._rooms[code].snapshot.n_answers == 180
        finally:
            hub.stop()
    run(main())
    assert reads and max(reads) <= 30, reads
