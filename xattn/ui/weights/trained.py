"""The trained weights: the toy EN->FR task, trained once per setting for the whole class.

`trained_source` draws the English and French boxes, the lexicon, the training controls (in
the sidebar) and the training run (a live progress bar and loss curve when it trains), and
returns the pair's weights with its gold alignment. `trained_statistics` is what the Head
statistics view adds for these weights: which head learned what. Training is shared through
``xattn.live.training``; reading the pair is ``xattn.pairs``.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from xattn.alignment import Evaluated, GoldScores, verdict
from xattn.corpus import LEXICON
from xattn.figures import loss_figure
from xattn.literal import md_code
from xattn.live.link import (
    PRESENT,
    TR_HEAD_CHOICES,
    TR_HEADS,
    TR_MAX_SEED,
    TR_SEED,
    TR_SRC,
    TR_STEP_CHOICES,
    TR_STEPS,
    TR_TGT,
)
from xattn.live.training import obtain
from xattn.metrics import MEASURES
from xattn.pairs import Problem, gold_text, read_pair
from xattn.sources import Attention, trained_attention
from xattn.train import TrainConfig
from xattn.ui.charts import show_chart
from xattn.ui.i18n import N_, page_lang
from xattn.ui.i18n import gettext as _
from xattn.ui.look import FONT_SCALE
from xattn.ui.state import PageState, text_value
from xattn.ui.weights.progress import page_progress
from xattn.words import number, sentences

DEFAULT_SRC = TR_SRC.default

# The toy task told in two paragraphs, each a message (translated where drawn)
TASK = (
    N_("**The task.** Each French (target) word must *retrieve the English (source) word it "
       "translates*: *chat* must look at *cat* and *rouge* at *red*, although French moves the "
       "adjective after the noun, and each *le* must pick its own *the*. The model is the "
       "cross-attention of the other tabs, one layer: the queries are the French words' vectors "
       "plus their positions, the keys and values the English words' vectors plus theirs."),
    N_("**The training.** Random sentences from a small grammar over the lexicon below, with "
       "their known word alignment. The output at each French word must reproduce the vector of "
       "its aligned English word (mean squared error), and attention is the only route to it. "
       "The word vectors stay fixed: nothing but $W^Q, W^K, W^V, W^O$ is trained (Adam, 32 "
       "sentences a step). A French word counts as **aligned** when the English word it attends "
       "to most (averaged over heads) is its gold word; *exact* also requires the right "
       "position, e.g. the right *the*."),
)


# The library's English words of the gold measures (``xattn.alignment.ALIGNMENT_MEASURES``)
# and of the measures' short names (``xattn.metrics.MEASURES``), marked for the ``app``
# catalog; tests/test_app_page_languages.py checks they are the libraries' own.
GOLD_MEASURE_WORDS = {
    "word_accuracy": N_("Share of target words whose most-attended source word is their gold "
                        "word (either \"the\" counts when there are two)."),
    "exact_accuracy": N_("Share of target words whose most-attended source word is the gold "
                         "one at the gold position."),
    "moved_accuracy": N_("Word accuracy on the swapped noun and adjective, where position alone "
                         "points to the wrong word: high for a head that aligns by meaning."),
    "repeated_accuracy": N_("Exact accuracy on words that occur twice in the source (\"the ... "
                            "the\"), where meaning alone is a coin flip: high for a head that "
                            "uses position."),
    "gold_weight": N_("Average attention weight on the gold source word (1 = all of it)."),
}
SHORT_WORDS = {"confidence": N_("confidence"), "normalised_entropy": N_("spread"),
               "diagonal_alignment": N_("diagonal"), "monotonicity": N_("monotonicity")}
# What a head learned (``xattn.alignment.VERDICTS``), in the page's language
VERDICT_WORDS = {
    "little": N_("It learned little on its own: the other heads carry the alignment."),
    "both": N_("It uses meaning *and* position."),
    "meaning": N_("It aligns by meaning: it follows the moved adjective, but two *the*s fool "
                  "it."),
    "position": N_("It leans on position: it picks the right *the* but misses the swapped "
                   "words."),
    "mixed": N_("It mixes both cues, neither reliably."),
}

PAIR_COLUMNS = {  # column of the per-pair table: (label, help, number format), said where drawn
    "word_accuracy": (N_("on gold"), N_("Share of this pair's target words whose strongest "
                                        "weight in this head falls on their gold word."), "pct"),
    "gold_weight": (N_("gold weight"), GOLD_MEASURE_WORDS["gold_weight"], "%.2f"),
} | {k: (SHORT_WORDS[k], MEASURES[k].description, "%.2f")  # said: analysis.MEASURE_WORDS
     for k in ("confidence", "normalised_entropy", "diagonal_alignment", "monotonicity")}
HELDOUT_COLUMNS = {
    "word_accuracy": (N_("word"), GOLD_MEASURE_WORDS["word_accuracy"], "pct"),
    "untrained_word": (N_("word, untrained"), N_("The same head before training."), "pct"),
    "exact_accuracy": (N_("exact"), GOLD_MEASURE_WORDS["exact_accuracy"], "pct"),
    "moved_accuracy": (N_("swapped words"), GOLD_MEASURE_WORDS["moved_accuracy"], "pct"),
    "repeated_accuracy": (N_("repeated words"), GOLD_MEASURE_WORDS["repeated_accuracy"], "pct"),
    "gold_weight": (N_("gold weight"), GOLD_MEASURE_WORDS["gold_weight"], "%.2f"),
}


def _column_config(columns: dict, *, narrow: bool = False) -> dict:
    """Labels, tooltips and formats; ``narrow`` sizes columns to their labels (px), so that a
    half-page table shows every column."""
    width = (lambda label: 14 + 6 * len(label)) if narrow else (lambda label: None)
    head = _("head")
    config = {"head": st.column_config.NumberColumn(head, format="%d", width=width(head))}
    config.update({k: st.column_config.NumberColumn(
        _(label), help=_(text), format="%.0f%%" if fmt == "pct" else fmt, width=width(_(label)))
        for k, (label, text, fmt) in columns.items()})
    return config


def _frame(data: dict, columns: dict) -> dict[str, list]:
    """A table in ``columns``' order, shares in percent where the format says "pct"."""
    return {"head": list(data["head"])} | {
        k: list(100 * np.asarray(data[k]) if columns[k][2] == "pct" else data[k])
        for k in columns}


