"""scripts/toy_training.py: what the toy training scripts share (the schedule, the card's head
table, the files written, and the command line's --card-only and --check)."""

import json
from pathlib import Path

import numpy as np
import pytest

from scripts.toy_training import (
    ToyScript,
    head_grid,
    run,
    save_weights,
    stored_parameters,
    warmup_then_decay,
    write_metrics,
)


@pytest.mark.parametrize(("step", "factor"), [(0, 0.25), (3, 1.0), (4, 6 / 6), (7, 3 / 6),
                                              (10, 0.0), (12, 0.0)])
def test_the_rate_warms_up_then_decays_to_zero(step, factor):
    assert warmup_then_decay(10, 4)(step) == pytest.approx(factor)


def test_the_head_grid_counts_layers_and_heads_from_one():
    assert head_grid([[0.5, 1.0], [0.0, 0.25]], lambda v: f"{v:.2f}") == [
        "| layer | head 1 | head 2 |", "|---|---|---|",
        "| 1 | 0.50 | 1.00 |", "| 2 | 0.00 | 0.25 |"]


class _Saved:
    """What save_pretrained writes, without torch: config.json, model.safetensors, and a file
    that save_weights must leave out."""

    def save_pretrained(self, folder):
        from safetensors.numpy import save_file

        save_file({"a": np.zeros((2, 3), np.float32), "b": np.zeros(4, np.float32)},
                  str(Path(folder) / "model.safetensors"))
        (Path(folder) / "config.json").write_text("{}")
        (Path(folder) / "generation_config.json").write_text("{}")


def test_save_weights_keeps_the_config_and_the_weights_and_counts_them(tmp_path):
    save_weights(_Saved(), tmp_path / "new")
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["config.json",
                                                                   "model.safetensors"]
    assert stored_parameters(tmp_path / "new") == 10


def _script(out: Path, score: int, calls: list) -> ToyScript:
    def train(*, steps, lr):
        calls.append(("train", steps, lr))
        return _Saved(), [(steps, 0.5)]

    def finish(folder, training):
        calls.append(("finish", folder == out))
        return write_metrics(folder, {"score": score, "training": training}, f"# {score}\n")

    return ToyScript("A toy.\n\nMore.", {"steps": 3, "lr": 0.1}, out, train, save_weights,
                     finish, (0, 1), {"model": {"d": 2}})


def test_a_run_writes_the_folder_and_card_only_rewrites_the_card(tmp_path):
    calls = []
    run(_script(tmp_path, 7, calls), ["--steps", "2"])
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    t = metrics["training"]
    assert (t["steps"], t["lr"], t["torch_seed"], t["batch_seed"], t["loss"]) == (2, 0.1, 0, 1,
                                                                               [[2, 0.5]])
    assert (t["parameters"], t["model"]) == (10, {"d": 2})
    assert (tmp_path / "README.md").read_text() == "# 7\n"
    assert calls == [("train", 2, 0.1), ("finish", True)]
    run(_script(tmp_path, 8, calls), ["--card-only"])
    assert calls[-1] == ("finish", True) and len(calls) == 3
    assert json.loads((tmp_path / "metrics.json").read_text())["training"] == t


@pytest.mark.parametrize(("score", "code"), [(7, 0), (8, 1)])
def test_check_retrains_elsewhere_and_says_what_differs(tmp_path, capsys, score, code):
    calls = []
    run(_script(tmp_path, 7, calls), [])
    capsys.readouterr()
    shipped = (tmp_path / "metrics.json").read_text()
    with pytest.raises(SystemExit) as stop:
        run(_script(tmp_path, score, calls), ["--check"])
    assert stop.value.code == code
    assert json.loads(capsys.readouterr().out) == {"score": code == 0, "loss": True}
    assert calls[-1] == ("finish", False)
    assert (tmp_path / "metrics.json").read_text() == shipped
