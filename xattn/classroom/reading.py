"""What a room's host reads back: the results of every step, the changes between rounds,
each student's trajectory, the counts of answers and of confidence, one question against
another, and a round's answers and tally (`Reading`, a part of
`xattn.classroom.store.ClassStore`)."""

from __future__ import annotations

from xattn._checks import check_int
from xattn.classroom.codes import check_step, normalize_code
from xattn.classroom.question import Question
from xattn.classroom.records import Tally
from xattn.classroom.rules import answered, count_map, decoded, parse_question

__all__ = ["Reading"]


class Reading:
    """The reads of `ClassStore` for a room's host and the hub (``xattn.classroom.hub``)."""

    def results(self, code: str, secret: str) -> list[Tally]:
        """Every round of every step with its counts and timer, in order (no student ids)."""
        code, digest = self._authorize(code, secret)
        tallies = []
        for step, rnd, text, raw, timer in self._guarded(self._results(code, digest)):
            q = parse_question(text)
            tallies.append(Tally(step, rnd, q, count_map(q, raw), timer, answered(raw)))
        return tallies

    def changes(self, code: str, secret: str, step: int, first: int, then: int) -> dict:
        """How the class's answers to ``step`` moved from round ``first`` to round ``then``:
        ``{(answer in first, answer in then): students}``, None for a round a student did not
        answer (counts only, no ids): what peer instruction looks at after a revote."""
        code, digest = self._authorize(code, secret)
        for name, r in (("first", first), ("then", then)):
            check_int(r, name, minimum=1)
        pair = self._guarded(self._round_answers(code, digest, check_step(step), first, then))
        (qa, a), (qb, b) = pair
        qa, qb = parse_question(qa), parse_question(qb)
        moved: dict = {}
        for student in a.keys() | b.keys():
            key = (None if student not in a else qa.decode(a[student]),
                   None if student not in b else qb.decode(b[student]))
            moved[key] = moved.get(key, 0) + 1
        return moved

    def trajectories(self, code: str, secret: str, step: int) -> tuple[list[Question], dict]:
        """Every round's question of ``step``, in order, and how the class's answers went
        through them: ``{(answer in round 1, answer in round 2, ...): students}`` (None for
        a round a student did not answer; counts only, no ids): what the class learned
        (``xattn.classroom.learning``)."""
        code, digest = self._authorize(code, secret)
        step = check_step(step)
        rounds = [t for t in self.results(code, secret) if t.step == step]
        answers = [self._answers_of(code, step, t.round) for t in rounds]
        seqs: dict = {}
        for student in set().union(*answers) if answers else ():
            seq = tuple(None if student not in got else t.question.decode(got[student])
                        for t, got in zip(rounds, answers, strict=True))
            seqs[seq] = seqs.get(seq, 0) + 1
        return [t.question for t in rounds], seqs

    def answer_counts(self, code: str, secret: str) -> dict:
        """How many students gave each whole answer in each round answered, in one read:
        ``{(step, round): {answer: students}}`` (counts only, no ids). A parts or links
        answer is counted whole, as the student sent it (`results` counts each element):
        what judges how many were right."""
        code, _ = self._authorize(code, secret)
        out: dict = {}
        for key, (question, raw) in self._levels_counted(code).items():
            counts: dict = {}
            for (answer, _), n in decoded(question, raw).items():
                counts[answer] = counts.get(answer, 0) + n
            out[key] = counts
        return out

    def confidence(self, code: str, secret: str, step: int, round_: int) -> dict:
        """How sure the class was of each answer to round ``round_`` of ``step``:
        ``{(answer, level): students}`` (level None: the student gave none; counts only, no
        ids), read in one step with the answers (``xattn.classroom.confidence.split``
        tells right and sure from wrong and sure)."""
        code, _ = self._authorize(code, secret)
        step = check_step(step)
        check_int(round_, "round_", minimum=1)
        got = self._levels_counted(code, step, round_).get((step, round_))
        if got is None:
            if (step, round_) not in {(t.step, t.round) for t in self.results(code, secret)}:
                raise ValueError(f"step {step} has no round {round_}.")
            return {}
        return decoded(*got)

    def confidences(self, code: str, secret: str) -> dict:
        """`confidence` of every round in which at least one student gave a confidence, in
        one read: ``{(step, round): {(answer, level): students}}``."""
        code, _ = self._authorize(code, secret)
        return {key: decoded(*got) for key, got in self._levels_counted(code).items()
                if any(level for _, level in got[1])}

    def across(self, code: str, secret: str, first: tuple[int, int],
               then: tuple[int, int]) -> dict:
        """How each student answered round ``first`` = (step, round) and round ``then`` (of
        another step: a pre/post check asks one question twice): ``{(answer, answer):
        students}``, None for a round a student did not answer (counts only, no ids)."""
        code, digest = self._authorize(code, secret)
        rounds = {(t.step, t.round): t.question for t in self.results(code, secret)}
        for name, (step, round_) in (("first", first), ("then", then)):
            if (check_step(step), round_) not in rounds:
                raise ValueError(f"{name} must be a (step, round) the room has asked; "
                                 f"received {(step, round_)!r}.")
        got = [self._answers_of(code, s, r) for s, r in (first, then)]
        pairs: dict = {}
        for student in got[0].keys() | got[1].keys():
            key = tuple(None if student not in g else rounds[sr].decode(g[student])
                        for g, sr in zip(got, (first, then), strict=True))
            pairs[key] = pairs.get(key, 0) + 1
        return pairs

    def round_answers(self, code: str, step: int, round_: int) -> dict[str, str]:
        """Every answer to round ``round_`` of ``step``, as stored text by student id, in one
        read. The server's own read (a process tells each phone it serves what the class has
        of its answer); no page ever shows ids."""
        code, step = normalize_code(code), check_step(step)
        check_int(round_, "round_", minimum=1)
        return self._answers_of(code, step, round_)

    def round_levels(self, code: str, step: int, round_: int) -> dict[str, str]:
        """Every confidence given in round ``round_`` of ``step``, by student id (the
        server's own read, as `round_answers`: a process tells each phone its own)."""
        code, step = normalize_code(code), check_step(step)
        check_int(round_, "round_", minimum=1)
        return self._levels_of(code, step, round_)

    def tally(self, code: str, step: int, round_: int) -> Tally:
        """One round's question and counts (no ids), without the host key: what the class
        may be shown of a round it answered (a revote's phones see the round before,
        `set_options`); `ValueError` for a round the step has not had."""
        code, step = normalize_code(code), check_step(step)
        check_int(round_, "round_", minimum=1)
        got = self._tally(code, step, round_)
        if got is None:
            raise ValueError(f"step {step} has no round {round_}.")
        text, raw, timer = got
        q = parse_question(text)
        return Tally(step, round_, q, count_map(q, raw), timer, answered(raw))
