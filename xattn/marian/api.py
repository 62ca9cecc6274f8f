"""The Marian model for a page: load by name, attention of a sentence pair, one layer inside.

The same shapes and records as ``xattn.models`` (``ModelAttention``, ``AttentionTrace``,
``AblationResult``), computed in NumPy: no torch, no hooks, and the layer a student steps
through is the model's own ``MultiHeadCrossAttention``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from xattn._checks import check_bool, check_int, quote
from xattn.ablation import AblationResult
from xattn.attention import AttentionTrace
from xattn.marian.decode import decode
from xattn.marian.model import ForwardPass, MarianMT
from xattn.models._attention import ModelAttention
from xattn.models._loading import MODELS_ENV, allowed_models
from xattn.subwords import WORD_START, merge_words, word_groups, word_texts

__all__ = ["SHIPPED_MODEL", "SHIPPED_FOLDER", "load_marian", "cross_attention", "layer_trace",
           "layer_ablation", "translate", "teacher_forced"]

SHIPPED_MODEL = "toy-en-fr"
SHIPPED_FOLDER = Path(__file__).resolve().parent / SHIPPED_MODEL


def load_marian(name: str = SHIPPED_MODEL, *, allowed=None, dtype: str = "float32") -> MarianMT:
    """The shipped model, or a converted Marian folder on the deployer's allow-list.

    Parameters
    ----------
    name : str, default SHIPPED_MODEL
        ``"toy-en-fr"`` (in the base install, always allowed), or a folder written by
        ``python -m xattn.models convert`` (or a transformers ``save_pretrained`` folder with
        ``model.safetensors``) that is in ``allowed``.
    allowed : iterable of str, optional
        Defaults to ``xattn.models.allowed_models()`` (env ``XATTN_MODELS``).
    dtype : {"float32", "float16"}, default "float32"
        Storage of the matrices; float16 halves the memory, computation stays float32.

    Raises
    ------
    ValueError
        A name off the list, not a folder, or a folder that is not a Marian model (missing or
        misshapen tensor, pickle-only weights, ...), each said in one message.
    """
    if not isinstance(name, str):
        raise TypeError(f"name must be a string; received {type(name).__name__}.")
    if isinstance(allowed, str):
        raise TypeError("allowed must be a list of names, not one string.")
    if name == SHIPPED_MODEL:
        return MarianMT.from_folder(SHIPPED_FOLDER, dtype=dtype, name=name)
    names = allowed_models() if allowed is None else tuple(allowed)
    if name not in names:
        raise ValueError(f"{name[:80]!r} is not on this server's list of models; allowed: "
                         f"{', '.join((SHIPPED_MODEL, *names))}. A deployer sets the list with "
                         f"the environment variable {MODELS_ENV} (names separated by commas).")
    if not Path(name).is_dir():
        raise ValueError(f"{name[:80]!r} is not a folder here; the NumPy model reads a converted "
                         f"folder. Convert once where torch is installed: python -m xattn.models "
                         f"convert {name[:80]} DIR, then list DIR in {MODELS_ENV}.")
    return MarianMT.from_folder(name, dtype=dtype, name=name)


def _text(value, name: str, *, optional: bool = False) -> str:
    if value is None and optional:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string; received {type(value).__name__}.")
    if not value.strip() and not optional:
        raise ValueError(f"{name} must not be empty; received {value!r}.")
    return value.strip()


def _encode(model: MarianMT, text: str, side: str) -> list[int]:
    ids = model.tokenizer.encode(text, side=side)
    limit = model.config.max_position_embeddings
    if len(ids) > limit:
        raise ValueError(f"The {side} has {len(ids)} pieces; {model.name} reads at most "
                         f"{limit}. Give a shorter sentence.")
    return ids


def translate(model: MarianMT, src: str, *, max_new_tokens: int = 64) -> str:
    """The model's greedy translation of ``src``."""
    ids = decode(model, _encode(model, _text(src, "src"), "source"),
                 max_new_tokens=_max_new(model, max_new_tokens)).tgt_ids
    return model.tokenizer.decode(ids)


def _max_new(model: MarianMT, n) -> int:
    n = check_int(n, "max_new_tokens", minimum=1, maximum=1024)
    return min(n, model.config.max_position_embeddings)


