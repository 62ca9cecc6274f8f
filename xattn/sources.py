"""Attention weights from anywhere, in the one plain record every view draws.

Four sources give cross-attention weights: random projections (``xattn.pipeline``), the
module trained on the toy task (``xattn.train``), a real translation model
(``xattn.models``), and a file (``xattn.attnfile``). Each becomes an `Attention`: weights of
shape ``(n_layers, n_heads, n_tgt, n_src)`` with their tokens, a mask, what the weights are,
and every per-source fact a view needs, as a field or a callable made here (how to step
through a head, switch heads off, get the same weights with another seed, ...). A view never
asks which source made the record: a missing capability is ``None``, and the view says in one
line why it does not apply. A new source is a new function in this file.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from xattn._checks import check_int, check_tokens, counted
from xattn.ablation import AblationResult, ablation
from xattn.alignment import GoldScores, gold_scores
from xattn.attention import AttentionTrace, MultiHeadCrossAttention
from xattn.literal import md_code

__all__ = ["Attention", "SOURCES", "random_attention", "trained_attention", "model_attention",
           "file_attention", "module_tools", "shapes", "default_layer"]

SOURCES = ("random", "trained", "model", "file")


@dataclass(frozen=True, eq=False)
class Attention:
    """Cross-attention weights, their tokens and what they are, for the views.

    Attributes
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tgt, n_src)
        Rows (target queries) sum to 1 over the columns (source keys), or to 0 for a row with
        nothing to attend.
    src_tokens, tgt_tokens : tuple of str
    mask : ndarray of bool, shape (n_tgt, n_src), or None
        True where a target token may attend a source token; None when unknown (a file: its
        all-zero rows may be rows with nothing to attend).
    source : {"random", "trained", "model", "file"}
        Which choice of the page made these weights (its icon); views do not branch on it.
    label : str
        What these weights are, for a student, e.g. "Random weights (seed 0): the patterns come
        from the seed, not from language." Markdown: names that come from outside (a model, a
        file) are code spans.
    name : str
        What these weights are, for file names ("4heads-d32-seed0").
    about : str
        How these weights were made, in plain text, for exports ("Random weights: d_model 32,
        4 heads, seed 0, ...").
    caveat : str
        Plain text: how to read measures of these weights ("... describe the seed, not
        language."), or empty.
    model, src_text, tgt_text : str
        The model's name and the two sentences as typed, where known ("" otherwise).
    extras : mapping of str to ndarray
        More arrays for the ``.npz`` download (what reproduces the weights).
    gold : ndarray of bool, shape (n_tgt, n_src), optional
        The gold word alignment, where one is known (the toy task).
    hidden : ndarray of shape (n_layers, n_heads, n_tgt), optional
        Weight each row put on hidden "sink" tokens (``xattn.subwords.hide_sinks``), which the
        weights no longer hold.
    trace : callable (layer, scale) -> AttentionTrace, optional
        Every intermediate of one layer (``scale=False``: without 1/sqrt(d_head)).
    rescalable : bool
        Whether ``trace(layer, False)`` really leaves the division by sqrt(d_head) out.
    ablate : callable (layer, heads_off) -> AblationResult, optional
        Head importance by switching heads off in one layer.
    inputs : callable (layer) -> (x, W_Q, b_Q), optional
        A layer's query side: the decoder state x (n_tgt, d_model), W_Q (d_model, d_model) and
        the bias b_Q (d_model,) or None. Step 1 of the step-through, ``q_i = x_i W_Q + b_Q``,
        can then be checked by hand.
    trace_tokens : (tuple of str, tuple of str), optional
        The tokens of ``trace`` (source, target) when they differ from the weights' (a real
        model's trace works on subword pieces).
    why_no_projections : str
        Why ``trace`` and ``ablate`` are missing (plain text), when they are.
    output : ndarray of shape (n_tgt, d_model), optional
        The module's output representation (one-layer sources).
    d_model, d_head : int, optional
        Width of the token vectors, and of each head's queries and keys, for the formula.
    seed : int, optional
        The seed the projections were drawn from, where one did.
    details : str
        The tensor shapes of this computation in words (plain text).
    variant : callable (seed, n_heads) -> Attention, optional
        The same recipe with another seed and number of heads, where that means something.
    unmasked : callable () -> Attention, optional
        The same weights without the mask (what a masked token's share was), where a mask can
        be chosen (unmasked weights give the same weights back).
    untrained : callable () -> Attention, optional
        The same module before training.
    saturation : callable () -> dict, optional
        Entropy against d_head with and without the division (``xattn.steps.saturation``).
    scores : callable () -> GoldScores, optional
        How the heads align with the gold alignment, on this pair and held out.
    timelapse : callable () -> xattn.timelapse.Timelapse, optional
        Snapshots of the training run that made these weights.
    decoder : callable (forced) -> xattn.decoding.Decoded, optional
        The model translating the source itself, step by step; ``forced``: pairs (step, text)
        of tokens to take instead of the most likely ones. Its rows' columns are words or
        pieces as the weights' are.
    effects : callable (row) -> xattn.effects.Effects, optional
        For target token ``row``: its probability with each source token masked from the
        cross-attention, and with each head switched off (a model run here in NumPy).
    heldout : callable (reading) -> list of (ndarray (n_layers, n_heads, T, S), SentencePair),
        optional
        The same model on the toy corpus's held-out sentences, word level, with their gold
        alignment (the alignment lab); ``reading``: row i is the step that reads word i (the
        step after the one that produces it), where rows are decoder steps.
    shifted : bool
        Row i is the decoder step that *produces* target token i (a translation model), so
        its alignment can also be read at the step after.
    key : tuple
        What determines these weights (small values only): the key of caches of results
        derived from them.
    """

    weights: np.ndarray
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    mask: np.ndarray | None
    source: str
    label: str
    name: str = "weights"
    about: str = ""
    caveat: str = ""
    model: str = ""
    src_text: str = ""
    tgt_text: str = ""
    extras: Mapping[str, np.ndarray] = field(default_factory=dict)
    gold: np.ndarray | None = None
    hidden: np.ndarray | None = None
    trace: Callable[[int, bool], AttentionTrace] | None = None
    rescalable: bool = False
    ablate: Callable[[int, tuple[int, ...]], AblationResult] | None = None
    inputs: Callable[[int], tuple] | None = None
    trace_tokens: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    why_no_projections: str = ""
    output: np.ndarray | None = None
    d_model: int | None = None
    d_head: int | None = None
    seed: int | None = None
    details: str = ""
    variant: Callable[[int, int], Attention] | None = None
    unmasked: Callable[[], Attention] | None = None
    untrained: Callable[[], Attention] | None = None
    saturation: Callable[[], dict] | None = None
    scores: Callable[[], GoldScores] | None = None
    timelapse: Callable[[], object] | None = None
    decoder: Callable[[tuple], object] | None = None
    effects: Callable[[int], object] | None = None
    heldout: Callable[[bool], list] | None = None
    shifted: bool = False
    key: tuple = ()

    def __post_init__(self) -> None:
        w = np.asarray(self.weights)
        if w.ndim != 4 or w.shape[2:] != (len(self.tgt_tokens), len(self.src_tokens)):
            raise ValueError(f"weights must have shape (n_layers, n_heads, {len(self.tgt_tokens)}"
                             f", {len(self.src_tokens)}); received {w.shape}.")
        if self.mask is not None and self.mask.shape != w.shape[2:]:
            raise ValueError(f"mask must have shape {w.shape[2:]}; received {self.mask.shape}.")
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}; received {self.source!r}.")

    @property
    def n_layers(self) -> int:
        return self.weights.shape[0]

    @property
    def n_heads(self) -> int:
        return self.weights.shape[1]

    def layer(self, layer: int) -> np.ndarray:
        """The weights of one layer (from 0), shape (n_heads, n_tgt, n_src)."""
        return self.weights[check_int(layer, "layer", minimum=0, maximum=self.n_layers - 1)]

    def describe(self, layer: int) -> str:
        """``label``, plus which layer is shown when there are several."""
        if self.n_layers == 1:
            return self.label
        return f"{self.label} Layer {layer + 1} of {self.n_layers}."

    def provenance(self, layer: int) -> str:
        """``about``, plus which layer is shown when there are several (plain text)."""
        return self.about + (f": layer {layer + 1} of {self.n_layers}." if self.n_layers > 1
                             else "")

    def __repr__(self) -> str:
        return (f"Attention({self.source}: {self.n_layers} layer(s) x {self.n_heads} heads x "
                f"{len(self.tgt_tokens)} x {len(self.src_tokens)})")


def default_layer(n_layers: int) -> int:
    """The layer a page shows when none is chosen (from 1): the second-to-last, where word
    alignment tends to be clearest (the only one of a one-layer source)."""
    return max(1, n_layers - 1)


def module_tools(module: Callable[[], MultiHeadCrossAttention], decoder_state: np.ndarray,
                 encoder_output: np.ndarray, mask: np.ndarray):
    """``trace`` and ``ablate`` callables for a one-layer `MultiHeadCrossAttention` that
    ``module()`` returns (built only when a view asks)."""
    def trace(layer: int, scale: bool = True) -> AttentionTrace:
        return module().trace(decoder_state, encoder_output, mask, scale=scale)

    def ablate(layer: int, heads_off=()) -> AblationResult:
        return ablation(module(), decoder_state, encoder_output, mask, heads_off=heads_off)
    return trace, ablate


def shapes(n_src: int, n_tgt: int, d_model: int, n_heads: int) -> str:
    """The tensor shapes of one cross-attention layer, in words."""
    d_head = d_model // n_heads
    return (f"encoder output ({n_src}, {d_model}) · decoder state ({n_tgt}, {d_model}) · "
            f"per head Q ({n_tgt}, {d_head}), K and V ({n_src}, {d_head}) · weights "
            f"({n_heads}, {n_tgt}, {n_src}) = heads × target × source · output "
            f"({n_tgt}, {d_model})")


def random_attention(run, rerun: Callable | None = None) -> Attention:
    """The weights of a ``xattn.pipeline.Run``: random projections drawn from its seed.

    ``rerun`` (``xattn.pipeline.run`` by default; the page passes its cached version) makes
    the variants: another seed or head count, no mask.
    """
    from xattn.pipeline import run as pipeline_run

    rerun = rerun or pipeline_run
    s = run.settings
    trace, ablate = module_tools(run.module, run.decoder_state, run.encoder_output, run.mask)
    n_tgt, n_src = run.mask.shape

    def variant(seed: int, n_heads: int) -> Attention:
        return random_attention(rerun(replace(s, seed=seed, n_heads=n_heads)), rerun)

    def unmasked() -> Attention:
        return random_attention(rerun(replace(s, mask_mode="none")), rerun)

    return Attention(
        run.weights[None], tuple(run.src_tokens), tuple(run.tgt_tokens), run.mask, "random",
        f"Random weights (seed {s.seed}): the patterns come from the seed, not from language.",
        name=f"{s.n_heads}heads-d{s.d_model}-seed{s.seed}",
        about=f"Random weights: d_model {s.d_model}, {counted(s.n_heads, 'head')}, seed {s.seed}, "
              f"tokenizer {s.tokenizer}, embedder {s.embedder}, positions "
              f"{'on' if s.positional else 'off'}, mask {s.mask_mode}.",
        caveat="With random weights these numbers describe the seed, not language.",
        src_text=s.src, tgt_text=s.tgt,
        extras=dict(output=run.output, mask=run.mask, encoder_output=run.encoder_output,
                    decoder_state=run.decoder_state,
                    settings=np.array(json.dumps(asdict(s)))),
        trace=trace, rescalable=True, ablate=ablate,
        inputs=lambda layer: (run.decoder_state, run.module().W_Q, None), output=run.output,
        d_model=s.d_model, d_head=s.d_model // s.n_heads, seed=s.seed,
        details=shapes(n_src, n_tgt, s.d_model, s.n_heads), variant=variant,
        unmasked=unmasked,
        saturation=lambda: _saturation(run), key=("random", s))


def _saturation(run) -> dict:
    """Entropy against d_head, scaled and not, for random weights of ``run``'s shape."""
    from xattn.embedder import ToyEmbedder
    from xattn.pipeline import EMBEDDER_SEED
    from xattn.steps import saturation

    s = run.settings

    def embed(tokens):
        return lambda d: ToyEmbedder(d, seed=EMBEDDER_SEED, positional=s.positional,
                                     mode=s.embedder).embed(list(tokens))

    top = max(1, 512 // s.n_heads)
    d_heads = tuple(d for d in (1, 2, 4, 8, 16, 32, 64, 128) if d <= top)
    return saturation(embed(run.tgt_tokens), embed(run.src_tokens), run.mask, s.n_heads,
                      s.seed, d_heads)


def trained_attention(evaluated, pair, *, untrained: bool = False) -> Attention:
    """The toy task's trained module (``xattn.alignment.Evaluated``) on one ``SentencePair``;
    ``untrained``: the same module before training (its random start)."""
    from xattn.train import embed_pair

    result = evaluated.result
    config = result.config
    model = result.untrained if untrained else result.model
    x_t, x_s = embed_pair(pair, result.embedder)                  # (n_tgt, 32), (n_src, 32)
    output, weights = model(x_t, x_s)                 # (n_tgt, 32), (n_heads, n_tgt, n_src)
    mask = np.ones(weights.shape[1:], dtype=bool)
    trace, ablate = module_tools(lambda: model, x_t, x_s, mask)
    word, _ = evaluated.accuracy["untrained" if untrained else "trained"]
    label = (f"The toy model before training (seed {config.seed}): random weights, "
             f"{word:.1%} of held-out words aligned (chance: "
             f"{evaluated.accuracy['chance'][0]:.1%})." if untrained else
             f"Trained on the toy task for {config.steps} steps: {word:.1%} of held-out words "
             "aligned.")
    what = "untrained" if untrained else "trained"
    return Attention(
        weights[None], tuple(pair.source), tuple(pair.target), mask, "trained", label,
        name=f"{what}-{config.n_heads}heads-{config.steps}steps-seed{config.seed}",
        about=f"{what.capitalize()} on the toy English-French task: "
              f"{counted(config.n_heads, 'head')}, {config.steps} steps, seed {config.seed}. "
              "Gold cells are outlined.",
        model=f"xattn toy EN-FR model, {what}", extras={"gold": pair.alignment_matrix()},
        gold=pair.alignment_matrix(), trace=trace, rescalable=True, ablate=ablate,
        inputs=lambda layer: (x_t, model.W_Q, None), output=output, d_model=model.d_model,
        d_head=model.d_head, seed=config.seed,
        details=shapes(len(pair.source), len(pair.target), model.d_model, model.n_heads),
        untrained=None if untrained else (
            lambda: trained_attention(evaluated, pair, untrained=True)),
        scores=None if untrained else (lambda: gold_scores(evaluated, pair)),
        timelapse=None if untrained or result.timelapse is None else (
            lambda: result.timelapse),
        heldout=None if untrained else (lambda reading=False: _toy_heldout(result)),
        key=("trained", config, pair.source, pair.target, untrained))


def model_attention(result, *, hide_sinks: bool = False, loaded=None) -> Attention:
    """A real model's weights (``xattn.models.ModelAttention``); ``hide_sinks`` drops the
    columns of special tokens and punctuation and renormalises the rows (their weight goes to
    ``hidden``); ``loaded`` (the ``LoadedModel``) gives step-through and ablation."""
    from xattn.subwords import hide_sinks as drop_sinks
    from xattn.subwords import sink_columns

    weights, src = np.asarray(result.weights), tuple(result.src_tokens)
    hidden = None
    if hide_sinks:
        sinks = sink_columns(src)
        if sinks.any() and not sinks.all():
            weights, hidden = drop_sinks(weights, sinks)
            src = tuple(t for t, s in zip(src, sinks, strict=True) if not s)
    tgt = tuple(result.tgt_tokens)
    label = (f"{md_code(result.model)}: a translation model trained here on the toy task "
             f"({_shipped_exact()} of held-out sentences translated exactly), run in NumPy."
             if _is_shipped(result.model) else
             f"{md_code(result.model)}: a trained translation model.")
    if result.translated:
        label += " The target is the model's own translation."
    trace = ablate = inputs = decoder = heldout = effects = None
    rescalable = False
    why = "this model is not loaded here."
    if loaded is not None:
        trace, ablate, inputs, rescalable = _model_tools(loaded, result)
        decoder = _decoder(loaded, result)
        effects = None if hide_sinks else _effects(loaded, result)
        heldout = _model_heldout(loaded)
        why = ""
    n_layers, n_heads = weights.shape[:2]
    d_model = loaded.d_model if loaded is not None else None
    details = (f"{counted(n_layers, 'decoder layer')} × {counted(n_heads, 'head')}"
               + (f", d_model {d_model} (d_head {d_model // n_heads})" if d_model else "")
               + f" · weights ({n_layers}, {n_heads}, {len(tgt)}, {len(src)}) = layers × heads "
                 f"× target × source · {'words' if result.words else 'subword pieces'}")
    return Attention(weights, src, tgt, np.ones(weights.shape[2:], dtype=bool), "model", label,
                     name=result.model.rsplit("/", 1)[-1], about=f"Model {result.model}",
                     model=result.model, src_text=result.src_text, tgt_text=result.tgt_text,
                     hidden=hidden, trace=trace, rescalable=rescalable, ablate=ablate,
                     inputs=inputs, decoder=decoder, effects=effects, heldout=heldout,
                     shifted=True,
                     trace_tokens=(tuple(result.src_pieces), tuple(result.tgt_pieces)),
                     why_no_projections=why, d_model=d_model,
                     d_head=d_model // n_heads if d_model else None, details=details,
                     key=("model", result.model, result.src_text, result.tgt_text, result.words,
                          hide_sinks))


def _is_shipped(name: str) -> bool:
    from xattn.marian import SHIPPED_MODEL

    return name == SHIPPED_MODEL


@functools.cache
def _shipped_exact() -> str:
    """The shipped model's held-out exact match, from its model card's metrics."""
    from xattn.marian import SHIPPED_FOLDER

    exact = json.loads((SHIPPED_FOLDER / "metrics.json").read_text())["exact_match"]
    return f"{exact['rate']:.0%}"


HELDOUT = 256            # held-out sentences of the alignment lab
HELDOUT_SEED = 2         # the shipped model's held-out set (its MODEL_CARD.md)


def _toy_heldout(result) -> list:
    from xattn.alignlab import toy_examples

    return toy_examples(result.model, result.embedder, result.heldout[:HELDOUT])


def _model_heldout(loaded):
    """The NumPy model on the toy corpus's held-out sentences, where it knows their words."""
    from xattn.marian import MarianMT

    if not isinstance(loaded, MarianMT) or not _is_shipped(loaded.name):
        return None

    def examples(reading: bool = False) -> list:
        from xattn.corpus import generate_pairs
        from xattn.marian.api import word_level

        out = []
        for pair in generate_pairs(HELDOUT, seed=HELDOUT_SEED):
            tok = loaded.tokenizer
            src_ids = tok.encode(" ".join(pair.source))
            tgt_ids = tok.encode(" ".join(pair.target), side="target")
            run = loaded.forward(src_ids, tgt_ids, logits=False)
            w = word_level(loaded, run.cross_attention, src_ids, tgt_ids)   # (L, H, T+1, S+1)
            rows = slice(1, len(pair.target) + 1) if reading else slice(0, len(pair.target))
            out.append((w[..., rows, :len(pair.source)], pair))
        return out
    return examples


def _decoder(loaded, result):
    """The model's own greedy translation of the source, step by step (NumPy models)."""
    from xattn.marian import MarianMT

    if not isinstance(loaded, MarianMT):
        return None
    from xattn.decoding import decoded

    return lambda forced=(): decoded(loaded, result.src_ids, forced, words=result.words)


def _effects(loaded, result):
    """What each source token and each head does to one target token (NumPy models)."""
    from xattn.marian import MarianMT

    if not isinstance(loaded, MarianMT):
        return None
    from xattn.effects import effects

    return lambda row: effects(loaded, result.src_ids, result.tgt_ids, row, words=result.words)


def _model_tools(loaded, result):
    """``trace``, ``ablate``, ``inputs`` and whether the trace can leave the division out, for
    a model run in NumPy (``xattn.marian``: the layer is a ``MultiHeadCrossAttention``) or in
    torch (``xattn.models``: forward hooks, the model's own scaling)."""
    from xattn.marian import MarianMT

    if isinstance(loaded, MarianMT):
        from xattn.marian.api import teacher_forced

        @functools.cache
        def run():                       # one teacher-forced pass for every layer's tools
            return teacher_forced(loaded, result)

        def trace(layer: int, scale: bool = True) -> AttentionTrace:
            return loaded.layer_trace(run(), layer, scale=scale)

        def ablate(layer: int, heads_off=()) -> AblationResult:
            return loaded.layer_ablation(run(), layer, heads_off)

        def inputs(layer: int):
            attn = loaded.decoder_layers[layer].encoder_attn
            return run().cross_inputs[layer], attn.W_Q, attn.b_Q
        return trace, ablate, inputs, True
    from xattn.models import layer_ablation, layer_trace

    def hooked(layer: int, scale: bool = True) -> AttentionTrace:
        return layer_trace(loaded, result, layer)

    def hooked_ablate(layer: int, heads_off=()) -> AblationResult:
        return layer_ablation(loaded, result, layer, heads_off=heads_off)
    return hooked, hooked_ablate, None, False


def file_attention(loaded, name: str = "the file", digest: str = "") -> Attention:
    """Weights read from an attention file (``xattn.attnfile.AttentionFile``); ``digest``
    identifies the file's bytes (for caches)."""
    weights = np.asarray(loaded.weights)
    src = tuple(check_tokens(list(loaded.src_tokens), weights.shape[3], "src_tokens"))
    tgt = tuple(check_tokens(list(loaded.tgt_tokens), weights.shape[2], "tgt_tokens"))
    model = f" of {md_code(loaded.model)}" if loaded.model else ""
    n_layers, n_heads = weights.shape[:2]
    return Attention(weights, src, tgt, None, "file",
                     f"Weights{model} read from {md_code(name)}.", name="file",
                     about=f"File of {loaded.model or 'an unnamed model'}",
                     model=loaded.model or "", src_text=loaded.src_text or "",
                     tgt_text=loaded.tgt_text or "",
                     why_no_projections="a file holds the weights only, not the query, key "
                                        "and value projections that produced them.",
                     details=f"weights ({n_layers}, {n_heads}, {len(tgt)}, {len(src)}) = layers "
                             "× heads × target × source", key=("file", digest))
