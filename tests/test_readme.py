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
