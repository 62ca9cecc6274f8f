"""The charts' own words in six languages (``xattn.figures.words``, the ``charts`` domain):
every msgid the figures say is in every catalog, translated, with its names; every builder
draws in each language; a chart in fr or ar has its words from the catalog and the same
numbers and tokens as in English."""

from __future__ import annotations

import json
from functools import cache
from types import SimpleNamespace

import numpy as np
import pytest
from catalog_checks import check_catalog, check_names
from figure_helpers import SRC, TGT, toy_weights

from devtools.chart_catalog import said
from xattn.classroom import Question
from xattn.classroom.controls import CHARTS
from xattn.classroom.kinds import KINDS
from xattn.figures import (
    alignment,
    aligns,
    analysis,
    class_words,
    classroom,
    decode,
    effects,
    heads,
    lines,
    media,
    misconceptions,
    overview,
    step,
    timelapse,
    training,
)
from xattn.figures.words import DOMAIN, ChartWords, catalog, chart_words
from xattn.lesson.aligns import PanelName
from xattn.locales import LANGS

OTHERS = [lang for lang in LANGS if lang != "en"]
RNG = np.random.default_rng(0)


@cache
def _said() -> dict:
    return said()


def _placeholders(text: str) -> set[str]:
    import re
    return set(re.findall(r"\{([a-z_][a-z0-9_]*)", text))


@pytest.mark.parametrize("lang", LANGS)
def test_every_message_the_figures_say_is_in_every_catalog_and_none_is_unused(lang):
    check_catalog(lang, catalog(lang), _said(), 140,     # the charts' words, not a few
                  plural=lambda said: isinstance(said[0], tuple))


@pytest.mark.parametrize("lang", OTHERS)
def test_every_translation_keeps_the_english_names(lang):
    check_names(lang, catalog(lang), _placeholders)


def test_the_class_charts_words_written_in_classroom_are_in_the_figures_table():
    written = {c.title for c in CHARTS.values()} | {c.alt for c in CHARTS.values()}
    written |= {c.outlined for c in CHARTS.values()} | {k.title for k in KINDS.values()
                                                        if k.title}
    assert written - set(class_words.CLASS_WORDS) == set()


def test_a_language_is_checked_and_the_words_are_cached_per_language():
    with pytest.raises(ValueError, match="a chart's language is one of en, fr.*received 'pt'"):
        chart_words("pt")
    with pytest.raises(TypeError, match="a chart's language is a str, received int"):
        chart_words(3)
    with pytest.raises(ValueError, match="a chart's language is one of"):
        heads.head_figure(toy_weights()[0], SRC, TGT, head=0, lang="xx")
    assert chart_words("fr") is chart_words("fr") and repr(chart_words("ar")) == "ChartWords('ar')"
    assert DOMAIN == "charts"


def test_counts_are_said_in_each_languages_plural_form_and_numbers_per_locale():
    said_ = "{title} ({n} answer)", "{title} ({n} answers)"
    cases = [("en", 1, "T (1 answer)"), ("en", 1234, "T (1,234 answers)"),
             ("fr", 1, "T (1 réponse)"), ("de", 1234, "T (1.234 Antworten)"),
             ("zh", 5, "T（5 个回答）"), ("ar", 2, "T (إجابتان)"), ("ar", 7, "T (7 إجابات)"),
             ("ar", 11, "T (11 إجابة)"), ("ar", 100, "T (100 إجابة)")]
    for lang, n, text in cases:
        assert ChartWords(lang).plural(*said_, n, title="T") == text, lang
    assert chart_words("de")("not in any catalog {x}", x=0.5) == "not in any catalog 0,5"


# --- every builder in every language ----------------------------------------------------------

def _question(kind: str):
    return {"choice": Question("choice", ("up", "down")),
            "parts": Question("parts", ("sink", "aligns"), rows=("head 1", "head 2")),
            "links": Question("links", ("le", "chat"), rows=("the", "cat"))}[kind]


