"""Other commits of this repository, checked out beside this one, for side-by-side benchmarks.

``with checkouts(["53c1af1"]) as roots:`` gives ``{"commit 53c1af1": path, "this checkout
(abc1234)": ROOT}``: each REF in a temporary ``git worktree`` (removed afterwards), this working
tree last. A benchmark then serves each root with its own ``StreamlitServer(root=...)`` and
alternates between them, so the machine's other load falls on every version alike.
"""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from pathlib import Path

from devtools.browser import ROOT

__all__ = ["checkouts"]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, text=True, check=True,
                          capture_output=True).stdout.strip()


@contextlib.contextmanager
def checkouts(refs: list[str]):
    """This working tree as "this checkout", plus a temporary worktree for each REF."""
    with tempfile.TemporaryDirectory(prefix="xattn-compare-") as tmp:
        roots = {}
        try:
            for ref in refs:
                path = Path(tmp) / ref.replace("/", "_")
                _git("worktree", "add", "--detach", str(path), ref)
                roots[f"commit {_git('rev-parse', '--short', ref)}"] = path
            sha = _git("rev-parse", "--short", "HEAD")
            dirty = _git("status", "--porcelain", "--untracked-files=no")
            roots[f"this checkout ({sha}{', modified' if dirty else ''})"] = ROOT
            yield roots
        finally:
            for path in roots.values():
                if path != ROOT:
                    subprocess.run(["git", "worktree", "remove", "--force", str(path)],
                                   cwd=ROOT, capture_output=True)


