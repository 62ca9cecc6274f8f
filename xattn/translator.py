"""What a loaded translation model provides, whatever runs it, and the one pipeline on top.

Two back ends run a model: NumPy (``xattn.encdec``, read straight from a folder, no torch) and
transformers (``xattn.torch_models``, torch). Each loaded model is a `Translator`: its names and
sizes, how it cuts text into pieces and back, its greedy translation and the cross-attention
of a sentence pair. What only some back ends can do (open one layer, switch heads off, decode
step by step, mask source words) is an attribute that is None where a back end cannot:
callers ask for a capability, never for a type. ``xattn.backends`` chooses the back end for a name.

`cross_attention` is the pipeline every page and script uses: text in, `ModelAttention` out
(piece- or word-level, with the ids that reproduce it). The deployer's allow-list
(``XATTN_MODELS``) and its one refusal message live here too, so both back ends say the same.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from xattn._checks import check_bool, check_int
from xattn.ablation import AblationResult
from xattn.attention import AttentionTrace
from xattn.attnfile import save_attention
from xattn.subwords import merge_words, word_groups, word_marker, word_texts

__all__ = ["DEFAULT_MODELS", "MODELS_ENV", "ModelAttention", "ModelUnavailable", "Translator",
           "allowed_models", "check_allowed", "cross_attention", "translate", "word_level"]

DEFAULT_MODELS = ("Helsinki-NLP/opus-mt-en-fr", "Helsinki-NLP/opus-mt-en-de",
                  "Helsinki-NLP/opus-mt-fr-en", "Helsinki-NLP/opus-mt-de-en")
MODELS_ENV = "XATTN_MODELS"
MAX_NEW_TOKENS = 1024      # longest translation a caller may ask for


class ModelUnavailable(RuntimeError):
    """A model cannot be loaded or used here; the message says why in plain words."""


@runtime_checkable
class Translator(Protocol):
    """A loaded translation model (an encoder-decoder), whatever runs it.

    Attributes
    ----------
    name : str
        The name it was loaded by (a folder, a hub id, ``"toy-en-fr"``).
    n_layers, n_heads, d_model : int
        Decoder layers (each with a cross-attention), heads per cross-attention, width.
    max_tokens : int or None
        Most pieces a side (the model's positions), None when unbounded.
    specials : tuple of str
        Pieces that are words of their own (``</s>``, language codes, ...).
    trace_layer : callable (src_ids, tgt_ids, layer, scale) -> AttentionTrace, or None
        Every intermediate of one decoder layer's cross-attention at piece level.
    rescalable : bool
        Whether ``trace_layer(..., scale=False)`` really leaves 1/sqrt(d_head) out.
    switch_heads_off : callable (src_ids, tgt_ids, layer, heads_off) -> AblationResult, or None
        Head importance in one layer (Michel et al. 2019).
    query_inputs : callable (src_ids, tgt_ids, layer) -> (x, W_Q, b_Q), or None
        What one layer's cross-attention read and its query projection (float32).
    decode_steps : callable (src_ids, forced, words=False) -> xattn.decoding.Decoded, or None
        Greedy decoding step by step; ``forced``: pairs (step, text) to take instead;
        ``words``: its rows' columns are the source's words.
    effects : callable (src_ids, tgt_ids, row, words=True) -> xattn.encdec.effects.Effects, or None
        What masking each source word, and switching each head off, does to target word
        ``row``'s probability.
    """

    name: str
    n_layers: int
    n_heads: int
    d_model: int
    max_tokens: int | None
    specials: tuple[str, ...]
    trace_layer: Callable[..., AttentionTrace] | None
    rescalable: bool
    switch_heads_off: Callable[..., AblationResult] | None
    query_inputs: Callable[..., tuple] | None
    decode_steps: Callable[..., object] | None
    effects: Callable[..., object] | None

    def tokenize(self, text: str, side: str = "source") -> list[int]:
        """The ids the model reads for ``text`` (``side``: "source" or "target"), specials
        included."""

    def pieces(self, ids: Sequence[int]) -> list[str]:
        """The piece of each id."""

    def detokenize(self, ids: Sequence[int]) -> str:
        """Target text of ``ids``, specials left out."""

    def translate_ids(self, src_ids: Sequence[int], max_new_tokens: int) -> list[int]:
        """Greedy translation: the ids produced, up to and including ``</s>``."""

    def attention(self, src_ids: Sequence[int], tgt_ids: Sequence[int]) -> np.ndarray:
        """Teacher-forced cross-attention, (n_layers, n_heads, n_tgt, n_src) float32; row
        ``i`` is the step producing ``tgt_ids[i]``."""


# ---------------------------------------------------------------------- which names may load
def allowed_models() -> tuple[str, ...]:
    """Names a link may load: env ``XATTN_MODELS`` (comma-separated hub ids or local folders),
    else ``DEFAULT_MODELS``."""
    names = tuple(n.strip() for n in os.environ.get(MODELS_ENV, "").split(",") if n.strip())
    return names or DEFAULT_MODELS


def check_allowed(name, allowed=None, *, always: tuple[str, ...] = ()) -> str:
    """``name`` when it is in ``always`` or on the list (``allowed``, default
    ``allowed_models()``); else the one refusal every back end gives.

    Raises
    ------
    TypeError
        ``name`` is not a string, or ``allowed`` is one string instead of a list.
    ValueError
        ``name`` is not allowed.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string; received {type(name).__name__}.")
    if isinstance(allowed, str):
        raise TypeError("allowed must be a list of names, not one string.")
    names = allowed_models() if allowed is None else tuple(allowed)
    if name in always or name in names:
        return name
    offered = (*always, *(n for n in names if n not in always))
    raise ValueError(f"{name[:80]!r} is not on this server's list of models; allowed: "
                     f"{', '.join(offered)}. A deployer sets the list with the environment "
                     f"variable {MODELS_ENV} (names separated by commas).")


# ---------------------------------------------------------------------- the pipeline
@dataclass(frozen=True, eq=False)
class ModelAttention:
    """Cross-attention of one sentence pair through every decoder layer and head.

    Attributes
    ----------
    weights : ndarray of shape (n_layers, n_heads, n_tgt, n_src), float32
        Rows: the step producing each target token; columns: source tokens. Word-level when
        ``words`` (columns of a word summed, rows of a word averaged), else piece-level.
    src_tokens, tgt_tokens : tuple of str
        Row and column labels: words (pieces joined, the word mark removed) or pieces.
    src_pieces, tgt_pieces : tuple of str
    src_groups, tgt_groups : ndarray of int
        Word index of each piece (``xattn.subwords.word_groups``).
    src_ids, tgt_ids : tuple of int
        The token ids of the teacher-forced pass (for a layer's trace).
    src_text, tgt_text : str
    translated : bool
        Whether ``tgt_text`` is the model's own (greedy) translation.
    model : str
    words : bool
    """

    weights: np.ndarray
    src_tokens: tuple[str, ...]
    tgt_tokens: tuple[str, ...]
    src_pieces: tuple[str, ...]
    tgt_pieces: tuple[str, ...]
    src_groups: np.ndarray
    tgt_groups: np.ndarray
    src_ids: tuple[int, ...]
    tgt_ids: tuple[int, ...]
    src_text: str
    tgt_text: str
    translated: bool
    model: str
    words: bool

    def save(self, file) -> None:
        """Write the attention file (``xattn.attnfile``) for these weights and labels."""
        save_attention(file, self.weights, self.src_tokens, self.tgt_tokens, model=self.model,
                       src_text=self.src_text, tgt_text=self.tgt_text)

    def __repr__(self) -> str:
        n_l, n_h, n_t, n_s = self.weights.shape
        return (f"ModelAttention(model={self.model!r}, n_layers={n_l}, n_heads={n_h}, "
                f"n_tgt={n_t}, n_src={n_s}, words={self.words}, translated={self.translated})")


def _check_model(model) -> None:
    if not isinstance(model, Translator):
        raise TypeError(f"model must be a loaded translation model (xattn.backends."
                        f"load_translator, xattn.encdec.load_encdec or "
                        f"xattn.torch_models.load_model); received {type(model).__name__}.")


def _text(value, name: str, *, optional: bool = False) -> str:
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; received {type(value).__name__}.")
    if not value.strip() and not optional:
        raise ValueError(f"{name} must not be empty; received {value!r}.")
    return value.strip()


def _tokenize(model, text: str, side: str) -> list[int]:
    ids = model.tokenize(text, side)
    if model.max_tokens is not None and len(ids) > model.max_tokens:
        raise ValueError(f"The {side} has {len(ids)} pieces; {model.name} reads at most "
                         f"{model.max_tokens}. Give a shorter sentence.")
    return ids


def _max_new(model, n) -> int:
    n = check_int(n, "max_new_tokens", minimum=1, maximum=MAX_NEW_TOKENS)
    return n if model.max_tokens is None else min(n, model.max_tokens)


def translate(model, src: str, *, max_new_tokens: int = 64) -> str:
    """The model's greedy translation of ``src``."""
    _check_model(model)
    src_ids = _tokenize(model, _text(src, "src"), "source")
    return model.detokenize(model.translate_ids(src_ids, _max_new(model, max_new_tokens)))


def cross_attention(model, src: str, tgt: str | None = None, *, words: bool = True,
                    max_new_tokens: int = 64) -> ModelAttention:
    """Every decoder layer's cross-attention for a sentence and its translation.

    Parameters
    ----------
    model : Translator
    src : str
        The source sentence.
    tgt : str, optional
        The target sentence. None or empty: the model translates ``src`` (greedy, one beam, at
        most ``max_new_tokens`` pieces) and the attention is that of its own translation.
    words : bool, default True
        Merge pieces into words (attention TO a word: the sum over its pieces; FROM a word:
        the mean); False keeps the tokenizer's pieces.
    max_new_tokens : int, default 64

    Returns
    -------
    ModelAttention
        ``weights`` of shape (n_layers, n_heads, n_tgt, n_src), float32; row ``i`` is the step
        producing target token ``i`` (its query is the token before it).
    """
    _check_model(model)
    words = check_bool(words, "words")
    src, tgt = _text(src, "src"), _text(tgt, "tgt", optional=True)
    max_new = _max_new(model, max_new_tokens)
    src_ids = _tokenize(model, src, "source")
    translated = not tgt
    if translated:
        tgt_ids = list(model.translate_ids(src_ids, max_new))
        tgt = model.detokenize(tgt_ids)
    else:
        tgt_ids = _tokenize(model, tgt, "target")
    weights = model.attention(src_ids, tgt_ids)                      # (L, H, T, S) pieces
    src_pieces, tgt_pieces = tuple(model.pieces(src_ids)), tuple(model.pieces(tgt_ids))
    marker = word_marker(src_pieces + tgt_pieces)    # "▁" (sentencepiece) or "Ġ" (BART)
    src_groups = word_groups(src_pieces, specials=model.specials, marker=marker)
    tgt_groups = word_groups(tgt_pieces, specials=model.specials, marker=marker)
    if words:
        weights = merge_words(weights, src_groups, tgt_groups)       # (L, H, T_words, S_words)
        src_tokens, tgt_tokens = (tuple(word_texts(p, g, marker=marker)) for p, g in
                                  ((src_pieces, src_groups), (tgt_pieces, tgt_groups)))
    else:
        src_tokens, tgt_tokens = src_pieces, tgt_pieces
    return ModelAttention(weights, src_tokens, tgt_tokens, src_pieces, tgt_pieces, src_groups,
                          tgt_groups, tuple(src_ids), tuple(tgt_ids), src, tgt, translated,
                          model.name, words)


def word_level(model, weights: np.ndarray, src_ids, tgt_ids) -> np.ndarray:
    """Piece-level weights (..., n_tgt, n_src) of ``src_ids``/``tgt_ids`` merged to words."""
    pieces = [model.pieces(ids) for ids in (src_ids, tgt_ids)]
    marker = word_marker(pieces[0] + pieces[1])
    groups = [word_groups(p, specials=model.specials, marker=marker) for p in pieces]
    return merge_words(weights, *groups)
