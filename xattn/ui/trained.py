"""The "Trained vs random" view: train the cross-attention to align the toy corpus, then compare.

One training run per setting is shared by everyone on the server (`_Store`): the first student
to ask for a setting watches it train (progress bar, live loss curve); everyone after gets the
stored run and its curve at once, and students asking at the same moment wait for the one run
instead of starting their own. The user's own sentence pair is then drawn under the random start
and the trained weights side by side, with its gold alignment marked, and the per-head tables
say which head learned what.
"""

from __future__ import annotations

import contextlib
import difflib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import streamlit as st

from xattn.corpus import (
    LEXICON,
    SOURCE_WORDS,
    TARGET_WORDS,
    SentencePair,
    align,
    sentence_words,
    translate,
    unknown_words,
)
from xattn.export import toolbar_config
from xattn.figures import axis_labels, per_head_figure
from xattn.metrics import MEASURE_DESCRIPTIONS, head_statistics
from xattn.train import (
    ALIGNMENT_MEASURES,
    TrainConfig,
    TrainResult,
    alignment_accuracy,
    alignment_by_head,
    chance_accuracy,
    embed_pair,
    train,
)

__all__ = ["trained_view", "read_pair", "Problem", "head_sentences", "Evaluated", "HEAD_CHOICES",
           "STEP_CHOICES", "DEFAULT_SRC"]

BIND = "query-params"
HEAD_CHOICES = (1, 2, 4, 8)
STEP_CHOICES = (25, 50, 100, 200, 400)
MAX_SEED = 999          # bounded: every seed is one stored run of about 100 KB
DEFAULT_SRC = "the red cat sees the dog"
MAX_CHARS, MAX_WORDS = 300, 24
STORE_ENTRIES = 64      # finished runs kept, least recently used dropped first
LIVE_UPDATES = 20       # redraws of the live loss curve per run, whatever the step count
GOLD_COLOUR = "#ff2d55"
TEMPLATE = pio.templates["plotly_white"]  # the object: unvalidated figures need it

TASK = """
**The task.** Each French (target) word must *retrieve the English (source) word it
translates*: *chat* must look at *cat* and *rouge* at *red*, although French moves the adjective
after the noun, and each *le* must pick its own *the*. The model is the cross-attention of the
other tabs, one layer: the queries are the French words' vectors plus their positions, the keys
and values the English words' vectors plus theirs.

**The training.** Random sentences from a small grammar over the lexicon below, with their
known word alignment. The output at each French word must reproduce the vector of its aligned
English word (mean squared error), and attention is the only route to it. The word vectors
stay fixed: nothing but $W^Q, W^K, W^V, W^O$ is trained (Adam, 32 sentences a step).
A French word counts as **aligned** when the English word it attends to most (averaged over
heads) is its gold word; *exact* also requires the right position, e.g. the right *the*.
"""


# ----------------------------------------------------------------------- training, shared
@dataclass(frozen=True)
class Evaluated:
    """A training run and its scores on the held-out sentences, computed once per setting.

    ``accuracy`` maps "trained", "untrained" and "chance" to (word, exact) accuracy;
    ``by_head`` maps "trained" and "untrained" to ``alignment_by_head`` tables.
    """

    result: TrainResult
    accuracy: dict[str, tuple[float, float]]
    by_head: dict[str, dict[str, np.ndarray]]
    seconds: float


def evaluate(result: TrainResult, seconds: float) -> Evaluated:
    emb, pairs = result.embedder, result.heldout
    models = {"trained": result.model, "untrained": result.untrained}
    accuracy = {name: (alignment_accuracy(m, emb, pairs), alignment_accuracy(m, emb, pairs,
                                                                              exact=True))
                for name, m in models.items()}
    accuracy["chance"] = (chance_accuracy(pairs), chance_accuracy(pairs, exact=True))
    by_head = {name: alignment_by_head(m, emb, pairs) for name, m in models.items()}
    return Evaluated(result, accuracy, by_head, seconds)


