"""README stays true: its library example runs, and its two commands are the ones CI uses."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_library_example_runs():
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert blocks, "README has no python example"
    for block in blocks:
        exec(compile(block, "README.md", "exec"), {})


def test_readme_gives_exactly_the_two_commands_and_ci_runs_the_test_one():
    commands = re.findall(r"```bash\n(.*?)\n```", README, flags=re.S)
    assert commands == ["pip install -r requirements.txt && streamlit run app.py",
                        "pip install -r requirements-dev.txt && python -m pytest"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[1] in ci


def test_the_snippet_that_writes_an_attention_file_runs(tiny_dir, tmp_path, monkeypatch):
    """README's six lines, on the tiny offline model instead of a download."""
    block = next(b for b in re.findall(r"```text\n(.*?)```", README, flags=re.S)
                 if "save_attention(" in b)
    assert len(block.strip().splitlines()) == 6
    code = block.replace('"Helsinki-NLP/opus-mt-en-de"', repr(tiny_dir))
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    from xattn.attnfile import load_attention

    loaded = load_attention((tmp_path / "attention.npz").read_bytes())
    assert loaded.n_layers == 2 and loaded.model == tiny_dir
