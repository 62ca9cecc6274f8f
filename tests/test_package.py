"""Package boundaries: the library never needs Streamlit; the public API is importable."""

import pkgutil
import subprocess
import sys
from pathlib import Path

import xattn

ROOT = Path(__file__).resolve().parent.parent


LIBRARY = sorted(m.name for m in pkgutil.walk_packages(xattn.__path__, "xattn.")
                 if not m.name.startswith("xattn.ui") and not m.name.endswith("__main__"))


def imported_after(modules: list[str]) -> set[str]:
    """Top-level packages that importing ``modules`` (in a fresh interpreter) brings in."""
    code = ("import sys, importlib\n"
            f"for name in {modules!r}: importlib.import_module(name)\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_the_library_imports_without_streamlit():
    assert "figures" in " ".join(LIBRARY) and "xattn.figures.heads" in LIBRARY
    assert "streamlit" not in imported_after(LIBRARY)


def test_the_ui_is_what_brings_in_streamlit():
    assert "streamlit" in imported_after(["xattn.ui.page"])


def test_everything_in_all_exists():
    missing = [name for name in xattn.__all__ if not hasattr(xattn, name)]
    assert missing == []


def test_app_script_stays_thin():
    """app.py only wires st.App to the page, its routes, middleware and lifespan."""
    import ast
    tree = ast.parse((ROOT / "app.py").read_text())
    code = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    assert len(code) <= 3
    app = [n for n in code if isinstance(n, ast.Assign)]     # `streamlit run app.py` finds it
    assert [t.id for n in app for t in n.targets] == ["app"]
    assert ast.unparse(app[0].value).startswith("st.App(")


def test_real_models_need_torch_only_when_used():
    """``xattn.torch_models`` is importable (and lists its models) without loading torch."""
    assert not {"torch", "transformers", "sentencepiece"} & imported_after(["xattn.torch_models"])