class _Store:
    """Finished runs by config, least recently used dropped first, and one lock per config
    in training, so that students asking for the same setting together train it once."""

    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._runs: OrderedDict[TrainConfig, Evaluated] = OrderedDict()
        self._training: dict[TrainConfig, threading.Lock] = {}

    def get(self, config: TrainConfig) -> Evaluated | None:
        with self._lock:
            run = self._runs.get(config)
            if run is not None:
                self._runs.move_to_end(config)
            return run

    def get_or_make(self, config: TrainConfig, make: Callable[[], Evaluated],
                    wait=contextlib.nullcontext) -> tuple[Evaluated, bool]:
        """The stored run, or ``make()``'s, stored; True when this call made it.

        ``wait()`` is a context manager entered while another caller trains this config.
        """
        run = self.get(config)
        if run is not None:
            return run, False
        with self._lock:
            lock = self._training.setdefault(config, threading.Lock())
        if not lock.acquire(blocking=False):
            with wait():
                lock.acquire()
        try:
            run = self.get(config)            # the other caller's run, if we waited for one
            if run is not None:
                return run, False
            run = make()
            with self._lock:
                self._runs[config] = run
                while len(self._runs) > self.max_entries:
                    self._runs.popitem(last=False)
            return run, True
        finally:
            with self._lock:
                self._training.pop(config, None)
            lock.release()


@st.cache_resource(show_spinner=False)
def _store() -> _Store:
    """The one store of the server: shared on purpose, by every session, behind its locks."""
    return _Store(STORE_ENTRIES)


def loss_figure(losses, steps: int) -> go.Figure:
    """Training loss per step on a log scale, the x axis fixed to the whole run.

    Built from dicts without validation, as ``xattn.figures`` does: it is redrawn live.
    """
    trace = dict(type="scatter", x=np.arange(1, len(losses) + 1), y=np.asarray(losses),
                 mode="lines", line=dict(color="#3b528b", width=2),
                 hovertemplate="step %{x}<br>loss %{y:.4f}<extra></extra>")
    layout = dict(template=TEMPLATE, height=260, margin=dict(l=10, r=10, t=40, b=10),
                  title=dict(text="Training loss (MSE, log scale)", x=0.01),
                  xaxis=dict(title=dict(text="step (one Adam update of 32 sentences)"),
                             range=[0, steps + 1]),
                  yaxis=dict(title=dict(text="loss"), type="log", dtick=1))  # powers of 10
    return go.Figure(data=[trace], layout=layout, _validate=False)