def pair_table(scores: GoldScores, stats: dict[str, np.ndarray]) -> dict[str, list]:
    """One row per head: gold-based scores on this pair, then the gold-free measures
    (``stats``: ``head_statistics`` of the layer shown, as the page already has them)."""
    gold = scores.pair_by_head
    data = {"head": stats["head"] + 1} | {k: gold.get(k, stats.get(k)) for k in PAIR_COLUMNS}
    return _frame(data, PAIR_COLUMNS)


def heldout_table(scores: GoldScores) -> dict[str, list]:
    t = scores.heldout_by_head
    data = {"head": t["head"] + 1} | {k: t[k] for k in HELDOUT_COLUMNS if k in t}
    data["untrained_word"] = scores.untrained_by_head["word_accuracy"]
    return _frame(data, HELDOUT_COLUMNS)


CATEGORY_WORDS = {"determiner": N_("determiner"), "verb": N_("verb"), "noun": N_("noun"),
                  "adjective": N_("adjective")}
LEXICON_HEADS = (N_("English"), N_("French"), N_("category"))


def lexicon_table(categories: tuple[str, ...]) -> dict[str, list]:
    """The lexicon's words of ``categories``, headed and categorised in the page's language
    (the words themselves are the model's, as they are)."""
    rows = [(e.english, " / ".join(e.french),
             _(CATEGORY_WORDS[e.category]) + (f" ({e.gender})" if e.gender else "")
             + (_(", transitive") if e.transitive else ""))
            for e in LEXICON if e.category in categories]
    return dict(zip(map(_, LEXICON_HEADS), map(list, zip(*rows, strict=True)), strict=True))


# ----------------------------------------------------------------------- the source
def training_controls(state: PageState) -> TrainConfig:
    sb = st.sidebar
    sb.header(_("Training"))
    heads = state.value(TR_HEADS, TR_HEAD_CHOICES, why=_("(1, 2, 4 or 8 heads of d_model 32)"))
    sb.select_slider(_("Number of heads"), TR_HEAD_CHOICES, key=TR_HEADS.key,
                     help=_("d_model is 32, so each head gets 32 / h dimensions."))
    steps = state.value(TR_STEPS, TR_STEP_CHOICES, why=_("(25, 50, 100, 200 or 400 steps)"))
    sb.select_slider(_("Training steps"), TR_STEP_CHOICES, key=TR_STEPS.key,
                     help=_("Adam updates, each on 32 fresh random sentences."))
    seed = state.value(TR_SEED)
    sb.number_input(_("Training seed"), 0, TR_MAX_SEED, step=1, key=TR_SEED.key,
                    help=_("Draws the random starting weights and the training sentences: "
                           "another seed, other heads."))
    return TrainConfig(n_heads=int(heads), steps=int(steps), seed=int(seed))


