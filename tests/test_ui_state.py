"""The page's link: every parameter read in one place, refused values said literally.

Pins each URL row of the hardening issue, checks that the parameters the page knows are
exactly its controls, and fuzzes whole query strings (hypothesis) through the real page.
"""

from dataclasses import replace

import numpy as np
import pytest
from apptest_helpers import (
    chart,
    heads_chart,
    heatmaps,
    messages,
    per_head_z,
    run_app,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_helpers import user_text_is_inert

from xattn.live.link import LOCAL_KEYS, REGISTRY
from xattn.live.params import clean_text, whole_number
from xattn.pipeline import Settings, run
from xattn.ui.page import VIEWS
from xattn.ui.views.compare import LABELS

pytestmark = pytest.mark.usefixtures("fresh_cache")

def notices(at) -> list[str]:
    """Warnings, errors and the page's "changed" notices (not the weights banner)."""
    changed = [i for i in at.info if i.icon == ":material/sync:"]
    return [a.value for a in (*at.warning, *changed, *at.error)]


def assert_clean(at) -> None:
    assert not at.exception, at.exception
    for text in notices(at):
        assert user_text_is_inert(text), text


# ---------------------------------------------------------------- parsing one value
@pytest.mark.parametrize("text", ["1e400", "inf", "-inf", "nan", " 4", "+4", "٣", "4.0", "4_0",
                                  "", "0x10", "-5"])
def test_whole_numbers_are_ascii_digits_in_range(text):
    with pytest.raises(ValueError, match="is not a whole number from 0 to 99"):
        whole_number(0, 99)(text)


def test_leading_zeros_are_a_number():
    assert whole_number(0, 99)("007") == 7


def test_clean_text_turns_line_breaks_into_spaces_and_cuts():
    text, changes = clean_text("a\nb\rc\u2028d", 100)
    assert text == "a b c d" and list(map(str, changes)) == [
        "its line breaks or control characters became spaces"]
    text, changes = clean_text("x" * 5000, 2000)
    assert len(text) == 2000 and list(map(str, changes)) == [
        "it was cut from 5,000 to 2,000 characters"]
    assert clean_text("👩\u200d👩\u200d👧 né", 100) == ("👩\u200d👩\u200d👧 né", [])  # ZWJ kept


# ---------------------------------------------------------------- each row of the issue
@pytest.mark.parametrize("key", ["seed", "cmp_seed", "tr_seed"])
@pytest.mark.parametrize("value", ["1e400", "inf", "-inf"])
def test_overflowing_seeds_fall_back_with_a_notice(key, value):
    query = {"cmp_seed": {"view": "Compare"}, "tr_seed": {"weights": "trained"}}.get(key, {})
    at = run_app({key: value, **query})
    assert_clean(at)
    warning = messages(at)["warning"]
    assert len(warning) == 1 and f"`{key}={value}`" in warning[0]
    assert "is not a whole number" in warning[0] and "Showing" in warning[0]


@pytest.mark.parametrize("query,named", [
    ({"": "x"}, "(empty)"), ({"": ""}, "(empty)"), ({"$$ID": "1"}, "`$$ID`"),
    ({"_adjusted": "1", "step_pick": "1"}, "`_adjusted`, `step_pick`"),
    ({"head": "8"}, "`head`"),
])
def test_unknown_and_empty_parameter_names_are_named(query, named):
    at = run_app(query)
    assert_clean(at)
    warning = messages(at)["warning"]
    assert len(warning) == 1 and "does not know" in warning[0] and named in warning[0]
    assert len(per_head_z(at)) == 4


def test_a_typo_gets_a_suggestion():
    at = run_app({"head": "8"})
    assert "Did you mean `heads` instead of `head`?" in messages(at)["warning"][0]


def test_a_backtick_cannot_close_the_notice_s_code_span():
    value = "x` **BOLD** [click here](https://example.com) :red[RED] `"
    at = run_app({"heads": value})
    assert_clean(at)
    warning = messages(at)["warning"][0]
    assert "``heads=x` **BOLD** [click here](https://example.com) :red[RE" in warning


@pytest.mark.parametrize("value", ["lines", "Nonexistent", ""])
def test_an_unknown_view_is_a_notice_and_a_known_one_any_case(value):
    at = run_app({"view": value})
    assert_clean(at)
    if value == "lines":
        assert not notices(at) and chart(at, "lines")           # matched without case
    else:
        warning = messages(at)["warning"]
        assert len(warning) == 1 and f"`view={value}`" in warning[0] and "`Heads`" in warning[0]


@pytest.mark.parametrize("query,expected", [
    ({"view": "Switch heads off", "off": "5"}, "which is not available (there are 4 heads)"),
    ({"view": "Lines", "lines_heads": "abc"}, "`lines_heads=abc` (the heads to draw), which "
                                              "holds `abc`, not a whole number from 1 to 16"),
    ({"mask": "padding", "pad": "0:the"}, "holds `0:the`, not of the form `position: token`"),
    ({"mask": "padding", "pad": "9: zz"}, "which is not available in the source sentence"),
    ({"seed": "%204"}, "`seed=%204`"), ({"seed": "٣"}, "`seed=٣`"),
])
def test_refused_values_are_quoted_and_what_replaces_them_is_named(query, expected):
    at = run_app(query)
    assert_clean(at)
    text = " ".join(messages(at)["warning"])
    assert expected in text
    assert "``" not in text.replace("``heads", "")                 # never an empty code span
    assert "set()" not in text and "{" not in text                 # no Python internals


def test_seed_007_is_seven_and_the_link_is_rewritten():
    at = run_app({"seed": "007"})
    assert_clean(at)
    assert not notices(at) and at.query_params["seed"] == "7"
    np.testing.assert_allclose(per_head_z(at)[0], run(Settings(seed=7)).weights[0], rtol=1e-6)


def test_a_100_kb_sentence_is_cut_with_a_short_notice():
    at = run_app({"src": "a " * 50_000})
    assert_clean(at)
    info = " ".join(messages(at)["warning"] + [i.value for i in at.info])
    assert "cut from 100,000 to 2,000 characters" in info and len(info) < 400
    assert "The source sentence has 1,000 tokens" not in info
    assert any("has 1000 tokens; the limit is 64. Shorten it by 936 tokens." in e
               for e in messages(at)["error"])


def test_one_token_too_many_says_one_token():
    at = run_app({"src": " ".join(["w"] * 65)})
    assert any(e.endswith("Shorten it by 1 token.") for e in messages(at)["error"])


def test_line_breaks_in_a_linked_sentence_become_spaces_in_the_box_and_the_tokens():
    at = run_app({"src": "a\nb\rc"})
    assert_clean(at)
    assert at.text_input(key="src").value == "a b c"
    assert heatmaps(heads_chart(at))[0]["x"] == ["0: a", "1: b", "2: c"]
    assert any("line breaks or control characters became spaces" in i.value for i in at.info)


def test_the_masked_rows_warning_shows_tokens_literally():
    at = run_app({"mask": "padding", "src": "a b", "tok": "whitespace",
                  "tgt": "**bold** [click](https://example.com) $x^2$ :red[RED]"})
    at.multiselect(key="pad").set_value(["0: a", "1: b"]).run()
    assert_clean(at)
    warning = messages(at)["warning"][0]
    assert "`0: **bold**`" in warning and "`2: $x^2$`" in warning


def test_the_text_description_shows_tokens_literally():
    at = run_app({"tok": "whitespace", "tgt": "**bold** [click](https://example.com) $x^2$"})
    at.session_state["heads_text"] = True            # open the folded description
    at.run()
    description = next(m.value for m in at.markdown if m.value.startswith("- **Head 1**"))
    assert user_text_is_inert(description, *(f"**Head {h}**" for h in range(1, 5)))
    assert "`[click](https://example.com)`" in description


# ---------------------------------------------------------------- the parameters are the controls
WIDGETS = ("text_input", "number_input", "slider", "select_slider", "selectbox", "toggle",
           "radio", "multiselect", "checkbox", "text_area")


def widget_keys(at) -> set[str]:
    return {w.key for kind in WIDGETS for w in getattr(at, kind) if w.key}


def test_every_control_is_a_url_parameter_and_every_parameter_a_control(tiny_model):
    seen = set()
    for view in VIEWS:
        at = run_app({"view": view, "mask": "padding"})
        assert not at.exception
        seen |= widget_keys(at)
        for mode in ("wait-k", "window"):
            at.radio(key="mask").set_value(mode).run()
            seen |= widget_keys(at)
    at = run_app()
    at.session_state["fold_tokens"] = at.session_state["fold_display"] = True   # opened
    seen |= widget_keys(at.run())
    long = " ".join(f"w{i}" for i in range(40))          # long sentences: pages of heads
    at = run_app({"src": long, "tgt": long, "d_model": "64", "heads": "16"})
    seen |= widget_keys(at) | ({"hpage"} if at.get_by_key("hpage") else set())
    for source in ("trained", "model", "file"):
        for view in VIEWS:
            at = run_app({"weights": source, "view": view})
            assert not at.exception, (source, view, at.exception)
            seen |= widget_keys(at)
            if view == "Compare" and source != "file":
                offered = at.selectbox(key="cmp").options
                for choice in [c for c, label in LABELS.items() if label in offered]:
                    at.selectbox(key="cmp").set_value(choice).run()
                    seen |= widget_keys(at)
    at = run_app({"weights": "trained", "view": "Alignment", "links": "threshold"})
    seen |= widget_keys(at)                               # the threshold's slider
    assert seen - set(REGISTRY) - LOCAL_KEYS == set()     # no control left out of the link
    # not widgets: the tabs carry "view"; "class=new" (with "homework=DAYS") is an action,
    # "room", "host" and "explore" name a class and who opens it (the page writes them),
    # "force" is set by the Force button of the Decode view
    assert set(REGISTRY) - seen == {"view", "class", "homework", "room", "host", "explore",
                                    "device", "force"}


def test_folded_sections_open_when_their_settings_are_not_the_defaults():
    at = run_app()
    assert not at.get("selectbox") and not at.get("toggle")        # folded: not drawn
    at = run_app({"tok": "chars", "present": "1"})
    assert at.selectbox(key="tok").value == "chars"                # the link's setting shows
    assert at.toggle(key="present").value is True
    at.session_state["fold_tokens"] = False                        # the student folds it
    at.run()
    assert [s.key for s in at.selectbox] == ["lang"]               # Display's language alone
    assert at.query_params["tok"] in ("chars", ["chars"])          # ... and it still applies
    assert heads_chart(at)["data"][0]["x"][:2] == ["0: t", "1: h"]


# ---------------------------------------------------------------- any link at all
KEYS = st.one_of(st.sampled_from(sorted(REGISTRY)),
                 st.sampled_from(["", "$$ID", "_adjusted", "step_pick", "embed", "HEADS"]),
                 st.text(max_size=12))
VALUES = st.one_of(
    st.sampled_from(["4", "8", "0", "-1", "007", "1e400", "inf", "nan", " 4", "٣", "true",
                     "false", "Heads", "Step through", "padding", "wait-k", "0: the", "6: mat",
                     "x` **B** [l](https://example.com) :red[R] `", "$x$", "<b>B</b>", ""]),
    st.text(max_size=40),
    st.text(alphabet="ab \n\r\t`*$<>", min_size=2000, max_size=3000),
)
QUERIES = st.dictionaries(KEYS, st.one_of(VALUES, st.lists(VALUES, min_size=2, max_size=3)),
                          max_size=5)


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(QUERIES)
def test_no_link_shows_a_traceback_and_every_notice_is_plain_text(query):
    at = run_app(query)
    assert not at.exception, (query, at.exception)
    for text in notices(at):
        assert user_text_is_inert(text), (query, text)
        assert len(text) < 1500, (query, text)


def test_the_link_reproduces_the_settings():
    at = run_app()
    at.select_slider(key="heads").set_value(8).run()
    at.number_input(key="seed").set_value(3).run()
    query = dict(at.query_params)
    assert query == {"heads": "8", "seed": "3"}
    again = run_app(query)
    np.testing.assert_array_equal(per_head_z(again)[2], per_head_z(at)[2])
    np.testing.assert_allclose(per_head_z(again)[2],
                               run(replace(Settings(), n_heads=8, seed=3)).weights[2], rtol=1e-6)


FRESH = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=120)
for key, value in json.loads(sys.argv[2]).items():
    at.query_params[key] = value