def _train_live(config: TrainConfig, bar_slot, curve_slot) -> Evaluated:
    """Train while moving a progress bar and redrawing the loss curve every few steps."""
    bar = bar_slot.progress(0.0, text="Training…")
    losses: list[float] = []
    every = max(1, config.steps // LIVE_UPDATES)

    def callback(step: int, loss: float) -> None:
        losses.append(loss)
        if step % every == 0 or step == config.steps:
            bar.progress(step / config.steps,
                         text=f"Training: step {step} of {config.steps}, loss {loss:.4f}")
            curve_slot.plotly_chart(loss_figure(losses, config.steps))

    start = time.perf_counter()
    result = train(config, callback=callback)
    seconds = time.perf_counter() - start
    bar.progress(1.0, text=f"Scoring on {len(result.heldout)} held-out sentences…")
    run = evaluate(result, seconds)
    bar_slot.empty()
    return run


def obtain(config: TrainConfig, bar_slot, curve_slot) -> tuple[Evaluated, bool]:
    wait = lambda: st.spinner("Another student is training this very setting right now; "
                              "waiting for their run, which everyone shares…")
    return _store().get_or_make(config, lambda: _train_live(config, bar_slot, curve_slot),
                                wait)


# ----------------------------------------------------------------------- the user's pair
class Problem(NamedTuple):
    """Why no pair can be shown: ``level`` is "warning" or "error", ``message`` Markdown."""

    level: str
    message: str


def _code(word: str) -> str:
    return "`" + word.replace("`", "'") + "`"


def _unknown_list(words: list[str], vocabulary) -> str:
    out = []
    for w in words:
        close = difflib.get_close_matches(w, vocabulary, n=1, cutoff=0.6)
        out.append(_code(w) + (f" (did you mean {_code(close[0])}?)" if close else ""))
    return ", ".join(out)


def read_pair(src: str, tgt: str) -> SentencePair | Problem:
    """The pair to draw, or the problem to explain instead; never raises.

    An empty ``tgt`` means: translate ``src`` with the grammar. A typed French sentence is
    aligned word by word through the lexicon, any word order.

    Examples
    --------
    >>> read_pair("The cat sleeps.", "").target
    ('le', 'chat', 'dort')
    >>> read_pair("the purple cat sleeps", "").level
    'warning'
    """
    words, tgt_words = sentence_words(src or ""), sentence_words(tgt or "")
    if not words:
        return Problem("error", "Type an English sentence, e.g. *the red cat sees the dog*.")
    if max(len(words), len(tgt_words)) > MAX_WORDS:
        return Problem("error", f"Sentences here hold at most {MAX_WORDS} words (the model was "
                                f"trained on 3 to 7); received {len(words)} English and "
                                f"{len(tgt_words)} French words.")
    unknown = [(lang, u, vocab) for lang, u, vocab in (
        ("English", unknown_words(words), SOURCE_WORDS),
        ("French", unknown_words(tgt_words, language="french"), TARGET_WORDS)) if u]
    if unknown:
        named = "; ".join(f"{lang} {_unknown_list(u, vocab)}" for lang, u, vocab in unknown)
        return Problem("warning", (
            f"**Words outside the lexicon**: {named}. The model has only ever seen the "
            f"{len(LEXICON)} English words listed under *The lexicon* below and their French "
            "translations, so it has nothing to say about other words. To fix it, replace them "
            "with listed words (e.g. *the sad king follows a pink horse*)"
            + (", or empty the French box to have the English translated." if tgt_words
               else ".")))
    if tgt_words:
        return align(words, tgt_words)
    try:
        return translate(words)
    except ValueError as err:
        return Problem("error", f"Cannot translate this sentence: {err} Or type a French "
                                "sentence yourself in the second box: its words are then "
                                "aligned through the lexicon, whatever the grammar.")


def gold_text(pair: SentencePair) -> str:
    """``le → the · chat → cat · …``, with ``?`` for target words with no gold word."""
    return " · ".join(f"{t} → {pair.source[j] if j is not None else '?'}"
                      for t, j in zip(pair.target, pair.alignment, strict=True))


def add_gold_marks(fig: go.Figure, pair: SentencePair, n_heads: int) -> go.Figure:
    """Outline the gold cell of every target row in every head's heatmap, in place."""
    rows, cols = np.nonzero(pair.alignment_matrix())                 # gold cells
    x, y = axis_labels(list(pair.source))[0], axis_labels(list(pair.target))[0]
    size = max(8, 20 - len(pair.source))
    fig.add_traces([go.Scatter(
        x=[x[j] for j in cols], y=[y[i] for i in rows], mode="markers", name="gold",
        xaxis="x" if h == 0 else f"x{h + 1}", yaxis="y" if h == 0 else f"y{h + 1}",
        showlegend=False, hoverinfo="skip",
        marker=dict(symbol="square-open", size=size, color=GOLD_COLOUR, line=dict(width=2.5)))
        for h in range(n_heads)])
    return fig


PAIR_COLUMNS = {  # column of the per-pair table: (label, help, number format)
    "word_accuracy": ("on gold", "Share of this pair's target words whose strongest "
                      "weight in this head falls on their gold word.", "pct"),
    "gold_weight": ("gold weight", ALIGNMENT_MEASURES["gold_weight"], "%.2f"),
    "confidence": ("confidence", MEASURE_DESCRIPTIONS["confidence"], "%.2f"),
    "normalised_entropy": ("entropy", MEASURE_DESCRIPTIONS["normalised_entropy"], "%.2f"),
    "diagonal_alignment": ("diagonal", MEASURE_DESCRIPTIONS["diagonal_alignment"], "%.2f"),
    "monotonicity": ("monotone", MEASURE_DESCRIPTIONS["monotonicity"], "%.2f"),
}
HELDOUT_COLUMNS = {
    "word_accuracy": ("word", ALIGNMENT_MEASURES["word_accuracy"], "pct"),
    "untrained_word": ("word, untrained", "The same head before training.", "pct"),
    "exact_accuracy": ("exact", ALIGNMENT_MEASURES["exact_accuracy"], "pct"),
    "moved_accuracy": ("swapped words", ALIGNMENT_MEASURES["moved_accuracy"], "pct"),
    "repeated_accuracy": ("repeated words", ALIGNMENT_MEASURES["repeated_accuracy"], "pct"),
    "gold_weight": ("gold weight", ALIGNMENT_MEASURES["gold_weight"], "%.2f"),
}


def _column_config(columns: dict, *, narrow: bool = False) -> dict:
    """Labels, tooltips and formats; ``narrow`` sizes columns to their labels (px), so that a
    half-page table shows every column."""
    width = (lambda label: 14 + 6 * len(label)) if narrow else (lambda label: None)
    config = {"head": st.column_config.NumberColumn("head", format="%d", width=width("head"))}
    config.update({k: st.column_config.NumberColumn(
        label, help=text, format="%.0f%%" if fmt == "pct" else fmt, width=width(label))
        for k, (label, text, fmt) in columns.items()})
    return config


def _frame(data: dict, columns: dict) -> pd.DataFrame:
    """A table in ``columns``' order, shares in percent where the format says "pct"."""
    return pd.DataFrame({"head": data["head"]} | {
        k: 100 * data[k] if columns[k][2] == "pct" else data[k] for k in columns})


def pair_table(model, embedder, pair: SentencePair, weights: np.ndarray) -> pd.DataFrame:
    """One row per head: gold-based scores on this pair, then the gold-free measures."""
    stats = head_statistics(weights)                                 # (n_heads,) each
    gold = alignment_by_head(model, embedder, [pair])
    data = {"head": stats["head"] + 1} | {k: gold.get(k, stats.get(k)) for k in PAIR_COLUMNS}
    return _frame(data, PAIR_COLUMNS)


# ----------------------------------------------------------------------- which head learned what
MEANING, POSITION, LITTLE = 0.8, 0.75, 0.5   # thresholds of the plain-English verdicts


def _pct(x: float) -> str:
    return "n/a" if np.isnan(x) else f"{x:.0%}"


def _verdict(word: float, moved: float, repeated: float) -> str:
    if word < LITTLE:
        return "It learned little on its own: the other heads carry the alignment."
    if moved >= MEANING and repeated >= MEANING:
        return "It uses meaning *and* position."
    if moved >= MEANING:
        return "It aligns by meaning: it follows the moved adjective, but two *the*s fool it."
    if repeated >= POSITION:
        return "It leans on position: it picks the right *the* but misses the swapped words."
    return "It mixes both cues, neither reliably."


def head_sentences(trained: dict, untrained: dict) -> list[str]:
    """One sentence per head from ``alignment_by_head`` tables, trained and untrained.

    Examples
    --------
    >>> t = {"head": [0], "word_accuracy": [0.93], "moved_accuracy": [1.0],
    ...      "repeated_accuracy": [0.5]}
    >>> head_sentences(t, {"word_accuracy": [0.2]})[0][:56]
    '**Head 1** puts 93% of its argmaxes on the gold word (un'
    """
    lines = []
    for h in range(len(trained["head"])):
        word, moved = trained["word_accuracy"][h], trained["moved_accuracy"][h]
        repeated = trained["repeated_accuracy"][h]
        lines.append(f"**Head {h + 1}** puts {_pct(word)} of its argmaxes on the gold word "
                     f"(untrained: {_pct(untrained['word_accuracy'][h])}); {_pct(moved)} on "
                     f"a swapped noun or adjective, {_pct(repeated)} on the right one of a "
                     f"repeated word. {_verdict(word, moved, repeated)}")
    return lines


def heldout_table(run: Evaluated) -> pd.DataFrame:
    t = run.by_head["trained"]
    data = {"head": t["head"] + 1} | {k: t[k] for k in HELDOUT_COLUMNS if k in t}
    data["untrained_word"] = run.by_head["untrained"]["word_accuracy"]
    return _frame(data, HELDOUT_COLUMNS)


def lexicon_table(categories: tuple[str, ...]) -> pd.DataFrame:
    rows = [(e.english, " / ".join(e.french),
             e.category + (f" ({e.gender})" if e.gender else "")
             + (", transitive" if e.transitive else ""))
            for e in LEXICON if e.category in categories]
    return pd.DataFrame(rows, columns=["English", "French", "category"])


# ----------------------------------------------------------------------- the view
def training_controls() -> TrainConfig:
    a, b, c = st.columns(3)
    heads = a.select_slider("Number of heads", HEAD_CHOICES, value=4, key="tr_heads", bind=BIND,
                            help="d_model is 32, so each head gets 32 / h dimensions.")
    steps = b.select_slider("Training steps", STEP_CHOICES, value=100, key="tr_steps",
                            bind=BIND, help="Adam updates, each on 32 fresh random sentences.")
    seed = c.number_input("Seed", 0, MAX_SEED, 0, step=1, key="tr_seed", bind=BIND,
                          help="Draws the random starting weights and the training sentences: "
                               "another seed, other heads.")
    return TrainConfig(n_heads=int(heads), steps=int(steps), seed=int(seed))


def training_section(config: TrainConfig) -> Evaluated | None:
    left, right = st.columns([3, 2], gap="large")
    with left:
        bar_slot, curve_slot = st.empty(), st.empty()
    try:
        run, made = obtain(config, bar_slot, curve_slot)
    except ValueError as err:  # not expected with the offered choices; never a traceback
        st.error(f"Training failed: {err}", icon=":material/error:")
        return None
    stem = f"xattn-trained-{config.n_heads}heads-{config.steps}steps-seed{config.seed}"
    curve_slot.plotly_chart(loss_figure(run.result.losses, config.steps), key="tr_loss",
                            config=toolbar_config(f"{stem}-loss"),
                            alt="Line chart of the training loss per step, falling.")
    left.caption(f"Trained just now in {run.seconds:.1f} s and stored for the whole class: "
                 "anyone choosing these settings gets this very run." if made else
                 f"The class's shared run of these settings (it trained once, in "
                 f"{run.seconds:.1f} s). Change heads, steps or seed to train another.")
    with right:
        accuracy_summary(run)
    return run


def accuracy_summary(run: Evaluated) -> None:
    (tw, te), (uw, ue), (cw, ce) = (run.accuracy[k] for k in ("trained", "untrained", "chance"))
    n = len(run.result.heldout)
    st.metric("Held-out word accuracy (trained)", f"{tw:.1%}",
              delta=f"{100 * (tw - uw):+.1f} points over the random start",
              help=f"On {n} test sentences never seen in training: share of French words whose "
                   "strongest attention (averaged over heads) falls on their gold English word.")
    st.table(pd.DataFrame({"word": [f"{tw:.1%}", f"{uw:.1%}", f"{cw:.1%}"],
                           "exact (right position)": [f"{te:.1%}", f"{ue:.1%}", f"{ce:.1%}"]},
                          index=["trained", "untrained (random start)", "chance (random guess)"]))
    st.caption(f"{n} held-out sentences. *Word*: either *the* counts for *le*; *exact*: it must "
               "be the right one. *Chance*: the strongest weight falls on a random source word.")


def sentence_controls() -> tuple[str, str]:
    left, right = st.columns(2)
    src = left.text_input("English sentence (source: keys and values)", DEFAULT_SRC,
                          key="tr_src", bind=BIND, max_chars=MAX_CHARS,
                          help="Words of the lexicon below; e.g. 'a sad king follows the dog'.")
    tgt = right.text_input("French sentence (target: queries), optional", "", key="tr_tgt",
                           bind=BIND, max_chars=MAX_CHARS, placeholder="empty: translated "
                           "automatically", help="Leave empty to translate the English with the "
                           "grammar. Typed French is aligned word by word through the lexicon.")
    return src, tgt


def lexicon_expander() -> None:
    with st.expander(f"The lexicon: the {len(LEXICON)} English words the model knows, with "
                     "their French"):
        st.caption("Sentences follow one pattern: *determiner (adjective) noun verb*, and for a "
                   "transitive verb a second *determiner (adjective) noun*. French puts the "
                   "adjective after the noun, and *le/la*, *un/une*, *ce/cette* follow the "
                   "noun's gender (m/f).")
        groups = (("determiner", "verb"), ("noun",), ("adjective",))
        for col, categories in zip(st.columns(3), groups, strict=True):
            table = lexicon_table(categories)
            col.dataframe(table, hide_index=True, height=35 * (len(table) + 1) + 3)


def pair_column(run: Evaluated, name: str, pair: SentencePair, weights: np.ndarray) -> None:
    result = run.result
    model = result.model if name == "trained" else result.untrained
    heading = (f"Trained ({result.config.steps} steps)" if name == "trained"
               else "Random start (untrained)")
    st.markdown(f"##### {heading}")
    fig = per_head_figure(weights, list(pair.source), list(pair.target), max_cols=2,
                          title="Attention weights; ◻ marks the gold word")
    add_gold_marks(fig, pair, len(weights))
    # Half a page holds two heatmaps a row: the right one's row labels would overlap the left
    # heatmap, and they repeat its rows anyway.
    fig.update_layout({f"yaxis{h + 1}": dict(showticklabels=False)
                       for h in range(1, len(weights), 2)})
    stem = "-".join(pair.target[:4])
    st.plotly_chart(fig, key=f"tr_{name}", config=toolbar_config(f"xattn-{name}-{stem}"),
                    alt=f"Heatmaps of the {heading.lower()} attention weights, one per head, "
                        "gold cells outlined.")
    n_gold = sum(j is not None for j in pair.alignment)
    word = alignment_accuracy(model, result.embedder, [pair])
    exact = alignment_accuracy(model, result.embedder, [pair], exact=True)
    st.metric("Aligned words in this sentence (heads averaged)",
              "n/a" if np.isnan(word) else f"{round(word * n_gold)} of {n_gold}",
              help=f"Exact (right position): {_pct(exact)}.")
    st.dataframe(pair_table(model, result.embedder, pair, weights), hide_index=True,
                 column_config=_column_config(PAIR_COLUMNS, narrow=True))


def pair_section(run: Evaluated, pair: SentencePair) -> None:
    st.markdown(f"**{' '.join(pair.source)}** → **{' '.join(pair.target)}**  \n"
                f"Gold alignment: {gold_text(pair)}")
    loose = [t for t, j in zip(pair.target, pair.alignment, strict=True) if j is None]
    if loose:
        st.info(f"No unused English word translates {', '.join(map(_code, loose))}: "
                "no gold mark, and left out of the accuracy.", icon=":material/info:")
    x_t, x_s = embed_pair(pair, run.result.embedder)          # (n_tgt, 32), (n_src, 32)
    for col, name in zip(st.columns(2, gap="medium"), ("untrained", "trained"), strict=True):
        model = run.result.model if name == "trained" else run.result.untrained
        _, weights = model(x_t, x_s)                           # (n_heads, n_tgt, n_src)
        with col:
            pair_column(run, name, pair, weights)
    st.caption("Table columns (hover a header for its meaning): the first two use the gold "
               "alignment; the others describe the weights alone (metrics.head_statistics).")


def heads_section(run: Evaluated) -> None:
    st.markdown("#### Which head learned what")
    st.caption(f"Each trained head on its own, on the {len(run.result.heldout)} held-out "
               "sentences: where does its strongest weight fall?")
    st.markdown("\n".join(f"- {line}" for line in
                          head_sentences(run.by_head["trained"], run.by_head["untrained"])))
    st.dataframe(heldout_table(run), hide_index=True,
                 column_config=_column_config(HELDOUT_COLUMNS))


def trained_view() -> None:
    """The whole "Trained vs random" view; reads its own URL-bound inputs (keys ``tr_*``).

    A URL value that is not a valid choice falls back to the default; the page says so
    (``controls.url_notices``, checked once every tab's widgets are drawn).
    """
    st.markdown(TASK)
    st.markdown("#### 1. Train")
    run = training_section(training_controls())
    st.markdown("#### 2. Compare on one sentence pair")
    src, tgt = sentence_controls()
    lexicon_expander()
    if run is None:
        return
    pair = read_pair(src, tgt)
    if isinstance(pair, Problem):
        show = st.warning if pair.level == "warning" else st.error
        show(pair.message, icon=f":material/{pair.level}:")   # material: no emoji font needed
    else:
        pair_section(run, pair)
    heads_section(run)
