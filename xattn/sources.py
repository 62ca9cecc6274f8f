"""Attention weights from anywhere, in the one plain record every view draws.

Four sources give cross-attention weights: random projections (``xattn.pipeline``), the
module trained on the toy task (``xattn.train``), a real translation model
(``xattn.translator``), and a file (``xattn.attnfile``). Each becomes an
``xattn.record.Attention`` and fills the groups that mean something for it, each group made
by one helper here: random weights a `Meta`, `Layers` and `Recipe`; the trained module `Layers`
and `Toy`; a model `Layers` (where its back end opens them) and `Translation`; a file only
its `Meta`. A new source is a new function in this file and a row of ``SOURCES``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import asdict, replace

import numpy as np

from xattn._checks import check_tokens, counted
from xattn.ablation import AblationResult, ablation
from xattn.alignment import gold_scores
from xattn.attention import AttentionTrace, MultiHeadCrossAttention
from xattn.literal import md_code
from xattn.record import SOURCES, Attention, Layers, Meta, Recipe, Said, Toy, Translation
from xattn.words import N_, say, speaking

__all__ = ["Attention", "HELDOUT", "SOURCES", "random_attention", "trained_attention",
           "model_attention", "file_attention", "module_layers", "shapes", "default_layer",
           "labelled", "said_text", "snapshot_label"]

HELDOUT = 256            # held-out sentences of the alignment lab
HELDOUT_SEED = 2         # the shipped model's held-out set (its MODEL_CARD.md)


def default_layer(n_layers: int) -> int:
    """The layer a page shows when none is chosen (from 1): the second-to-last, where word
    alignment tends to be clearest (the only one of a one-layer source)."""
    return max(1, n_layers - 1)


def module_layers(module: Callable[[], MultiHeadCrossAttention], decoder_state: np.ndarray,
                  encoder_output: np.ndarray, mask: np.ndarray, n_heads: int, *,
                  output: np.ndarray | None = None) -> Layers:
    """`Layers` of a one-layer `MultiHeadCrossAttention` of ``n_heads`` heads that
    ``module()`` returns (built only when a view asks): its trace, heads switched off, and its
    query side."""
    def trace(layer: int, scale: bool = True) -> AttentionTrace:
        return module().trace(decoder_state, encoder_output, mask, scale=scale)

    def ablate(layer: int, heads_off=()) -> AblationResult:
        return ablation(module(), decoder_state, encoder_output, mask, heads_off=heads_off)

    def inputs(layer: int):
        m = module()
        return decoder_state, m.W_Q, m.b_Q
    d_model = decoder_state.shape[-1]
    return Layers(trace, ablate, inputs, rescalable=True, d_model=d_model,
                  d_head=d_model // n_heads, output=output)


def shapes(n_src: int, n_tgt: int, d_model: int, n_heads: int) -> str:
    """The tensor shapes of one cross-attention layer, in words."""
    d_head = d_model // n_heads
    return (f"encoder output ({n_src}, {d_model}) · decoder state ({n_tgt}, {d_model}) · "
            f"per head Q ({n_tgt}, {d_head}), K and V ({n_src}, {d_head}) · weights "
            f"({n_heads}, {n_tgt}, {n_src}) = heads × target × source · output "
            f"({n_tgt}, {d_model})")


# ---------------------------------------------------------------------- random projections
def random_attention(run, rerun: Callable | None = None) -> Attention:
    """The weights of a ``xattn.pipeline.Run``: random projections drawn from its seed.

    ``rerun`` (``xattn.pipeline.run`` by default; the page passes its cached version) makes
    the variants: another seed or head count, no mask.
    """
    from xattn.pipeline import run as pipeline_run

    s = run.settings
    n_tgt, n_src = run.mask.shape
    label, said = labelled(Said(N_("Random weights (seed {seed}): the patterns come from the "
                                   "seed, not from language."), {"seed": str(s.seed)}))
    return Attention(
        run.weights[None], tuple(run.src_tokens), tuple(run.tgt_tokens), run.mask, "random",
        label, Meta(name=f"{s.n_heads}heads-d{s.d_model}-seed{s.seed}",
             about=f"Random weights: d_model {s.d_model}, {counted(s.n_heads, 'head')}, "
                   f"seed {s.seed}, "
                   f"tokenizer {s.tokenizer}, embedder {s.embedder}, positions "
                   f"{'on' if s.positional else 'off'}, mask {s.mask_mode}.",
             caveat=N_("With random weights these numbers describe the seed, not language."),
             src_text=s.src, tgt_text=s.tgt, details=shapes(n_src, n_tgt, s.d_model, s.n_heads),
             extras=dict(output=run.output, mask=run.mask, encoder_output=run.encoder_output,
                         decoder_state=run.decoder_state,
                         settings=np.array(json.dumps(asdict(s))))),
        layers=module_layers(run.module, run.decoder_state, run.encoder_output, run.mask,
                             s.n_heads, output=run.output),
        recipe=_recipe(run, rerun or pipeline_run), said=said)


def said_text(sentence: Said) -> str:
    """``sentence`` in the context's language (``xattn.words.speaking``); a value that is a
    `Said` itself (a media model's built-in example) is said first, in the same language."""
    return say(sentence.msgid, **{k: said_text(v) if isinstance(v, Said) else v
                                  for k, v in sentence.values.items()})


def labelled(*sentences: Said) -> tuple[str, tuple[Said, ...]]:
    """A record's label in English (its ``label``) and as its sentences (its ``said``), which
    a page in another language says in its own (``xattn.ui.i18n.said_label``)."""
    with speaking("en"):
        return " ".join(said_text(s) for s in sentences), sentences


def snapshot_label(step: int) -> tuple[str, tuple[Said, ...]]:
    """The label of a training run's snapshot at ``step`` (the Training view's frame)."""
    return labelled(Said(N_("Snapshot at step {step}."), {"step": step}))


def _recipe(run, rerun: Callable) -> Recipe:
    """The same settings with another seed and head count, or without the mask."""
    s = run.settings

    def variant(seed: int, n_heads: int) -> Attention:
        return random_attention(rerun(replace(s, seed=seed, n_heads=n_heads)), rerun)

    def unmasked() -> Attention:
        return random_attention(rerun(replace(s, mask_mode="none")), rerun)
    return Recipe(s.seed, variant, unmasked, lambda: _saturation(run))


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


# ---------------------------------------------------------------------- the toy task
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
    word, _ = evaluated.accuracy["untrained" if untrained else "trained"]
    label, said = labelled(
        Said(N_("The toy model before training (seed {seed}): random weights, {aligned:.1%} "
                "of held-out words aligned (chance: {chance:.1%})."),
             {"seed": str(config.seed), "aligned": word,
              "chance": evaluated.accuracy["chance"][0]}) if untrained else
        Said(N_("Trained on the toy task for {steps} steps: {aligned:.1%} of held-out words "
                "aligned."), {"steps": config.steps, "aligned": word}))
    what = "untrained" if untrained else "trained"
    return Attention(
        weights[None], tuple(pair.source), tuple(pair.target), mask, "trained", label,
        Meta(name=f"{what}-{config.n_heads}heads-{config.steps}steps-seed{config.seed}",
             about=f"{what.capitalize()} on the toy English-French task: "
                   f"{counted(config.n_heads, 'head')}, {config.steps} steps, seed "
                   f"{config.seed}. Gold cells are outlined.",
             model=f"xattn toy EN-FR model, {what}", extras={"gold": pair.alignment_matrix()},
             details=shapes(len(pair.source), len(pair.target), model.d_model, model.n_heads)),
        gold=pair.alignment_matrix(),
        layers=module_layers(lambda: model, x_t, x_s, mask, model.n_heads, output=output),
        toy=None if untrained else _toy(evaluated, pair),
        heldout=None if untrained else _once(lambda reading=False, specials=False:
                                             _toy_heldout(result)), said=said)


def _toy(evaluated, pair) -> Toy:
    """The trained module's random start, its gold scores and its training run."""
    timelapse = evaluated.result.timelapse
    return Toy(lambda: trained_attention(evaluated, pair, untrained=True),
               lambda: gold_scores(evaluated, pair),
               None if timelapse is None else (lambda: timelapse))


def _once(examples: Callable | None) -> Callable | None:
    """``examples`` (an `Attention`'s ``heldout``) made once per (reading, specials) for the
    life of the weights, read-only: a lesson's step asks them up to three times (its answer,
    its slips, its chart) and once more per language its class reads, and each time ran the
    model on the 256 held-out sentences (0.26 s; 0.3 MB kept)."""
    if examples is None:
        return None

    @functools.lru_cache(maxsize=4)
    def remembered(reading: bool = False, specials: bool = False) -> list:
        out = examples(reading, specials=specials)
        for w, _ in out:
            w.flags.writeable = False          # shared by every caller
        return out
    return remembered


def _toy_heldout(result) -> list:
    from xattn.alignlab import toy_examples

    return toy_examples(result.model, result.embedder, result.heldout[:HELDOUT])


# ---------------------------------------------------------------------- a translation model
def model_attention(result, *, hide_sinks: bool = False, loaded=None) -> Attention:
    """A real model's weights (``xattn.translator.ModelAttention``); ``hide_sinks`` drops the
    columns of special tokens and punctuation and renormalises the rows (their weight goes to
    ``translation.hidden``); ``loaded`` (the ``Translator``) gives what its back end can:
    step-through, heads switched off, decoding step by step."""
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
    model = {"model": md_code(result.model)}
    sentences = [
        Said(N_("{model}: a translation model trained here on the toy task ({exact:.0%} of "
                "held-out sentences translated exactly), run in NumPy."),
             model | {"exact": _shipped_exact()}) if _is_shipped(result.model) else
        Said(N_("{model}: a trained translation model."), model)]
    if result.translated:
        sentences.append(Said(N_("The target is the model's own translation.")))
    label, said = labelled(*sentences)
    n_layers, n_heads = weights.shape[:2]
    d_model = loaded.d_model if loaded is not None else None
    details = (f"{counted(n_layers, 'decoder layer')} × {counted(n_heads, 'head')}"
               + (f", d_model {d_model} (d_head {d_model // n_heads})" if d_model else "")
               + f" · weights ({n_layers}, {n_heads}, {len(tgt)}, {len(src)}) = layers × heads "
                 f"× target × source · {'words' if result.words else 'subword pieces'}")
    layers = None if loaded is None else _model_layers(loaded, result)
    return Attention(
        weights, src, tgt, np.ones(weights.shape[2:], dtype=bool), "model", label,
        Meta(name=result.model.rsplit("/", 1)[-1], about=f"Model {result.model}",
             model=result.model, src_text=result.src_text, tgt_text=result.tgt_text,
             details=details),
        layers=layers,
        why_no_projections="" if layers is not None else (
            "this model is not loaded here." if loaded is None else
            "its back end does not open the model's layers."),
        translation=_translation(loaded, result, hidden, hide_sinks),
        heldout=None if loaded is None else _once(_model_heldout(loaded)), said=said)


def _translation(loaded, result, hidden, hide_sinks: bool) -> Translation:
    """`Translation` from the model's capabilities: decoding step by step (its rows over
    words or pieces as the weights' are), and what each source word and head does to a target
    word (not when sinks are hidden: its columns would not be the record's)."""
    if loaded is None:
        return Translation(hidden=hidden)
    ids, words = (result.src_ids, result.tgt_ids), result.words
    decoder = effects = None
    if loaded.decode_steps is not None:
        def decoder(forced=()):
            return loaded.decode_steps(ids[0], forced, words=words)
    if loaded.effects is not None and not hide_sinks:
        def effects(row: int):
            return loaded.effects(*ids, row, words=words)
    return Translation(decoder, hidden, effects)


def _model_layers(loaded, result) -> Layers | None:
    """`Layers` from the model's capabilities (each None where its back end cannot)."""
    if loaded.trace_layer is None:
        return None
    ids = (result.src_ids, result.tgt_ids)

    def trace(layer: int, scale: bool = True) -> AttentionTrace:
        return loaded.trace_layer(*ids, layer, scale)

    def ablate(layer: int, heads_off=()) -> AblationResult:
        return loaded.switch_heads_off(*ids, layer, heads_off)

    def inputs(layer: int):
        return loaded.query_inputs(*ids, layer)
    return Layers(trace, ablate if loaded.switch_heads_off is not None else None,
                  inputs if loaded.query_inputs is not None else None,
                  rescalable=loaded.rescalable,
                  tokens=(tuple(result.src_pieces), tuple(result.tgt_pieces)),
                  d_model=loaded.d_model, d_head=loaded.d_model // loaded.n_heads)


def _is_shipped(name: str) -> bool:
    from xattn.encdec import SHIPPED_MODEL

    return name == SHIPPED_MODEL


@functools.cache
def _shipped_exact() -> float:
    """The shipped model's held-out exact match, from its model card's metrics."""
    from xattn.encdec import SHIPPED_FOLDER

    exact = json.loads((SHIPPED_FOLDER / "metrics.json").read_text())["exact_match"]
    return exact["rate"]


def _model_heldout(loaded):
    """The model on the toy corpus's held-out sentences: the shipped model knows their words."""
    if not _is_shipped(loaded.name):
        return None

    def examples(reading: bool = False, specials: bool = False) -> list:
        from xattn.corpus import generate_pairs
        from xattn.translator import word_level

        out = []
        for pair in generate_pairs(HELDOUT, seed=HELDOUT_SEED):
            src_ids = loaded.tokenize(" ".join(pair.source))
            tgt_ids = loaded.tokenize(" ".join(pair.target), "target")
            w = word_level(loaded, loaded.attention(src_ids, tgt_ids), src_ids,
                           tgt_ids)                                         # (L, H, T+1, S+1)
            rows = slice(1, len(pair.target) + 1) if reading else slice(0, len(pair.target))
            cols = slice(None) if specials else slice(0, len(pair.source))   # </s> last
            out.append((w[..., rows, cols], pair))
        return out
    return examples


# ---------------------------------------------------------------------- a file
def file_attention(loaded, name: str = "the file") -> Attention:
    """Weights read from an attention file (``xattn.attnfile.AttentionFile``)."""
    weights = np.asarray(loaded.weights)
    src = tuple(check_tokens(list(loaded.src_tokens), weights.shape[3], "src_tokens"))
    tgt = tuple(check_tokens(list(loaded.tgt_tokens), weights.shape[2], "tgt_tokens"))
    n_layers, n_heads = weights.shape[:2]
    label, said = labelled(
        Said(N_("Weights of {model} read from {name}."),
             {"model": md_code(loaded.model), "name": md_code(name)}) if loaded.model else
        Said(N_("Weights read from {name}."), {"name": md_code(name)}))
    return Attention(
        weights, src, tgt, None, "file", label,
        Meta(name="file", about=f"File of {loaded.model or 'an unnamed model'}",
             model=loaded.model or "", src_text=loaded.src_text or "",
             tgt_text=loaded.tgt_text or "",
             details=f"weights ({n_layers}, {n_heads}, {len(tgt)}, {len(src)}) = layers × heads "
                     "× target × source"),
        why_no_projections="a file holds the weights only, not the query, key and value "
                           "projections that produced them.", said=said)
