"""benchmarks/bench_moves.py: a room's moves in one process, counted: one build per language in
use, own parts only for the phones here, the table beside issue 43's target."""

from __future__ import annotations

from benchmarks import bench_moves


def test_a_small_class_s_moves_are_measured_and_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "class.db"))   # restored after
    a = bench_moves.parse_args(["--phones", "12", "--here", "6", "--steps", "2",
                                "--languages", "en", "fr"])
    rows = bench_moves.measure(a)
    assert [r["step"] for r in rows] == [1, 2]
    for row in rows:
        for phase in ("asking", "revealed"):
            ms, built, own = row[phase]
            assert ms > 0 and built == 2              # one build per language in use
            assert own <= 6                           # never one per answer of the room
    text = bench_moves.report(rows, a)
    assert "| CPU per phone per move, p50 / p95 / max (every move) | p95 ≤ 0.15 ms |" in text
    assert text.count("\n| 1 |") == 1 and "6 of 12 phones here, languages en fr" in text
