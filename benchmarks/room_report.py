"""``bench_room``'s tables: every measure beside its target, then each step."""

from __future__ import annotations

import os
import statistics

from benchmarks.machine import machine_line
from benchmarks.process_stats import pct

__all__ = ["report", "targets"]


def targets(students: int) -> dict:
    """The targets for a class of ``students`` phones on ``deploy/serve.sh 2``: a class of
    200 moves within half a second, a lecture hall of 1,000 within one."""
    small = students <= 200
    return {"move": 0.5 if small else 1.0, "count": 1.0, "cpu_move_ms": 1.0, "idle": 5.0,
            "rss": 600.0, "move_kb": 10.0}


def _fmt(values: list[float], unit: str = "s", scale: float = 1.0) -> str:
    if not values:
        return "n/a"
    v = [x * scale for x in values]
    return f"{pct(v, 50):.2f} / {pct(v, 95):.2f} / {max(v):.2f} {unit}"


def _all(by_step: dict) -> list[float]:
    return [v for values in by_step.values() for v in values]


def _ok(met: bool) -> str:
    return "✅" if met else "❌"


def _p95_row(name: str, target: float, values: list[float]) -> tuple[str, str, str]:
    p95 = pct(values, 95) if values else float("nan")
    return name, f"≤ {target:g} s", f"{_fmt(values)} {_ok(p95 <= target)}"


def _mean(values) -> float:
    return statistics.mean(values) if values else float("nan")