def _fakes():
    w = toy_weights()                                                   # (3, 3, 6)
    tl = SimpleNamespace(steps=np.array([0, 10, 20]), loss=np.array([2.0, 1.0, 0.5]),
                         word_accuracy=np.array([0.1, 0.5, 0.9]),
                         by_head={"moved_accuracy": RNG.random((3, 2)),
                                  "repeated_accuracy": RNG.random((3, 2))},
                         weights=np.stack([w[:2]] * 3),
                         probe=SimpleNamespace(source=SRC, target=TGT,
                                               alignment_matrix=lambda: np.eye(3, 6, dtype=bool)))
    fx = SimpleNamespace(src_words=SRC, tgt_words=TGT, row=1, attention=RNG.random((2, 3, 6)),
                         drop=RNG.random(6) - 0.2, head_drop=RNG.random((2, 3)))
    lens = SimpleNamespace(chosen=RNG.random((2, 4)), top_probs=RNG.random((2, 4, 3)),
                           top_tokens=np.array([[["le", "la", "un"]] * 4] * 2))
    scores = SimpleNamespace(aer=RNG.random((2, 3)), layer_aer=RNG.random(2),
                             best_layers=(1,), best_heads=((0, 2),))
    share = SimpleNamespace(distractor=SimpleNamespace(name="uniform weights"), share=0.4,
                            count=2, answered=5)
    return w, tl, fx, lens, scores, share


def _builders(lang: str) -> dict:
    w, tl, fx, lens, scores, share = _fakes()
    gold = np.eye(3, 6, dtype=bool)
    return {
        "head_figure": lambda: heads.head_figure(w[0], SRC, TGT, head=1, colorbar=True, lang=lang),
        "per_head_figure": lambda: heads.per_head_figure(w, SRC, TGT, gold=gold, lang=lang),
        "average_figure": lambda: heads.average_figure(w, SRC, TGT, lang=lang),
        "output_figure": lambda: heads.output_figure(RNG.random((3, 8)), TGT, lang=lang),
        "clickable_head_figure": lambda: step.clickable_head_figure(w[0], SRC, TGT, head=0,
                                                                    selected=1, lang=lang),
        "weights_bar_figure": lambda: step.weights_bar_figure(
            w[0, 0], SRC, allowed=np.array([1, 1, 0, 1, 1, 1], bool), query="le", head=0,
            lang=lang),
        "saturation_figure": lambda: step.saturation_figure(
            {"d_head": [2, 8, 32], "scaled": [0.9, 0.8, 0.7], "unscaled": [0.8, 0.5, 0.1]}, 8,
            lang=lang),
        "lines_figure": lambda: lines.lines_figure(w, SRC, TGT, lang=lang),
        "overview_figure": lambda: overview.overview_figure(np.stack([w, w]), selected=(0, 1),
                                                            lang=lang),
        "measure_figure": lambda: analysis.measure_figure(
            {"head": np.arange(3), "entropy": np.array([0.1, 0.5, 0.9])}, "entropy", "entropy",
            lang=lang),
        "ablation_figure": lambda: analysis.ablation_figure(
            SimpleNamespace(per_token=np.array([0.1, 0.2, 0.3])), TGT, [2], lang=lang),
        "loss_figure": lambda: training.loss_figure([1.0, 0.5, 0.2], 10, lang=lang),
        "aer_figure": lambda: alignment.aer_figure(scores, lang=lang),
        "versus_figure": lambda: aligns.versus_figure(
            RNG.random((3, 6)), [(PanelName(1, None), w[0]), (PanelName(1, 2), w[1])], SRC,
            TGT, gold=gold, lang=lang),
        "overlay_figure": lambda: media.overlay_figure(
            np.full((16, 32, 3), 200, np.uint8), [None, (0, 0, 16, 16), (16, 0, 32, 16)],
            RNG.random((2, 3, 3)), TGT, [0, 1, 2], tile_height=16, lang=lang),
        "answers_figure": lambda: classroom.answers_figure(
            _question("choice"), {"up": 3, "down": 1}, truth="up", lang=lang),
        "revote_figure": lambda: classroom.revote_figure(
            _question("choice"), {"up": 1}, {"up": 3, "down": 1}, truth="up", lang=lang),
        "taps_figure": lambda: classroom.taps_figure(SRC, {1: 2, 2: 1}, w[0, 0], target="le",
                                                     head="head 1", lang=lang),
        "parts_figure": lambda: classroom.parts_figure(
            _question("parts"), {("head 1", "sink"): 2}, 3, truth=("aligns", "sink"),
            also=((), ("aligns",)), lang=lang),
        "links_figure": lambda: classroom.links_figure(
            _question("links"), {(0, 0): 2}, 3, gold=np.eye(2, dtype=bool), lang=lang),
        "learning_figure": lambda: classroom.learning_figure(
            [("1", 0.5, 0.8, None), ("2", 0.2, None, 0.9)], lang=lang),
        "misconceptions_figure": lambda: misconceptions.misconceptions_figure([share],
                                                                              lang=lang),
        "step_rows_figure": lambda: decode.step_rows_figure(fx.attention, SRC, title="le",
                                                            lang=lang),
        "candidates_figure": lambda: decode.candidates_figure(
            [("le", 0.6), ("la", 0.3)], "un", forced=True, lang=lang),
        "rows_so_far_figure": lambda: decode.rows_so_far_figure(w[0], TGT, SRC, 1, title="t",
                                                                lang=lang),
        "query_figure": lambda: decode.query_figure(RNG.random((3, 4)) - 0.5, title="q",
                                                    lang=lang),
        "query_scores_figure": lambda: decode.query_scores_figure(RNG.random((3, 6)), SRC,
                                                                  title="s", lang=lang),
        "effects_figure": lambda: effects.effects_figure(fx, 1, lang=lang),
        "head_effects_figure": lambda: effects.head_effects_figure(fx, lang=lang),
        "lens_figure": lambda: effects.lens_figure(lens, 2, "le", lang=lang),
        "run_curves_figure": lambda: timelapse.run_curves_figure(tl, 10, lang=lang),
        "head_curves_figure": lambda: timelapse.head_curves_figure(tl, 10, lang=lang),
        "timelapse_animation": lambda: timelapse.timelapse_animation(tl, lang=lang),
        "spectrogram_figure": lambda: media.spectrogram_figure(
            RNG.random((8, 20)), 0.01, peaks=[("le", 0.05)], lang=lang),
        "timing_figure": lambda: media.timing_figure(RNG.random((2, 3, 2)), (0.1, 0.2),
                                                     chosen=((0, 1),), lang=lang),
        "dtw_figure": lambda: media.dtw_figure(RNG.random((3, 10)), [0, 1, 2], [0, 4, 9], TGT,
                                               0.02, lang=lang),
    }


