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
    """app.py only wires st.App to the page and the phones' server: their routes, middleware
    and lifespan."""
    import ast
    tree = ast.parse((ROOT / "app.py").read_text())
    code = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    assert len(code) <= 4          # streamlit, xattn.server, xattn.ui.serving, app
    app = [n for n in code if isinstance(n, ast.Assign)]     # `streamlit run app.py` finds it
    assert [t.id for n in app for t in n.targets] == ["app"]
    assert ast.unparse(app[0].value).startswith("st.App(")


def test_real_models_need_torch_only_when_used():
    """``xattn.torch_models`` is importable (and lists its models) without loading torch."""
    assert not {"torch", "transformers", "sentencepiece"} & imported_after(["xattn.torch_models"])


def imports_of(path: Path) -> list[tuple[int, str]]:
    """Every module ``path`` imports, at the top or inside a function, with its line."""
    import ast
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(node.lineno, node.module)]
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


STANDS_ALONE = ("live", "server", "classroom")     # what the page and the phones' server share


def offending_imports(root: Path) -> list[str]:
    """``file:line module`` for each import of streamlit or of the page (``xattn.ui``) in the
    packages of `STANDS_ALONE` under ``root``, lazy ones (inside a function) included."""
    bad = []
    for package in STANDS_ALONE:
        for path in sorted((root / "xattn" / package).rglob("*.py")):
            for line, name in imports_of(path):
                if name.split(".")[0] == "streamlit" or name.startswith("xattn.ui"):
                    bad.append(f"{path.relative_to(root)}:{line} {name}")
    return sorted(set(bad))


def test_the_live_core_and_the_server_import_neither_streamlit_nor_the_page():
    """The import rule of issue 43: the live core, the phones' server and the class store
    stand on their own, also in imports made inside a function (which the subprocess import
    of the whole library above does not run)."""
    assert offending_imports(ROOT) == []
    assert "xattn.live.messages" in LIBRARY and "xattn.server.phone" in LIBRARY


def test_the_import_rule_sees_a_lazy_import_of_the_page(tmp_path):
    for package in STANDS_ALONE:
        (tmp_path / "xattn" / package).mkdir(parents=True)
    (tmp_path / "xattn/server/late.py").write_text(
        "def f():\n    from xattn.ui.room import room\n    import streamlit.runtime\n")
    (tmp_path / "xattn/live/fine.py").write_text("from xattn.lesson import Lesson\n")
    assert offending_imports(tmp_path) == ["xattn/server/late.py:2 xattn.ui.room",
                                           "xattn/server/late.py:2 xattn.ui.room.room",
                                           "xattn/server/late.py:3 streamlit.runtime"]


MAX_LINES = 400        # a module longer is split by role (issue 43, item 5)


def long_modules(root: Path, most: int = MAX_LINES) -> list[str]:
    """``path: lines`` of each module under ``root/xattn`` longer than ``most`` lines."""
    found = []
    for path in sorted((root / "xattn").rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > most:
            found.append(f"{path.relative_to(root)}: {n}")
    return found


def test_every_module_is_at_most_400_lines():
    assert long_modules(ROOT) == []


def test_the_line_rule_sees_a_long_module(tmp_path):
    (tmp_path / "xattn/live").mkdir(parents=True)
    (tmp_path / "xattn/live/long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "xattn/live/short.py").write_text("x = 1\n" * MAX_LINES)
    assert long_modules(tmp_path) == [f"xattn/live/long.py: {MAX_LINES + 1}"]


def private_imports(root: Path) -> list[str]:
    """``file:line module.name`` for each private name (``_x``) a module under ``root/xattn``
    imports from another module of xattn: a name used across modules is public."""
    import ast
    found = []
    for path in sorted((root / "xattn").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("xattn"):
                found += [f"{path.relative_to(root)}:{node.lineno} {node.module}.{a.name}"
                          for a in node.names if a.name.startswith("_")]
    return found


def test_no_private_name_is_imported_across_modules(tmp_path):
    assert private_imports(ROOT) == []
    (tmp_path / "xattn").mkdir()
    (tmp_path / "xattn/a.py").write_text("from xattn.b import _hidden, shown\n")
    assert private_imports(tmp_path) == ["xattn/a.py:1 xattn.b._hidden"]