def _rows(m, info, a) -> list[tuple[str, str, str]]:
    t = targets(m.students)
    n = m.students
    cls, idle, none = (m.cpu.get(k, (0.0, 1.0)) for k in
                       ("the class", "idle class", "nobody connected"))
    worst_reveal = max(m.reveal, key=lambda s: pct(m.reveal[s], 95)) if m.reveal else None
    lost = sum(len(v) for v in m.lost.values())
    sent = sum(m.sent.values())
    per_move = [v for v in (_phone_ms(procs) for *_, procs in m.move_cpu) if v is not None]
    all_move = [_all_ms(procs) for *_, procs in m.move_cpu]
    idle_share = 100 * idle[0] / idle[1]
    kb = {key: _mean(v) for key, v in m.move_kb.items() if v}
    heavy = max(kb, key=kb.get) if kb else None
    frame = {key: _mean(v) for key, v in m.frame_kb.items() if v}
    heavy_frame = max(frame, key=frame.get) if frame else None
    rss = max((top for _, top in m.memory.values()), default=float("nan"))
    rows = [
        ("phones (process: phones at the start)", "",
         f"{n} ({', '.join(f'{k}: {v}' for k, v in sorted(m.servers.items()))})"),
        _p95_row(f"{n} phones: *Next* → phone shows the step, p50 / p95 / max", t["move"],
                 _all(m.follow)),
        _p95_row("… *Reveal* → phone shows the answer and chart, p50 / p95 / max (every "
                 "step)", t["move"], _all(m.reveal)),
        ("… the slowest step's reveal, p95", f"≤ {t['move']:g} s",
         f"step {worst_reveal}: {pct(m.reveal[worst_reveal], 95):.2f} s "
         f"{_ok(pct(m.reveal[worst_reveal], 95) <= t['move'])}" if worst_reveal else "n/a"),
        _p95_row("… answer → host's count, p50 / p95 / max", t["count"], _all(m.to_host)),
        ("… answers the host's page never counted", "0",
         f"{m.uncounted} {_ok(m.uncounted == 0)}"),
        ("… answers lost (store vs sent), every round, the kill and the outage included",
         "0", f"{lost} of {sent} {_ok(lost == 0 and sent > 0)}"),
    ]
    k, o, f = m.kill, m.outage, m.follow_up
    rows.append(_p95_row("… *Ask a follow-up* (step 1 on a new case) → phone shows its "
                         "question, p50 / p95 / max", t["move"], f.get("shown", []))
                if f else ("… *Ask a follow-up* → phone", "", "not run"))
    if f:
        rows.append(_p95_row("… the follow-up's *Reveal* → phone, p50 / p95 / max", t["move"],
                             f.get("reveal", [])))
    rows.append(("… of which kill -9 of one process mid-question", "0", "not run" if not k else
                 f"{k['lost']} of {k['sent']} {_ok(k['lost'] == 0)} ({k['victim']}: "
                 f"{k['phones']} phones, {k['tapped before']} had tapped, "
                 f"{k['unsaved at the kill']} unsaved at the kill, {k['failed sends']} sends "
                 f"failed, {k['resent']} sent again; "
                 f"{k['reconnected']} streams reconnected, noticed after "
                 f"{_fmt(k['noticed'])}, the room back after {_fmt(k['back'])}; the round's "
                 f"reveal p95 {pct(k['reveal'], 95):.2f} s)"))
    rows.append(("… of which a store outage (SQLite: its write lock held; Redis: "
                 "redis-server killed, then restarted on its append-only file)",
                 "0", "not run" if not o else
                 f"{o['seconds']:.0f} s: {o['lost']} of {o['sent']} "
                 f"{_ok(o['lost'] == 0 and o['sent'] > 0)} ({o['saved during']} saved during "
                 f"it, {o['retrying']} told *retrying*, {o['failed sends']} sends failed, "
                 f"{o['resent']} sent again; {o['told']} phones told of the outage; store "
                 f"back → saved {_fmt(o['back → saved'])}, → the host's count "
                 f"{_fmt(o['back → host'])}; reveal p95 "
                 f"{pct(o['reveal'], 95):.2f} s)"))
    rows += [
        ("… server CPU per phone per move, p50 / p95 / max over the moves: the process "
         "that serves phones only (the click until every phone has the move, less its idle "
         "rate, over its phones)", f"≤ {t['cpu_move_ms']:g} ms",
         f"{_fmt(per_move, 'ms')} {_ok(bool(per_move) and max(per_move) <= t['cpu_move_ms'])}"),
        ("… the same over both processes, the host's page included, over all the phones", "",
         _fmt(all_move, "ms")),
        (f"… {n} idle phones: server CPU (both processes)", f"≤ {t['idle']:g} % of a core",
         f"{idle_share:.1f} % ({idle[0]:.1f} s in {idle[1]:.0f} s; nobody connected "
         f"{100 * none[0] / none[1]:.1f} %) {_ok(idle_share <= t['idle'])}"),
        ("… memory per process, largest RSS (start → max)", f"≤ {t['rss']:g} MB",
         "; ".join(f"{name}: {start:.0f} → {top:.0f} MB" for name, (start, top)
                   in sorted(m.memory.items())) + f" {_ok(rss <= t['rss'])}"),
        ("bytes per phone per move, largest step (its stream from the click to the next "
         "click, receipts included; mean, max)", f"≤ {t['move_kb']:g} kB",
         f"step {heavy[0]} {heavy[1]}: {kb[heavy]:.1f} kB, {max(m.move_kb[heavy]):.1f} kB "
         f"{_ok(max(m.move_kb[heavy]) <= t['move_kb'])}" if heavy else "n/a"),
        ("… the move's frame alone, largest", "",
         f"step {heavy_frame[0]} {heavy_frame[1]}: {frame[heavy_frame]:.1f} kB"
         if heavy_frame else "n/a"),
        ("tap → receipt *saved*, p50 / p95 / max", "", _fmt(_all(m.saved))),
        ("a phone joins (the page, then its stream's first frame), p50 / p95 / max; the "
         "page on the wire", "", f"{_fmt(m.joins)}; {m.page_kb:.1f} kB"),
        *([("… by browser language: phones, pages that came in it, the page on the wire",
            "all in it", "; ".join(
                f"{lang}: {n}, {served} {_ok(served == n)}, {kb:.1f} kB"
                for lang, (n, served, kb) in m.languages.items()))] if m.languages else []),
        _p95_row("host's own page after a click (Next, Reveal), p50 / p95 / max", 1,
                 _all(m.clicks)),
        ("host's page: runs (full), runs whose end never came, pulses, triggers sent "
         "(*moved* while a run of its own was under way)", "",
         f"{m.host.get('runs', 0)} ({m.host.get('full runs', 0)}), "
         f"{m.host.get('lost ends', 0)}, {m.host.get('pulses', 0)}, "
         f"{m.host.get('triggers', {})} ({m.host.get('moved mid-run', 0)})"),
        ("problems (exceptions, phones that never followed, unsaved answers)", "0",
         f"{len(m.problems)} {_ok(not m.problems)}"),
        ("load generator: CPU in class; its event loop's lag p95 / max; its GC pauses (count, "
         "longest)", "",
         f"{m.client_cpu:.0f} s ({100 * m.client_cpu / cls[1]:.0f} % of a core); "
         f"{1000 * pct(m.client_lag, 95):.0f} / {1000 * max(m.client_lag, default=0):.0f} ms; "
         f"{len(m.client_gc)}, {1000 * max((s for _, s in m.client_gc), default=0):.0f} ms"),
        ("server CPU in class (both processes); HAProxy; redis-server (whole run)", "",
         f"{cls[0]:.0f} s in {cls[1]:.0f} s ({100 * cls[0] / cls[1] / 2:.0f} % of 2 cores); "
         f"{m.proxy_cpu.get('the class', 0):.1f} s; "
         + ("–" if info["redis cpu"] is None else f"{info['redis cpu']:.1f} s")),
    ]
    load0, load1 = info["load"]
    rows.append(("machine: load average (1, 5, 15 min) before → after; CPU pressure (PSI) "
                 "in class", "",
                 f"{load0[0]:.1f} {load0[1]:.1f} {load0[2]:.1f} → {load1[0]:.1f} "
                 f"{load1[1]:.1f} {load1[2]:.1f}; "
                 f"{100 * m.pressure.get('the class', float('nan')):.0f} %"))
    return rows