at.run()
print(json.dumps([w.value for w in at.warning] + [i.value for i in at.info]))
"""


@pytest.mark.parametrize("query", [
    {"weights": "model", "model": "x", "words": "false", "sinks": "true"},
    {"weights": "trained", "tr_seed": "7", "tr_heads": "2"},
    {"view": "Lesson", "lesson": "3"}, {"view": "Compare", "cmp": "heads", "cmp_heads": "2"},
])
def test_a_fresh_server_process_knows_every_parameter_of_the_link(query):
    """The first session of a new process (every process behind the load balancer) reads the
    whole link: no parameter exists only once some view's module happened to be imported."""
    import json
    import subprocess
    import sys

    from apptest_helpers import APP

    out = subprocess.run([sys.executable, "-c", FRESH, APP, json.dumps(query)], check=True,
                         capture_output=True, text=True, timeout=600).stdout
    texts = json.loads(out.strip().splitlines()[-1])
    assert not [t for t in texts if "does not know" in t], texts


def test_the_page_views_are_the_link_views():
    from xattn.live.link import VIEW_NAMES

    assert tuple(VIEWS) == VIEW_NAMES


def test_a_link_setting_of_other_weights_is_named_not_ignored():
    at = run_app({"view": "Lesson", "lesson": "6", "tr_seed": "7"})
    assert_clean(at)
    text = " ".join(messages(at)["warning"])
    assert "`tr_seed`" in text and "trained weights" in text