def training_panel(config: TrainConfig, font_scale: float = 1.0) -> Evaluated | None:
    """The class's run of ``config``: while it trains, a progress bar and the live loss curve;
    then, folded in an expander, the task, the loss curve (its text ``font_scale`` times the
    usual: presenter mode) and the held-out accuracy."""
    live = st.container()                     # the progress of a run training now
    with live:
        bar_slot, live_curve = st.empty(), st.empty()
    try:
        run, made = obtain(config, page_progress(bar_slot, live_curve))
    except ValueError as err:  # not expected with the offered choices; never a traceback
        st.error(_("Training failed: {why}", why=err), icon=":material/error:")
        return None
    live_curve.empty()
    with st.expander(_("The toy task and its training run: loss curve, held-out accuracy")):
        st.markdown("\n\n".join(_(paragraph) for paragraph in TASK))
        left, right = st.columns([3, 2], gap="large")
        curve_slot = left.empty()
        stem = f"xattn-trained-{config.n_heads}heads-{config.steps}steps-seed{config.seed}"
        show_chart(loss_figure(run.result.losses, config.steps, font_scale=font_scale,
                               lang=page_lang()),
                   key="tr_loss",
                   name=f"{stem}-loss", where=curve_slot,
                   alt=_("Line chart of the training loss per step, falling."))
        seconds = f"{run.seconds:.1f}"
        left.caption(_("Trained just now in {seconds} s and stored for the whole class: anyone "
                       "choosing these settings gets this very run.", seconds=seconds) if made
                     else _("The class's shared run of these settings (it trained once, in "
                            "{seconds} s). Change heads, steps or seed to train another.",
                            seconds=seconds))
        with right:
            accuracy_summary(run)
    return run


def accuracy_summary(run: Evaluated) -> None:
    (tw, te), (uw, ue), (cw, ce) = (run.accuracy[k] for k in ("trained", "untrained", "chance"))
    n = len(run.result.heldout)
    st.metric(_("Held-out word accuracy (trained)"), f"{tw:.1%}",
              delta=_("{points} points over the random start", points=f"{100 * (tw - uw):+.1f}"),
              help=_("On {n} test sentences never seen in training: share of French words "
                     "whose strongest attention (averaged over heads) falls on their gold "
                     "English word.", n=n))
    st.dataframe({"model": ["trained", "untrained (random start)", "chance (random guess)"],
                  "word": [f"{tw:.1%}", f"{uw:.1%}", f"{cw:.1%}"],
                  "exact (right position)": [f"{te:.1%}", f"{ue:.1%}", f"{ce:.1%}"]},
                 hide_index=True)
    st.caption(_("{n} held-out sentences. *Word*: either *the* counts for *le*; *exact*: it "
                 "must be the right one. *Chance*: the strongest weight falls on a random "
                 "source word.", n=n))


def sentence_controls(state: PageState) -> tuple[str, str]:
    left, right = st.columns(2)
    src, tgt = text_value(state, TR_SRC), text_value(state, TR_TGT)
    left.text_input(_("English sentence (source: keys and values)"), key=TR_SRC.key,
                    max_chars=TR_SRC.max_chars,
                    help=_("Words of the lexicon below; e.g. 'a sad king follows the dog'."))
    right.text_input(_("French sentence (target: queries), optional"), key=TR_TGT.key,
                     max_chars=TR_TGT.max_chars,
                     placeholder=_("empty: translated by the grammar"),
                     help=_("Leave empty to translate the English with the grammar. Typed "
                            "French is aligned word by word through the lexicon."))
    return src, tgt


def lexicon_expander() -> None:
    with st.expander(_("The lexicon: the {n} English words the model knows, with their "
                       "French", n=len(LEXICON))):
        st.caption(_("Sentences follow one pattern: *determiner (adjective) noun verb*, and for "
                     "a transitive verb a second *determiner (adjective) noun*. French puts the "
                     "adjective after the noun, and *le/la*, *un/une*, *ce/cette* follow the "
                     "noun's gender (m/f)."))
        groups = (("determiner", "verb"), ("noun",), ("adjective",))
        for col, categories in zip(st.columns(3), groups, strict=True):
            table = lexicon_table(categories)
            rows = len(next(iter(table.values())))
            col.dataframe(table, hide_index=True, height=35 * (rows + 1) + 3)


