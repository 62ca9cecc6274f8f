"""The one plain record every view draws: `Attention`, its weights and a few named groups.

Weights of shape ``(n_layers, n_heads, n_tgt, n_src)`` with their tokens and mask, and what a
view may do with them, in groups that one helper of ``xattn.sources`` fills each:

- `Meta`: what the weights are, in words (every source);
- `Layers`: the module behind them opened up: a layer's trace, heads switched off, its query
  inputs (random, trained, a model that runs here);
- `Recipe`: the same recipe with another seed or head count, without the mask (random);
- `Toy`: the toy task's module before training, its gold scores, its training run (trained);
- `Translation`: a translation model's rows are decoder steps: decoding step by step, the
  weight hidden on sink tokens, what masking a source word or a head does (a model).

A missing group is None and the view says in one line why it does not apply; a view never
asks which source made the record. The cache key of everything derived from a record is made
here, once, from what the record holds (`Attention.key`).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from xattn._checks import check_int
from xattn.ablation import AblationResult
from xattn.alignment import GoldScores
from xattn.attention import AttentionTrace

__all__ = ["Attention", "Layers", "Meta", "Recipe", "SOURCES", "Said", "Toy", "Translation"]

SOURCES = ("random", "trained", "model", "file")


@dataclass(frozen=True)
class Said:
    """A sentence kept as a message of the ``lesson`` catalog, said in a reader's language
    (``xattn.words.say``: numbers formatted for the language, texts as they are).

    Attributes
    ----------
    msgid : str
        The English text with its ``{name}``s, marked with ``xattn.words.N_`` where it is
        written.
    values : mapping of str to str, int, float or Said
        The value of each ``{name}``; a `Said` is said first, in the same language
        (``xattn.sources.said_text``: a media model's built-in example).
    """

    msgid: str
    values: Mapping = field(default_factory=dict)


@dataclass(frozen=True)
class Meta:
    """What the weights are, in words.

    Attributes
    ----------
    name : str
        For file names ("4heads-d32-seed0").
    about : str
        How these weights were made, in plain text, for exports ("Random weights: d_model 32,
        4 heads, seed 0, ...").
    caveat : str
        Plain text: how to read measures of these weights ("... describe the seed, not
        language."), or empty.
    model, src_text, tgt_text : str
        The model's name and the two sentences as typed, where known ("" otherwise).
    details : str
        The tensor shapes of this computation in words (plain text).
    extras : mapping of str to ndarray
        More arrays for the ``.npz`` download (what reproduces the weights).
    """

    name: str = "weights"
    about: str = ""
    caveat: str = ""
    model: str = ""
    src_text: str = ""
    tgt_text: str = ""
    details: str = ""
    extras: Mapping[str, np.ndarray] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class Layers:
    """The module behind the weights, opened one layer at a time.

    Attributes
    ----------
    trace : callable (layer, scale) -> AttentionTrace
        Every intermediate of one layer (``scale=False``: without 1/sqrt(d_head)).
    ablate : callable (layer, heads_off) -> AblationResult, or None
        Head importance by switching heads off in one layer.
    inputs : callable (layer) -> (x, W_Q, b_Q), or None
        A layer's query side: the decoder state x (n_tgt, d_model), W_Q (d_model, d_model)
        and the bias b_Q (d_model,) or None, so ``q_i = x_i W_Q + b_Q`` can be checked by hand.
    rescalable : bool
        Whether ``trace(layer, False)`` really leaves the division by sqrt(d_head) out.
    tokens : (tuple of str, tuple of str), or None
        The tokens of ``trace`` (source, target) when they differ from the weights' (a real
        model's trace works on subword pieces).
    d_model, d_head : int, or None
        Width of the token vectors, and of each head's queries and keys, for the formula.
    output : ndarray of shape (n_tgt, d_model), or None
        The module's output representation (one-layer sources).
    """

    trace: Callable[[int, bool], AttentionTrace]
    ablate: Callable[[int, tuple[int, ...]], AblationResult] | None = None
    inputs: Callable[[int], tuple] | None = None
    rescalable: bool = False
    tokens: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    d_model: int | None = None
    d_head: int | None = None
    output: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Recipe:
    """Random projections drawn from a seed: the same recipe changed in one thing.

    Attributes
    ----------
    seed : int
    variant : callable (seed, n_heads) -> Attention
        The same recipe with another seed and number of heads.
    unmasked : callable () -> Attention, or None
        The same weights without the mask (what a masked token's share was).
    saturation : callable () -> dict
        Entropy against d_head with and without the division (``xattn.steps.saturation``).
    """

    seed: int
    variant: Callable[[int, int], Attention]
    unmasked: Callable[[], Attention] | None
    saturation: Callable[[], dict]


@dataclass(frozen=True, eq=False)
class Toy:
    """The toy task's trained module.

    Attributes
    ----------
    untrained : callable () -> Attention, or None
        The same module before training.
    scores : callable () -> GoldScores, or None
        How the heads align with the gold alignment, on this pair and held out.
    timelapse : callable () -> xattn.timelapse.Timelapse, or None
        Snapshots of the training run that made these weights.
    """

    untrained: Callable[[], Attention] | None
    scores: Callable[[], GoldScores] | None
    timelapse: Callable[[], object] | None


@dataclass(frozen=True, eq=False)
class Translation:
    """A translation model's weights: row i is the decoder step that *produces* target token
    i, so its alignment can also be read at the step after.

    Attributes
    ----------
    decoder : callable (forced) -> xattn.decoding.Decoded, or None
        The model translating the source itself, step by step; ``forced``: pairs (step, text)
        of tokens to take instead of the most likely ones.
        Its rows' columns are words or pieces as the weights' are.
    hidden : ndarray of shape (n_layers, n_heads, n_tgt), or None
        Weight each row put on hidden "sink" tokens (``xattn.subwords.hide_sinks``), which the
        weights no longer hold.
    effects : callable (row) -> xattn.encdec.effects.Effects, or None
        For target token ``row``: its probability with each source token masked from the
        cross-attention, and with each head switched off (a model run here in NumPy).
    """

    decoder: Callable[[tuple], object] | None = None
    hidden: np.ndarray | None = None
    effects: Callable[[int], object] | None = None


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
    said : tuple of Said
        ``label``'s sentences as messages, for a page in another language (empty: ``label``
        is said as it is, in English).
    meta : Meta
    gold : ndarray of bool, shape (n_tgt, n_src), or None
        The gold word alignment, where one is known (the toy task).
    layers : Layers or None
    why_no_projections : str
        Why ``layers`` is missing (plain text), when it is.
    recipe : Recipe or None
    toy : Toy or None
    translation : Translation or None
    heldout : callable (reading, specials=False) -> list of (ndarray (n_layers, n_heads, T, S),
        SentencePair), or None
        The same module on the toy corpus's held-out sentences, word level, with their gold
        alignment (the alignment lab); ``reading``: row i is the step that reads word i (the
        step after the one that produces it), where rows are decoder steps; ``specials=True``
        (a keyword): the columns of tokens that are not source words (``</s>``) kept after the
        words' (``xattn.jobs`` measures the weight parked there; the toy module has none).
    """

    weights: np.ndarray
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    mask: np.ndarray | None
    source: str
    label: str
    meta: Meta = field(default_factory=Meta)
    gold: np.ndarray | None = None
    layers: Layers | None = None
    why_no_projections: str = ""
    recipe: Recipe | None = None
    toy: Toy | None = None
    translation: Translation | None = None
    heldout: Callable[[bool], list] | None = None
    media: object | None = None
    said: tuple[Said, ...] = ()

    def __post_init__(self) -> None:
        w = np.asarray(self.weights)
        if w.ndim != 4 or w.shape[2:] != (len(self.tgt_tokens), len(self.src_tokens)):
            raise ValueError(f"weights must have shape (n_layers, n_heads, {len(self.tgt_tokens)}"
                             f", {len(self.src_tokens)}); received {w.shape}.")
        if self.mask is not None and self.mask.shape != w.shape[2:]:
            raise ValueError(f"mask must have shape {w.shape[2:]}; received {self.mask.shape}.")
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}; received {self.source!r}.")

    @functools.cached_property
    def key(self) -> tuple[str, str]:
        """What determines these weights and everything derived from them: the key of the
        page's caches. A digest of what the record holds (weights, tokens, mask, gold, the
        trace's tokens, label and provenance), so that no source can forget a setting."""
        h = hashlib.blake2b(digest_size=16)
        m = self.meta
        tokens = self.layers.tokens if self.layers is not None else None
        for text in (self.source, self.label, m.about, m.model, m.src_text, m.tgt_text,
                     repr((self.src_tokens, self.tgt_tokens, tokens))):
            h.update(text.encode("utf-8", "surrogatepass") + b"\0")
        for array in (self.weights, self.mask, self.gold):
            if array is not None:
                a = np.ascontiguousarray(array)
                h.update(f"{a.dtype.str}{a.shape}".encode())
                h.update(a.data)
        return (self.source, h.hexdigest())

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
        """``meta.about``, plus which layer is shown when there are several (plain text)."""
        return self.meta.about + (f": layer {layer + 1} of {self.n_layers}."
                                  if self.n_layers > 1 else "")

    def __repr__(self) -> str:
        return (f"Attention({self.source}: {self.n_layers} layer(s) x {self.n_heads} heads x "
                f"{len(self.tgt_tokens)} x {len(self.src_tokens)})")
