"""Which rounds a room's snapshot reads again when it is taken after an earlier one
(`ClassStore.snapshot` with ``since``): a move costs the answers its round may have gained,
never every answer of the class so far.

A round's answers are read again when the earlier snapshot may not hold them as they are:
a round it did not know; the latest round of the step the class is on, now or then (the
only round a live class takes answers in, and its students may change them); a round whose
count of answers changed (a homework's step, a step the class passed through between the
two snapshots, a merge after a store restart); a round the caller names (``fresh``: those
it saved answers to since). Every other round's answers and confidences are the earlier
snapshot's. A room whose version or tally went back (a store that restarted and was given
the room by a process that knew less) is read in full.
"""

from __future__ import annotations

from collections.abc import Iterable

from xattn.classroom.records import Snapshot

__all__ = ["rounds_to_read"]


def rounds_to_read(head: Snapshot, counts: dict, since: Snapshot | None,
                   fresh: Iterable[tuple] = ()) -> set[tuple]:
    """The ``(step, round)`` keys whose answers a snapshot must read from the store.

    Parameters
    ----------
    head : Snapshot
        The room as the store holds it now, without answers (its rounds, step, version).
    counts : dict
        ``(step, round)`` -> how many answers the store holds for that round now.
    since : Snapshot or None
        An earlier snapshot of the same room (None: every answered round is read).
    fresh : iterable of (step, round)
        Rounds read again in any case.
    """
    answered = {(r.step, r.round) for r in head.rounds if counts.get((r.step, r.round))}
    if since is None or since.code != head.code or head.version < since.version \
            or head.tally < since.tally:
        return answered
    latest: dict[int, int] = {}
    for r in head.rounds:
        latest[r.step] = max(latest.get(r.step, 0), r.round)
    current = {(s, latest[s]) for s in (head.step, since.step) if s in latest}
    fresh = set(fresh)
    return {k for k in answered
            if k in current or k in fresh or counts[k] != len(since.answers.get(k, ()))}