def cross_attention(model: MarianMT, src: str, tgt: str | None = None, *, words: bool = True,
                    max_new_tokens: int = 64) -> ModelAttention:
    """Every decoder layer's cross-attention for a sentence and its translation.

    As ``xattn.models.cross_attention``: without ``tgt`` the model translates ``src`` first
    (greedy); row ``i`` is the step producing target token ``i``; ``words`` merges pieces
    (attention TO a word: sum over its pieces; FROM a word: mean).

    Returns
    -------
    ModelAttention
        ``weights`` of shape (n_layers, n_heads, n_tgt, n_src), float32.
    """
    if not isinstance(model, MarianMT):
        raise TypeError(f"model must be a MarianMT (see load_marian); received "
                        f"{type(model).__name__}.")
    words = check_bool(words, "words")
    src, tgt = _text(src, "src"), _text(tgt, "tgt", optional=True)
    tok = model.tokenizer
    src_ids = _encode(model, src, "source")
    translated = not tgt
    if translated:
        tgt_ids = list(decode(model, src_ids, max_new_tokens=_max_new(model, max_new_tokens))
                       .tgt_ids)
        tgt = tok.decode(tgt_ids)
    else:
        tgt_ids = _encode(model, tgt, "target")
    weights = model.forward(src_ids, tgt_ids, logits=False).cross_attention   # (L, H, T, S)
    src_pieces, tgt_pieces = tuple(tok.id_to_piece(src_ids)), tuple(tok.id_to_piece(tgt_ids))
    src_groups = word_groups(src_pieces, specials=tok.specials, marker=WORD_START)
    tgt_groups = word_groups(tgt_pieces, specials=tok.specials, marker=WORD_START)
    if words:
        weights = merge_words(weights, src_groups, tgt_groups)      # (L, H, T_words, S_words)
        src_tokens = tuple(word_texts(src_pieces, src_groups))
        tgt_tokens = tuple(word_texts(tgt_pieces, tgt_groups))
    else:
        src_tokens, tgt_tokens = src_pieces, tgt_pieces
    return ModelAttention(weights, src_tokens, tgt_tokens, src_pieces, tgt_pieces, src_groups,
                          tgt_groups, tuple(src_ids), tuple(tgt_ids), src, tgt, translated,
                          model.name, words)


def teacher_forced(model: MarianMT, attention, *, head_mask=None) -> ForwardPass:
    """The teacher-forced pass behind ``attention`` (a ``ModelAttention`` or ``(src_ids,
    tgt_ids)``), piece level, without logits."""
    if isinstance(attention, ModelAttention):
        src_ids, tgt_ids = attention.src_ids, attention.tgt_ids
    else:
        try:
            src_ids, tgt_ids = attention
        except (TypeError, ValueError):
            raise TypeError(f"attention must be a ModelAttention or a pair (src_ids, tgt_ids); "
                            f"received {type(attention).__name__} {quote(attention)}.") from None
    return model.forward(src_ids, tgt_ids, head_mask=head_mask, logits=False)


def layer_trace(model: MarianMT, attention, layer: int, *, scale: bool = True) -> AttentionTrace:
    """Every intermediate of decoder layer ``layer``'s cross-attention, at piece level: the
    layer's own ``MultiHeadCrossAttention.trace`` (``q = x W_Q + b_Q``, ...), so its weights
    equal the model's; ``scale=False`` leaves out 1/sqrt(d_head)."""
    return model.layer_trace(teacher_forced(model, attention), layer, scale=scale)


def layer_ablation(model: MarianMT, attention, layer: int, heads_off=()) -> AblationResult:
    """Head importance in decoder layer ``layer``'s cross-attention (as
    ``xattn.models.layer_ablation``): heads gated before ``out_proj`` of the real layer."""
    return model.layer_ablation(teacher_forced(model, attention), layer, heads_off)


def word_level(model: MarianMT, weights: np.ndarray, src_ids, tgt_ids) -> np.ndarray:
    """Piece-level weights (..., n_tgt, n_src) of ``src_ids``/``tgt_ids`` merged to words."""
    tok = model.tokenizer
    groups = [word_groups(tok.id_to_piece(ids), specials=tok.specials) for ids in
              (src_ids, tgt_ids)]
    return merge_words(weights, *groups)
