"""README and docs/ stay true: the library example runs, the two commands are the ones CI
uses, the attention-file snippet runs, every docs page is linked from README and every link
between them reaches a file and a heading that exist."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]
LINK = re.compile(r"\]\(([^)\s]+)\)")


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


def test_readme_stays_a_five_minute_read():
    assert len(README.splitlines()) <= 250, "README grows past ~250 lines: move depth to docs/"


def test_every_docs_page_is_linked_from_readme():
    linked = {Path(target.split("#")[0]).as_posix() for target in LINK.findall(README)}
    assert DOCS, "docs/ has no pages"
    missing = [p.name for p in DOCS if f"docs/{p.name}" not in linked]
    assert not missing, f"docs pages README does not link: {missing}"


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    return {slug(h) for h in re.findall(r"^#+ (.*)$", text, flags=re.M)}


def test_slug_matches_githubs_rule():
    assert slug("A room: the class answers") == "a-room-the-class-answers"
    assert slug("Memory: `python -m benchmarks.bench_memory`") == \
        "memory-python--m-benchmarksbench_memory"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_local_link_reaches_a_file_and_heading(page):
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue                                   # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(target)
    assert not broken, f"{page.name} links to what does not exist: {broken}"


def test_the_snippet_that_writes_an_attention_file_runs(tiny_dir, tmp_path, monkeypatch):
    """docs/models.md's six lines, on the tiny offline model instead of a download."""
    models = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```text\n(.*?)```", models, flags=re.S)
                 if "save_attention(" in b)
    assert len(block.strip().splitlines()) == 6
    code = block.replace('"Helsinki-NLP/opus-mt-en-de"', repr(tiny_dir))
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/models.md", "exec"), {})
    from xattn.attnfile import load_attention

    loaded = load_attention((tmp_path / "attention.npz").read_bytes())
    assert loaded.n_layers == 2 and loaded.model == tiny_dir