def test_a_very_long_sentence_is_quoted_cut_once():
    at = run_app({"src": "x" * 100_000})
    assert_clean(at)
    text = " ".join(messages(at)["warning"] + [i.value for i in at.info])
    assert text.count("(100,000 characters)") == 1 and text.count("characters)") == 1, text
    assert "cut from 100,000 to 2,000 characters" in text


# ---------------------------------------------------------------- said in the page's language
def _said(lang: str, msgid: str, **names) -> str:
    from xattn.ui.i18n import translated

    return translated(msgid, lang).format(**names)


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_a_refused_value_is_said_in_the_pages_language_and_quoted_as_typed(lang):
    at = run_app({"lang": lang, "seed": "1e400"})
    assert_clean(at)
    (warning,) = messages(at)["warning"]
    big = {"fr": "2\u202f147\u202f483\u202f647", "ar": "2,147,483,647"}[lang]   # CLDR's grouping
    why = _said(lang, "is not a whole number from {lo} to {hi}", lo="0", hi=big)
    seed = _said(lang, "the seed")
    assert seed != "the seed"
    assert warning == (_said(lang, "The link asked for {asked} ({what}), which {why}.",
                             asked="`seed=1e400`", what=seed, why=why) + " "
                       + _said(lang, "Showing {what} {value} instead.", what=seed, value="`0`"))