def _words(fig) -> list[str]:
    """Every text of a figure a reader sees that is words (not data): titles, names, hover
    templates, annotations, legend title, slider prefix and buttons (a mark's name, hidden
    from legend and hover, is not seen)."""
    d = fig.to_dict() if hasattr(fig, "to_dict") else fig
    found = []
    data = [{k: v for k, v in t.items() if k != "name" or t.get("showlegend", True)
             or t.get("hoverinfo") != "skip"} for t in d["data"]]

    def walk(node, key=""):
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, (list, tuple)):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key in ("text", "name", "hovertemplate", "prefix",
                                                "label"):
            found.append(node)
    walk({"data": data, "layout": {k: v for k, v in d["layout"].items()
                                        if k != "template"}})
    return found


@pytest.mark.parametrize("lang", LANGS)
def test_every_builder_draws_in_each_language(lang):
    for name, build in _builders(lang).items():
        fig = build()
        assert fig.layout is not None, name


@pytest.mark.parametrize("name", sorted(_builders("en")))
def test_no_builder_leaves_an_english_word_in_french(name):
    """Every word of the French chart that is also a msgid must be one French keeps as it is
    (a word spelled the same: "source", "token", "dimension")."""
    tr, messages = chart_words("fr"), _said()
    kept = {m for m, (message, _) in messages.items() if isinstance(message, str) and tr(m) == m}
    en_words = set(messages)
    fig = _builders("fr")[name]()
    for text in _words(fig):
        for part in text.replace("<br>", "\n").replace("<b>", "").replace("</b>", "").split("\n"):
            assert part not in en_words - kept, (name, part)


