"""What the class learned, on the lecturer's page: every step's rounds and movers, the
pre/post check's gain, as one small table, one chart and a CSV (``xattn.classroom.learning``).

Read from the store's anonymous answer sequences (`ClassStore.trajectories`, `across`): a
row names steps and rounds, never a student. Each round is judged by its own question's truth
(a follow-up's is its new case's), computed as the step's is (``xattn.live.answers``).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

import streamlit as st

from xattn.classroom import ClassroomError
from xattn.classroom.learning import StepLearning, check_pair, class_gain, step_learning
from xattn.figures.classroom import learning_figure
from xattn.lesson import is_right
from xattn.literal import csv_cell, md_code
from xattn.live.answers import class_step
from xattn.live.prepared import StepUnavailable
from xattn.ui.charts import show_chart
from xattn.ui.i18n import page_lang
from xattn.ui.room.room import Room, class_store

__all__ = ["ClassLearning", "class_learning", "learned_panel", "learning_csv", "judge",
           "learning_text"]


@dataclass(frozen=True)
class ClassLearning:
    """Every asked step's learning (room step, title, `StepLearning`), every check question
    (its lesson step, title, `CheckPair`) and the class's ⟨g⟩."""

    steps: tuple
    checks: tuple
    gain: float | None


def judge(lesson, n: int, case: int):
    """Whether an answer to step ``n`` of ``lesson`` on case ``case`` is right, as a function
    of the answer (`xattn.lesson.is_right` with that case's truth); None for a step with no
    right answer (a poll) or one whose weights cannot be made here."""
    try:
        told = class_step(lesson, n, case=case)[1]
    except StepUnavailable:
        return None
    if told.question is None or not told.question.of.graded:
        return None
    return lambda answer: is_right(told, answer)


def class_learning(room: Room) -> ClassLearning:
    """The class's learning so far (`ClassroomError` if the store does not answer)."""
    store, lesson = class_store(), room.lesson
    asked = sorted({t.step for t in store.results(room.code, room.host) if t.n_answered})
    steps = []
    for n in asked:
        questions, seqs = store.trajectories(room.code, room.host, n)
        learned = step_learning(seqs, [q.case for q in questions],
                                [judge(lesson, n, q.case) for q in questions])
        steps.append((n, lesson.steps[n - 1].title, learned))
    checks = []
    for before, after in lesson.checks():
        if before in asked and after in asked:
            pre, post = judge(lesson, before, 0), judge(lesson, after, 0)
            pairs = store.across(room.code, room.host, (before, 1), (after, 1))
            k = lesson.step_number(before)                  # the lesson's own step
            checks.append((k, lesson.steps[len(lesson.check) + k - 1].title,
                           check_pair(pairs, pre, post)))
    return ClassLearning(tuple(steps), tuple(checks), class_gain([c for *_, c in checks]))


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def _share(learned: StepLearning, kind: str) -> float | None:
    found = [r for r in learned.rounds if r.kind == kind]
    return found[-1].share if kind == "revote" and found else found[0].share if found else None


def _table(c: ClassLearning) -> str:
    rows = ["| step | first vote | revote | follow-up | potential learners | right after the "
            "revote | right on a new case | weighted gain |", "|---|---|---|---|---|---|---|---|"]
    for n, title, s in c.steps:
        rows.append(f"| {n}. {md_code(title)} | {_pct(_share(s, 'vote'))} | "
                    f"{_pct(_share(s, 'revote'))} | {_pct(_share(s, 'follow-up'))} | "
                    f"{s.potential} | {'–' if s.moved_right is None else s.moved_right} | "
                    f"{'–' if s.right_on_new is None else s.right_on_new} | "
                    f"{_pct(s.weighted_gain)} |")
    text = "\n".join(rows)
    if any(s.weighted_gain is not None for *_, s in c.steps):
        text += ("\n\n*Weighted gain* (Porter et al. 2011): the potential learners' share right "
                 "on the new case over the share right on it of those right in the first vote; "
                 "they found 85–89 %. The raw count of potential learners right on a new case "
                 "has no such target: a new case is often harder.")
    if c.checks:
        text += ("\n\n| check question | answered both | right before | right after | ⟨g⟩ |\n"
                 "|---|---|---|---|---|\n" + "\n".join(
                     f"| {k}. {md_code(title)} | {p.matched} | {p.pre_right} | {p.post_right} "
                     f"| {'–' if p.gain is None else f'{p.gain:.2f}'} |"
                     for k, title, p in c.checks))
        text += ("\n\nThe class's normalized gain ⟨g⟩ = (post − pre) / (100 % − pre) over the "
                 f"check: **{'–' if c.gain is None else f'{c.gain:.2f}'}** (Hake 1998: 0.23 "
                 "for lectures, 0.48 for interactive teaching).")
    return text