def _phone_ms(procs: dict) -> float | None:
    """ms of CPU per phone in the processes that hold no host page."""
    cpu = sum(c for c, _, host in procs.values() if not host)
    phones = sum(n for _, n, host in procs.values() if not host)
    return 1000 * cpu / phones if phones else None


def _all_ms(procs: dict) -> float:
    phones = sum(n for _, n, _ in procs.values())
    return 1000 * sum(c for c, _, _ in procs.values()) / max(1, phones)


def _step_table(m) -> list[str]:
    cpu = {}
    for step, name, _, procs in m.move_cpu:
        one = _phone_ms(procs)
        cpu[(step, name)] = f"{one:.2f}" if one is not None else "–"
        cpu[(step, name)] += f" ({_all_ms(procs):.2f})"
    out = ["| step | answers sent / lost | Next → phone, p50 / p95 / max | Reveal → answer and "
           "chart, p50 / p95 / max | answer → host, p95 | tap → saved, p95 | stream kB a "
           "phone, Next / Reveal (mean) | frame kB, Next / Reveal | server CPU ms a phone "
           "a move, phones-only process (both, host page included), Next / Reveal |",
           "|---|---|---|---|---|---|---|---|---|"]
    for step in sorted(m.reveal):
        sent, lost = m.sent.get((step, 1), 0), len(m.lost.get((step, 1), []))
        host, saved = m.to_host.get(step, []), m.saved.get(step, [])

        def two(d: dict, step: int = step) -> str:
            return " / ".join(f"{_mean(d[(step, k)]):.1f}" if d.get((step, k)) else "–"
                              for k in ("Next", "Reveal"))
        cpus = " / ".join(cpu.get((step, k), "–") for k in ("Next", "Reveal"))
        out.append(f"| {step} | {sent} / {lost} | {_fmt(m.follow.get(step, []))} | "
                   f"{_fmt(m.reveal.get(step, []))} | "
                   f"{f'{pct(host, 95):.2f} s' if host else 'n/a'} | "
                   f"{f'{pct(saved, 95):.2f} s' if saved else 'n/a'} | "
                   f"{two(m.move_kb)} | {two(m.frame_kb)} | {cpus} |")
    by_process = {}
    for per in m.by_process.values():
        for b, values in per.items():
            by_process.setdefault(b, []).extend(values)
    if by_process:
        out += ["", "*Next* → phone by process (* the host's), p50 / p95 / max: " + "; ".join(
            f"{b}: {_fmt(v)}" for b, v in sorted(by_process.items()))]
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
                     + " | ".join(tables[k][i][2] if i < len(tables[k]) else ""
                                  for k in kinds) + " |")
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
        if m.profile:
            lines += ["", m.profile.strip()]
    return "\n".join(lines)


def _uptime() -> str:
    with open("/proc/loadavg") as f:
        parts = f.read().split()
    return f"load average {', '.join(parts[:3])}, {os.cpu_count()} cores"
