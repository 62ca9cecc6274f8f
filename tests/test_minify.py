"""`xattn.server.minify`: the phone page's CSS and scripts without comments and needless
spaces, every token kept: strings, template literals and regular expressions untouched, a
line break kept where a statement may rely on it, and the page's own scripts still one
script that parses (node) once minified."""

from __future__ import annotations

import gzip
import shutil
import subprocess

import pytest

from xattn.server import minify
from xattn.server.scripts import asset, joined_modules, lean

NODE = shutil.which("node")


@pytest.mark.parametrize(("source", "expected"), [
    ("const a = b  +  1;", "const a=b+1;"),
    ("x = a - -b; y = a + +b; z = a - --b;", "x=a- -b;y=a+ +b;z=a- --b;"),
    ('s = "a  //  b" + \'c /* d */\';', 's="a  //  b"+\'c /* d */\';'),
    ("t = `a  ${ f( 1 ) }  b ${ {k: 1}.k } c`;", "t=`a  ${f(1)}  b ${{k:1}.k} c`;"),
    ("if (/ a+\\/ [/ ]/g.test(x)) y = a / b / c;", "if(/ a+\\/ [/ ]/g.test(x))y=a/b/c;"),
    ("return / x /.test(s)", "return/ x /.test(s)"),
    ("let a = 1 // one\nlet b = 2", "let a=1\nlet b=2"),
    ("f();\n/* many\nlines */\ng()", "f();g()"),
    ("return\nx", "return\nx"),                     # a line break a statement relies on
    ("a = {\n  b: 1,\n  c: 2\n};", "a={b:1,c:2};"),
    ("n = 1 .toString(); typeof x", "n=1 .toString();typeof x"),
    ("const café = 1; const é = café", "const café=1;const é=café"),
])
def test_js_drops_only_what_no_token_needs(source, expected):
    assert minify.js(source) == expected


@pytest.mark.parametrize(("source", "match"), [
    ('a = "open', "string is not closed"),
    ('a = "one\ntwo"', "string spans lines"),
    ("a = `open", "template literal is not closed"),
    ("/* open", "comment is not closed"),
])
def test_js_refuses_what_it_cannot_read(source, match):
    with pytest.raises(ValueError, match=match):
        minify.js(source)


@pytest.mark.parametrize(("source", "expected"), [
    ("a , b > c { color: red ; }", "a,b>c{color:red}"),
    (".pill code { border: 1px solid var(--line); }", ".pill code{border:1px solid var(--line)}"),
    ('body { font: 1rem "Segoe  UI", x; } /* a { } */ p{}', 'body{font:1rem "Segoe  UI",x}p{}'),
    ("a:focus-visible , b [x=\"1 ; 2\"] { margin: 0 }", 'a:focus-visible,b [x="1 ; 2"]{margin:0}'),
    ("@media (max-width: 30rem) {\n  .a { b: c; }\n}", "@media (max-width:30rem){.a{b:c}}"),
])
def test_css_drops_only_what_no_rule_needs(source, expected):
    assert minify.css(source) == expected


@pytest.mark.parametrize("bad", [None, 3, b"a"])
def test_a_script_or_style_is_a_string(bad):
    with pytest.raises(TypeError, match="a script or style is a str, received"):
        minify.js(bad)
    with pytest.raises(TypeError, match="a script or style is a str, received"):
        minify.css(bad)


@pytest.mark.skipif(NODE is None, reason="node is not installed: the minified scripts are "
                    "parsed by node (CI installs it)")
@pytest.mark.parametrize("name", ["joined", "work.js", "token.js"])
def test_the_pages_scripts_minified_still_parse(tmp_path, name):
    text = joined_modules() if name == "joined" else asset(name)
    path = tmp_path / "min.js"
    path.write_text(minify.js(text), encoding="utf-8")
    done = subprocess.run([NODE, "--check", str(path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr


def test_the_phone_pages_code_is_smaller_on_the_wire_than_lean():
    """The numbers docs/phone-page.md gives: what minifying saves, gzipped."""
    rows = []
    for name, text, small in (("css", lean(asset("phone.css")), minify.css(asset("phone.css"))),
                              ("js", lean(joined_modules()), minify.js(joined_modules()))):
        before, after = (len(gzip.compress(t.encode(), 9)) for t in (text, small))
        rows.append((name, before, after))
        assert after < before, (name, before, after)
    print("\n".join(f"{n}: {b:,} B lean, {a:,} B minified (gzip)" for n, b, a in rows))
