"""``bench_room``'s tables: every measure beside its target (issue 24), then each step."""

from __future__ import annotations

import os
import statistics

from benchmarks.machine import machine_line
from benchmarks.process_stats import pct

__all__ = ["report"]

REVEAL_HEAVY = 9          # the step whose answer was the largest page (issue 24)


def _fmt(values: list[float]) -> str:
    if not values:
        return "n/a"
    return f"{pct(values, 50):.2f} / {pct(values, 95):.2f} / {max(values):.2f} s"


def _all(by_step: dict) -> list[float]:
    return [v for values in by_step.values() for v in values]


def _ok(met: bool) -> str:
    return "✅" if met else "❌"


def _p95_row(name: str, target: float, values: list[float]) -> tuple[str, str, str]:
    p95 = pct(values, 95) if values else float("nan")
    return name, f"≤ {target:g} s", f"{_fmt(values)} {_ok(p95 <= target)}"


def _rows(m, info, a) -> list[tuple[str, str, str]]:
    cls, idle, none = (m.cpu.get(k, (0.0, 1.0)) for k in
                       ("the class", "idle class", "nobody connected"))
    kb = {s: statistics.mean(v) for s, v in m.kb.items() if v}
    heavy = max(kb, key=kb.get) if kb else None
    lost = sum(len(v) for (s, r), v in m.lost.items() if r == 1)
    sent = sum(n for (s, r), n in m.sent.items() if r == 1)
    clicks = _all(m.clicks)
    idle_share = 100 * idle[0] / idle[1]
    rows = [
        ("students (process: students)", "",
         f"{m.students} ({', '.join(f'{k}: {v}' for k, v in sorted(m.servers.items()))})"),
        _p95_row("Next → student's page shows the step, p50 / p95 / max", 1.5, _all(m.follow)),
        _p95_row("Reveal → student's page shows the answer, p50 / p95 / max", 2,
                 _all(m.reveal)),
        _p95_row(f"… step {REVEAL_HEAVY}'s reveal", 2, m.reveal.get(REVEAL_HEAVY, [])),
        _p95_row("answer → host's count, p50 / p95 / max", 2, _all(m.to_host)),
        ("answers the host's page never counted", "0",
         f"{m.uncounted} {_ok(m.uncounted == 0)}"),
        ("answers lost (store vs sent)", "0", f"{lost} of {sent} {_ok(lost == 0 and sent)}"),
        ("kB sent per student per step, largest step (mean, max)", "≤ 100 kB",
         f"step {heavy}: {kb[heavy]:.0f} kB, {max(m.kb[heavy]):.0f} kB "
         f"{_ok(kb[heavy] <= 100)}" if heavy else "n/a"),
        ("server CPU per student per minute of class", "",
         f"{cls[0] / m.students / (cls[1] / 60):.3f} s ({cls[0]:.0f} s in {cls[1]:.0f} s, "
         f"{100 * cls[0] / cls[1] / 2:.0f} % of 2 cores)"),
        (f"server CPU, {m.students} idle students", "≤ 5 % of a core",
         f"{idle_share:.1f} % ({idle[0]:.1f} s in {idle[1]:.0f} s; nobody connected "
         f"{100 * none[0] / none[1]:.1f} %) {_ok(idle_share <= 5)}"),
        _p95_row("host's own page after a click (Next, Reveal), p50 / p95 / max", 1, clicks),
        ("… Next / Reveal, p95", "", " / ".join(
            f"{pct(m.clicks.get(k, []), 95):.2f} s" for k in ("Next step", "Reveal"))),
    ]
    if m.kill:
        k = m.kill
        rows.append(("kill -9 of one backend mid-question: answers lost", "0",
                     f"{k['lost']} of {k['sent']} {_ok(k['lost'] == 0)} ({k['victim']}: "
                     f"{k['students']} students, {k['tapped before']} had tapped, "
                     f"{k['unsaved at the kill']} unsaved at the kill; "
                     f"{k['reconnected']} reconnected; their reveal p95 "
                     f"{pct(k['reveal'], 95):.2f} s)"))
    load0, load1 = info["load"]
    rows += [
        ("problems (exceptions, pages that never followed, lost run ends)", "0",
         f"{len(m.problems)} {_ok(not m.problems)}"),
        ("load generator CPU (the class)", "",
         f"{m.client_cpu:.0f} s ({100 * m.client_cpu / cls[1]:.0f} % of a core)"),
        ("redis-server CPU", "", "–" if info["redis cpu"] is None
         else f"{info['redis cpu']:.1f} s"),
        ("machine: load average (1, 5, 15 min) before → after; CPU pressure (PSI) in class",
         "", f"{load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f} → {load1[0]:.1f} {load1[1]:.1f} "
             f"{load1[2]:.1f}; {100 * m.pressure.get('the class', float('nan')):.0f} %"),
    ]
    return rows


def _step_table(m) -> list[str]:
    out = ["| step | answers sent / lost | Next → page, p50 / p95 / max | Reveal → answer, "
           "p50 / p95 / max | answer → host, p95 | kB per student, mean / max | runs per "
           "student, full / fragment |", "|---|---|---|---|---|---|---|"]
    for step in sorted(m.kb):
        sent, lost = m.sent.get((step, 1), 0), len(m.lost.get((step, 1), []))
        host = m.to_host.get(step, [])
        runs = m.runs.get(step, [])
        full = statistics.mean(r[0] for r in runs) if runs else 0
        frag = statistics.mean(r[1] for r in runs) if runs else 0
        out.append(f"| {step} | {sent} / {lost} | {_fmt(m.follow.get(step, []))} | "
                   f"{_fmt(m.reveal.get(step, []))} | "
                   f"{f'{pct(host, 95):.2f} s' if host else 'n/a'} | "
                   f"{statistics.mean(m.kb[step]):.0f} / {max(m.kb[step]):.0f} | "
                   f"{full:.1f} / {frag:.1f} |")
    return out


def report(results: dict, a) -> str:
    """Markdown: the targets' table (one column per store), then each store's steps and
    problems."""
    kinds = list(results)
    tables = {k: _rows(*results[k], a) for k in kinds}
    lines = [f"Machine: {machine_line()}; `uptime`: {_uptime()}", "",
             "| measure | target | " + " | ".join(kinds) + " |",
             "|---|---|" + "---|" * len(kinds)]
    for i, (name, target, _) in enumerate(tables[kinds[0]]):
        lines.append(f"| {name} | {target} | "
                     + " | ".join(tables[k][i][2] for k in kinds) + " |")
    for k in kinds:
        m, info = results[k]
        lines += ["", f"Per step, {k}:", "", *_step_table(m)]
        if info["restarts"]:
            lines.append(f"\nRestarts ({k}): " + "; ".join(info["restarts"]))
        for p in m.problems[:20]:
            lines.append(f"- PROBLEM ({k}): {p}")
        if len(m.problems) > 20:
            lines.append(f"- ... and {len(m.problems) - 20} more")
        for where, missing in sorted(m.lost.items()):
            for text in missing[:5]:
                lines.append(f"- LOST ({k}, step {where[0]} round {where[1]}): {text}")
    return "\n".join(lines)


def _uptime() -> str:
    with open("/proc/loadavg") as f:
        parts = f.read().split()
    return f"load average {', '.join(parts[:3])}, {os.cpu_count()} cores"
