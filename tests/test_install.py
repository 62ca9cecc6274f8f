"""Install facts that are true: the Python the pinned Streamlit needs (its installed metadata's
Requires-Python) is the Python README, pyproject.toml and the deploy recipes promise, and
.streamlit/config.toml marks what Streamlit Community Cloud overrides."""

from __future__ import annotations

import re
import sys
import tomllib
from importlib.metadata import metadata, version
from pathlib import Path

from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
# Streamlit Community Cloud sets these over a repository's .streamlit/config.toml
FORCED_BY_COMMUNITY_CLOUD = {"runOnSave": "true", "gatherUsageStats": "true"}


def floor(spec: str) -> tuple[int, int]:
    """The lowest Python a ``>=3.N`` requirement allows."""
    lows = [s.version for s in SpecifierSet(spec) if s.operator == ">="]
    assert len(lows) == 1, spec
    major, minor = lows[0].split(".")[:2]
    return int(major), int(minor)


def pinned_streamlit() -> SpecifierSet:
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        if re.match(r"streamlit\s*[<>=!~]", line):
            return SpecifierSet(line.split("#")[0].strip()[len("streamlit"):])
    raise AssertionError("requirements.txt pins no streamlit")


def test_the_python_the_pinned_streamlit_needs_is_the_one_promised():
    assert version("streamlit") in pinned_streamlit(), "the installed Streamlit is not the pin"
    needs = floor(metadata("streamlit")["Requires-Python"])
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert floor(project["requires-python"]) == needs
    readme = re.findall(r"Python (\d+)\.(\d+)\+", (ROOT / "README.md").read_text())
    assert readme and {(int(a), int(b)) for a, b in readme} == {needs}, readme
    cloud = re.findall(r"choose Python (\d+)\.(\d+)", (ROOT / "docs" / "deploy.md").read_text())
    assert cloud and all((int(a), int(b)) >= needs for a, b in cloud), cloud
    assert sys.version_info[:2] >= needs


def test_what_community_cloud_overrides_is_marked_in_the_config():
    lines = (ROOT / ".streamlit" / "config.toml").read_text().splitlines()
    for key, forced in FORCED_BY_COMMUNITY_CLOUD.items():
        at = next(i for i, line in enumerate(lines) if line.startswith(f"{key} ="))
        above = []
        for line in reversed(lines[:at]):
            if not line.startswith("#"):
                break
            above.insert(0, line)
        note = " ".join(above)
        assert "Overridden on Streamlit Community Cloud" in note, key
        assert f"{key} = {forced}" in note, key
