"""The phone page's JavaScript (``xattn/server/assets/``) and the Streamlit page's own
(``xattn/ui/assets/``): ESLint finds nothing in either (``eslint.config.js``), the reducer's cases pass under node's own test runner
(``tests/js/``), and the modules joined as a phone gets them (``scripts.joined_modules``) are
one script that parses, with no top-level name declared twice. Skipped, with the reason, only
where node is absent; ESLint comes from ``npm ci`` (``package-lock.json``: CI runs it)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from xattn.server.scripts import PHONE_MODULES, asset, joined_modules

ROOT = Path(__file__).resolve().parent.parent
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: the phone page's "
                                "lint and reducer tests need node (CI installs it; npm ci)")
_DECLARED = re.compile(r"^(?:export )?(?:async )?(?:function\*? |const |let |class )([\w$]+)",
                       re.MULTILINE)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)


@needs_node
def test_eslint_finds_nothing_in_the_phone_pages_scripts():
    eslint = ROOT / "node_modules" / ".bin" / "eslint"
    assert eslint.exists(), "ESLint is not installed here: run `npm ci` at the repository root"
    done = _run(str(eslint), "--max-warnings", "0", "xattn/server/assets", "xattn/ui/assets",
                "tests/js", "eslint.config.js")
    assert done.returncode == 0, done.stdout + done.stderr


@needs_node
def test_the_reducer_passes_its_cases_under_node():
    done = _run(NODE, "--test", "tests/js/")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"^# pass [1-9]", done.stdout, re.MULTILINE), done.stdout[-2000:]
    assert re.search(r"^# fail 0$", done.stdout, re.MULTILINE), done.stdout[-2000:]


def test_no_two_modules_declare_the_same_top_level_name():
    """They share one scope once joined: a name declared twice would be a SyntaxError (or,
    for a function, the later one silently winning)."""
    owner: dict[str, str] = {}
    for name in PHONE_MODULES:
        for declared in _DECLARED.findall(asset(f"phone/{name}")):
            assert declared not in owner, f"{declared} in {owner.get(declared)} and {name}"
            owner[declared] = name
    assert {"reduce", "say", "STRINGS", "chart", "draw", "dispatch"} <= set(owner)


@needs_node
def test_the_joined_modules_are_one_script_that_parses(tmp_path):
    joined = joined_modules()
    assert not re.search(r"^\s*(import|export)\b", joined, re.MULTILINE)
    path = tmp_path / "phone.js"
    path.write_text(joined, encoding="utf-8")
    done = _run(NODE, "--check", str(path))
    assert done.returncode == 0, done.stderr


def test_a_module_the_join_cannot_take_apart_is_refused(monkeypatch):
    from xattn.server import scripts

    monkeypatch.setattr(scripts, "asset", lambda name: "export default function () {}\n")
    with pytest.raises(ValueError, match="an import or export this join cannot take out"):
        scripts.joined_modules(names=("x.js",))


@needs_node
def test_a_late_module_is_one_script_that_hands_the_page_its_exports(tmp_path):
    """A module the page fetches when it first needs it (``scripts.LATE_MODULES``: the
    charts) runs as one classic script, minified as served: it calls ``XATTN_LATE`` with its
    name and a function that makes its exports from exactly the names ``late.js`` hands it
    (``scripts.LATE_SHARED``)."""
    from xattn.server import minify
    from xattn.server.scripts import LATE_MODULES, LATE_SHARED, late_script

    hands = re.search(r"make\(\{([^}]*)\}\)", asset("phone/late.js"))[1]
    assert [k.split(":")[0].strip() for k in hands.split(",")] == list(LATE_SHARED)
    assert LATE_MODULES == ("charts.js",) and "charts.js" not in joined_modules()
    for name in LATE_MODULES:
        probe = tmp_path / "probe.js"
        probe.write_text(
            "let got = null;\nglobalThis.XATTN_LATE = (n, make) => { got = [n, Object.entries("
            "make({ say: () => '', el: () => null })).map(([k, v]) => k + ':' + typeof v)]; };\n"
            + minify.js(late_script(name)) + "\nconsole.log(JSON.stringify(got));\n",
            encoding="utf-8")
        done = _run(NODE, str(probe))
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == ["charts", ["fit:function", "chart:function"]]


def test_a_late_module_imports_only_what_the_page_hands_it(monkeypatch):
    from xattn.server import scripts

    with pytest.raises(ValueError, match=r"a late module is one of \('charts.js',\), "
                                         r"received 'state.js'"):
        scripts.late_script("state.js")
    monkeypatch.setattr(scripts, "asset", lambda name: 'import { $ } from "./dom.js";\n'
                                                      "export function f() { return $; }\n")
    with pytest.raises(ValueError, match=r"imports \['\$'\]: a late module imports only"):
        scripts.late_script.__wrapped__("charts.js")


def test_an_assets_name_is_a_string():
    with pytest.raises(TypeError, match="an asset's name is a str, received int"):
        asset(3)


@needs_node
def test_eslint_reads_the_streamlit_page_s_scripts():
    """The config covers ``xattn/ui/assets/``: a script there (given on stdin under that name)
    knows the browser's globals and gets the house rules (``eqeqeq``); outside the config's
    folders ``document`` would be undefined and ``==`` allowed."""
    eslint = ROOT / "node_modules" / ".bin" / "eslint"
    assert eslint.exists(), "ESLint is not installed here: run `npm ci` at the repository root"
    done = subprocess.run([str(eslint), "--max-warnings", "0", "--stdin", "--stdin-filename",
                           "xattn/ui/assets/probe.js"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300,
                          input="export default function (a) { return a == 2 ? document.title "
                                ": null; }\n")
    assert done.returncode == 1 and "eqeqeq" in done.stdout, done.stdout
    assert "'document' is not defined" not in done.stdout, done.stdout


def _named_in(folder: Path, pattern: str) -> set[str]:
    return {m for p in folder.rglob("*.py") for m in re.findall(pattern, p.read_text("utf-8"))}


def test_the_page_s_assets_are_the_ui_s_and_the_server_s_are_what_it_serves():
    """Each file of ``xattn/ui/assets/`` is read by the page (``page_asset``) and none by the
    server; each file at the top of ``xattn/server/assets/`` is read by the server."""
    from xattn.ui.page_assets import page_asset

    ui, server = ROOT / "xattn" / "ui", ROOT / "xattn" / "server"
    page_files = {p.name for p in (ui / "assets").iterdir()}
    assert page_files == {"claim.js", "follow.js", "framed.js", "countdown.js", "tap_hover.js",
                          "join.css"}
    assert page_files == _named_in(ui, r"page_asset\(['\"]([\w.]+)['\"]\)")
    served = _named_in(server, r"\basset\(['\"]([\w.]+)['\"]\)")
    assert {p.name for p in (server / "assets").iterdir() if p.is_file()} == served
    assert not page_files & served
    assert "export default function" in page_asset("follow.js")
    with pytest.raises(FileNotFoundError):
        asset("follow.js")
    with pytest.raises(TypeError, match="a page asset's name is a str, received int"):
        page_asset(3)


def test_no_javascript_lives_in_the_pages_python_strings():
    """The page's scripts are files in ``xattn/ui/assets/`` (read with ``page_asset``), where
    ESLint reads them: no module of ``xattn/ui`` holds a component's module, a listener or a lookup
    by id in a string."""
    js = re.compile(r"export default function|addEventListener\(|getElementById\(|=> \{")
    found = [str(p.relative_to(ROOT)) for p in (ROOT / "xattn" / "ui").rglob("*.py")
             if js.search(p.read_text(encoding="utf-8"))]
    assert not found, found


@pytest.mark.parametrize(("line", "sent"), [
    ("  f(a);   // why", "f(a);"),
    ("const x = 1, y = 2;  // two", "const x = 1, y = 2;"),
    ('  const u = "http://host/ // not a comment";', 'const u = "http://host/ // not a comment";'),
    ('  s.replace(/a/g, "b");  // a regex: kept whole', 's.replace(/a/g, "b");  // a regex: kept whole'),
    ("  // only a comment", None),
    ("  x = a / b;  // a division: kept whole", "x = a / b;  // a division: kept whole"),
])
def test_lean_drops_comments_and_indentation_but_never_inside_a_string(line, sent):
    from xattn.server.scripts import lean

    assert lean(f"a();\n{line}\nb();") == "\n".join(
        ["a();", *([] if sent is None else [sent]), "b();"])
