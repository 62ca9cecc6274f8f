"""What the toy models' training scripts share (``train_toy_speech``, ``train_toy_reader``;
``train_marian`` uses the optimiser loop): AdamW with a warm-up then a linear decay, the folder's
weights written and counted, the card's head tables, and the command line (``--steps``,
``--out``, ``--card-only``, ``--check``).

A script describes its model in a ``ToyScript`` and its ``main`` is ``run(script, argv)``::

    run(ToyScript(__doc__, TRAIN, OUT, train, write_folder, finish, (TORCH_SEED, BATCH_SEED),
                  {"model": MODEL}), argv)

``--check`` retrains in a temporary folder and prints, for each key of metrics.json, whether it
equals the shipped one (the loss log too); it exits 1 when one differs.
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["warmup_then_decay", "fit", "stored_parameters", "save_weights", "write_metrics",
           "head_grid", "ToyScript", "run"]

LOG_EVERY = 250                # steps between two lines of the loss log


def warmup_then_decay(steps: int, warmup: int) -> Callable[[int], float]:
    """The learning rate's factor at step s (from 0): linear warm-up over ``warmup`` steps,
    then linear decay to 0 at ``steps`` (for ``torch.optim.lr_scheduler.LambdaLR``)."""
    return lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup)))


def fit(model, loss_at: Callable, *, steps: int, lr: float, warmup: int,
        weight_decay: float):
    """Train ``model`` for ``steps`` steps of ``loss_at(step)`` (step from 1; a torch scalar):
    AdamW, ``warmup_then_decay``, gradients clipped to norm 1. Returns the model in eval mode
    and (step, mean loss) every ``LOG_EVERY`` steps and at the last, printed as they come."""
    import torch

    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, warmup_then_decay(steps, warmup))
    model.train()
    log, window, start = [], [], time.perf_counter()
    for step in range(1, steps + 1):
        loss = loss_at(step)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        window.append(loss.item())
        if step % LOG_EVERY == 0 or step == steps:
            log.append((step, round(float(np.mean(window)), 4)))
            window = []
            print(f"step {step:5d}  loss {log[-1][1]:.4f}  {time.perf_counter() - start:.0f} s",
                  flush=True)
    return model.eval(), log


def stored_parameters(folder: Path) -> int:
    """The numbers ``model.safetensors`` in ``folder`` holds."""
    from safetensors.numpy import load_file

    return sum(int(a.size) for a in load_file(str(folder / "model.safetensors")).values())


def save_weights(model, folder: Path) -> None:
    """config.json and model.safetensors of a transformers model (``save_pretrained``, its
    other files left out), ``folder`` made if needed."""
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "model.safetensors"):
            shutil.copy(Path(tmp) / name, folder / name)


def write_metrics(folder: Path, metrics: dict, card: str) -> dict:
    """metrics.json and README.md (the card) in ``folder``; returns ``metrics``."""
    (folder / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n")
    (folder / "README.md").write_text(card, encoding="utf-8")
    return metrics


def head_grid(rows, fmt) -> list[str]:
    """A markdown table: a row per decoder layer, a column per head, counted from 1."""
    out = ["| layer | " + " | ".join(f"head {h + 1}" for h in range(len(rows[0]))) + " |",
           "|" + "---|" * (len(rows[0]) + 1)]
    return out + [f"| {k + 1} | " + " | ".join(fmt(v) for v in row) + " |"
                  for k, row in enumerate(rows)]


class ToyScript(NamedTuple):
    """One training script as ``run`` drives it."""

    doc: str                                  # the script's docstring: its first line is --help's
    settings: dict                            # TRAIN: train's keyword arguments, "steps" among them
    out: Path                                 # the shipped folder
    train: Callable                           # (**settings) -> (torch model, loss log)
    write_folder: Callable                    # (model, folder) -> None
    finish: Callable                          # (folder, training) -> metrics
    seeds: tuple[int, int]                    # (torch's, the batches'), kept in training
    described: dict                           # the model's settings, kept in training (e.g. MODEL)


def run(script: ToyScript, argv=None) -> None:
    """The command line of a toy training script (see the module's docstring)."""
    parser = argparse.ArgumentParser(description=script.doc.splitlines()[0])
    parser.add_argument("--steps", type=int, default=script.settings["steps"])
    parser.add_argument("--out", type=Path, default=script.out)
    parser.add_argument("--card-only", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    if args.card_only:
        script.finish(args.out, json.loads((args.out / "metrics.json").read_text())["training"])
        return
    import torch
    import transformers

    start = time.perf_counter()
    model, log = script.train(**{**script.settings, "steps": args.steps})
    seconds = round(time.perf_counter() - start)
    out = Path(tempfile.mkdtemp()) if args.check else args.out
    script.write_folder(model, out)
    training = {**script.settings, "steps": args.steps, "torch_seed": script.seeds[0],
                "batch_seed": script.seeds[1], "loss": log, "seconds": seconds,
                "parameters": stored_parameters(out), **script.described,
                "versions": {"torch": torch.__version__,
                             "transformers": transformers.__version__,
                             "python": platform.python_version()}}
    metrics = script.finish(out, training)
    if args.check:
        _compare(metrics, json.loads((script.out / "metrics.json").read_text()))
        shutil.rmtree(out)


def _compare(metrics: dict, shipped: dict) -> None:
    same = {k: metrics[k] == shipped[k] for k in metrics if k != "training"}
    loss = json.loads(json.dumps(metrics["training"]["loss"]))     # (step, loss) as JSON has it
    same["loss"] = loss == shipped["training"]["loss"]
    print(json.dumps(same, indent=1))
    raise SystemExit(0 if all(same.values()) else 1)