def _numbers_and_tokens(fig) -> tuple:
    d = fig.to_dict()
    data = [{k: v for k, v in t.items() if k in ("x", "y", "z", "customdata")}
            for t in d["data"]]
    axes = {k: {a: v.get(a) for a in ("tickvals", "ticktext", "range")}
            for k, v in d["layout"].items() if k.startswith(("xaxis", "yaxis"))}
    return json.dumps(data, sort_keys=True, default=str), json.dumps(axes, sort_keys=True)


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_a_head_chart_speaks_the_language_with_the_same_numbers_and_tokens(lang):
    tr, w = chart_words(lang), toy_weights()
    en = heads.head_figure(w[1], SRC, TGT, head=1, colorbar=True)
    fig = heads.head_figure(w[1], SRC, TGT, head=1, colorbar=True, lang=lang)
    msg = {m.id: m.string for m in catalog(lang) if m.id and not m.pluralizable}
    assert fig.layout.title.text == msg["head {h}"].replace("{h}", "2") != en.layout.title.text
    assert fig.layout.xaxis.title.text == msg["source (keys)"]
    assert fig.layout.yaxis.title.text == msg["target (queries)"]
    assert fig.layout.coloraxis.colorbar.title.text == msg["weight"] == tr("weight")
    assert msg["weight"] in fig.data[0].hovertemplate
    assert _numbers_and_tokens(fig) == _numbers_and_tokens(en)
    assert list(fig.layout.xaxis.ticktext) == ["&lt;s&gt;", "the", "cat", "&amp;", "the",
                                               "&lt;/s&gt;"]


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_a_class_chart_speaks_the_language_with_the_same_counts_and_answers(lang):
    q = _question("choice")
    en = classroom.answers_figure(q, {"up": 3, "down": 1}, truth="up")
    fig = classroom.answers_figure(q, {"up": 3, "down": 1}, truth="up", lang=lang)
    cat = catalog(lang)
    title = cat.get("The class's predictions").string
    forms = cat.get(("{title} ({n} answer)", "{title} ({n} answers)")).string
    assert fig.layout.title.text in {f.replace("{title}", title).replace("{n}", "4")
                                     for f in forms}
    assert fig.layout.xaxis.title.text == cat.get("prediction").string
    assert fig.layout.yaxis.title.text == cat.get("students").string
    assert _numbers_and_tokens(fig) == _numbers_and_tokens(en)
    assert classroom.class_alt(q, revealed=True, lang=lang) == (
        cat.get(CHARTS["bars"].alt).string + cat.get(CHARTS["bars"].outlined).string)
    assert classroom.class_alt(q, revealed=True) == q.of.alt(revealed=True)


# --- the charts phones get: built in each phone's language -------------------------------------

def _revealed_room(lang: str) -> dict:
    from xattn.classroom import RoomView
    from xattn.lesson import shipped_lessons
    from xattn.live.answers import class_step
    from xattn.live.messages import room_message

    lesson = shipped_lessons()["short"]
    q = class_step(lesson, 2)[1].question      # a token question of one row: the class's taps
    view = RoomView("HJK23M", 2, len(lesson.steps), "revealed", 1, q, {0: 2}, 2, 2)
    return json.loads(room_message(view, lesson, None, lang).room)["answer"]


def test_a_phones_charts_are_in_its_language_with_the_same_numbers_and_tokens():
    en = _revealed_room("en")
    assert en["charts"]
    for lang in ("fr", "ar"):
        room, tr = _revealed_room(lang), chart_words(lang)
        assert len(room["charts"]) == len(en["charts"])
        for chart, theirs in zip(room["charts"], en["charts"], strict=True):
            assert chart["title"] != theirs["title"] and chart["alt"] != theirs["alt"]
            for p, q in zip(chart["panels"], theirs["panels"], strict=True):
                assert p["kind"] == q["kind"] and p["x"] == q["x"]       # tokens as they are
                assert p.get("z") == q.get("z")
                assert [s["y"] for s in p.get("series", [])] == \
                    [s["y"] for s in q.get("series", [])]
        taps = room["charts"][0]["panels"][0]        # the class's taps beside the head's row
        assert taps["xtitle"] == tr("source (keys)")
        assert taps["y"] == [tr("the class (share of taps)"),
                             tr("{head} (weights)", head=tr("head {h}", h=1))]
        assert room["charts"][0]["alt"] == tr(class_words.TAPS_ALT)


# --- the lecturer's page draws its charts in its language ----------------------------------------

