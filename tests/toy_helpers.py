"""What the two shipped toy models' tests (test_toy_speech.py, test_toy_reader.py) check alike:
the folder's files and size, the training settings metrics.json keeps, and every number of the
card recomputed from the shipped weights in a process where torch cannot be imported."""

import json
import subprocess
import sys
from pathlib import Path

from scripts.toy_training import stored_parameters

ROOT = Path(__file__).resolve().parent.parent
MAX_BYTES = 4 * 2**20

_CHILD = """
import json, sys
sys.modules["torch"] = None          # the base install: any attempt to import torch fails
sys.modules["transformers"] = None
from scripts.{script} import OUT, evaluate, model_card
from {package} import {reader}
old = json.loads((OUT / "metrics.json").read_text())
got = evaluate({reader}.from_folder(OUT), old["held_out"]["{counted}"], old["held_out"]["seed"])
got["training"] = old["training"]
print(json.dumps({{"metrics": got, "card": model_card(got),
                  "imported": [k for k in ("torch", "transformers")
                               if sys.modules.get(k) is not None]}}))
"""


def folder_config(out: Path, files: list[str]) -> dict:
    """Check that ``out`` holds exactly ``files`` and under 4 MB; its config.json."""
    assert sorted(p.name for p in out.iterdir()) == files
    total = sum(p.stat().st_size for p in out.iterdir())
    assert total < MAX_BYTES, f"{total / 2**20:.1f} MB: the shipped folder must stay small"
    return json.loads((out / "config.json").read_text())


def check_training_described(metrics: dict, out: Path, train: dict, counted: str,
                             n_held_out: int, held_out_seed: int) -> None:
    """metrics.json keeps the script's settings (so --check retrains the same model), the
    held-out seed differs from the batches', and the parameter count is model.safetensors'."""
    t = metrics["training"]
    assert {k: t[k] for k in train} == train
    held = metrics["held_out"]
    assert (held[counted], held["seed"]) == (n_held_out, held_out_seed)
    assert held_out_seed != t["batch_seed"]
    assert t["parameters"] == stored_parameters(out)
    assert f"{t['parameters']:,} parameters stored" in (out / "README.md").read_text()


def check_recomputed_without_torch(script: str, package: str, reader: str, counted: str,
                                   metrics: dict, out: Path) -> None:
    """Evaluate the shipped folder with ``package.reader`` in a child process where torch and
    transformers cannot be imported: metrics.json's numbers exactly, README.md its card."""
    code = _CHILD.format(script=script, package=package, reader=reader, counted=counted)
    child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           cwd=ROOT, timeout=600)
    assert child.returncode == 0, child.stderr[-3000:]
    got = json.loads(child.stdout)
    assert got["imported"] == []
    assert got["metrics"] == metrics
    assert got["card"] == (out / "README.md").read_text(encoding="utf-8")