def test_every_controls_name_a_notice_says_is_marked_for_the_catalog():
    from xattn.ui.state import WHATS

    assert {p.what for k, p in REGISTRY.items() if p.what != k} == set(WHATS)


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_a_list_value_and_an_unknown_name_are_said_in_the_pages_language(lang):
    at = run_app({"lang": lang, "view": "Lines", "lines_heads": "abc", "head": "8"})
    assert_clean(at)
    text = " ".join(messages(at)["warning"])
    inner = _said(lang, "{value}, {why}", value="`abc`", why=_said(
        lang, "not a whole number from {lo} to {hi}", lo="1", hi="16"))
    assert _said(lang, "The link asked for {asked} ({what}), which {why}.",
                 asked="`lines_heads=abc`", what=_said(lang, "the heads to draw"),
                 why=_said(lang, "holds {bad}", bad=inner)) in text
    assert _said(lang, "Did you mean {hint}?", hint=_said(
        lang, "{right} instead of {wrong}", right="`heads`", wrong="`head`")) in text
    assert "does not know" not in text and "`head`" in text


def test_a_typed_value_stays_literal_in_an_arabic_notice():
    value = "x` **BOLD** [click here](https://example.com) :red[RED] `"
    at = run_app({"lang": "ar", "heads": value})
    assert_clean(at)
    warning = messages(at)["warning"][0]
    assert "``heads=x` **BOLD** [click here](https://example.com) :red[RE" in warning
    assert "طلب الرابط" in warning


def test_a_chinese_notices_sentences_are_joined_without_a_space():
    at = run_app({"lang": "zh", "seed": "1e400", "head": "8"})
    assert_clean(at)
    warnings = messages(at)["warning"]
    assert len(warnings) == 2 and all("。" in w and "。 " not in w for w in warnings)
    assert warnings[0].startswith("链接中有此页面不认识的参数") and "`head`" in warnings[0]


def test_why_a_value_is_not_offered_is_said_in_the_pages_language():
    at = run_app({"lang": "fr", "view": "Switch heads off", "off": "5"})
    assert_clean(at)
    text = " ".join(messages(at)["warning"])
    from xattn.ui.i18n import catalog

    heads = catalog("fr").get(("(there is {n} head)", "(there are {n} heads)")).string[2]
    assert _said("fr", "is not available {why}", why=heads.format(n=4)) in text
    assert "(il y a 4 têtes)" in text and "there are" not in text