def test_the_lecturers_page_draws_its_charts_in_its_language(tmp_path, monkeypatch):
    from apptest_helpers import APP, chart
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    monkeypatch.setenv("XATTN_CLASS_STORE", str(tmp_path / "classes.sqlite3"))
    figs = {}
    for lang, locale in (("en", None), ("fr", "fr-FR"), ("ar", "ar")):
        at = AppTest.from_file(APP, default_timeout=120)
        if locale:
            at.context["locale"] = locale
        at.run()
        assert not at.exception, at.exception
        figs[lang] = chart(at, "head_1")
    for lang in ("fr", "ar"):
        tr, fig, en = chart_words(lang), figs[lang], figs["en"]
        # an Arabic title is drawn in a right-to-left embedding (figures.frozen.right_to_left):
        # "المصدر (keys)" then keeps its brackets in place whatever the page's direction
        said = (lambda t: f"\u202b{t}\u202c") if lang == "ar" else (lambda t: t)
        assert fig["layout"]["title"]["text"] == said(tr("head {h}", h=1))
        assert fig["layout"]["xaxis"]["title"]["text"] == said(tr("source (keys)"))
        assert fig["layout"]["yaxis"]["title"]["text"] == said(tr("target (queries)"))
        for axis in ("xaxis", "yaxis"):                       # the tokens, byte for byte
            assert fig["layout"][axis]["ticktext"] == en["layout"][axis]["ticktext"]
        assert fig["data"][0]["z"] == en["data"][0]["z"]


def test_an_arabic_page_keeps_its_charts_rows_and_colour_bar_left_to_right(monkeypatch):
    """Arabic mirrors the page, not the charts: a row of columns holding a chart (the heads,
    1..h) and the grid's colour bar stay left to right, its word in Arabic."""
    from apptest_helpers import APP
    from streamlit.testing.v1 import AppTest

    monkeypatch.delenv("XATTN_REDIS_URL", raising=False)
    at = AppTest.from_file(APP, default_timeout=120)
    at.context["locale"] = "ar"
    at.run()
    assert not at.exception, at.exception
    style = "".join(h.proto.body for h in at.get("html") if "direction: rtl" in h.proto.body)
    assert '[data-testid="stHorizontalBlock"]:has(.stPlotlyChart)' in style
    assert '[data-testid="stMain"] .xattn-ltr { direction: ltr; }' in style
    (bar,) = [m.value for m in at.markdown if "linear-gradient" in m.value]
    assert 'class="xattn-ltr" dir="ltr"' in bar
    assert f"<span>{chart_words('ar')('weight')} 0</span>" in bar


@pytest.mark.parametrize("n", [1, 4])            # one head; the heads averaged
def test_a_lesson_answers_chart_and_its_alt_are_said_in_the_language(n):
    from xattn.lesson import shipped_lessons
    from xattn.live.answers import class_step

    (chart,) = class_step(shipped_lessons()["short"], n)[1].charts
    en, fr = chart.make(1.0), chart.make(1.0, "fr")
    assert chart.said() == chart.alt and chart.said("fr") != chart.alt
    assert chart.said("fr") == chart_words("fr")(
        "Heatmap of {what}: target tokens (rows) by source tokens (columns).",
        what=fr.to_dict()["layout"]["title"]["text"])
    assert fr.to_dict()["layout"]["title"]["text"] != en.to_dict()["layout"]["title"]["text"]
    assert _numbers_and_tokens(fr) == _numbers_and_tokens(en)


def test_the_versus_chart_made_as_dicts_is_the_figures_json_in_each_language():
    """A phone's build makes the versus chart once per language at each reveal: as plain
    dicts (`versus_parts` + ``frozen``), the same JSON as the Plotly figure."""
    import plotly.io as pio

    from xattn.figures.frozen import freeze, frozen

    w, gold = toy_weights(), np.eye(3, 6, dtype=bool)
    args = (RNG.random((3, 6)), [("L1", w[0]), ("L1 head 2", w[1])], SRC, TGT)
    for lang in ("en", "ar"):
        made = frozen(*aligns.versus_parts(*args, gold=gold, lang=lang)).to_dict()
        fig = freeze(aligns.versus_figure(*args, gold=gold, lang=lang)).to_dict()
        assert json.loads(pio.to_json(made)) == json.loads(pio.to_json(fig))


# --- the versus chart's panels and the image overlay's columns: the chart's words ---------------

