"""Attention weights from anywhere, in the one shape every view draws.

Four sources give cross-attention weights: random projections (``xattn.pipeline``), the
module trained on the toy task (``xattn.train``), a real translation model
(``xattn.models``), and a file (``xattn.attnfile``). Each becomes an `Attention`: weights of
shape ``(n_layers, n_heads, n_tgt, n_src)`` with their tokens, a mask, one sentence that says
what the weights are, and, where the projections are known, how to step through a head and how
to switch heads off.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from xattn._checks import check_int, check_tokens
from xattn.ablation import AblationResult, ablation
from xattn.attention import AttentionTrace, MultiHeadCrossAttention
from xattn.literal import md_code

__all__ = ["Attention", "SOURCES", "random_attention", "trained_attention", "model_attention",
           "file_attention", "module_tools", "shapes"]

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
    label : str
        What these weights are, for a student, e.g. "Random weights (seed 0): the patterns come
        from the seed, not from language." Markdown: names that come from outside (a model, a
        file) are code spans.
    gold : ndarray of bool, shape (n_tgt, n_src), optional
        The gold word alignment, where one is known (the toy task).
    hidden : ndarray of shape (n_layers, n_heads, n_tgt), optional
        Weight each row put on hidden "sink" tokens (``xattn.subwords.hide_sinks``), which the
        weights no longer hold.
    trace : callable (layer, scale) -> AttentionTrace, optional
        Every intermediate of one layer (``scale=False``: without 1/sqrt(d_head)).
    ablate : callable (layer, heads_off) -> AblationResult, optional
        Head importance by switching heads off in one layer.
    inputs : callable (layer) -> (ndarray (n_tgt, d_model), ndarray (d_model, d_model)), optional
        The decoder state and W_Q of a layer: step 1 of the step-through, ``q_i = x_i W_Q``, can
        then be checked by hand.
    trace_tokens : (tuple of str, tuple of str), optional
        The tokens of ``trace`` (source, target) when they differ from the weights' (a real
        model's trace works on subword pieces).
    why_no_projections : str
        Why ``trace`` and ``ablate`` are missing (plain text), when they are.
    output : ndarray of shape (n_tgt, d_model), optional
        The module's output representation (one-layer sources).
    d_head : int, optional
        Width of each head's queries and keys, for the formula.
    details : str
        The tensor shapes of this computation in words (plain text).
    context : object, optional
        What else the source knows (the trained source: its training run and pair).
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
    gold: np.ndarray | None = None
    hidden: np.ndarray | None = None
    trace: Callable[[int, bool], AttentionTrace] | None = None
    ablate: Callable[[int, tuple[int, ...]], AblationResult] | None = None
    inputs: Callable[[int], tuple[np.ndarray, np.ndarray]] | None = None
    trace_tokens: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    why_no_projections: str = ""
    output: np.ndarray | None = None
    d_head: int | None = None
    details: str = ""
    context: object = None
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

    def __repr__(self) -> str:
        return (f"Attention({self.source}: {self.n_layers} layer(s) x {self.n_heads} heads x "
                f"{len(self.tgt_tokens)} x {len(self.src_tokens)})")


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


def random_attention(run) -> Attention:
    """The weights of a ``xattn.pipeline.Run``: random projections drawn from its seed."""
    s = run.settings
    trace, ablate = module_tools(run.module, run.decoder_state, run.encoder_output, run.mask)
    n_tgt, n_src = run.mask.shape
    return Attention(
        run.weights[None], tuple(run.src_tokens), tuple(run.tgt_tokens), run.mask, "random",
        f"Random weights (seed {s.seed}): the patterns come from the seed, not from language.",
        trace=trace, ablate=ablate, inputs=lambda layer: (run.decoder_state, run.module().W_Q),
        output=run.output, d_head=s.d_model // s.n_heads,
        details=shapes(n_src, n_tgt, s.d_model, s.n_heads), context=run, key=("random", s))


def trained_attention(evaluated, pair, *, untrained: bool = False) -> Attention:
    """The toy task's trained module (``xattn.alignment.Evaluated``) on one ``SentencePair``;
    ``untrained``: the same module before training (its random start)."""
    from xattn.train import embed_pair

    result = evaluated.result
    model = result.untrained if untrained else result.model
    x_t, x_s = embed_pair(pair, result.embedder)                  # (n_tgt, 32), (n_src, 32)
    _, weights = model(x_t, x_s)                                  # (n_heads, n_tgt, n_src)
    mask = np.ones(weights.shape[1:], dtype=bool)
    trace, ablate = module_tools(lambda: model, x_t, x_s, mask)
    word, _ = evaluated.accuracy["untrained" if untrained else "trained"]
    steps = result.config.steps
    label = (f"The toy model before training (seed {result.config.seed}): random weights, "
             f"{word:.1%} of held-out words aligned (chance: "
             f"{evaluated.accuracy['chance'][0]:.1%})." if untrained else
             f"Trained on the toy task for {steps} steps: {word:.1%} of held-out words aligned.")
    output, _ = model(x_t, x_s)                                  # (n_tgt, 32)
    return Attention(weights[None], tuple(pair.source), tuple(pair.target), mask, "trained",
                     label, gold=pair.alignment_matrix(), trace=trace, ablate=ablate,
                     inputs=lambda layer: (x_t, model.W_Q), output=output, d_head=model.d_head,
                     details=shapes(len(pair.source), len(pair.target), model.d_model,
                                    model.n_heads),
                     context=(evaluated, pair),
                     key=("trained", result.config, pair.source, pair.target, untrained))


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
    label = f"{md_code(result.model)}: a trained translation model."
    if result.translated:
        label += " The target is the model's own translation."
    trace = ablate = None
    why = "this model is not loaded here."
    if loaded is not None:
        from xattn.models import layer_ablation, layer_trace

        def trace(layer: int, scale: bool = True) -> AttentionTrace:
            return layer_trace(loaded, result, layer)

        def ablate(layer: int, heads_off=()) -> AblationResult:
            return layer_ablation(loaded, result, layer, heads_off=heads_off)
        why = ""
    n_layers, n_heads = weights.shape[:2]
    d_model = loaded.d_model if loaded is not None else None
    details = (f"{n_layers} decoder layers × {n_heads} heads"
               + (f", d_model {d_model} (d_head {d_model // n_heads})" if d_model else "")
               + f" · weights ({n_layers}, {n_heads}, {len(tgt)}, {len(src)}) = layers × heads "
                 f"× target × source · {'words' if result.words else 'subword pieces'}")
    return Attention(weights, src, tgt, np.ones(weights.shape[2:], dtype=bool), "model", label,
                     hidden=hidden, trace=trace, ablate=ablate,
                     trace_tokens=(tuple(result.src_pieces), tuple(result.tgt_pieces)),
                     why_no_projections=why, d_head=d_model // n_heads if d_model else None,
                     details=details, context=result,
                     key=("model", result.model, result.src_text, result.tgt_text, result.words,
                          hide_sinks))


def file_attention(loaded, name: str = "the file", digest: str = "") -> Attention:
    """Weights read from an attention file (``xattn.attnfile.AttentionFile``); ``digest``
    identifies the file's bytes (for caches)."""
    weights = np.asarray(loaded.weights)
    src = tuple(check_tokens(list(loaded.src_tokens), weights.shape[3], "src_tokens"))
    tgt = tuple(check_tokens(list(loaded.tgt_tokens), weights.shape[2], "tgt_tokens"))
    model = f" of {md_code(loaded.model)}" if loaded.model else ""
    n_layers, n_heads = weights.shape[:2]
    return Attention(weights, src, tgt, None, "file",
                     f"Weights{model} read from {md_code(name)}.",
                     why_no_projections="a file holds the weights only, not the query, key "
                                        "and value projections that produced them.",
                     details=f"weights ({n_layers}, {n_heads}, {len(tgt)}, {len(src)}) = layers "
                             "× heads × target × source", context=loaded, key=("file", digest))