def learning_csv(c: ClassLearning) -> str:
    """The class's learning as CSV: a row per step and round, then a row per check question
    (counts only; RFC 4180, formula-safe cells)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\r\n")
    w.writerow(("step", "title", "round", "kind", "case", "answered", "right",
                "potential_learners", "right_after_revote", "right_on_new_case",
                "moved_away", "weighted_gain"))
    for n, title, s in c.steps:
        for r in s.rounds:
            w.writerow((n, csv_cell(title), r.round, r.kind, r.case, r.answered,
                        "" if r.right is None else r.right, s.potential,
                        "" if s.moved_right is None else s.moved_right,
                        "" if s.right_on_new is None else s.right_on_new,
                        "" if s.moved_away is None else s.moved_away,
                        "" if s.weighted_gain is None else f"{s.weighted_gain:.4f}"))
    w.writerow(())
    w.writerow(("check_step", "title", "answered_both", "right_before", "right_after", "gain"))
    for k, title, p in c.checks:
        w.writerow((k, csv_cell(title), p.matched, p.pre_right, p.post_right,
                    "" if p.gain is None else f"{p.gain:.4f}"))
    w.writerow(("class", "", sum(p.matched for *_, p in c.checks),
                sum(p.pre_right for *_, p in c.checks), sum(p.post_right for *_, p in c.checks),
                "" if c.gain is None else f"{c.gain:.4f}"))
    return buf.getvalue()


def learned_panel(room: Room) -> None:
    """The host's *What the class learned* (on demand: it reads every round of the class)."""
    if not st.toggle("What the class learned", key="class_learned",
                     help="Each step's share right in the first vote, the revote and a "
                          "follow-up; the potential learners (wrong in the first vote) and "
                          "where they went; the pre/post check's gain. No names, no ids."):
        return
    try:
        learned = class_learning(room)
    except ClassroomError as err:
        st.warning(md_code(str(err)), icon=":material/cloud_off:")
        return
    if not learned.steps:
        st.caption("Nothing answered yet.")
        return
    st.markdown(_table(learned))
    show_chart(learning_figure([(f"{n}", _share(s, "vote"), _share(s, "revote"),
                                 _share(s, "follow-up")) for n, _, s in learned.steps],
                               lang=page_lang()),
               key="class_learned_chart", name=f"xattn-class-{room.code}-learned",
               alt="Grouped bar chart: each step's share of right answers in the first vote, "
                   "the revote and the follow-up.")
    st.download_button("What the class learned (CSV)", learning_csv(learned),
                       f"xattn-class-{room.code}-learned.csv", "text/csv",
                       key="class_learned_csv", on_click="ignore", width="stretch")


def learning_text(learned: StepLearning) -> str:
    """One step's rounds and movers in Markdown: a small table and one line."""
    rows = ["| round | what | answered | right |", "|---|---|---|---|"]
    for r in learned.rounds:
        what = {"vote": "the first vote", "revote": "a revote",
                "follow-up": f"a follow-up (new case {r.case})"}[r.kind]
        right = "–" if r.share is None else f"{r.right} ({r.share:.0%})"
        rows.append(f"| {r.round} | {what} | {r.answered} | {right} |")
    line = []
    if learned.potential:
        line.append(f"**{learned.potential} potential learner"
                    f"{'s' if learned.potential != 1 else ''}** (wrong in round 1)")
        if learned.moved_right is not None:
            line.append(f"{learned.moved_right} of them right after the revote")
        if learned.right_on_new is not None:
            line.append(f"{learned.right_on_new} of them right on the new case")
        if learned.weighted_gain is not None:
            line.append(f"weighted learning gain {learned.weighted_gain:.0%} (Porter et al. "
                        "2011: 85–89 %)")
    if learned.moved_away:
        line.append(f"{learned.moved_away} moved away from a right answer")
    return "\n".join(rows) + ("\n\n" + "; ".join(line) + "." if line else "")