def _msg(lang: str, msgid: str, **names) -> str:
    text = catalog(lang).get(msgid).string
    for k, v in names.items():
        text = text.replace("{" + k + "}", str(v))
    return text


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_the_versus_panels_are_named_in_the_charts_language(lang):
    w, gold = toy_weights(), np.eye(3, 6, dtype=bool)
    panels = [(PanelName(2, None), w[0]), (PanelName(2, 2), w[1]), (PanelName(None, None), w[2]),
              (PanelName(None, 3), w[0])]
    en = aligns.versus_figure(RNG.random((3, 6)), panels, SRC, TGT, gold=gold)
    fig = aligns.versus_figure(RNG.random((3, 6)), panels, SRC, TGT, gold=gold, lang=lang)
    names = [a.text for a in fig.layout.annotations]
    assert [a.text for a in en.layout.annotations] == [
        "<b>the class</b>", "<b>L2 mean</b>", "<b>L2 head 2</b>", "<b>mean</b>", "<b>head 3</b>"]
    assert names == ["<b>" + n + "</b>" for n in (
        _msg(lang, "the class"), _msg(lang, "L{l} mean", l=2), _msg(lang, "L{l} head {h}", l=2, h=2),
        _msg(lang, "mean"), _msg(lang, "head {h}", h=3))]
    assert fig.data[2].name == _msg(lang, "L{l} head {h}", l=2, h=2)
    assert fig.layout.xaxis.ticktext == en.layout.xaxis.ticktext          # tokens as they are
    # the title's abbreviation is the panels' (C for couche, ط for طبقة)
    assert "(" + names[1][3] + ")" in fig.layout.title.text


def _overlay(lang: str = "en", weights=None, tokens=("<s>", "le", "chat")):
    image = np.full((16, 32, 3), 200, np.uint8)
    boxes = [None, (0, 0, 16, 16), (16, 0, 32, 16)]
    w = RNG.random((2, 3, 3)) if weights is None else weights
    return media.overlay_figure(image, boxes, w, tokens, [0, 1, 2], tile_height=16, lang=lang)


@pytest.mark.parametrize("lang", ["fr", "ar"])
def test_the_image_overlays_words_are_the_charts_text_in_its_language(lang):
    w = RNG.random((2, 3, 3))
    en, fig = _overlay(weights=w), _overlay(lang, w)
    assert list(en.layout.xaxis.ticktext) == ["head 1", "head 2", "mean"]
    assert list(fig.layout.xaxis.ticktext) == [_msg(lang, "head {h}", h=1),
                                               _msg(lang, "head {h}", h=2), _msg(lang, "mean")]
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt;", "le", "chat"]     # as in English
    assert fig.layout.yaxis.ticktext == en.layout.yaxis.ticktext
    assert fig.data[0].type == "image" and fig.data[0].source == en.data[0].source


def test_the_image_overlay_draws_no_words_into_its_pixels():
    """Nothing but the tiles and white gaps: with no attention every tile is the grey image,
    so a word drawn anywhere (the columns' names, the tokens, as Pillow once did) would show."""
    w = np.zeros((2, 3, 3))
    mosaic = media.overlay_mosaic(np.full((16, 32, 3), 200, np.uint8),
                                  [None, (0, 0, 16, 16), (16, 0, 32, 16)], w, [0, 1, 2],
                                  tile_height=16, pad=4)
    assert mosaic.shape == (3 * 20, 3 * 36, 3)
    assert set(np.unique(mosaic)) == {200, 255}
    tiles = np.zeros(mosaic.shape[:2], bool)
    for r in range(3):
        for c in range(3):
            tiles[r * 20:r * 20 + 16, c * 36:c * 36 + 32] = True
    assert (mosaic[tiles] == 200).all() and (mosaic[~tiles] == 255).all()


def test_a_french_and_an_arabic_chart_title_show_in_a_browser(chromium):
    """A French title keeps its no-break space before ":" on screen (Plotly reads a title as
    HTML-ish text: the U+00A0 must neither vanish nor turn into "&nbsp;"), and an Arabic one
    shows its letters."""
    from plotly.offline import get_plotlyjs

    figs = {lang: heads.head_figure(toy_weights()[0], SRC, TGT, head=0, lang=lang,
                                    title=_msg(lang, "Layer {l}: one heatmap per head", l=2))
            for lang in ("fr", "ar")}
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.set_content("<div id=f></div><div id=a></div><script>" + get_plotlyjs()
                         + "</script>")
        for lang, div in (("fr", "f"), ("ar", "a")):
            page.evaluate("([div, fig]) => Plotly.newPlot(div, fig.data, fig.layout)",
                          [div, json.loads(figs[lang].to_json())])
            shown = page.evaluate(f"document.querySelector('#{div} .gtitle').textContent")
            width = page.evaluate(
                f"document.querySelector('#{div} .gtitle').getBBox().width")
            assert shown == figs[lang].layout.title.text and width > 50, (lang, shown)
        assert "\u00a0:" in page.evaluate("document.querySelector('#f .gtitle').textContent")
    finally:
        context.close()
