"""Package boundaries: the library never needs Streamlit; the public API is importable."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import xattn

ROOT = Path(__file__).resolve().parent.parent


def test_library_modules_do_not_import_streamlit():
    library = [m.name for m in pkgutil.iter_modules(xattn.__path__) if m.name != "ui"]
    code = ("import sys, importlib\n"
            f"for name in {library!r}: importlib.import_module('xattn.' + name)\n"
            "print('streamlit' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


def test_only_the_ui_package_mentions_streamlit():
    offenders = [p.relative_to(ROOT).as_posix() for p in (ROOT / "xattn").rglob("*.py")
                 if "import streamlit" in p.read_text(encoding="utf-8") and "ui" not in p.parts]
    assert offenders == []


def test_everything_in_all_exists():
    missing = [name for name in xattn.__all__ if not hasattr(xattn, name)]
    assert missing == []


def test_app_script_stays_thin():
    lines = [ln for ln in (ROOT / "app.py").read_text().splitlines()
             if ln.strip() and not ln.startswith(("#", '"""'))]
    assert len(lines) <= 5