def trained_source(state: PageState, *, untrained: bool = False) -> Attention | None:
    """The trained (or, ``untrained``, the starting) weights on the typed pair, or None after
    saying what is wrong with the pair."""
    src, tgt = sentence_controls(state)
    lexicon_expander()
    config = training_controls(state)
    run = training_panel(config, FONT_SCALE if state.shown(PRESENT) else 1.0)
    if run is None:
        return None
    pair = read_pair(src, tgt)
    if isinstance(pair, Problem):
        show = st.warning if pair.level == "warning" else st.error
        show(pair.message, icon=f":material/{pair.level}:")   # material: no emoji font needed
        return None
    loose = [t for t, j in zip(pair.target, pair.alignment, strict=True) if j is None]
    st.caption(_("Gold alignment: {links}", links=gold_text(pair))
               + (". " + _("No unused English word translates {words}: no gold mark there, and "
                           "left out of the accuracy.", words=", ".join(map(md_code, loose)))
                  if loose else ""))
    return trained_attention(run, pair, untrained=untrained)


# ----------------------------------------------------------------------- statistics
def gold_statistics(scores: GoldScores, stats: dict[str, np.ndarray]) -> None:
    """Weights with a gold alignment: this pair's per-head scores and each head on held-out
    sentences (``stats``: ``head_statistics`` of the layer shown)."""
    word, n_gold = scores.word, scores.n_gold
    st.markdown("#### " + _("On this sentence pair"))
    st.metric(_("Aligned words in this sentence (heads averaged)"),
              "n/a" if np.isnan(word) else _("{n} of {total}", n=round(word * n_gold),
                                             total=n_gold),
              help=_("Exact (right position): {share}.", share=_share(scores.exact)))
    st.dataframe(pair_table(scores, stats), hide_index=True,
                 column_config=_column_config(PAIR_COLUMNS, narrow=True))
    st.markdown("#### " + _("Which head learned what"))
    st.caption(_("Each trained head on its own, on the {n} held-out sentences: where does its "
                 "strongest weight fall?", n=scores.n_heldout))
    st.markdown("\n".join(f"- {line}" for line in head_lines(scores)))
    st.dataframe(heldout_table(scores), hide_index=True,
                 column_config=_column_config(HELDOUT_COLUMNS))


def _share(x: float) -> str:
    """A share as a whole percentage in the page's language (``93 %``), *n/a* for NaN."""
    return _("n/a") if np.isnan(x) else number(float(x), ".0%", page_lang())


def head_lines(scores: GoldScores) -> list[str]:
    """One sentence per head on what it learned on the held-out sentences, in the page's
    language (``xattn.alignment.head_sentences``' English, from the same numbers)."""
    trained, untrained = scores.heldout_by_head, scores.untrained_by_head
    lines = []
    for h in range(len(trained["head"])):
        word, moved = trained["word_accuracy"][h], trained["moved_accuracy"][h]
        repeated = trained["repeated_accuracy"][h]
        said = _("**Head {head}** puts {word} of its argmaxes on the gold word (untrained: "
                 "{untrained}); {moved} on a swapped noun or adjective, {repeated} on the right "
                 "one of a repeated word.", head=h + 1, word=_share(word),
                 untrained=_share(untrained["word_accuracy"][h]), moved=_share(moved),
                 repeated=_share(repeated))
        lines.append(sentences(said, _(VERDICT_WORDS[verdict(word, moved, repeated)]),
                               lang=page_lang()))
    return lines


def default_trained(a: Attention) -> Attention | None:
    """The toy task's default run on the tokens of ``a`` (for Compare), or None after saying
    why these sentences cannot be shown by it."""
    config = TrainConfig()
    bar_slot, curve_slot = st.empty(), st.empty()
    run, _made = obtain(config, page_progress(bar_slot, curve_slot))
    pair = read_pair(" ".join(a.src_tokens), " ".join(a.tgt_tokens))
    if isinstance(pair, Problem):
        st.info(_("B cannot be the trained weights here: the toy model knows only the words "
                  "of its lexicon (choose *trained* weights in the sidebar to see it).")
                + " " + pair.message, icon=":material/info:")
        return None
    return trained_attention(run, pair)
