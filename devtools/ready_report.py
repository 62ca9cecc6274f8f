"""What the readiness check (``devtools/ready.py``) measured, and what it says of it: the
measures beside their targets (`table`) and a one-line verdict (`verdict`)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

__all__ = ["Report", "table", "verdict", "move_target", "FIRST_LOAD_KB"]

FIRST_LOAD_KB = 150.0      # a phone's first load, page and join (README's target)


def move_target(students: int) -> float:
    """Seconds within which 95 % of phones show a move (README: 0.5 s up to 200, 1 s beyond)."""
    return 0.5 if students <= 200 else 1.0


@dataclass
class Report:
    """What one check measured (seconds, kB of 1,000 bytes)."""

    url: str
    students: int
    steps: int
    code: str = ""
    link: str = ""                                  # the student link the lecturer's page shows
    woke: float = float("nan")                      # seconds until the app answered ok
    joined: int = 0
    refused: list[str] = field(default_factory=list)       # why phones could not join
    first_load: list[float] = field(default_factory=list)  # kB each joined phone read
    next_s: list[float] = field(default_factory=list)      # Next -> a phone shows the step
    reveal_s: list[float] = field(default_factory=list)    # Reveal -> its answer and chart
    sent: int = 0                                   # answers the phones sent
    saved: int = 0                                  # ... that a receipt or the stream saved
    counted: int = 0                                # ... that the lecturer's count showed
    processes: dict[str, int] = field(default_factory=dict)   # process -> phones on it
    ended: bool = False                             # the class ended and the server said so
    problems: list[str] = field(default_factory=list)


def _pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _s(values: list[float]) -> str:
    return f"{_pct(values, 50):.2f} / {_pct(values, 95):.2f} s" if values else "n/a"


def table(r: Report) -> str:
    """The measures beside their targets, as plain text."""
    target = move_target(r.students)
    load = statistics.fmean(r.first_load) if r.first_load else float("nan")
    rows = [("*Next* → a phone shows the step, p50 / p95", f"p95 ≤ {target:g} s",
             _s(r.next_s)),
            ("*Reveal* → a phone shows the answer, p50 / p95", f"p95 ≤ {target:g} s",
             _s(r.reveal_s)),
            ("answers the lecturer's count showed", "all saved",
             f"{r.counted} of {r.saved} saved ({r.sent} sent)"),
            ("a phone's first load (page and join)", f"≤ {FIRST_LOAD_KB:g} kB",
             f"{load:.1f} kB"),
            ("phones that joined", "all", f"{r.joined} of {r.students}")]
    width = max(len(name) for name, _, _ in rows)
    spread = ", ".join(f"{name} {n}" for name, n in sorted(r.processes.items()))
    lines = [f"xattn readiness check of {r.url}: {r.students} phones, {r.steps} steps "
             f"(class {r.code or '-'}; awake after {r.woke:.1f} s; phones on: {spread or '-'})"]
    lines += [f"  {name:<{width}}  {goal:>12}  {value}" for name, goal, value in rows]
    lines += [f"  problem: {p}" for p in r.problems]
    lines.append(f"  the class {r.code} ended: nothing of it is kept on the server" if r.ended
                 else f"  the class {r.code or '-'} was NOT seen to end")
    return "\n".join(lines)


def verdict(r: Report) -> tuple[bool, str]:
    """(whether it holds the class, one line: "holds N students", or what to change)."""
    target, change = move_target(r.students), []
    if r.joined < r.students:
        why = r.refused[0] if r.refused else "no reason given"
        limit = " (the per-address limit on new students: XATTN_LIMITS new_students; each " \
                "check's phones count)" if "429" in why else ""
        change.append(f"{r.students - r.joined} of {r.students} phones could not join{limit}: "
                      f"{why[:160]}")
    slow = [name for name, values in (("Next", r.next_s), ("Reveal", r.reveal_s))
            if values and _pct(values, 95) > target]
    if slow:
        change.append(f"{' and '.join(slow)} → phone p95 is over {target:g} s: give it more "
                      "processes on more cores (deploy/serve.sh N with a core each, "
                      "XATTN_PROCESSES in the image, a bigger plan; Community Cloud runs one)")
    if r.counted < r.saved or r.saved < r.sent:
        change.append(f"the lecturer's count showed {r.counted} of {r.saved} saved answers "
                      f"({r.sent} sent): check the class store (XATTN_REDIS_URL for several "
                      "machines) and the server's log")
    if r.first_load and statistics.fmean(r.first_load) > FIRST_LOAD_KB:
        change.append("a phone's first load is over its target: is a proxy in front "
                      "dropping gzip?")
    if not r.ended:
        change.append(f"the class {r.code} was not seen to end: end it on the lecturer's page")
    if r.problems:
        change.append(f"{len(r.problems)} problem(s), the first: {r.problems[0][:160]}")
    if not change and (r.next_s or r.steps == 1) and r.reveal_s:
        return True, f"verdict: holds {r.students} students"
    return False, f"verdict: does not hold {r.students} students yet: " + "; ".join(change)
